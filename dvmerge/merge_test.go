package dvmerge

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// v2Debt builds a v2 table with three data files, a partition-scoped
// position-delete file over two of them, a file-scoped one, and a second
// partition-scoped one that names a position past a file's end.
func v2Debt(t *testing.T, e *env, cat string) []manifest.DataFile {
	t.Helper()
	d1 := e.writeData(t, cat+"-d1", cat, seq(0, 10)...)
	d2 := e.writeData(t, cat+"-d2", cat, seq(100, 10)...)
	d3 := e.writeData(t, cat+"-d3", cat, seq(200, 10)...)
	e.Append(t, nil, d1, d2, d3)
	multi := e.writePos(t, cat+"-multi", d1, map[string][]int64{d1.FilePath: {0, 2}, d2.FilePath: {5}}, false)
	scoped := e.writePos(t, cat+"-scoped", d3, map[string][]int64{d3.FilePath: {9}}, true)
	e.AddDeletes(t, nil, multi, scoped)
	later := e.writePos(t, cat+"-later", d1, map[string][]int64{d1.FilePath: {2, 3, 42}}, false)
	e.AddDeletes(t, nil, later)
	return []manifest.DataFile{d1, d2, d3, multi, scoped, later}
}

func TestMergeUpgradedV2(t *testing.T) {
	e := newEnv(t, false)
	files := v2Debt(t, e, "x")
	before := e.Checksum(t, nil)
	e.upgrade(t)
	if got := e.Checksum(t, nil); got != before {
		t.Fatalf("the upgrade changed the rows")
	}
	rep := e.mustMerge(t, e.options())
	e.checkSameRows(t, before)
	checkMerged(t, e)
	fs := liveFiles(t, e)
	if n := countKind(fs, false, manifest.ContentPositionDeletes); n != 0 {
		t.Errorf("%d position-delete files remain", n)
	}
	for path, want := range map[string][]uint64{files[0].FilePath: {0, 2, 3}, files[1].FilePath: {5}, files[2].FilePath: {9}} {
		if got := dvOf(t, e, path); got == nil || !slices.Equal(got.ToArray(), want) {
			t.Errorf("DV of %s = %v, want %v", path, got, want)
		}
	}
	if rep.Commits != 1 || rep.DVsWritten != 3 || rep.PositionDeleteFilesRetired != 3 || rep.PuffinFiles != 1 || len(rep.Kept) != 0 {
		t.Errorf("report = %+v", rep)
	}
	if !slices.Equal(rep.Operations, []string{spec.OperationReplace}) {
		t.Errorf("operations = %v, want [replace]", rep.Operations)
	}
	if len(rep.OutOfRange) != 1 || rep.OutOfRange[0].DataFile != files[0].FilePath || rep.OutOfRange[0].Positions != 1 ||
		!slices.Equal(rep.OutOfRange[0].FirstPositions, []int64{42}) || !slices.Equal(rep.OutOfRange[0].DeleteFiles, []string{files[5].FilePath}) {
		t.Errorf("out of range = %+v", rep.OutOfRange)
	}
	// A second run finds nothing to do.
	again := e.mustMerge(t, e.options())
	if again.Commits != 0 || len(again.Partitions) != 0 {
		t.Errorf("second run: %+v", again)
	}
	e.checkSameRows(t, before)
}

func TestMergeNeedsV3(t *testing.T) {
	e := newEnv(t, false)
	v2Debt(t, e, "x")
	_, err := e.merge(t, e.options())
	if !errors.Is(err, ErrNotV3) || !strings.Contains(err.Error(), "format v2") || !strings.Contains(err.Error(), "icectl upgrade") {
		t.Errorf("err = %v", err)
	}
}

// Two specs: files of the first (by cat) and of the second (by cat and
// day), each with partition-scoped deletes; every DV keeps its data
// file's spec and partition.
func TestMergePartitionedTwoSpecs(t *testing.T) {
	e := newEnv(t, true)
	red := v2Debt(t, e, "red")
	blue := v2Debt(t, e, "blue")
	e.Update(t, spec.AddSpec{Spec: spec.PartitionSpec{ID: 1, Fields: []spec.PartitionField{
		{SourceID: 2, FieldID: 1000, Name: "cat", Transform: spec.Transform{Kind: spec.TransformIdentity}},
		{SourceID: 1, FieldID: 1001, Name: "id_bucket", Transform: spec.Transform{Kind: spec.TransformBucket, Param: 4}},
	}}}, spec.SetDefaultSpec{SpecID: 1})
	g1 := e.writeData(t, "green-1", "green", seq(300, 5)...)
	g2 := e.writeData(t, "green-2", "green", seq(400, 5)...)
	e.Append(t, nil, g1, g2)
	e.AddDeletes(t, nil, e.writePos(t, "green-multi", g1, map[string][]int64{g1.FilePath: {1}, g2.FilePath: {4}}, false))
	before := e.Checksum(t, nil)
	e.upgrade(t)
	rep := e.mustMerge(t, e.options())
	e.checkSameRows(t, before)
	checkMerged(t, e)
	if len(rep.Partitions) != 3 || rep.DVsWritten != 8 || rep.PuffinFiles != 3 {
		t.Errorf("report: %d partitions, %d DVs, %d puffin files: %+v", len(rep.Partitions), rep.DVsWritten, rep.PuffinFiles, rep.Partitions)
	}
	if got := dvOf(t, e, g2.FilePath); got == nil || !slices.Equal(got.ToArray(), []uint64{4}) {
		t.Errorf("DV of %s = %v", g2.FilePath, got)
	}
	for _, d := range liveFiles(t, e).Deletes {
		df := d.Entry.DataFile
		if table.IsDV(&df) && strings.Contains(*df.ReferencedDataFile, "green") && df.SpecID != 1 {
			t.Errorf("DV of %s has spec %d", *df.ReferencedDataFile, df.SpecID)
		}
	}
	_ = red
	_ = blue
}

// --puffin-target-size closes a Puffin file once it reaches the size: with
// a tiny target every DV gets its own file, and each still parses.
func TestMergePuffinTargetSize(t *testing.T) {
	e := newEnv(t, false)
	v2Debt(t, e, "x")
	before := e.Checksum(t, nil)
	e.upgrade(t)
	opts := e.options()
	opts.PuffinTargetSize = 1
	rep := e.mustMerge(t, opts)
	if rep.PuffinFiles != 3 || rep.DVsWritten != 3 {
		t.Errorf("%d Puffin files for %d DVs, want 3 and 3", rep.PuffinFiles, rep.DVsWritten)
	}
	paths := map[string]bool{}
	for _, d := range liveFiles(t, e).Deletes {
		paths[d.Entry.DataFile.FilePath] = true
	}
	if len(paths) != 3 {
		t.Errorf("DVs in %d files, want 3", len(paths))
	}
	checkMerged(t, e)
	e.checkSameRows(t, before)
}

// A data file outside the table's location is still the table's own when
// it is live (Spark's add_files and Hive migrations leave data where it
// was): its position deletes merge like any other. A delete file naming a
// path that is neither live nor in the table's location stays an error
// (TestBadInput).
func TestMergeLiveDataFileOutsideLocation(t *testing.T) {
	e := newEnv(t, false)
	tbl := e.Load(t)
	s := testSchema()
	rec := idRecord(t, &s, "x", seq(0, 10))
	defer rec.Release()
	outside := "file://" + filepath.Join(e.Cat.Dir, "hive", "part-0.parquet")
	df, err := datafile.WriteFile(e.Ctx, tbl.IO, outside, &s, nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	df.SpecID = int32(tbl.Metadata.DefaultSpecID)
	df.Partition = e.part(t, "x", 0)
	inside := e.writeData(t, "in", "x", seq(100, 10)...)
	e.Append(t, nil, df, inside)
	e.AddDeletes(t, nil, e.writePos(t, "p", df, map[string][]int64{df.FilePath: {1, 7}, inside.FilePath: {3}}, false))
	before := e.Checksum(t, nil)
	e.upgrade(t)
	e.mustMerge(t, e.options())
	e.checkSameRows(t, before)
	checkMerged(t, e)
	if got := dvOf(t, e, df.FilePath); got == nil || !slices.Equal(got.ToArray(), []uint64{1, 7}) {
		t.Errorf("DV of the file outside the location = %v, want [1 7]", got)
	}
}
