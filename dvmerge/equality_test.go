package dvmerge

import (
	"slices"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// writeEq writes an equality-delete file on id in the partition of like
// (spec and tuple given).
func (e *env) writeEq(t *testing.T, name string, specID int32, partition []any, ids ...int64) manifest.DataFile {
	t.Helper()
	df := e.WriteEqualityDeletes(t, nil, name+"-eq", partition, ids...)
	df.SpecID = specID
	return df
}

// Equality deletes of a partition and of an unpartitioned spec (global)
// are resolved into DVs: the rows are the same and both files retire.
func TestMergeEquality(t *testing.T) {
	e := newEnv(t, true)
	red := e.writeData(t, "red", "red", seq(0, 10)...)
	blue := e.writeData(t, "blue", "blue", seq(100, 10)...)
	e.Append(t, nil, red, blue)
	e.AddDeletes(t, nil, e.writePos(t, "red-pos", red, map[string][]int64{red.FilePath: {9}}, false))
	eqRed := e.writeEq(t, "red", 0, []any{"red"}, 1, 2, 105) // 105 is not in red: no effect there
	e.AddDeletes(t, nil, eqRed)
	e.Update(t, spec.AddSpec{Spec: spec.PartitionSpec{ID: 1}}, spec.SetDefaultSpec{SpecID: 1})
	eqAll := e.writeEq(t, "all", 1, []any{}, 3, 104)
	e.AddDeletes(t, nil, eqAll)
	late := e.writeData(t, "late", "green", 3, 104, 500) // newer than both: they do not apply
	e.Append(t, nil, late)
	before := e.Checksum(t, nil)
	e.upgrade(t)

	// Without --equality, equality deletes are left alone.
	plain := e.mustMerge(t, e.options())
	if plain.EqualityDeleteFilesRetired != 0 {
		t.Errorf("plain merge retired equality deletes: %+v", plain)
	}
	e.checkSameRows(t, before)

	opts := e.options()
	opts.Equality = true
	rep := e.mustMerge(t, opts)
	e.checkSameRows(t, before)
	checkMerged(t, e)
	fs := liveFiles(t, e)
	if n := countKind(fs, false, manifest.ContentEqualityDeletes); n != 0 {
		t.Errorf("%d equality-delete files remain", n)
	}
	if rep.EqualityDeleteFilesRetired != 2 || !slices.Equal(rep.Operations, []string{spec.OperationReplace}) {
		t.Errorf("report = %+v", rep)
	}
	if got := dvOf(t, e, red.FilePath); got == nil || !slices.Equal(got.ToArray(), []uint64{1, 2, 3, 9}) {
		t.Errorf("DV of red = %v, want [1 2 3 9]", got)
	}
	if got := dvOf(t, e, blue.FilePath); got == nil || !slices.Equal(got.ToArray(), []uint64{4}) {
		t.Errorf("DV of blue = %v, want [4]", got)
	}
	if got := dvOf(t, e, late.FilePath); got != nil {
		t.Errorf("DV of the late file = %v, want none", got)
	}
}
