package dvmerge

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// hookCatalog runs hook once, just before the first commit that goes
// through it: the other writer lands between the merge and its commit.
type hookCatalog struct {
	catalog.Catalog
	once sync.Once
	hook func()
}

func (h *hookCatalog) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	h.once.Do(h.hook)
	return h.Catalog.CommitTable(ctx, t, reqs, ups)
}

// mergeRacing plans and executes a merge through a catalog on which hook
// commits first.
func (e *env) mergeRacing(t *testing.T, opts Options, hook func()) *Report {
	t.Helper()
	tbl := e.Load(t)
	p, err := PlanTable(e.Ctx, tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rep, err := Execute(e.Ctx, &hookCatalog{Catalog: e.Cat.Catalog, hook: hook}, tbl, p, opts)
	if err != nil {
		t.Fatalf("dv merge: %v", err)
	}
	return rep
}

// A writer deletes a row of d2 (writing, as it must, one DV holding d2's
// earlier position delete too) while the merge runs: the merge folds that
// DV in and commits on top of it.
func TestMergeFoldsInConcurrentDV(t *testing.T) {
	e := newEnv(t, false)
	d1, d2, pos := resurrectedFree(t, e)
	rep := e.mergeRacing(t, e.options(), func() {
		e.AddDeletes(t, nil, e.writeDVs(t, "writer", d2, map[string][]int64{d2.FilePath: {5, 8}})...)
	})
	checkMerged(t, e)
	if got := dvOf(t, e, d2.FilePath); got == nil || !slices.Equal(got.ToArray(), []uint64{5, 8}) {
		t.Errorf("DV of d2 = %v, want [5 8]", got)
	}
	if got := dvOf(t, e, d1.FilePath); got == nil || !slices.Equal(got.ToArray(), []uint64{0, 2}) {
		t.Errorf("DV of d1 = %v, want [0 2]", got)
	}
	ids := e.ids(t)
	for _, gone := range []int64{0, 2, 105, 108} {
		if slices.Contains(ids, gone) {
			t.Errorf("deleted id %d is visible", gone)
		}
	}
	if len(ids) != 16 {
		t.Errorf("%d rows, want 16", len(ids))
	}
	if rep.Partitions[0].Status != StatusRebuilt || rep.Partitions[0].Rebuilds != 1 || rep.Commits != 1 {
		t.Errorf("report = %+v", rep.Partitions)
	}
	for _, d := range liveFiles(t, e).Deletes {
		if d.Entry.DataFile.FilePath == pos.FilePath {
			t.Errorf("%s was not retired", pos.FilePath)
		}
	}
	if hasIcebergGo() {
		if g := e.icebergGo(t); g.RowCount != 16 {
			t.Errorf("iceberg-go reads %d rows, want 16", g.RowCount)
		}
	}
}

// A compaction removes d1 (rewriting its rows without the deleted ones)
// while the merge runs: d1's DV is dropped from the batch, d2's commits.
func TestMergeDropsCompactedFile(t *testing.T) {
	e := newEnv(t, false)
	d1, d2, _ := resurrectedFree(t, e)
	want := []int64{1, 3, 4, 5, 6, 7, 8, 9}
	rep := e.mergeRacing(t, e.options(), func() {
		out := e.writeData(t, "compacted", "x", want...)
		e.Commit(t, nil, table.Change{Operation: spec.OperationReplace, AddData: []manifest.DataFile{out},
			Remove: []table.FileKey{table.PathKey(d1.FilePath)}})
	})
	checkMerged(t, e)
	if got := dvOf(t, e, d2.FilePath); got == nil || !slices.Equal(got.ToArray(), []uint64{5}) {
		t.Errorf("DV of d2 = %v, want [5]", got)
	}
	for _, d := range liveFiles(t, e).Deletes {
		if df := d.Entry.DataFile; table.IsDV(&df) && *df.ReferencedDataFile == d1.FilePath {
			t.Errorf("a DV for the compacted-away %s was committed", d1.FilePath)
		}
	}
	ids := e.ids(t)
	wantAll := append(slices.Clone(want), 100, 101, 102, 103, 104, 106, 107, 108, 109)
	slices.Sort(wantAll)
	if !slices.Equal(ids, wantAll) {
		t.Errorf("ids = %v, want %v", ids, wantAll)
	}
	if rep.Commits != 1 || rep.DVsWritten != 1 {
		t.Errorf("report = %+v", rep)
	}
}

// resurrectedFree is a v2 table with d1 (ids 0..9) and d2 (100..109) and
// one partition-scoped position-delete file over both, upgraded to v3.
func resurrectedFree(t *testing.T, e *env) (d1, d2, pos manifest.DataFile) {
	t.Helper()
	d1 = e.writeData(t, "d1", "x", seq(0, 10)...)
	d2 = e.writeData(t, "d2", "x", seq(100, 10)...)
	e.Append(t, nil, d1, d2)
	pos = e.writePos(t, "multi", d1, map[string][]int64{d1.FilePath: {0, 2}, d2.FilePath: {5}}, false)
	e.AddDeletes(t, nil, pos)
	e.upgrade(t)
	return d1, d2, pos
}

// A concurrent writer deletes rows (DVs) in the first and the last of three
// partitions before the first commit of a run committing one partition at
// a time. The first is merged again on the table as the commit saw it;
// the last, started after that, is merged on it from the start (not from
// the plan's spill, which predates the writer), so it commits without
// being merged again. Both DVs hold the writer's positions.
func TestMergeAfterConflictUsesFreshTable(t *testing.T) {
	e := newEnv(t, true)
	a, c := v2Debt(t, e, "a"), v2Debt(t, e, "c")
	v2Debt(t, e, "b")
	e.upgrade(t)
	opts := e.options()
	opts.PartialProgress, opts.MaxCommits, opts.Concurrency = true, 3, 1
	rep := e.mergeRacing(t, opts, func() {
		// Each writer's DV holds the file's earlier deletes, as v3 wants.
		e.AddDeletes(t, nil, append(e.writeDVs(t, "a-writer", a[0], map[string][]int64{a[0].FilePath: {0, 2, 3, 8}}),
			e.writeDVs(t, "c-writer", c[0], map[string][]int64{c[0].FilePath: {0, 2, 3, 7}})...)...)
	})
	checkMerged(t, e)
	if n := countKind(liveFiles(t, e), false, manifest.ContentPositionDeletes); n != 0 {
		t.Errorf("%d position-delete files remain", n)
	}
	for path, want := range map[string][]uint64{a[0].FilePath: {0, 2, 3, 8}, c[0].FilePath: {0, 2, 3, 7}} {
		if got := dvOf(t, e, path); got == nil || !slices.Equal(got.ToArray(), want) {
			t.Errorf("DV of %s = %v, want %v", path, got, want)
		}
	}
	if len(rep.Partitions) != 3 || rep.Commits != 3 {
		t.Fatalf("report = %+v", rep)
	}
	if p := rep.Partitions[0]; p.Status != StatusRebuilt || p.Rebuilds != 1 {
		t.Errorf("partition a: %+v, want merged again once", p)
	}
	if p := rep.Partitions[2]; p.Status != StatusCommitted || p.Rebuilds != 0 {
		t.Errorf("partition c: %+v, want merged once, on the writer's table", p)
	}
}
