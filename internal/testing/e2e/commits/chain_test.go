package commits

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogtest"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// checkMetadataChain checks the history of tbl after concurrent commits:
// every metadata-log entry names a file that exists and parses, versions
// increase by one along the log and end at the current metadata, times
// never go back, each file's own log is the prefix of the next one's (the
// chain of previous versions), no file appears twice, and no metadata
// file outside the chain was left behind by a losing attempt. It returns
// the number of commits since the table was created.
func checkMetadataChain(t *testing.T, tbl *catalog.Table) int {
	t.Helper()
	ctx := context.Background()
	log := tbl.Metadata.MetadataLog
	chain := append(append([]spec.MetadataLogEntry{}, log...),
		spec.MetadataLogEntry{MetadataFile: tbl.MetadataLocation, TimestampMS: tbl.Metadata.LastUpdatedMS})
	seen := map[string]bool{}
	var prev *spec.TableMetadata
	for i, e := range chain {
		if seen[e.MetadataFile] {
			t.Errorf("metadata-log names %s twice", e.MetadataFile)
		}
		seen[e.MetadataFile] = true
		data, err := fileio.ReadFile(ctx, tbl.IO, e.MetadataFile)
		if err != nil {
			t.Errorf("metadata-log entry %d: %v", i, err)
			continue
		}
		md, err := spec.ParseMetadata(data)
		if err != nil {
			t.Errorf("metadata-log entry %d %s: %v", i, e.MetadataFile, err)
			continue
		}
		if md.LastUpdatedMS != e.TimestampMS {
			t.Errorf("metadata-log entry %d: timestamp %d, the file says last-updated-ms %d", i, e.TimestampMS, md.LastUpdatedMS)
		}
		if md.TableUUID != tbl.Metadata.TableUUID {
			t.Errorf("%s belongs to table %s", e.MetadataFile, md.TableUUID)
		}
		if v, ok := catalog.MetadataVersion(e.MetadataFile); !ok || v != i {
			t.Errorf("metadata-log entry %d is %s (version %d, %v)", i, e.MetadataFile, v, ok)
		}
		if i > 0 {
			if e.TimestampMS < chain[i-1].TimestampMS {
				t.Errorf("metadata-log goes back in time at entry %d: %d after %d", i, e.TimestampMS, chain[i-1].TimestampMS)
			}
			// The file's own log is the log of its predecessor plus the
			// predecessor itself: each commit was applied to the version
			// just before it.
			want := append(append([]spec.MetadataLogEntry{}, prev.MetadataLog...), chain[i-1])
			if !sameLog(md.MetadataLog, want) {
				t.Errorf("%s: metadata-log %v, want its predecessor's log plus %s", e.MetadataFile, md.MetadataLog, chain[i-1].MetadataFile)
			}
		}
		prev = md
	}
	files := catalogtest.MetadataFiles(t, tbl)
	if len(files) != len(chain) {
		t.Errorf("%d metadata files in the metadata directory, %d in the chain: a losing attempt left its file\n%s",
			len(files), len(chain), strings.Join(files, "\n"))
	}
	for _, f := range files {
		if !seen[f] {
			t.Errorf("metadata file %s is not in the chain", f)
		}
	}
	return len(chain) - 1
}

func sameLog(a, b []spec.MetadataLogEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].MetadataFile != b[i].MetadataFile || a[i].TimestampMS != b[i].TimestampMS {
			return false
		}
	}
	return true
}

// catalogRow reads the iceberg_tables row of a table straight from the
// database: the locations a JDBC-compatible reader sees.
func catalogRow(t *testing.T, db *sql.DB, postgres bool, catalogName string, id catalog.Ident) (cur, prev string) {
	t.Helper()
	q := `SELECT metadata_location, COALESCE(previous_metadata_location, '') FROM iceberg_tables
WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?`
	if postgres {
		q = strings.NewReplacer("= ? AND table_namespace = ? AND table_name = ?", "= $1 AND table_namespace = $2 AND table_name = $3").Replace(q)
	}
	if err := db.QueryRow(q, catalogName, strings.Join(id.Namespace, "."), id.Name).Scan(&cur, &prev); err != nil {
		t.Fatalf("read catalog row of %s: %v", id, err)
	}
	return cur, prev
}
