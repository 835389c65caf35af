package table

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/testenv"
)

func TestPackEnd(t *testing.T) {
	id := func(v int) int64 { return int64(v) }
	for _, tc := range []struct {
		items  []int
		target int64
		want   [][]int
	}{
		{nil, 10, nil},
		{[]int{3}, 10, [][]int{{3}}},
		// Packed from the end: the first bin is the under-filled one.
		{[]int{1, 2, 3, 4, 5}, 9, [][]int{{1, 2, 3}, {4, 5}}},
		{[]int{4, 20, 4}, 10, [][]int{{4}, {20}, {4}}},
		{[]int{5, 5, 5, 5}, 10, [][]int{{5, 5}, {5, 5}}},
	} {
		got := PackEnd(tc.items, id, tc.target)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("PackEnd(%v, %d) = %v, want %v", tc.items, tc.target, got, tc.want)
		}
	}
}

func TestMergeConfigOf(t *testing.T) {
	md := &spec.TableMetadata{Properties: map[string]string{}}
	c, err := MergeConfigOf(md)
	if err != nil || c != (MergeConfig{Enabled: true, MinCount: 100, TargetSize: 8 << 20}) {
		t.Errorf("defaults = %+v, %v", c, err)
	}
	md.Properties = map[string]string{PropManifestMergeEnabled: "false", PropManifestMinMergeCount: "5", PropManifestTargetSize: "1024"}
	c, err = MergeConfigOf(md)
	if err != nil || c != (MergeConfig{Enabled: false, MinCount: 5, TargetSize: 1024}) {
		t.Errorf("set = %+v, %v", c, err)
	}
	for k, v := range map[string]string{PropManifestMergeEnabled: "sometimes", PropManifestMinMergeCount: "-1", PropManifestTargetSize: "8MB"} {
		if _, err := MergeConfigOf(&spec.TableMetadata{Properties: map[string]string{k: v}}); err == nil {
			t.Errorf("%s=%q accepted", k, v)
		}
	}
}

func setProps(t *testing.T, e *env, tbl *catalog.Table, props map[string]string) *catalog.Table {
	t.Helper()
	res, err := e.cat.CommitTable(e.ctx, tbl, nil, []spec.Update{spec.SetProperties{Updates: props}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func manifestCount(t *testing.T, e *env, tbl *catalog.Table, snap *spec.Snapshot) (data, deletes int) {
	t.Helper()
	mfs, err := ManifestFiles(e.ctx, tbl.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.Content == manifest.ManifestContentDeletes {
			deletes++
		} else {
			data++
		}
	}
	return data, deletes
}

// Cron-style appends: the manifest count never passes min-count-to-merge
// (20 here rather than the default 100, to keep the test short; the rule
// is the same), and the merge keeps every row and its lineage as the
// independent reader sees them.
func TestManifestMergeBoundsCountV3(t *testing.T) {
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	const minCount = 20
	e, tbl := newEnv(t, 3)
	tbl = setProps(t, e, tbl, map[string]string{PropManifestMinMergeCount: fmt.Sprint(minCount)})
	var snap *spec.Snapshot
	var before []scanRow
	merged := false
	for i := int64(0); i < 2*minCount+5; i++ {
		if i == minCount-1 {
			before = scanWithIcebergGo(t, e, true)
		}
		df := e.writeData(t, tbl, fmt.Sprintf("d%d", i), 2*i, 2*i+1)
		tbl, snap = e.commit(t, tbl, appendFiles(df))
		n, _ := manifestCount(t, e, tbl, snap)
		if n > minCount {
			t.Fatalf("commit %d: %d manifests", i, n)
		}
		if i == minCount-1 {
			if n != 1 {
				t.Fatalf("commit %d: %d manifests, want 1 after the merge", i, n)
			}
			merged = true
			after := scanWithIcebergGo(t, e, true)
			if len(after) != len(before)+2 {
				t.Fatalf("rows: %d before merge, %d after adding 2", len(before), len(after))
			}
			for j, b := range before {
				a := after[j]
				if !reflect.DeepEqual(a, b) {
					t.Errorf("row changed by the merge: before %+v after %+v", b, a)
				}
			}
			seen := map[int64]bool{}
			for _, a := range after {
				if a.RowID == nil || seen[*a.RowID] {
					t.Fatalf("row %d: _row_id %v null or repeated", a.ID, a.RowID)
				}
				seen[*a.RowID] = true
			}
		}
	}
	if !merged {
		t.Fatal("no merge happened")
	}
	rows := scanWithIcebergGo(t, e, true)
	if len(rows) != 2*(2*minCount+5) {
		t.Fatalf("%d rows, want %d", len(rows), 2*(2*minCount+5))
	}
}

// Compactions and deletes with merging on every commit (min count 3):
// data and delete manifests are merged apart, sequence numbers carried, so
// position deletes still apply and the rows read the same.
func TestManifestMergeKeepsDeletesV2(t *testing.T) {
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	e, tbl := newEnv(t, 2)
	tbl = setProps(t, e, tbl, map[string]string{PropManifestMinMergeCount: "3"})
	want := map[int64]bool{}
	var snap *spec.Snapshot
	var last manifest.DataFile
	for i := int64(0); i < 24; i++ {
		df := e.writeData(t, tbl, fmt.Sprintf("d%d", i), 10*i, 10*i+1, 10*i+2)
		want[10*i], want[10*i+1], want[10*i+2] = true, true, true
		switch i % 3 {
		case 0, 1:
			tbl, snap = e.commit(t, tbl, appendFiles(df))
			last = df
		case 2:
			// Compact the previous file (its deleted row stays deleted)
			// together with appending this one.
			pd := e.writePosDeletes(t, tbl, fmt.Sprintf("pd%d", i), map[string][]int64{last.FilePath: {0}}, false)
			tbl, snap = e.commit(t, tbl, Change{Operation: spec.OperationDelete, AddDeletes: []manifest.DataFile{pd}})
			delete(want, 10*(i-1))
			tbl, snap = e.commit(t, tbl, appendFiles(df))
		}
		d, del := manifestCount(t, e, tbl, snap)
		if d >= 3+1 || del >= 3+1 {
			t.Fatalf("commit %d: %d data and %d delete manifests, want below min count + 1", i, d, del)
		}
	}
	rows := scanWithIcebergGo(t, e, false)
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for _, r := range rows {
		if !want[r.ID] {
			t.Errorf("row %d read, deleted or unknown", r.ID)
		}
	}
}

func TestManifestMergeDisabled(t *testing.T) {
	e, tbl := newEnv(t, 2)
	tbl = setProps(t, e, tbl, map[string]string{PropManifestMergeEnabled: "false", PropManifestMinMergeCount: "2"})
	var snap *spec.Snapshot
	for i := int64(0); i < 4; i++ {
		tbl, snap = e.commit(t, tbl, appendFiles(e.writeData(t, tbl, fmt.Sprintf("d%d", i), i)))
	}
	if d, _ := manifestCount(t, e, tbl, snap); d != 4 {
		t.Errorf("%d manifests with merging disabled, want 4", d)
	}
}

// Retries rebuild the merge on the new base; nothing merged away by one
// attempt is left behind or referenced.
func TestManifestMergeRetry(t *testing.T) {
	e, tbl := newEnv(t, 3)
	tbl = setProps(t, e, tbl, map[string]string{PropManifestMinMergeCount: "2"})
	tbl, _ = e.commit(t, tbl, appendFiles(e.writeData(t, tbl, "a", 1)))
	fc := &faultCatalog{Catalog: e.cat, before: func(n int) error {
		if n == 1 {
			return conflictErr(n)
		}
		return nil
	}}
	res, snap, err := CommitChange(e.ctx, fc, tbl, appendFiles(e.writeData(t, tbl, "b", 2)), e.noWait)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := manifestCount(t, e, res, snap); d != 1 {
		t.Errorf("%d manifests, want 1", d)
	}
	checkTotals(t, e.ctx, res, snap)
	fs, err := LiveFiles(e.ctx, res.IO, snap)
	if err != nil || len(fs.Data) != 2 {
		t.Fatalf("live data files %d, %v", len(fs.Data), err)
	}
	for _, f := range fs.Data {
		if f.Entry.DataFile.FirstRowID == nil {
			t.Errorf("%s has no first_row_id", f.Entry.DataFile.FilePath)
		}
	}
	if *fs.Data[0].Entry.DataFile.FirstRowID == *fs.Data[1].Entry.DataFile.FirstRowID {
		t.Errorf("both files start at row id %d", *fs.Data[0].Entry.DataFile.FirstRowID)
	}
}
