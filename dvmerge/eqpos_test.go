package dvmerge

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

func (e *env) eqOptions() Options {
	o := e.options()
	o.PositionDeletes = true
	return o
}

// eqPositions reads the live position-delete files this run wrote (those
// not in old): positions by data file, and the data sequence number of
// each file.
func eqPositions(t *testing.T, e *env, old map[string]bool) (map[string][]uint64, []int64) {
	t.Helper()
	tbl := e.Load(t)
	out := map[string][]uint64{}
	var seqs []int64
	for _, d := range liveFiles(t, e).Deletes {
		df := d.Entry.DataFile
		if df.Content != manifest.ContentPositionDeletes || old[df.FilePath] {
			continue
		}
		seqs = append(seqs, d.DataSequenceNumber())
		got, err := table.ReadPositionDeletes(e.Ctx, tbl.IO, &df, func(string) (bool, error) { return true, nil })
		if err != nil {
			t.Fatal(err)
		}
		for p, bm := range got {
			if _, dup := out[p]; dup {
				t.Errorf("two new position-delete files name %s", p)
			}
			out[p] = bm.ToArray()
		}
		if df.ReferencedDataFile != nil && len(got) != 1 {
			t.Errorf("%s has referenced_data_file but names %d data files", df.FilePath, len(got))
		}
		if df.LowerBounds == nil || df.RecordCount == 0 {
			t.Errorf("%s has no metrics: %+v", df.FilePath, df)
		}
	}
	return out, seqs
}

func seqOf(t *testing.T, e *env, path string) int64 {
	t.Helper()
	for _, d := range liveFiles(t, e).Deletes {
		if d.Entry.DataFile.FilePath == path {
			return d.DataSequenceNumber()
		}
	}
	t.Fatalf("%s is not live", path)
	return 0
}

// Equality deletes of a partition and of an unpartitioned spec (global)
// on a v2 table become one position-delete file per partition, carrying
// the largest sequence number of the equality deletes it replaces; the
// rows are the same, the equality-delete files retire, the table's own
// position deletes stay, and a data file written after the deletes is not
// named.
func TestConvertEqualityToPositionDeletes(t *testing.T) {
	e := newEnv(t, true)
	red := e.writeData(t, "red", "red", seq(0, 10)...)
	blue := e.writeData(t, "blue", "blue", seq(100, 10)...)
	e.Append(t, nil, red, blue)
	pos := e.writePos(t, "red-pos", red, map[string][]int64{red.FilePath: {9}}, false)
	e.AddDeletes(t, nil, pos)
	eqRed := e.writeEq(t, "red", 0, []any{"red"}, 1, 2, 9, 105) // 9 is deleted already; 105 is not in red
	e.AddDeletes(t, nil, eqRed)
	e.Update(t, spec.AddSpec{Spec: spec.PartitionSpec{ID: 1}}, spec.SetDefaultSpec{SpecID: 1})
	eqAll := e.writeEq(t, "all", 1, []any{}, 3, 104)
	e.AddDeletes(t, nil, eqAll)
	late := e.writeData(t, "late", "green", 3, 104, 500) // newer than both: they do not apply
	e.Append(t, nil, late)
	before := e.Checksum(t, nil)
	allSeq := seqOf(t, e, eqAll.FilePath)

	rep := e.mustMerge(t, e.eqOptions())
	e.checkSameRows(t, before)
	fs := liveFiles(t, e)
	if n := countKind(fs, false, manifest.ContentEqualityDeletes); n != 0 {
		t.Errorf("%d equality-delete files remain", n)
	}
	if rep.EqualityDeleteFilesRetired != 2 || rep.PositionDeleteFilesWritten != 2 || rep.PositionsWritten != 5 ||
		!slices.Equal(rep.Operations, []string{spec.OperationReplace}) || rep.DVsWritten != 0 {
		t.Errorf("report = %+v", rep)
	}
	got, seqs := eqPositions(t, e, map[string]bool{pos.FilePath: true})
	want := map[string][]uint64{red.FilePath: {1, 2, 3, 9}, blue.FilePath: {4}}
	if len(got) != len(want) || !slices.Equal(got[red.FilePath], want[red.FilePath]) || !slices.Equal(got[blue.FilePath], want[blue.FilePath]) {
		t.Errorf("new position deletes = %v, want %v", got, want)
	}
	if !slices.Equal(seqs, []int64{allSeq, allSeq}) {
		t.Errorf("new position deletes have sequence numbers %v, want %d (the global equality delete's)", seqs, allSeq)
	}
	if seqOf(t, e, pos.FilePath) == 0 {
		t.Errorf("the table's own position-delete file is gone")
	}
	for _, id := range []int64{3, 104, 500} {
		if !slices.Contains(e.ids(t), id) {
			t.Errorf("id %d of the late file is gone", id)
		}
	}

	// Nothing left: a second run plans nothing and commits nothing.
	tbl := e.Load(t)
	p, err := PlanTable(e.Ctx, tbl, e.eqOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !p.Idle() {
		t.Errorf("second plan = %+v, want idle", p)
	}
}

// Only v2 tables: a v3 table is refused with a pointer to dv merge, and
// nothing changes.
func TestConvertEqualityRefusesV3(t *testing.T) {
	e := newEnv(t, false)
	d := e.writeData(t, "d", "x", seq(0, 5)...)
	e.Append(t, nil, d)
	e.AddDeletes(t, nil, e.writeEq(t, "x", 0, []any{}, 1))
	e.upgrade(t)
	loc := e.Load(t).MetadataLocation
	meta, err := os.ReadFile(trimFile(loc))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.merge(t, e.eqOptions())
	if !errors.Is(err, ErrNotV2) {
		t.Fatalf("err = %v, want ErrNotV2", err)
	}
	if got := e.Load(t).MetadataLocation; got != loc {
		t.Errorf("metadata moved from %s to %s", loc, got)
	}
	if after, _ := os.ReadFile(trimFile(loc)); !bytes.Equal(after, meta) {
		t.Errorf("metadata file changed")
	}
}

func trimFile(loc string) string {
	if len(loc) > 7 && loc[:7] == "file://" {
		return loc[7:]
	}
	return loc
}

// While the conversion runs, a streaming writer appends a data file and
// an equality delete (a newer upsert) and another writer adds a data file
// with an older sequence number (a compaction's output) that an equality
// delete being converted applies to: the partition is merged again on
// the new table, converting both equality deletes for all three files,
// and the rows are the model's.
func TestConvertEqualityConcurrentWriters(t *testing.T) {
	e := newEnv(t, false)
	d1 := e.writeData(t, "d1", "x", seq(0, 10)...)
	e.Append(t, nil, d1)
	eq1 := e.writeEq(t, "x1", 0, []any{}, 1, 2)
	e.AddDeletes(t, nil, eq1)
	eq1Seq := seqOf(t, e, eq1.FilePath)
	rep := e.mergeRacing(t, e.eqOptions(), func() {
		// A compaction that started before eq1 rewrites nothing but adds
		// d0 with its starting sequence number: eq1 applies to it.
		d0 := e.writeData(t, "d0", "x", 50, 1, 51)
		s := eq1Seq - 1
		e.Commit(t, nil, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{d0}, DataSequenceNumber: &s})
		// The stream: a new row and an upsert deleting 3 and 50.
		d2 := e.writeData(t, "d2", "x", 200, 201)
		e.Append(t, nil, d2)
		e.AddDeletes(t, nil, e.writeEq(t, "x2", 0, []any{}, 3, 50, 200))
	})
	want := []int64{0, 4, 5, 6, 7, 8, 9, 51, 201}
	if ids := e.ids(t); !slices.Equal(ids, want) {
		t.Errorf("ids = %v, want %v", ids, want)
	}
	fs := liveFiles(t, e)
	if n := countKind(fs, false, manifest.ContentEqualityDeletes); n != 0 {
		t.Errorf("%d equality-delete files live, want 0", n)
	}
	if rep.EqualityDeleteFilesRetired != 2 || rep.Commits != 1 || rep.Partitions[0].Status != StatusRebuilt {
		t.Errorf("report = %+v %+v", rep, rep.Partitions)
	}
	if hasIcebergGo() {
		if g := e.icebergGo(t); g.RowCount != int64(len(want)) {
			t.Errorf("iceberg-go reads %d rows, want %d", g.RowCount, len(want))
		}
	}
}

// A streaming append and a newer equality delete alone change nothing
// the conversion read: it commits at once, without merging again.
func TestConvertEqualityStreamingAppend(t *testing.T) {
	e := newEnv(t, false)
	d1 := e.writeData(t, "d1", "x", seq(0, 10)...)
	e.Append(t, nil, d1)
	eq1 := e.writeEq(t, "x1", 0, []any{}, 1, 2)
	e.AddDeletes(t, nil, eq1)
	rep := e.mergeRacing(t, e.eqOptions(), func() {
		d2 := e.writeData(t, "d2", "x", 200, 2)
		e.Append(t, nil, d2)
		e.AddDeletes(t, nil, e.writeEq(t, "x2", 0, []any{}, 3, 200))
	})
	want := []int64{0, 2, 4, 5, 6, 7, 8, 9}
	if ids := e.ids(t); !slices.Equal(ids, want) {
		t.Errorf("ids = %v, want %v", ids, want)
	}
	if rep.EqualityDeleteFilesRetired != 1 || rep.Commits != 1 || rep.Partitions[0].Status != StatusCommitted {
		t.Errorf("report = %+v %+v", rep, rep.Partitions)
	}
}
