package deleterows

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/batchrun"
	"github.com/icectl/icectl/internal/shared/verbrun"
	"github.com/icectl/icectl/internal/testing/fixture"
)

const cutoff = "ts < '2024-02-01'"

func rowsOf(from, to int64, cat string, when func(id int64) *int64) []row {
	var out []row
	for id := from; id <= to; id++ {
		out = append(out, row{ID: id, TS: when(id), Cat: cat})
	}
	return out
}

func at(s string) func(int64) *int64 { return func(int64) *int64 { return ts(s) } }

func dayOf(s string) int32 { return int32(*ts(s) / 86_400_000_000) }

// threeSpecTable is a table partitioned three ways over its history
// (identity(cat), day(ts), unpartitioned), upgraded to v3, with DVs and a
// merge-on-read delete mode. It returns the files by name.
func threeSpecTable(t *testing.T) (*env, map[string]manifest.DataFile) {
	e := newEnv(t, fixture.TableOptions{Spec: spec.PartitionSpec{Fields: []spec.PartitionField{
		{SourceID: 3, FieldID: 1000, Name: "cat", Transform: spec.Transform{Kind: spec.TransformIdentity}}}}})
	files := map[string]manifest.DataFile{}
	// Spec 0, by cat. a: all January, no null (removed whole); b: January,
	// March and nulls (partial).
	files["a"] = e.write(t, "a", []any{"a"}, rowsOf(1, 10, "a", at("2024-01-10 08:00"))...)
	files["b"] = e.write(t, "b", []any{"b"}, rowsOf(11, 20, "b", func(id int64) *int64 {
		switch {
		case id <= 15:
			return ts(fmt.Sprintf("2024-01-%02d 12:00", id))
		case id <= 18:
			return ts("2024-03-01 00:00")
		}
		return nil
	})...)
	e.Update(t, spec.AddSpec{Spec: spec.PartitionSpec{Fields: []spec.PartitionField{
		{SourceID: 2, Name: "ts_day", Transform: spec.Transform{Kind: spec.TransformDay}}}}}, spec.SetDefaultSpec{SpecID: -1})
	// Spec 1, by day. c: one January day (removed whole); d: March (ruled
	// out by its partition).
	files["c"] = e.write(t, "c", []any{dayOf("2024-01-05 00:00")}, rowsOf(21, 25, "c", at("2024-01-05 10:00"))...)
	files["d"] = e.write(t, "d", []any{dayOf("2024-03-01 00:00")}, rowsOf(26, 30, "d", at("2024-03-01 10:00"))...)
	e.Update(t, spec.AddSpec{Spec: spec.PartitionSpec{}}, spec.SetDefaultSpec{SpecID: -1})
	// Spec 2, unpartitioned. f: January and April (partial); g: January
	// with one null (its metrics prove nothing: partial).
	files["f"] = e.write(t, "f", []any{}, rowsOf(31, 40, "f", func(id int64) *int64 {
		if id <= 35 {
			return ts("2024-01-20 00:00")
		}
		return ts("2024-04-20 00:00")
	})...)
	files["g"] = e.write(t, "g", []any{}, rowsOf(41, 45, "g", func(id int64) *int64 {
		if id == 45 {
			return nil
		}
		return ts("2024-01-21 00:00")
	})...)
	e.Update(t, spec.UpgradeFormatVersion{FormatVersion: 3}, spec.SetProperties{Updates: map[string]string{"write.delete.mode": "merge-on-read"}})
	// DVs: a row of a (a file removed whole keeps no DV), a January row
	// of b (deleted already: not deleted or counted again) and a March
	// one, an April row of f.
	var dvs []manifest.DataFile
	for name, pos := range map[string][]int64{"a": {2}, "b": {0, 6}, "f": {9}} {
		df := files[name]
		got := e.WriteDVs(t, nil, "dv-"+name, df.Partition, map[string][]int64{df.FilePath: pos})
		for i := range got {
			got[i].SpecID = df.SpecID
		}
		dvs = append(dvs, got...)
	}
	e.AddDeletes(t, nil, dvs...)
	e.forget(3, 11, 17, 40)
	return e, files
}

// TestThreeSpecTableWithDVs: the table. Whole files go in a
// metadata-only removal with their DVs, partial ones get one DV merged
// with the old, counts are exact, and icectl and iceberg-go read the
// model; the dry run changes no byte.
func TestThreeSpecTableWithDVs(t *testing.T) {
	e, files := threeSpecTable(t)
	e.checkModel(t)

	before := e.digest(t)
	res := verbrun.Run(e.Ctx, Verb(e.Cat.Catalog, e.options(cutoff), nil), e.Load(t), verbrun.Options{DryRun: true})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if !maps.Equal(before, e.digest(t)) {
		t.Fatal("the dry run changed the catalog or the warehouse")
	}
	dry := res.Plan
	want := map[string]struct {
		removed       bool
		live, deleted int64
	}{
		files["a"].FilePath: {true, 9, 9},
		files["b"].FilePath: {false, 8, 4},
		files["c"].FilePath: {true, 5, 5},
		files["f"].FilePath: {false, 9, 5},
		files["g"].FilePath: {false, 5, 4},
	}
	if len(dry.Files) != len(want) {
		t.Fatalf("plan lists %d files, want %d: %+v", len(dry.Files), len(want), dry.Files)
	}
	for _, f := range dry.Files {
		w, ok := want[f.Path]
		if !ok || f.Removed != w.removed || f.Live != w.live || f.Deleted != w.deleted {
			t.Errorf("plan: %s removed=%v live=%d deleted=%d, want %+v", f.Path, f.Removed, f.Live, f.Deleted, w)
		}
	}
	if dry.Deleted != 27 || dry.Mode != ModeDV {
		t.Errorf("plan deletes %d rows in mode %s, want 27 by DVs", dry.Deleted, dry.Mode)
	}

	_, rep, err := e.run(t, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if rep.RowsBefore != 41 || rep.Deleted != 27 || rep.RowsAfter != 14 || rep.FilesRemoved != 2 || rep.DeleteFilesAdded != 3 {
		t.Errorf("report = before %d deleted %d after %d removed %d added %d, want 41 27 14 2 3",
			rep.RowsBefore, rep.Deleted, rep.RowsAfter, rep.FilesRemoved, rep.DeleteFilesAdded)
	}
	for id, r := range e.model {
		if r.TS != nil && *r.TS < *ts("2024-02-01 00:00") {
			e.forget(id)
		}
	}
	e.checkModel(t)
	fs := e.LiveFiles(t, nil)
	dvs := map[string]int64{}
	for _, d := range fs.Deletes {
		if !table.IsDV(&d.Entry.DataFile) {
			t.Errorf("non-DV delete %s", d.Entry.DataFile.FilePath)
		}
		dvs[*d.Entry.DataFile.ReferencedDataFile] = d.Entry.DataFile.RecordCount
	}
	// One DV per partial file, merged with its old one; none for removed
	// files.
	wantDVs := map[string]int64{files["b"].FilePath: 6, files["f"].FilePath: 6, files["g"].FilePath: 4}
	if !maps.Equal(dvs, wantDVs) {
		t.Errorf("DVs = %v, want %v", dvs, wantDVs)
	}
	snap := e.Load(t).Metadata.CurrentSnapshot()
	if snap.Summary["operation"] != spec.OperationDelete {
		t.Errorf("snapshot operation %q", snap.Summary["operation"])
	}
	// Again: nothing left to delete.
	p, _, err := e.run(t, cutoff)
	if err != nil || !p.Idle() {
		t.Errorf("second run: %v, plan %+v", err, p)
	}
}

// TestV2PositionDeletes: a v2 merge-on-read table gets a position-delete
// file for its partial files, beside an existing one, whose rows are not
// deleted twice; nulls never match a comparison.
func TestV2PositionDeletes(t *testing.T) {
	e := newEnv(t, fixture.TableOptions{Props: map[string]string{"write.delete.mode": "merge-on-read"}})
	a := e.write(t, "a", []any{}, rowsOf(1, 10, "x", func(id int64) *int64 {
		switch {
		case id%3 == 0:
			return nil
		case id < 6:
			return ts("2024-01-01 00:00")
		}
		return ts("2024-06-01 00:00")
	})...)
	e.write(t, "b", []any{}, rowsOf(11, 15, "y", at("2024-01-02 00:00"))...)
	e.AddDeletes(t, nil, e.WritePositionDeletes(t, nil, "old", []any{}, map[string][]int64{a.FilePath: {0}}, true))
	e.forget(1)
	p, rep, err := e.run(t, cutoff+" OR id = 7")
	if err != nil {
		t.Fatal(err)
	}
	// a: 2, 4, 5 (January) and 7; 1 was deleted before. b: whole.
	if p.Mode != ModePositionDeletes || rep.Deleted != 9 || rep.RowsBefore != 14 || rep.RowsAfter != 5 || rep.FilesRemoved != 1 {
		t.Errorf("mode %s report %+v", p.Mode, rep)
	}
	e.forget(2, 4, 5, 7, 11, 12, 13, 14, 15)
	e.checkModel(t)
	var pos int
	for _, d := range e.LiveFiles(t, nil).Deletes {
		if d.Entry.DataFile.Content != manifest.ContentPositionDeletes || table.IsDV(&d.Entry.DataFile) {
			t.Errorf("unexpected delete %+v", d.Entry.DataFile)
		}
		pos++
	}
	if pos != 2 {
		t.Errorf("%d position-delete files, want the old one and one new", pos)
	}
}

// TestCopyOnWrite: a table without write.delete.mode is copy-on-write, as
// Spark reads it: whole files are removed, and a partial file is replaced
// by a copy without the deleted rows (no delete file is added), in one
// "overwrite" snapshot; the dry run changes no byte.
func TestCopyOnWrite(t *testing.T) {
	e := newEnv(t, fixture.TableOptions{Spec: spec.PartitionSpec{Fields: []spec.PartitionField{
		{SourceID: 3, FieldID: 1000, Name: "cat", Transform: spec.Transform{Kind: spec.TransformIdentity}}}}})
	a := e.write(t, "a", []any{"a"}, rowsOf(1, 5, "a", at("2024-05-01 00:00"))...)
	e.write(t, "b", []any{"b"}, rowsOf(6, 9, "b", at("2024-01-01 00:00"))...)
	before := e.digest(t)
	res := verbrun.Run(e.Ctx, Verb(e.Cat.Catalog, e.options("id < 3"), nil), e.Load(t), verbrun.Options{DryRun: true})
	if res.Err != nil || res.Plan.Mode != ModeCopyOnWrite || res.Plan.Partial() != 1 || res.Plan.Deleted != 2 {
		t.Fatalf("dry run: %v, plan %+v", res.Err, res.Plan)
	}
	if !maps.Equal(before, e.digest(t)) {
		t.Fatal("the dry run changed the catalog or the warehouse")
	}
	_, rep, err := e.run(t, "id < 3")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Deleted != 2 || rep.FilesRemoved != 0 || rep.FilesRewritten != 1 || rep.DeleteFilesAdded != 0 || rep.RowsBefore != 9 || rep.RowsAfter != 7 {
		t.Errorf("report %+v", rep)
	}
	e.forget(1, 2)
	e.checkModel(t)
	tbl := e.Load(t)
	if op := tbl.Metadata.CurrentSnapshot().Summary["operation"]; op != spec.OperationOverwrite {
		t.Errorf("snapshot operation %q, want overwrite", op)
	}
	fs := e.LiveFiles(t, nil)
	if len(fs.Deletes) != 0 || len(fs.Data) != 2 {
		t.Fatalf("%d data and %d delete files, want 2 and none", len(fs.Data), len(fs.Deletes))
	}
	for _, d := range fs.Data {
		df := &d.Entry.DataFile
		if df.FilePath == a.FilePath {
			t.Errorf("%s is still live", a.FilePath)
		}
		if df.Partition[0] == "a" && (df.RecordCount != 3 || df.SpecID != a.SpecID) {
			t.Errorf("copy %s: %d records, spec %d", df.FilePath, df.RecordCount, df.SpecID)
		}
	}
	// A whole partition by its identity value.
	_, rep, err = e.run(t, "cat = 'a'")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Deleted != 3 || rep.FilesRemoved != 1 || rep.FilesRewritten != 0 || rep.RowsAfter != 4 {
		t.Errorf("report %+v", rep)
	}
	e.forget(3, 4, 5)
	e.checkModel(t)
}

// TestCopyOnWriteThreeSpecsV3: the three-spec v3 table with DVs,
// copy-on-write. The partial files are copied without the deleted rows
// and without their DVs' rows (no delete file is left), each in its own
// spec and partition, and every kept row keeps its _row_id and
// _last_updated_sequence_number.
func TestCopyOnWriteThreeSpecsV3(t *testing.T) {
	e, _ := threeSpecTable(t)
	e.Update(t, spec.SetProperties{Updates: map[string]string{"write.delete.mode": "copy-on-write"}})
	lineage := func() map[string]scan.LineageRow {
		tbl := e.Load(t)
		out := map[string]scan.LineageRow{}
		err := scan.LineageRows(e.Ctx, tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), []int{1}, func(r scan.LineageRow) error {
			out[r.KeyText] = r
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	was := lineage()
	_, rep, err := e.run(t, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if rep.RowsBefore != 41 || rep.Deleted != 27 || rep.RowsAfter != 14 || rep.FilesRemoved != 2 || rep.FilesRewritten != 3 || rep.DeleteFilesAdded != 0 {
		t.Errorf("report = %+v, want 41 before, 27 deleted, 14 after, 2 removed, 3 rewritten", rep)
	}
	for id, r := range e.model {
		if r.TS != nil && *r.TS < *ts("2024-02-01 00:00") {
			e.forget(id)
		}
	}
	e.checkModel(t)
	fs := e.LiveFiles(t, nil)
	if len(fs.Deletes) != 0 {
		t.Errorf("%d delete files left, want none (the DVs go with their files)", len(fs.Deletes))
	}
	specs := map[int32]int{}
	for _, d := range fs.Data {
		specs[d.Entry.DataFile.SpecID]++
	}
	// d (spec 1) untouched; copies of b (spec 0), f and g (spec 2).
	if want := map[int32]int{0: 1, 1: 1, 2: 2}; !maps.Equal(specs, want) {
		t.Errorf("data files by spec %v, want %v", specs, want)
	}
	now := lineage()
	if len(now) != 14 {
		t.Fatalf("%d rows after, want 14", len(now))
	}
	for k, r := range now {
		w, ok := was[k]
		if !ok || r.RowID == nil || w.RowID == nil || *r.RowID != *w.RowID || *r.LastUpdated != *w.LastUpdated || r.Digest != w.Digest {
			t.Errorf("row %s: lineage %s/%s, before %s/%s (or its values changed)", k, opt(r.RowID), opt(r.LastUpdated), opt(w.RowID), opt(w.LastUpdated))
		}
	}
}

// opt prints an optional value.
func opt(v *int64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(*v)
}

// TestBadInput: no --where, an empty one, an unknown column or a bad
// literal are refused as usage errors, before anything is written.
func TestBadInput(t *testing.T) {
	e := newEnv(t, fixture.TableOptions{Props: map[string]string{"write.delete.mode": "merge-on-read"}})
	e.write(t, "a", []any{}, rowsOf(1, 5, "a", at("2024-05-01 00:00"))...)
	before := e.digest(t)
	for _, w := range []string{"", "  ", "nope < 3", "ts < 'yesterday'", "id <"} {
		res := verbrun.Run(e.Ctx, Verb(e.Cat.Catalog, e.options(w), nil), e.Load(t), verbrun.Options{})
		if !errors.Is(res.Err, ErrInvalidOptions) || res.Outcome != batchrun.Usage {
			t.Errorf("--where %q: %v", w, res.Err)
		}
		if strings.Contains(res.Err.Error(), "\n") {
			t.Errorf("--where %q: error is not one line: %q", w, res.Err)
		}
	}
	if !maps.Equal(before, e.digest(t)) {
		t.Fatal("a refused run changed the catalog or the warehouse")
	}
}

// TestConcurrentCommits: a data file appended after the plan that may hold
// matching rows fails the commit; one that cannot is kept, and the rows
// add up.
func TestConcurrentCommits(t *testing.T) {
	e := newEnv(t, fixture.TableOptions{Props: map[string]string{"write.delete.mode": "merge-on-read"}})
	e.write(t, "a", []any{}, rowsOf(1, 6, "a", func(id int64) *int64 {
		if id < 4 {
			return ts("2024-01-01 00:00")
		}
		return ts("2024-05-01 00:00")
	})...)
	run := func(t *testing.T, concurrent []row) error {
		stale := e.Load(t)
		p, err := PlanTable(e.Ctx, stale, e.options(cutoff))
		if err != nil {
			t.Fatal(err)
		}
		e.write(t, fmt.Sprintf("c%d", concurrent[0].ID), []any{}, concurrent...)
		_, err = Execute(e.Ctx, e.Cat.Catalog, stale, p, e.options(cutoff))
		return err
	}
	before := e.Checksum(t, nil)
	if err := run(t, rowsOf(10, 11, "c", at("2024-01-15 00:00"))); !errors.Is(err, ErrConflict) {
		t.Fatalf("matching append: %v", err)
	}
	if got := e.Checksum(t, nil); got.RowCount != before.RowCount+2 {
		t.Errorf("after the conflict: %d rows, want %d", got.RowCount, before.RowCount+2)
	}
	e.forget(10, 11) // the next run plans with them, and deletes them
	if err := run(t, rowsOf(20, 21, "c", at("2024-07-01 00:00"))); err != nil {
		t.Fatal(err)
	}
	e.forget(1, 2, 3)
	e.checkModel(t)
}

// TestCopyOnWriteConcurrentDelete: a copy-on-write run whose file gets a
// delete from another writer after the plan must not commit its copy (the
// copy, with the commit's sequence number, would bring the deleted row
// back): the run fails as a conflict, removes the copy it wrote, and the
// other writer's delete stays applied; run again, it plans on it. (Two
// guards refuse it: the run's own validation and the commit's check that
// no new delete applies to a data file it removes; either alone passes.)
func TestCopyOnWriteConcurrentDelete(t *testing.T) {
	e := newEnv(t, fixture.TableOptions{})
	e.write(t, "a", []any{}, rowsOf(1, 6, "a", func(id int64) *int64 {
		if id < 4 {
			return ts("2024-01-01 00:00")
		}
		return ts("2024-05-01 00:00")
	})...)
	stale := e.Load(t)
	p, err := PlanTable(e.Ctx, stale, e.options(cutoff))
	if err != nil || p.Mode != ModeCopyOnWrite || p.Partial() != 1 {
		t.Fatalf("plan: %v %+v", err, p)
	}
	// Another writer deletes id 5, a row the copy would keep.
	e.AddDeletes(t, nil, e.WriteEqualityDeletes(t, nil, "eq", []any{}, 5))
	e.forget(5)
	files := func() map[string]bool {
		out := map[string]bool{}
		for k := range e.digest(t) {
			out[k] = true
		}
		return out
	}
	before := files()
	_, err = Execute(e.Ctx, e.Cat.Catalog, stale, p, e.options(cutoff))
	if out, _ := Outcome(nil, err); out != batchrun.Conflict {
		t.Fatalf("a delete added meanwhile: %v (outcome %v), want a conflict", err, out)
	}
	for k := range files() {
		if !before[k] && !strings.HasSuffix(k, ".metadata.json") && !strings.Contains(k, "catalog") {
			t.Errorf("the failed run left %s", k)
		}
	}
	e.checkModel(t)
	if _, _, err := e.run(t, cutoff); err != nil {
		t.Fatal(err)
	}
	e.forget(1, 2, 3)
	e.checkModel(t)
}

// TestEqualityDeletesApplied: rows an equality delete removed are neither
// counted nor deleted again, in partial files and in whole ones.
func TestEqualityDeletesApplied(t *testing.T) {
	e := newEnv(t, fixture.TableOptions{Props: map[string]string{"write.delete.mode": "merge-on-read"}})
	e.write(t, "a", []any{}, rowsOf(1, 6, "a", func(id int64) *int64 {
		if id <= 3 {
			return ts("2024-01-01 00:00")
		}
		return ts("2024-06-01 00:00")
	})...)
	e.write(t, "b", []any{}, rowsOf(7, 9, "b", at("2024-01-05 00:00"))...)
	e.AddDeletes(t, nil, e.WriteEqualityDeletes(t, nil, "eq", []any{}, 2, 8))
	e.forget(2, 8)
	p, rep, err := e.run(t, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if p.Deleted != 4 || rep.RowsBefore != 7 || rep.RowsAfter != 3 {
		t.Errorf("plan deletes %d, report %+v; want 4 of 7 rows", p.Deleted, rep)
	}
	e.forget(1, 3, 7, 9)
	e.checkModel(t)
}
