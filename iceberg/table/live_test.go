package table

import (
	"reflect"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

func TestLiveFilesSkipMetrics(t *testing.T) {
	e, tbl := newEnv(t, 2)
	var snap *spec.Snapshot
	d1 := e.writeData(t, tbl, "d1", 1, 2, 3)
	d2 := e.writeData(t, tbl, "d2", 4, 5)
	d1.ColumnSizes, d1.ValueCounts = map[int]int64{1: 10}, map[int]int64{1: 3}
	d1.LowerBounds, d1.UpperBounds = map[int][]byte{1: {1, 0, 0, 0, 0, 0, 0, 0}}, map[int][]byte{1: {3, 0, 0, 0, 0, 0, 0, 0}}
	d1.SplitOffsets = []int64{4}
	tbl, _ = e.commit(t, tbl, appendFiles(d1, d2))
	pd := e.writePosDeletes(t, tbl, "pd", map[string][]int64{d1.FilePath: {0}}, false)
	path := []byte(d1.FilePath)
	pd.LowerBounds = map[int][]byte{spec.FieldIDFilePath: path, spec.FieldIDPos: {0, 0, 0, 0, 0, 0, 0, 0}}
	pd.UpperBounds = map[int][]byte{spec.FieldIDFilePath: path, spec.FieldIDPos: {0, 0, 0, 0, 0, 0, 0, 0}}
	tbl, snap = e.commit(t, tbl, Change{Operation: spec.OperationOverwrite, AddDeletes: []manifest.DataFile{pd}})

	full, err := LiveFiles(e.ctx, tbl.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	lean, err := LiveFilesWith(e.ctx, tbl.IO, snap, WalkOptions{SkipMetrics: true, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Data) != 2 || len(full.Deletes) != 1 {
		t.Fatalf("full read: %d data, %d deletes; want 2 and 1", len(full.Data), len(full.Deletes))
	}
	if full.Data[0].Entry.DataFile.ColumnSizes == nil && full.Data[1].Entry.DataFile.ColumnSizes == nil {
		t.Fatal("full read lost the column sizes the test wrote")
	}
	for _, c := range []struct {
		what       string
		full, lean []FileEntry
	}{{"data", full.Data, lean.Data}, {"deletes", full.Deletes, lean.Deletes}} {
		if len(c.full) != len(c.lean) {
			t.Fatalf("%s: %d lean, %d full", c.what, len(c.lean), len(c.full))
		}
		for i := range c.full {
			want := c.full[i]
			df := &want.Entry.DataFile
			df.ColumnSizes, df.ValueCounts, df.NullValueCounts, df.NaNValueCounts, df.SplitOffsets = nil, nil, nil, nil, nil
			df.LowerBounds, df.UpperBounds = filePathOnly(df.LowerBounds), filePathOnly(df.UpperBounds)
			if !reflect.DeepEqual(c.lean[i], want) {
				t.Errorf("%s %d:\nlean %+v\nwant %+v", c.what, i, c.lean[i], want)
			}
		}
	}
	if b := lean.Deletes[0].Entry.DataFile.LowerBounds[spec.FieldIDFilePath]; string(b) != d1.FilePath {
		t.Errorf("lean read lost the file_path bound of the position delete: %q", b)
	}
}

func filePathOnly(m map[int][]byte) map[int][]byte {
	v, ok := m[spec.FieldIDFilePath]
	if !ok {
		return nil
	}
	return map[int][]byte{spec.FieldIDFilePath: v}
}
