package compact

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan"
)

// fiveFiles appends five files of 20 rows (ids 0..99) in separate commits.
func fiveFiles(t *testing.T, e *env) (*catalog.Table, []manifest.DataFile) {
	t.Helper()
	tbl := e.Load(t)
	var files []manifest.DataFile
	for i := range 5 {
		df := e.WriteIDs(t, tbl, "d"+string(rune('a'+i)), nil, ids(int64(i*20), 20)...)
		tbl = e.Append(t, tbl, df)
		files = append(files, df)
	}
	return tbl, files
}

func TestCompactV2PositionAndEqualityDeletes(t *testing.T) {
	e := newEnv(t, 2)
	tbl, files := fiveFiles(t, e)
	// A partition-scoped position delete over two files, a file-scoped
	// one, and an equality delete.
	multi := e.WritePositionDeletes(t, tbl, "pos-multi", nil, map[string][]int64{files[0].FilePath: {1, 3}, files[1].FilePath: {0}}, false)
	scoped := e.WritePositionDeletes(t, tbl, "pos-scoped", nil, map[string][]int64{files[2].FilePath: {5, 6, 7}}, true)
	eq := e.WriteEqualityDeletes(t, tbl, "eq", nil, 44, 81, 99)
	tbl = e.AddDeletes(t, tbl, multi, scoped, eq)
	before := checksum(t, tbl)
	if before.RowCount != 100-3-3-3 {
		t.Fatalf("before: %d rows", before.RowCount)
	}

	rep, err := e.compact(t, e.options())
	if err != nil {
		t.Fatal(err)
	}
	after := e.Load(t)
	if got := checksum(t, after); got != before {
		t.Fatalf("rows changed: before %+v after %+v", before, got)
	}
	fs := liveFiles(t, after)
	if len(fs.Data) != 1 {
		t.Errorf("live data files after: %d, want 1", len(fs.Data))
	}
	if len(fs.Deletes) != 0 {
		t.Errorf("live delete files after: %d, want 0 (all retired)", len(fs.Deletes))
	}
	if rep.Commits != 1 || len(rep.Groups) != 1 || rep.Groups[0].Status != StatusCommitted {
		t.Fatalf("report: %+v", rep)
	}
	if rep.DeletedRowsApplied != 9 || rep.RowsOut != 91 || rep.FilesIn != 5 || rep.FilesOut != 1 {
		t.Errorf("report totals: %+v", rep)
	}
	if rep.DeleteFilesRetired != 3 || rep.DanglingDeletesRemoved != 2 {
		t.Errorf("retired %d (dangling %d), want 3 (2)", rep.DeleteFilesRetired, rep.DanglingDeletesRemoved)
	}
	snap := after.Metadata.CurrentSnapshot()
	if snap.Operation() != spec.OperationReplace {
		t.Errorf("operation %q", snap.Operation())
	}
	// Outputs take the base snapshot's data sequence number.
	if got, want := fs.Data[0].DataSequenceNumber(), rep.Plan.Base.SequenceNumber; got != want {
		t.Errorf("output data sequence number %d, want the base's %d", got, want)
	}
	// Inputs are never deleted.
	for _, f := range files {
		if _, err := os.Stat(strings.TrimPrefix(f.FilePath, "file://")); err != nil {
			t.Errorf("input %s: %v", f.FilePath, err)
		}
	}
}

func TestCompactV3DVsKeepsLineage(t *testing.T) {
	e := newEnv(t, 3)
	tbl, files := fiveFiles(t, e)
	dvs := e.WriteDVs(t, tbl, "dvs", nil, map[string][]int64{files[0].FilePath: {0, 19}, files[3].FilePath: {4}})
	tbl = e.AddDeletes(t, tbl, dvs...)
	before := checksum(t, tbl)
	linBefore := lineageByID(t, tbl)
	nextBefore := *tbl.Metadata.NextRowID

	rep, err := e.compact(t, e.options())
	if err != nil {
		t.Fatal(err)
	}
	after := e.Load(t)
	if got := checksum(t, after); got != before {
		t.Fatalf("rows changed: before %+v after %+v", before, got)
	}
	linAfter := lineageByID(t, after)
	if len(linAfter) != len(linBefore) || len(linAfter) != 97 {
		t.Fatalf("rows: before %d after %d", len(linBefore), len(linAfter))
	}
	for id, l := range linBefore {
		if l.rowID < 0 || l.seq < 0 {
			t.Fatalf("id %d had null lineage before", id)
		}
		if linAfter[id] != l {
			t.Errorf("id %d: lineage %+v before, %+v after", id, l, linAfter[id])
		}
	}
	// next-row-id: the snapshot takes the table's next-row-id as its
	// first-row-id and the table advances by its added-rows, which covers
	// at least the rows of the new file.
	snap := after.Metadata.CurrentSnapshot()
	if snap.FirstRowID == nil || *snap.FirstRowID != nextBefore {
		t.Errorf("snapshot first-row-id %v, want %d", snap.FirstRowID, nextBefore)
	}
	if snap.AddedRows == nil || *after.Metadata.NextRowID != nextBefore+*snap.AddedRows || *snap.AddedRows < rep.RowsOut {
		t.Errorf("next-row-id %d, before %d, added-rows %v, rows out %d", *after.Metadata.NextRowID, nextBefore, snap.AddedRows, rep.RowsOut)
	}
	if fs := liveFiles(t, after); len(fs.Deletes) != 0 {
		t.Errorf("DVs not retired: %d live delete files", len(fs.Deletes))
	}
}

// An upgraded table whose first commit since the upgrade is the
// compaction: rows with no lineage get ids through the output file.
func TestCompactUpgradedV2ToV3(t *testing.T) {
	e := newEnv(t, 2)
	tbl, files := fiveFiles(t, e)
	pos := e.WritePositionDeletes(t, tbl, "pos", nil, map[string][]int64{files[1].FilePath: {2}, files[4].FilePath: {0}}, false)
	eq := e.WriteEqualityDeletes(t, tbl, "eq", nil, 10, 61)
	tbl = e.AddDeletes(t, tbl, pos, eq)
	seqOf := map[int64]int64{}
	for _, f := range liveFiles(t, tbl).Data {
		for i := range int64(20) {
			id := int64(0)
			for j, g := range files {
				if g.FilePath == f.Entry.DataFile.FilePath {
					id = int64(j*20) + i
				}
			}
			seqOf[id] = f.DataSequenceNumber()
		}
	}
	var err error
	tbl, err = e.Cat.CommitTable(e.Ctx, tbl, nil, []spec.Update{spec.UpgradeFormatVersion{FormatVersion: 3}})
	if err != nil {
		t.Fatal(err)
	}
	before := checksum(t, tbl)
	for id, l := range lineageByID(t, tbl) {
		if l.rowID != -1 {
			t.Fatalf("id %d has a row id before the first v3 commit", id)
		}
	}

	if _, err := e.compact(t, e.options()); err != nil {
		t.Fatal(err)
	}
	after := e.Load(t)
	if got := checksum(t, after); got != before {
		t.Fatalf("rows changed: before %+v after %+v", before, got)
	}
	seen := map[int64]bool{}
	snap := after.Metadata.CurrentSnapshot()
	for id, l := range lineageByID(t, after) {
		if l.rowID < *snap.FirstRowID || seen[l.rowID] {
			t.Errorf("id %d: row id %d not fresh and unique (snapshot first-row-id %d)", id, l.rowID, *snap.FirstRowID)
		}
		seen[l.rowID] = true
		if l.seq != seqOf[id] {
			t.Errorf("id %d: last updated sequence number %d, want its file's %d", id, l.seq, seqOf[id])
		}
	}
	if len(seen) != 96 {
		t.Errorf("%d rows after", len(seen))
	}
	if fs := liveFiles(t, after); len(fs.Deletes) != 0 || len(fs.Data) != 1 {
		t.Errorf("after: %d data, %d delete files", len(fs.Data), len(fs.Deletes))
	}
}

// A group mixing an input with lineage and one without keeps the lineage
// that exists and leaves the rest to the output's inheritance.
func TestRewriteMixedLineage(t *testing.T) {
	e := newEnv(t, 3)
	tbl, _ := fiveFiles(t, e)
	h, err := loadHead(e.Ctx, tbl, tbl.Metadata.CurrentSnapshot(), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanTable(e.Ctx, tbl, e.options())
	if err != nil {
		t.Fatal(err)
	}
	g := &p.Groups[0]
	g.Inputs = g.Inputs[:2]
	rw, err := resolve(h, g, p.Base.SequenceNumber)
	if err != nil {
		t.Fatal(err)
	}
	// The first input as if committed before an upgrade.
	rw.inputs[0].entry.Entry.DataFile.FirstRowID = nil
	withID := *rw.inputs[1].entry.Entry.DataFile.FirstRowID
	x := &executor{p: p, opts: e.options()}
	if err := x.run(e.Ctx, h, g, rw); err != nil {
		t.Fatal(err)
	}
	if len(rw.outputs) != 1 || rw.rowsOut != 40 {
		t.Fatalf("outputs %d, rows %d", len(rw.outputs), rw.rowsOut)
	}
	out := rw.outputs[0]
	// Read the output as a committed file with first_row_id 5000 and
	// data sequence number 99.
	fe := table.FileEntry{Entry: manifest.Entry{Status: manifest.StatusAdded, DataFile: out}}
	fe.Entry.DataFile.FirstRowID = ptr(int64(5000))
	fe.Entry.SequenceNumber = ptr(int64(99))
	got := readLineage(t, e, tbl.Metadata, tbl.IO, fe)
	for pos, l := range got {
		switch {
		case pos < 20: // from the input without first_row_id
			if l.rowID != 5000+int64(pos) {
				t.Errorf("pos %d: row id %d, want inherited %d", pos, l.rowID, 5000+pos)
			}
			if l.seq != rw.inputs[0].entry.DataSequenceNumber() {
				t.Errorf("pos %d: seq %d, want the input's %d", pos, l.seq, rw.inputs[0].entry.DataSequenceNumber())
			}
		default:
			if l.rowID != withID+int64(pos-20) || l.seq != rw.inputs[1].entry.DataSequenceNumber() {
				t.Errorf("pos %d: lineage %+v, want row id %d seq %d", pos, l, withID+int64(pos-20), rw.inputs[1].entry.DataSequenceNumber())
			}
		}
	}
	if len(got) != 40 {
		t.Errorf("read %d rows", len(got))
	}
}

func TestConcurrentDeleteRebases(t *testing.T) {
	for _, v := range []int{2, 3} {
		t.Run("v"+string(rune('0'+v)), func(t *testing.T) {
			e := newEnv(t, v)
			_, files := fiveFiles(t, e)
			fc := &faultCatalog{Catalog: e.Cat}
			fc.before = func(n int) error {
				if n != 1 {
					return nil
				}
				// Another writer deletes id 42 (file 2, pos 2) between the
				// rewrite and the commit.
				cur := e.Load(t)
				var d []manifest.DataFile
				if v == 3 {
					d = e.WriteDVs(t, cur, "late-dv", nil, map[string][]int64{files[2].FilePath: {2}})
				} else {
					d = []manifest.DataFile{e.WritePositionDeletes(t, cur, "late-pos", nil, map[string][]int64{files[2].FilePath: {2}}, true)}
				}
				e.AddDeletes(t, cur, d...)
				return nil
			}
			tbl := e.Load(t)
			before := checksum(t, tbl)
			opts := e.options()
			p, err := PlanTable(e.Ctx, tbl, opts)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Execute(e.Ctx, fc, tbl, p, opts)
			if err != nil {
				t.Fatal(err)
			}
			if g := rep.Groups[0]; g.Status != StatusRebased || g.Rebases != 1 || !strings.Contains(g.Reason, "committed to input") {
				t.Fatalf("group: %+v", g)
			}
			after := e.Load(t)
			got := checksum(t, after)
			if got.RowCount != before.RowCount-1 {
				t.Fatalf("rows after %d, want %d", got.RowCount, before.RowCount-1)
			}
			if _, ok := lineageOrIDs(t, after)[42]; ok {
				t.Fatal("deleted row 42 came back")
			}
			if fs := liveFiles(t, after); len(fs.Deletes) != 0 || len(fs.Data) != 1 {
				t.Errorf("after: %d data, %d delete files", len(fs.Data), len(fs.Deletes))
			}
		})
	}
}

func TestInputRemovedMeanwhileDropsGroup(t *testing.T) {
	e := newEnv(t, 2)
	_, files := fiveFiles(t, e)
	fc := &faultCatalog{Catalog: e.Cat}
	fc.before = func(n int) error {
		if n != 1 {
			return nil
		}
		cur := e.Load(t)
		repl := e.WriteIDs(t, cur, "replacement", nil, ids(0, 20)...)
		e.Commit(t, cur, table.Change{Operation: spec.OperationReplace, AddData: []manifest.DataFile{repl},
			Remove: []table.FileKey{table.PathKey(files[0].FilePath)}})
		return nil
	}
	tbl := e.Load(t)
	before := checksum(t, tbl)
	opts := e.options()
	p, err := PlanTable(e.Ctx, tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Execute(e.Ctx, fc, tbl, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	if g := rep.Groups[0]; g.Status != StatusDropped || !strings.Contains(g.Reason, files[0].FilePath) {
		t.Fatalf("group: %+v", g)
	}
	if rep.Commits != 0 {
		t.Errorf("commits %d", rep.Commits)
	}
	after := e.Load(t)
	if got := checksum(t, after); got != before {
		t.Fatalf("rows changed")
	}
	if n := len(liveFiles(t, after).Data); n != 5 {
		t.Errorf("%d live data files, want 5", n)
	}
}

// twoGroups makes six files packed into two groups.
func twoGroups(t *testing.T, e *env) (*catalog.Table, []manifest.DataFile, Options) {
	t.Helper()
	tbl := e.Load(t)
	var files []manifest.DataFile
	for i := range 6 {
		df := e.WriteIDs(t, tbl, "f"+string(rune('a'+i)), nil, ids(int64(i*20), 20)...)
		tbl = e.Append(t, tbl, df)
		files = append(files, df)
	}
	opts := e.options()
	var biggest int64
	for _, f := range files {
		biggest = max(biggest, f.FileSizeInBytes)
	}
	opts.Plan.MaxFileGroupSize = biggest*3 + 10
	return tbl, files, opts
}

func TestCorruptInputFailsItsGroup(t *testing.T) {
	for _, partial := range []bool{true, false} {
		t.Run(map[bool]string{true: "partial", false: "all-or-nothing"}[partial], func(t *testing.T) {
			e := newEnv(t, 2)
			tbl, files, opts := twoGroups(t, e)
			opts.PartialProgress = partial
			p, err := PlanTable(e.Ctx, tbl, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Groups) != 2 {
				t.Fatalf("%d groups", len(p.Groups))
			}
			bad := p.Groups[1].Inputs[0].Path
			if err := os.WriteFile(strings.TrimPrefix(bad, "file://"), []byte("not parquet at all"), 0o644); err != nil {
				t.Fatal(err)
			}
			headBefore := tbl.Metadata.CurrentSnapshot().SnapshotID
			rep, err := Execute(e.Ctx, e.Cat, tbl, p, opts)
			g := rep.Groups[1]
			if g.Status != StatusFailed || !strings.Contains(g.Reason, bad) {
				t.Fatalf("bad group: %+v", g)
			}
			after := e.Load(t)
			if partial {
				if err != nil {
					t.Fatal(err)
				}
				if rep.Groups[0].Status != StatusCommitted || rep.Commits != 1 {
					t.Fatalf("good group: %+v", rep.Groups[0])
				}
				if n := len(liveFiles(t, after).Data); n != 4 {
					t.Errorf("%d live data files, want 1 output + 3 untouched", n)
				}
				return
			}
			if !errors.Is(err, ErrGroupsFailed) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "--partial-progress") {
				t.Fatalf("error: %v", err)
			}
			if after.Metadata.CurrentSnapshot().SnapshotID != headBefore || rep.Commits != 0 {
				t.Fatal("something was committed")
			}
			_ = files
		})
	}
}

func TestMaxDurationLeavesGroupsForNextRun(t *testing.T) {
	e := newEnv(t, 2)
	tbl, _, opts := twoGroups(t, e)
	opts.Plan.MaxFileGroupSize = 1 // one file per group: six groups
	opts.Plan.MinInputFiles = 1
	opts.Plan.RewriteAll = true
	opts.MaxConcurrentGroups = 1
	opts.PartialProgress = true
	opts.MaxCommits = 6
	// Each look at the clock moves it ten minutes: the start, then one look
	// per group before starting it.
	clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	opts.Now = func() time.Time { clock = clock.Add(10 * time.Minute); return clock }
	p, err := PlanTable(e.Ctx, tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Groups) != 6 {
		t.Fatalf("%d groups", len(p.Groups))
	}
	opts.MaxDuration = 25 * time.Minute
	rep, err := Execute(e.Ctx, e.Cat, tbl, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.LeftForNextRun != 4 || rep.Commits != 2 {
		t.Fatalf("left %d, commits %d: %+v", rep.LeftForNextRun, rep.Commits, rep.Groups)
	}
	for _, g := range rep.Groups[2:] {
		if g.Status != StatusNotStarted || !strings.Contains(g.Reason, "max-duration") {
			t.Errorf("group %+v", g)
		}
	}
}

func TestPlanTableRefusesBadOptions(t *testing.T) {
	e := newEnv(t, 2)
	tbl, _ := fiveFiles(t, e)
	opts := e.options()
	opts.Plan.MinInputFiles = -1
	if _, err := PlanTable(e.Ctx, tbl, opts); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("error %v", err)
	}
	opts = e.options()
	opts.Branch = "nope"
	if _, err := PlanTable(e.Ctx, tbl, opts); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("error %v", err)
	}
	_ = plan.DocumentFormat
}

// A group stopped or discarded only because another group failed is
// cancelled, not failed: one failure, counted once.
func TestOtherGroupsCancelledNotFailed(t *testing.T) {
	e := newEnv(t, 2)
	tbl, _, opts := twoGroups(t, e)
	opts.MaxConcurrentGroups = 2
	p, err := PlanTable(e.Ctx, tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	bad := p.Groups[1].Inputs[0].Path
	if err := os.WriteFile(strings.TrimPrefix(bad, "file://"), []byte("not parquet at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Execute(e.Ctx, e.Cat, tbl, p, opts)
	if !errors.Is(err, ErrGroupsFailed) {
		t.Fatalf("error %v", err)
	}
	if rep.Failed() != 1 || rep.Groups[1].Status != StatusFailed {
		t.Errorf("%d failed groups, bad group %s; want the bad one alone", rep.Failed(), rep.Groups[1].Status)
	}
	if g := rep.Groups[0]; g.Status != StatusCancelled && g.Status != StatusNotStarted {
		t.Errorf("healthy group: %s (%s), want cancelled", g.Status, g.Reason)
	}
}

// headAt reads a snapshot's manifests once: a commit's validation on the
// snapshot the run started from reuses the files read then (with the
// metadata it is given), and a newer snapshot is read anew.
func TestHeadAtReusesSameSnapshot(t *testing.T) {
	e := newEnv(t, 2)
	tbl, _ := fiveFiles(t, e)
	x := &executor{schemas: manifest.NewSchemaCache()}
	snap := tbl.Metadata.CurrentSnapshot()
	h1, err := x.headAt(e.Ctx, tbl, snap)
	if err != nil {
		t.Fatal(err)
	}
	again := e.Load(t)
	h2, err := x.headAt(e.Ctx, again, again.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	if reflect.ValueOf(h2.data).Pointer() != reflect.ValueOf(h1.data).Pointer() || h2.t != again || h2.md != again.Metadata {
		t.Errorf("the same snapshot was read again, or the head kept the old table")
	}
	extra := e.WriteIDs(t, again, "extra", nil, 1000)
	newer := e.Append(t, again, extra)
	h3, err := x.headAt(e.Ctx, newer, newer.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := h3.data[extra.FilePath]; !ok || len(h3.data) != len(h1.data)+1 {
		t.Errorf("head of the newer snapshot has %d files (extra: %v), want %d", len(h3.data), ok, len(h1.data)+1)
	}
	if _, ok := h1.data[extra.FilePath]; ok {
		t.Errorf("reading the newer snapshot changed the older head")
	}
}
