package orphan

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// icebergGoReferenced lists the manifest lists, manifests and data and
// delete files of every snapshot of tbl as iceberg-go reads them (the
// independent reader of interop/), for a table on local disk.
func icebergGoReferenced(t *testing.T, tbl *catalog.Table) map[string]bool {
	t.Helper()
	run := func(args ...string) []byte { return testenv.IcebergGo(context.Background(), t, args...) }
	local := func(p string) string { return strings.TrimPrefix(p, "file://") }
	refs := map[string]bool{}
	for _, s := range tbl.Metadata.Snapshots {
		refs[s.ManifestList] = true
		var ml struct {
			Manifests []struct {
				Path string `json:"manifest_path"`
			} `json:"manifests"`
		}
		if err := json.Unmarshal(run("manifest-list", local(s.ManifestList)), &ml); err != nil {
			t.Fatal(err)
		}
		for _, mf := range ml.Manifests {
			if refs[mf.Path] {
				continue
			}
			refs[mf.Path] = true
			var m struct {
				Entries []struct {
					DataFile struct {
						FilePath string `json:"file_path"`
					} `json:"data_file"`
				} `json:"entries"`
			}
			if err := json.Unmarshal(run("manifest", local(mf.Path)), &m); err != nil {
				t.Fatal(err)
			}
			for _, e := range m.Entries {
				refs[e.DataFile.FilePath] = true
			}
		}
	}
	return refs
}

// TestOrphansAgainstIcebergGo derives the orphans independently: every
// listed file minus what iceberg-go finds referenced, the metadata files,
// version-hint.text, statistics, hidden and young files. The run deletes
// exactly those, and every file iceberg-go finds referenced survives.
func TestOrphansAgainstIcebergGo(t *testing.T) {
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	f := newFixture(t, "")
	id, _ := localTable(t, f)
	tbl := f.load(t, id)
	loc := tbl.Metadata.Location
	refs := icebergGoReferenced(t, tbl)
	keep := map[string]bool{tbl.MetadataLocation: true, loc + "/metadata/version-hint.text": true}
	for _, e := range tbl.Metadata.MetadataLog {
		keep[e.MetadataFile] = true
	}
	for _, s := range tbl.Metadata.Statistics {
		keep[s.StatisticsPath] = true
	}
	for _, s := range tbl.Metadata.PartitionStatistics {
		keep[s.StatisticsPath] = true
	}
	var want []string
	for p := range files(t, tbl.IO, loc+"/") {
		rel := strings.TrimPrefix(p, loc+"/")
		if refs[p] || keep[p] || hidden(rel) || strings.HasSuffix(p, "/young.parquet") {
			continue
		}
		want = append(want, p)
	}
	var s sink
	if _, err := Run(f.Ctx, f.loader(id), opts(), &s); err != nil {
		t.Fatal(err)
	}
	if got := s.byStatus(); !sameStrings(got[StatusDeleted], want) || len(got) != 1 {
		t.Errorf("deleted %v, want %v", got, want)
	}
	after := files(t, tbl.IO, loc+"/")
	for p := range refs {
		if _, ok := after[p]; !ok {
			t.Errorf("%s, referenced according to iceberg-go, is gone", p)
		}
	}
}
