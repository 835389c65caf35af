package orphan

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// localTable builds ns.t with history (a file only an old snapshot
// references), statistics, version-hint.text, a sibling table ns.t2, a
// file beside them sharing t's name as a prefix, hidden files and a young
// unreferenced file; it returns t's id and the planted orphans.
func localTable(t *testing.T, f *fixture) (catalog.Ident, []string) {
	t.Helper()
	id := f.create(t, "t", "", nil)
	id2 := f.create(t, "t2", "", nil)
	loc := f.load(t, id).Metadata.Location
	tbl := f.appendFiles(t, id, true, loc+"/data/a.parquet", loc+"/data/b.parquet")
	c := dataFile(loc+"/data/c.parquet", len(f.put(t, tbl.IO, loc+"/data/c.parquet")))
	tbl = f.commit(t, tbl, table.Change{Operation: spec.OperationOverwrite,
		Remove: []table.FileKey{table.PathKey(loc + "/data/a.parquet")}, AddData: []manifest.DataFile{c}})
	eq := manifest.DataFile{Content: manifest.ContentEqualityDeletes, FilePath: loc + "/data/eq-deletes.parquet", FileFormat: "PARQUET",
		Partition: []any{}, RecordCount: 1, EqualityIDs: []int{1}}
	eq.FileSizeInBytes = int64(len(f.put(t, tbl.IO, eq.FilePath)))
	tbl = f.commit(t, tbl, table.Change{Operation: spec.OperationDelete, AddDeletes: []manifest.DataFile{eq}})
	stats, pstats := loc+"/metadata/stats.puffin", loc+"/metadata/partition-stats.parquet"
	f.put(t, tbl.IO, stats)
	f.put(t, tbl.IO, pstats)
	f.put(t, tbl.IO, loc+"/metadata/version-hint.text")
	snap := *tbl.Metadata.CurrentSnapshotID
	if _, err := f.CommitTable(f.Ctx, tbl, nil, []spec.Update{
		spec.SetStatistics{Statistics: spec.StatisticsFile{SnapshotID: snap, StatisticsPath: stats, FileSizeInBytes: 1, FileFooterSizeInBytes: 1}},
		spec.SetPartitionStatistics{PartitionStatistics: spec.PartitionStatisticsFile{SnapshotID: snap, StatisticsPath: pstats, FileSizeInBytes: 1}},
	}); err != nil {
		t.Fatal(err)
	}
	loc2 := f.load(t, id2).Metadata.Location
	f.appendFiles(t, id2, true, loc2+"/data/a.parquet")
	// An orphan-looking file of t2 and one beside both tables: a prefix
	// match on ".../t" would take them.
	f.put(t, tbl.IO, loc2+"/data/unreferenced-of-t2.parquet")
	f.put(t, tbl.IO, loc+"-notes.txt")

	orphans := []string{loc + "/data/orphan-1.parquet", loc + "/metadata/orphan-m.avro", loc + "/data/deep/x/y.bin",
		loc + "/metadata/00099-crashed.metadata.json"}
	for _, p := range orphans {
		f.put(t, tbl.IO, p)
	}
	// Hidden files (Hadoop's) and a young unreferenced file are kept.
	f.put(t, tbl.IO, loc+"/data/_SUCCESS")
	f.put(t, tbl.IO, loc+"/metadata/.v1.metadata.json.crc")
	young := loc + "/data/young.parquet"
	f.put(t, tbl.IO, young)
	mtime := later().Add(-time.Hour)
	if err := os.Chtimes(strings.TrimPrefix(young, "file://"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return id, orphans
}

func TestRunDeletesOnlyOrphans(t *testing.T) {
	f := newFixture(t, "")
	id, orphans := localTable(t, f)
	tbl := f.load(t, id)
	wh := f.Warehouse + "/"
	before := files(t, tbl.IO, wh)

	// A dry run reports the orphans and changes nothing.
	var dry sink
	o := opts()
	o.DryRun = true
	sum, err := Run(f.Ctx, f.loader(id), o, &dry)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(before, files(t, tbl.IO, wh)); len(d) != 0 {
		t.Fatalf("dry run changed files: %v", d)
	}
	got := dry.byStatus()
	if !sameStrings(got[StatusWouldDelete], orphans) || len(got) != 1 {
		t.Errorf("dry run reports %v, want %v", got, orphans)
	}
	for _, r := range dry.results {
		if r.Reason != ReasonUnreferenced || r.Size == 0 || r.Age < 9*24*time.Hour {
			t.Errorf("result %+v: want a reason, a size and an age", r)
		}
	}
	if sum.Young != 1 || sum.Hidden != 2 || sum.Orphans != int64(len(orphans)) {
		t.Errorf("summary %+v", sum)
	}

	var s sink
	sum, err = Run(f.Ctx, f.loader(id), opts(), &s)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.byStatus(); !sameStrings(got[StatusDeleted], orphans) || len(got) != 1 {
		t.Errorf("run reports %v, want %v deleted", got, orphans)
	}
	after := files(t, tbl.IO, wh)
	var want []string
	for _, p := range orphans {
		want = append(want, "- "+p)
	}
	if d := diff(before, after); !sameStrings(d, want) {
		t.Errorf("run changed %v, want %v", d, want)
	}
	checkReferencedExist(t, f.load(t, id))
	if sum.Deleted != int64(len(orphans)) || sum.TableChanged {
		t.Errorf("summary %+v", sum)
	}

	// Nothing is left to do.
	var again sink
	if sum, err := Run(f.Ctx, f.loader(id), opts(), &again); err != nil || sum.Orphans != 0 || len(again.results) != 0 {
		t.Errorf("second run: %+v, %v, %v", sum, again.results, err)
	}
}
