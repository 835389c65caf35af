package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestBuild builds the demo once and checks it from every side.
func TestBuild(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Now()
	var log bytes.Buffer
	start := time.Now()
	res, err := Build(ctx, dir, Options{Seed: 7, Log: &log, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built in %s: %d snapshots, %d data files, %d+%d delete files, %d rows", time.Since(start),
		res.Snapshots, res.DataFiles, res.PositionDeleteFiles, res.EqualityDeleteFiles, res.Rows)
	if log.Len() == 0 {
		t.Error("nothing was logged")
	}
	cat, err := sqlcat.Open(ctx, catalog.Config{Name: res.CatalogName, URI: res.CatalogURI, Warehouse: res.Warehouse})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, catalog.Ident{Namespace: []string{"shop"}, Name: "orders"})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("rollbackJournal", func(t *testing.T) {
		// Bytes 18 and 19 of a SQLite database are 2 in WAL mode, 1 in
		// rollback-journal mode, which a user without write access to the
		// directory can still read (PyIceberg and iceberg-go create it so).
		head := make([]byte, 20)
		f, err := os.Open(filepath.Join(dir, "catalog.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := io.ReadFull(f, head); err != nil {
			t.Fatal(err)
		}
		if head[18] != 1 || head[19] != 1 {
			t.Errorf("catalog.db file format bytes %d %d, want 1 1 (rollback journal, not WAL)", head[18], head[19])
		}
	})
	t.Run("shape", func(t *testing.T) { checkShape(t, ctx, tbl, res) })
	t.Run("refs", func(t *testing.T) { checkRefs(t, tbl, res) })
	t.Run("leftovers", func(t *testing.T) { checkLeftovers(t, ctx, tbl, res, now) })
	t.Run("deletedRowsAbsent", func(t *testing.T) { checkDeleted(t, ctx, tbl, res) })
	t.Run("icebergGo", func(t *testing.T) { checkIcebergGo(t, ctx, res) })
	t.Run("sameSeedSameRows", func(t *testing.T) {
		// A non-empty directory is refused, then replaced with Force.
		dir2 := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir2, "catalog.db"), []byte("junk"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Build(ctx, dir2, Options{Seed: 7}); err == nil || !strings.Contains(err.Error(), "not empty") {
			t.Fatalf("Build into a non-empty directory: err = %v", err)
		}
		res2, err := Build(ctx, dir2, Options{Seed: 7, Force: true})
		if err != nil {
			t.Fatal(err)
		}
		if res2.Rows != res.Rows || res2.Checksum != res.Checksum || res2.DataFiles != res.DataFiles {
			t.Errorf("same seed: %d rows %s (%d files), then %d rows %s (%d files)",
				res.Rows, res.Checksum, res.DataFiles, res2.Rows, res2.Checksum, res2.DataFiles)
		}
	})
}

func checkShape(t *testing.T, ctx context.Context, tbl *catalog.Table, res *Result) {
	md := tbl.Metadata
	if tbl.MetadataLocation != res.MetadataLocation {
		t.Errorf("catalog points at %s, Build reported %s", tbl.MetadataLocation, res.MetadataLocation)
	}
	if md.FormatVersion != 2 || md.DefaultSpec().IsUnpartitioned() {
		t.Errorf("format v%d, spec %+v: want a partitioned v2 table", md.FormatVersion, md.DefaultSpec())
	}
	if res.Snapshots != len(md.Snapshots) || res.Snapshots < 40 {
		t.Errorf("%d snapshots reported, %d in metadata, want dozens", res.Snapshots, len(md.Snapshots))
	}
	fs, err := table.LiveFiles(ctx, tbl.IO, md.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Data) != res.DataFiles || res.DataFiles < 300 || res.DataFiles > 400 {
		t.Errorf("%d live data files, reported %d, want 300-400", len(fs.Data), res.DataFiles)
	}
	var partScoped, fileScoped, eq int
	for _, d := range fs.Deletes {
		df := d.Entry.DataFile
		switch {
		case df.Content == manifest.ContentEqualityDeletes:
			if !slices.Equal(df.EqualityIDs, []int{fieldOrderID}) {
				t.Errorf("equality deletes %s on %v, want order_id", df.FilePath, df.EqualityIDs)
			}
			eq++
		case df.ReferencedDataFile != nil:
			fileScoped++
		default:
			paths := map[string]bool{}
			f, err := tbl.IO.Open(ctx, df.FilePath)
			if err != nil {
				t.Fatal(err)
			}
			err = datafile.ReadPositionDeletes(ctx, f, f.Size(), func(p string, _ int64) error { paths[p] = true; return nil })
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			if len(paths) < 2 {
				t.Errorf("partition-scoped delete file %s covers %d data files, want several", df.FilePath, len(paths))
			}
			partScoped++
		}
	}
	if partScoped < 6 || fileScoped < 2 || eq < 2 {
		t.Errorf("delete files: %d partition-scoped, %d file-scoped, %d equality", partScoped, fileScoped, eq)
	}
	if res.PositionDeleteFiles != partScoped+fileScoped || res.EqualityDeleteFiles != eq {
		t.Errorf("reported %d position and %d equality delete files", res.PositionDeleteFiles, res.EqualityDeleteFiles)
	}
}

func checkRefs(t *testing.T, tbl *catalog.Table, res *Result) {
	md := tbl.Metadata
	tag, ok := md.Refs[res.Tag]
	if !ok || tag.Type != spec.RefTypeTag || !strings.HasPrefix(res.Tag, "eod-") {
		t.Errorf("tag %q: %+v", res.Tag, tag)
	}
	audit, ok := md.Refs[AuditBranch]
	if !ok || audit.Type != spec.RefTypeBranch {
		t.Fatalf("branch audit: %+v", audit)
	}
	head := *md.CurrentSnapshotID
	snap, ok := md.SnapshotByID(audit.SnapshotID)
	if !ok || audit.SnapshotID == head || snap.ParentSnapshotID == nil || *snap.ParentSnapshotID != head {
		t.Errorf("audit head %d should be a commit of its own on top of main's head %d", audit.SnapshotID, head)
	}
}

func checkLeftovers(t *testing.T, ctx context.Context, tbl *catalog.Table, res *Result, now time.Time) {
	var data, manifests int
	referenced := map[string]bool{}
	for _, ref := range tbl.Metadata.Refs {
		snap, _ := tbl.Metadata.SnapshotByID(ref.SnapshotID)
		err := table.WalkEntries(ctx, tbl.IO, snap, table.WalkOptions{IncludeDeleted: true}, func(e table.FileEntry) error {
			referenced[e.Entry.DataFile.FilePath] = true
			referenced[e.Manifest.Path] = true
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range res.Leftovers {
		lp, err := localPath(p)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(lp)
		if err != nil {
			t.Fatal(err)
		}
		if age := now.Sub(st.ModTime()); age < 4*24*time.Hour-time.Minute || age > 4*24*time.Hour+time.Minute {
			t.Errorf("leftover %s is %s old, want 4 days", p, age)
		}
		if referenced[p] {
			t.Errorf("leftover %s is referenced", p)
		}
		switch {
		case strings.Contains(p, "/data/") && strings.HasSuffix(p, ".parquet"):
			data++
		case strings.Contains(p, "/metadata/") && strings.HasSuffix(p, ".avro"):
			manifests++
		}
	}
	if data < 2 || manifests != 1 {
		t.Errorf("leftovers: %d data files, %d manifests", data, manifests)
	}
}

// checkDeleted reads a few deleted order ids: present in the stored data
// files, absent from the scan.
func checkDeleted(t *testing.T, ctx context.Context, tbl *catalog.Table, res *Result) {
	if len(res.DeletedOrderIDs) < 20 {
		t.Fatalf("only %d deleted order ids", len(res.DeletedOrderIDs))
	}
	sample := map[int64]bool{}
	for i := 0; i < len(res.DeletedOrderIDs); i += len(res.DeletedOrderIDs) / 10 {
		sample[res.DeletedOrderIDs[i]] = true
	}
	md := tbl.Metadata
	fs, err := table.LiveFiles(ctx, tbl.IO, md.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	stored := map[int64]bool{}
	collect := func(into map[int64]bool) func(arrow.RecordBatch) error {
		return func(rec arrow.RecordBatch) error {
			for _, id := range rec.Column(0).(*array.Int64).Int64Values() {
				if sample[id] {
					into[id] = true
				}
			}
			return nil
		}
	}
	for _, d := range fs.Data {
		if err := scan.ReadFile(ctx, tbl.IO, md, d, table.Applicable{}, scan.Options{}, collect(stored)); err != nil {
			t.Fatal(err)
		}
	}
	if len(stored) != len(sample) {
		t.Errorf("only %d of %d sampled deleted ids are in the data files", len(stored), len(sample))
	}
	seen := map[int64]bool{}
	if err := scan.Rows(ctx, tbl.IO, md, md.CurrentSnapshot(), scan.Options{}, collect(seen)); err != nil {
		t.Fatal(err)
	}
	for id := range seen {
		t.Errorf("deleted order %d is in the scan", id)
	}
}

func checkIcebergGo(t *testing.T, ctx context.Context, res *Result) {
	out := testenv.IcebergGo(ctx, t, "scan", "--catalog-uri", res.CatalogURI, "--catalog-name", res.CatalogName, "--table", res.Table)
	var g struct {
		RowCount int64  `json:"row_count"`
		Checksum string `json:"checksum"`
	}
	if err := json.Unmarshal(out, &g); err != nil {
		t.Fatal(err)
	}
	if g.RowCount != res.Rows || g.Checksum != res.Checksum {
		t.Errorf("iceberg-go: %d rows, checksum %s; icectl demo: %d rows, checksum %s", g.RowCount, g.Checksum, res.Rows, res.Checksum)
	}
}
