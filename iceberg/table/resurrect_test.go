package table

import (
	"slices"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

func TestDeleteIndexCandidates(t *testing.T) {
	ix := DeletesFor(&FileSet{Deletes: []FileEntry{
		dvEntry("new.puffin", "d1", 4, 9, 1, int32(7)),
		dvEntry("old.puffin", "d1", 4, 6, 1, int32(7)),
		dvEntry("stale.puffin", "d1", 4, 2, 1, int32(7)),              // older than the data file
		entry(manifest.ContentPositionDeletes, "pos", 5, 1, int32(7)), // hidden from readers by the DV
		entry(manifest.ContentPositionDeletes, "pos-old", 2, 1, int32(7)),
	}})
	data := entry(manifest.ContentData, "d1", 3, 1, int32(7))
	c := ix.Candidates(data)
	sameKeys(t, "DVs", c.DVs, "old.puffin@4", "new.puffin@4")
	if c.DVs[1].Key().Path != "new.puffin" {
		t.Errorf("DVs not oldest first: %v", keys(c.DVs))
	}
	sameKeys(t, "position deletes", c.PositionDeletes, "pos")
	if a := ix.For(data); a.DV == nil || a.DV.Key().Path != "new.puffin" || len(a.PositionDeletes) != 0 {
		t.Errorf("For = %+v, want the newest DV alone", a)
	}
}

// resurrectedTable is a v2 table with a partition-scoped and a
// file-scoped position-delete file, upgraded to v3, then a DV for d1 that
// holds only a new position (as iceberg-go v0.7.0 writes it), so d1's
// earlier deletes are visible again.
func resurrectedTable(t *testing.T) (*env, []manifest.DataFile, *spec.Snapshot) {
	e, tbl := newEnv(t, 2)
	d1 := e.writeData(t, tbl, "d1", 0, 1, 2, 3, 4, 5)
	d2 := e.writeData(t, tbl, "d2", 10, 11, 12)
	tbl, _ = e.commit(t, tbl, Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{d1, d2}})
	multi := e.writePosDeletes(t, tbl, "multi", map[string][]int64{d1.FilePath: {1, 9}, d2.FilePath: {0}}, false)
	scoped := e.writePosDeletes(t, tbl, "scoped", map[string][]int64{d1.FilePath: {3}}, true)
	tbl, _ = e.commit(t, tbl, Change{Operation: spec.OperationDelete, AddDeletes: []manifest.DataFile{multi, scoped}})
	tbl, err := e.cat.CommitTable(e.ctx, tbl, nil, []spec.Update{spec.UpgradeFormatVersion{FormatVersion: 3}})
	if err != nil {
		t.Fatal(err)
	}
	dv := e.writeDVs(t, tbl, "bad", map[string][]int64{d1.FilePath: {5}})
	_, snap := e.commit(t, tbl, Change{Operation: spec.OperationDelete, AddDeletes: dv})
	return e, []manifest.DataFile{d1, d2, multi, scoped}, snap
}

func TestFindResurrected(t *testing.T) {
	e, files, snap := resurrectedTable(t)
	tbl, err := e.cat.LoadTable(e.ctx, e.id)
	if err != nil {
		t.Fatal(err)
	}
	got, err := FindResurrected(e.ctx, tbl.IO, tbl.Metadata, snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d resurrections, want 1 (d1): %+v", len(got), got)
	}
	r := got[0]
	if r.DataFile.Entry.DataFile.FilePath != files[0].FilePath || !IsDV(&r.DV.Entry.DataFile) {
		t.Errorf("resurrection of %s with DV %s", r.DataFile.Entry.DataFile.FilePath, r.DV.Key())
	}
	// Position 9 is beyond d1's 6 rows: it deleted nothing, so nothing
	// came back.
	if r.Count() != 2 || !slices.Equal(r.First(10), []int64{1, 3}) || !slices.Equal(r.First(1), []int64{1}) {
		t.Errorf("positions = %v (count %d), want [1 3]", r.First(10), r.Count())
	}
	want := []FileKey{PathKey(files[2].FilePath), PathKey(files[3].FilePath)}
	sortKeys(want)
	if !slices.Equal(r.Sources, want) {
		t.Errorf("sources = %v, want %v", r.Sources, want)
	}
}

func TestFindResurrectedNoneWhenDVComplete(t *testing.T) {
	e, tbl := newEnv(t, 2)
	d1 := e.writeData(t, tbl, "d1", 0, 1, 2)
	tbl, _ = e.commit(t, tbl, Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{d1}})
	pos := e.writePosDeletes(t, tbl, "pos", map[string][]int64{d1.FilePath: {1}}, false)
	tbl, _ = e.commit(t, tbl, Change{Operation: spec.OperationDelete, AddDeletes: []manifest.DataFile{pos}})
	tbl, err := e.cat.CommitTable(e.ctx, tbl, nil, []spec.Update{spec.UpgradeFormatVersion{FormatVersion: 3}})
	if err != nil {
		t.Fatal(err)
	}
	dv := e.writeDVs(t, tbl, "good", map[string][]int64{d1.FilePath: {1, 2}})
	tbl, snap := e.commit(t, tbl, Change{Operation: spec.OperationDelete, AddDeletes: dv})
	got, err := FindResurrected(e.ctx, tbl.IO, tbl.Metadata, snap)
	if err != nil || len(got) != 0 {
		t.Errorf("FindResurrected = %+v, %v; want none", got, err)
	}
}
