package compact

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/plan"
)

// danglingTable is a v2 or v3 table partitioned by truncate[100](id), each
// partition holding the ids from its value up.
type danglingTable struct {
	*fixture.Table
	t *testing.T
}

func newDanglingTable(t *testing.T, version int) *danglingTable {
	t.Helper()
	ps := spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{
		{SourceID: 1, FieldID: 1000, Name: "id_trunc", Transform: spec.ParseTransform("truncate[100]")}}}
	s := fixture.IDNameSchema()
	tb := fixture.NewSQLite(t).Table(t, fixture.TableOptions{FormatVersion: version, Schema: &s, Spec: ps})
	return &danglingTable{Table: tb, t: t}
}

func part(id int64) []any { return []any{id / 100 * 100} }

func (d *danglingTable) data(name string, ids ...int64) manifest.DataFile {
	return d.WriteIDs(d.t, nil, name, part(ids[0]), ids...)
}

func (d *danglingTable) eq(name string, ids ...int64) manifest.DataFile {
	return d.WriteEqualityDeletes(d.t, nil, name, part(ids[0]), ids...)
}

// commit commits added data and deletes in one snapshot (as a Flink
// upsert writer does).
func (d *danglingTable) commit(data []manifest.DataFile, deletes ...manifest.DataFile) *catalog.Table {
	return d.Commit(d.t, nil, table.Change{Operation: spec.OperationOverwrite, AddData: data, AddDeletes: deletes})
}

// liveKeys are the keys of tbl's live delete files.
func liveDeleteKeys(t *testing.T, tbl *catalog.Table) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, e := range liveFiles(t, tbl).Deletes {
		out[e.Key().String()] = true
	}
	return out
}

// goChecksum is the table as the iceberg-go reader reads it, when the
// reader is available (it is under CI).
func goChecksum(t *testing.T, tb *fixture.Table) (scan.ChecksumResult, bool) {
	t.Helper()
	if os.Getenv(testenv.IcebergGoReader) == "" && os.Getenv("CI") == "" {
		return scan.ChecksumResult{}, false
	}
	out := testenv.IcebergGo(tb.Ctx, t, append([]string{"scan", "--table", tb.Name()}, tb.CatalogFlags()...)...)
	var res struct {
		RowCount int64  `json:"row_count"`
		Checksum string `json:"checksum"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("iceberg-read output: %v", err)
	}
	return scan.ChecksumResult{RowCount: res.RowCount, Checksum: res.Checksum}, true
}

// Issue 36: a compaction of a v2 upsert table's partition leaves no delete
// file that applies to nothing, in the same snapshot: the partition's
// equality and position deletes go, deletes already dangling anywhere in
// the table go (Flink's delete committed with the data it could not
// apply to, a partition without data), and deletes that still apply to a
// live file in another partition stay. Rows read by icectl and iceberg-go
// are the same before and after; with --remove-dangling-deletes=false only
// what the plan retires goes.
func TestCompactRemovesDanglingDeletes(t *testing.T) {
	for _, sweep := range []bool{true, false} {
		t.Run(map[bool]string{true: "on", false: "off"}[sweep], func(t *testing.T) {
			d := newDanglingTable(t, 2)
			a1, b1 := d.data("a1", ids(0, 10)...), d.data("b1", ids(100, 10)...)
			d.commit([]manifest.DataFile{a1, b1})
			a2, b2 := d.data("a2", ids(10, 10)...), d.data("b2", ids(110, 10)...)
			d.commit([]manifest.DataFile{a2, b2})
			eqA, eqB := d.eq("eq-a", 3, 12), d.eq("eq-b", 105)
			posA := d.WritePositionDeletes(t, nil, "pos-a", part(0), map[string][]int64{a1.FilePath: {1}}, false)
			scopedA := d.WritePositionDeletes(t, nil, "scoped-a", part(0), map[string][]int64{a2.FilePath: {0}}, true)
			eqC := d.eq("eq-c", 250) // partition 200 never has data
			d.commit(nil, eqA, eqB, posA, scopedA, eqC)
			// Flink's first commit to partition 300: the delete cannot
			// apply to the data committed with it.
			d1 := d.data("d1", ids(300, 10)...)
			eqD := d.eq("eq-d", 301)
			tbl := d.commit([]manifest.DataFile{d1}, eqD)
			before := checksum(t, tbl)
			goBefore, haveGo := goChecksum(t, d.Table)
			if before.RowCount != 50-5 {
				t.Fatalf("before: %d rows", before.RowCount)
			}

			opts := Options{Plan: plan.Options{MinInputFiles: 2, RewriteAll: true, Where: "id < 100", RemoveDanglingDeletes: &sweep},
				MaxConcurrentGroups: 1, Commit: d.Opts}
			p, err := PlanTable(d.Ctx, tbl, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Groups) != 1 {
				t.Fatalf("plan: %d groups, want the one of partition 0", len(p.Groups))
			}
			var listed []string
			for _, r := range p.DanglingDeletes {
				listed = append(listed, r.Path)
			}
			want := []string{eqC.FilePath, eqD.FilePath}
			if !sweep {
				want = nil
			}
			if !slices.Equal(listed, want) {
				t.Errorf("plan lists dangling %v, want %v", listed, want)
			}
			// The dry run's text names each.
			var text strings.Builder
			if err := p.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			for _, path := range want {
				if !strings.Contains(text.String(), "\n  "+path+"\n") {
					t.Errorf("plan text does not list %s:\n%s", path, text.String())
				}
			}
			rep, err := Execute(d.Ctx, d.Cat, tbl, p, opts)
			if err != nil {
				t.Fatal(err)
			}
			after := d.Load(t)
			if rep.Commits != 1 || after.Metadata.CurrentSnapshot().ParentSnapshotID == nil ||
				*after.Metadata.CurrentSnapshot().ParentSnapshotID != tbl.Metadata.CurrentSnapshot().SnapshotID {
				t.Fatalf("%d commits: want the one snapshot on the base", rep.Commits)
			}
			if got := checksum(t, after); got != before {
				t.Fatalf("rows changed: before %+v after %+v", before, got)
			}
			if haveGo {
				if got, _ := goChecksum(t, d.Table); got != goBefore || got != before {
					t.Fatalf("iceberg-go: before %+v after %+v (icectl %+v)", goBefore, got, before)
				}
			}
			live := liveDeleteKeys(t, after)
			gone := []string{eqA.FilePath, posA.FilePath, scopedA.FilePath} // retired by the plan either way
			stay := []string{eqB.FilePath}
			if sweep {
				gone = append(gone, eqC.FilePath, eqD.FilePath)
			} else {
				stay = append(stay, eqC.FilePath, eqD.FilePath)
			}
			for _, k := range gone {
				if live[k] {
					t.Errorf("%s is still live", k)
				}
			}
			for _, k := range stay {
				if !live[k] {
					t.Errorf("%s was removed", k)
				}
			}
			wantRemoved := 2 // eq-a, pos-a: partition-scoped, dangling by the rewrite
			if sweep {
				wantRemoved += 2
			}
			if rep.DanglingDeletesRemoved != wantRemoved || rep.DeleteFilesRetired != wantRemoved+1 {
				t.Errorf("report: %d dangling removed, %d retired; want %d and %d", rep.DanglingDeletesRemoved, rep.DeleteFilesRetired, wantRemoved, wantRemoved+1)
			}
		})
	}
}

// v3: the DV of a rewritten file goes with the rewrite, and a DV whose
// data file another commit removed (leaving the DV) goes with it too.
func TestCompactRemovesDanglingDVs(t *testing.T) {
	d := newDanglingTable(t, 3)
	x1, x2, x3 := d.data("x1", ids(0, 10)...), d.data("x2", ids(10, 10)...), d.data("x3", ids(20, 10)...)
	d.commit([]manifest.DataFile{x1, x2, x3})
	dvs := d.WriteDVs(t, nil, "dvs", part(0), map[string][]int64{x1.FilePath: {2}, x3.FilePath: {4}})
	d.commit(nil, dvs...)
	tbl := d.Commit(t, nil, table.Change{Operation: spec.OperationDelete, Remove: []table.FileKey{table.PathKey(x3.FilePath)}})
	before := checksum(t, tbl)
	if before.RowCount != 19 {
		t.Fatalf("before: %d rows", before.RowCount)
	}
	opts := Options{Plan: plan.Options{MinInputFiles: 2, RewriteAll: true}, MaxConcurrentGroups: 1, Commit: d.Opts}
	p, err := PlanTable(d.Ctx, tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.DanglingDeletes) != 1 || p.DanglingDeletes[0].ReferencedDataFile == nil || *p.DanglingDeletes[0].ReferencedDataFile != x3.FilePath {
		t.Errorf("plan lists dangling %+v, want the DV of x3", p.DanglingDeletes)
	}
	rep, err := Execute(d.Ctx, d.Cat, tbl, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	after := d.Load(t)
	if got := checksum(t, after); got != before {
		t.Fatalf("rows changed: before %+v after %+v", before, got)
	}
	if live := liveDeleteKeys(t, after); len(live) != 0 {
		t.Errorf("delete files left: %v", live)
	}
	if rep.DanglingDeletesRemoved != 1 || rep.DeleteFilesRetired != 2 {
		t.Errorf("report: %d dangling removed, %d retired; want 1 and 2", rep.DanglingDeletesRemoved, rep.DeleteFilesRetired)
	}
}

// A commit landing between the compaction's plan and its commit adds, at
// an older data sequence number (as another compaction's output does), a
// data file that a delete dangling at the plan's base applies to again:
// the compaction keeps that delete (its row stays deleted) and still
// removes the one that dangles.
func TestCompactKeepsDeleteThatAppliesAgain(t *testing.T) {
	d := newDanglingTable(t, 2)
	a1, a2 := d.data("a1", ids(0, 10)...), d.data("a2", ids(10, 10)...)
	d.commit([]manifest.DataFile{a1, a2})
	d1 := d.data("d1", ids(300, 10)...)
	eqD := d.eq("eq-d", 301, 350) // 350 is in no file yet
	d.commit([]manifest.DataFile{d1}, eqD)
	eqC := d.eq("eq-c", 250)
	tbl := d.commit(nil, eqC)

	opts := Options{Plan: plan.Options{MinInputFiles: 2, Where: "id < 100", RewriteAll: true}, MaxConcurrentGroups: 1, Commit: d.Opts}
	p, err := PlanTable(d.Ctx, tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.DanglingDeletes) != 2 {
		t.Fatalf("plan lists %d dangling deletes, want eq-c and eq-d", len(p.DanglingDeletes))
	}
	var mid scan.ChecksumResult
	hook := &fixture.CommitHook{Catalog: d.Cat, Hook: func() {
		// Sequence number 1 is below eq-d's: it applies to 350 here.
		d0 := d.data("d0", 350, 351)
		seq := int64(1)
		cur := d.Load(t)
		if _, _, err := table.CommitChange(d.Ctx, d.Cat, cur, table.Change{Operation: spec.OperationAppend,
			AddData: []manifest.DataFile{d0}, DataSequenceNumber: &seq}, d.Opts); err != nil {
			t.Error(err)
		}
		mid = checksum(t, d.Load(t))
	}}
	rep, err := Execute(d.Ctx, hook, tbl, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	after := d.Load(t)
	if got := checksum(t, after); got != mid || mid.RowCount != 20+10+1 {
		t.Fatalf("rows: %+v after the concurrent commit (want 31), %+v after compaction", mid, got)
	}
	live := liveDeleteKeys(t, after)
	if !live[eqD.FilePath] || live[eqC.FilePath] {
		t.Errorf("live deletes %v: want eq-d kept, eq-c removed", live)
	}
	if rep.DanglingDeletesRemoved != 1 || rep.Commits != 1 {
		t.Errorf("report: %d dangling removed in %d commits, want 1 in 1", rep.DanglingDeletesRemoved, rep.Commits)
	}
}

// The same for a delete the plan retires because its group rewrites every
// file it applies to: a data file at an older sequence number committed
// meanwhile makes an equality delete apply again, and the commit keeps it,
// with the option off too (the plan's retirements are always made); a
// position delete cannot name the file added after it, and goes.
func TestCompactKeepsRetiredDeleteThatAppliesAgain(t *testing.T) {
	for _, sweep := range []bool{true, false} {
		t.Run(map[bool]string{true: "on", false: "off"}[sweep], func(t *testing.T) {
			d := newDanglingTable(t, 2)
			a1, a2 := d.data("a1", ids(0, 10)...), d.data("a2", ids(10, 10)...)
			d.commit([]manifest.DataFile{a1, a2})
			eqA := d.eq("eq-a", 3, 55) // 55 is in no file yet
			posA := d.WritePositionDeletes(t, nil, "pos-a", part(0), map[string][]int64{a1.FilePath: {1}}, false)
			tbl := d.commit(nil, eqA, posA)
			opts := Options{Plan: plan.Options{MinInputFiles: 2, RewriteAll: true, RemoveDanglingDeletes: &sweep},
				MaxConcurrentGroups: 1, Commit: d.Opts}
			p, err := PlanTable(d.Ctx, tbl, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Groups) != 1 || len(p.Groups[0].Retire) != 2 {
				t.Fatalf("plan: want one group retiring eq-a and pos-a: %+v", p.Groups)
			}
			var mid scan.ChecksumResult
			hook := &fixture.CommitHook{Catalog: d.Cat, Hook: func() {
				a0 := d.data("a0", 55, 56)
				seq := int64(1)
				if _, _, err := table.CommitChange(d.Ctx, d.Cat, d.Load(t), table.Change{Operation: spec.OperationAppend,
					AddData: []manifest.DataFile{a0}, DataSequenceNumber: &seq}, d.Opts); err != nil {
					t.Error(err)
				}
				mid = checksum(t, d.Load(t))
			}}
			rep, err := Execute(d.Ctx, hook, tbl, p, opts)
			if err != nil {
				t.Fatal(err)
			}
			after := d.Load(t)
			if got := checksum(t, after); got != mid || mid.RowCount != 20-2+1 {
				t.Fatalf("rows: %+v after the concurrent commit (want 19), %+v after compaction", mid, got)
			}
			live := liveDeleteKeys(t, after)
			// pos-a is in a0's partition at a sequence number above a0's,
			// but a0 was added after it: it cannot name a0's path, and
			// goes as the plan said.
			if !live[eqA.FilePath] || live[posA.FilePath] || len(live) != 1 {
				t.Errorf("live deletes %v: want eq-a kept, pos-a removed", live)
			}
			if rep.DeleteFilesRetired != 1 || rep.DanglingDeletesRemoved != 1 || rep.Commits != 1 {
				t.Errorf("report: %d retired, %d dangling removed in %d commits; want 1, 1 in 1", rep.DeleteFilesRetired, rep.DanglingDeletesRemoved, rep.Commits)
			}
		})
	}
}
