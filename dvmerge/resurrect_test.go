package dvmerge

import (
	"bytes"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// resurrected builds the table the way iceberg-go v0.7.0 breaks it: v2
// position deletes (partition-scoped over d1 and d2), the upgrade, then a
// delete of id 7 that writes a DV for d1 without the earlier positions 0
// and 2, so ids 0 and 2 are visible again. It returns the data files, the
// position-delete file and the ids readers should not see.
func resurrected(t *testing.T, e *env) (d1, d2, pos manifest.DataFile) {
	t.Helper()
	d1 = e.writeData(t, "d1", "x", seq(0, 10)...)
	d2 = e.writeData(t, "d2", "x", seq(100, 10)...)
	e.Append(t, nil, d1, d2)
	pos = e.writePos(t, "multi", d1, map[string][]int64{d1.FilePath: {0, 2}, d2.FilePath: {5}}, false)
	e.AddDeletes(t, nil, pos)
	e.upgrade(t)
	e.AddDeletes(t, nil, e.writeDVs(t, "bad-dv", d1, map[string][]int64{d1.FilePath: {7}})...)
	return d1, d2, pos
}

func TestResurrectedPlainMergeLeavesRows(t *testing.T) {
	e := newEnv(t, false)
	d1, d2, pos := resurrected(t, e)
	tbl := e.Load(t)
	found, err := table.FindResurrected(e.Ctx, tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot())
	if err != nil || len(found) != 1 || found[0].DataFile.Entry.DataFile.FilePath != d1.FilePath || !slices.Equal(found[0].First(5), []int64{0, 2}) {
		t.Fatalf("FindResurrected = %+v, %v", found, err)
	}
	ids := e.ids(t)
	if !slices.Contains(ids, 0) || !slices.Contains(ids, 2) || slices.Contains(ids, 7) || slices.Contains(ids, 105) {
		t.Fatalf("fixture: ids %v; want 0 and 2 visible again, 7 and 105 deleted", ids)
	}
	before := e.Checksum(t, nil)
	rep := e.mustMerge(t, e.options())
	e.checkSameRows(t, before)
	if got := e.ids(t); !slices.Equal(got, ids) {
		t.Errorf("ids after plain merge = %v, want %v", got, ids)
	}
	// The position-delete file stays: it is the evidence.
	checkMerged(t, e, pos.FilePath)
	if len(rep.Kept) != 1 || rep.Kept[0].DeleteFile != pos.FilePath || !rep.Kept[0].Resurrected || !slices.Equal(rep.Kept[0].HeldBy, []string{d1.FilePath}) {
		t.Errorf("kept = %+v", rep.Kept)
	}
	if len(rep.Resurrected) != 1 || rep.Resurrected[0].Positions != 2 || !slices.Equal(rep.Resurrected[0].FirstPositions, []int64{0, 2}) {
		t.Errorf("resurrected = %+v", rep.Resurrected)
	}
	if len(rep.Repaired) != 0 || !slices.Equal(rep.Operations, []string{spec.OperationReplace}) {
		t.Errorf("repaired %+v, operations %v", rep.Repaired, rep.Operations)
	}
	if got := dvOf(t, e, d2.FilePath); got == nil || !slices.Equal(got.ToArray(), []uint64{5}) {
		t.Errorf("DV of d2 = %v", got)
	}
	tbl = e.Load(t)
	if again, _ := table.FindResurrected(e.Ctx, tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot()); len(again) != 1 {
		t.Errorf("after plain merge FindResurrected = %+v, want the same one", again)
	}

	// --repair-resurrected deletes them again, lists each row, and retires
	// the position-delete file.
	opts := e.options()
	opts.RepairResurrected = true
	rep = e.mustMerge(t, opts)
	if got := e.ids(t); slices.Contains(got, 0) || slices.Contains(got, 2) || len(got) != len(ids)-2 {
		t.Errorf("ids after repair = %v", got)
	}
	checkMerged(t, e)
	if len(rep.Repaired) != 1 || !slices.Equal(rep.Repaired[0].Positions, []int64{0, 2}) ||
		!slices.Equal(rep.Repaired[0].Rows, []string{"id=0, cat=x", "id=2, cat=x"}) {
		t.Errorf("repaired = %+v", rep.Repaired)
	}
	if !slices.Equal(rep.Operations, []string{spec.OperationDelete}) || rep.PositionDeleteFilesRetired != 1 {
		t.Errorf("operations %v, retired %d", rep.Operations, rep.PositionDeleteFilesRetired)
	}
	tbl = e.Load(t)
	if again, err := table.FindResurrected(e.Ctx, tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot()); err != nil || len(again) != 0 {
		t.Errorf("after repair FindResurrected = %+v, %v", again, err)
	}
	if hasIcebergGo() {
		if g := e.icebergGo(t); g.RowCount != int64(len(ids)-2) {
			t.Errorf("iceberg-go reads %d rows after repair, want %d", g.RowCount, len(ids)-2)
		}
	}
}

// More than one live DV for a data file (another writer's defect) are
// merged into one and reported.
func TestMergeDuplicateDVs(t *testing.T) {
	e := newEnv(t, false)
	d1 := e.writeData(t, "d1", "x", seq(0, 10)...)
	e.Append(t, nil, d1)
	e.upgrade(t)
	e.AddDeletes(t, nil, e.writeDVs(t, "a", d1, map[string][]int64{d1.FilePath: {1}})...)
	e.AddDeletes(t, nil, e.writeDVs(t, "b", d1, map[string][]int64{d1.FilePath: {3}})...)
	rep := e.mustMerge(t, e.options())
	checkMerged(t, e)
	if got := dvOf(t, e, d1.FilePath); got == nil || !slices.Equal(got.ToArray(), []uint64{1, 3}) {
		t.Errorf("DV = %v, want [1 3]", got)
	}
	if len(rep.MultipleDVs) != 1 || len(rep.MultipleDVs[0].DVs) != 2 || rep.DVsRemoved != 2 {
		t.Errorf("report = %+v", rep)
	}
}

// The DV written for a conformance vector's positions is Java's bytes.
func TestMergedDVIsJavasBytes(t *testing.T) {
	want, err := os.ReadFile(testenv.ConformanceFile(t, "dv/small-alternating-values-position-index.bin"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, false)
	d1 := e.writeData(t, "d1", "x", seq(0, 10)...)
	e.Append(t, nil, d1)
	e.AddDeletes(t, nil, e.writePos(t, "a", d1, map[string][]int64{d1.FilePath: {1, 5}}, false),
		e.writePos(t, "b", d1, map[string][]int64{d1.FilePath: {3, 7, 9}}, true))
	e.upgrade(t)
	e.mustMerge(t, e.options())
	tbl := e.Load(t)
	var got []byte
	for _, d := range liveFiles(t, e).Deletes {
		df := d.Entry.DataFile
		if !table.IsDV(&df) {
			continue
		}
		f, err := tbl.IO.Open(e.Ctx, df.FilePath)
		if err != nil {
			t.Fatal(err)
		}
		got = make([]byte, *df.ContentSizeInBytes)
		_, err = io.ReadFull(io.NewSectionReader(f, *df.ContentOffset, *df.ContentSizeInBytes), got)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Errorf("DV blob = % x\nJava's    % x", got, want)
	}
}
