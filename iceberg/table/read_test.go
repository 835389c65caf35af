package table

import (
	"errors"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
)

func TestWalkEntriesOrderIsDeterministic(t *testing.T) {
	e, tbl := newEnv(t, 2)
	var snap *spec.Snapshot
	var want []string
	for i := range 6 {
		d := e.writeData(t, tbl, "d"+itoa(int64(i)), int64(i))
		tbl, snap = e.commit(t, tbl, appendFiles(d))
		// New manifests go first in each manifest list.
		want = append([]string{d.FilePath}, want...)
	}
	for _, n := range []int{1, 3, 16} {
		var got []string
		err := WalkEntries(e.ctx, tbl.IO, snap, WalkOptions{Concurrency: n}, func(fe FileEntry) error {
			got = append(got, fe.Entry.DataFile.FilePath)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("concurrency %d: %d entries, want %d", n, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("concurrency %d: entry %d = %s, want %s", n, i, got[i], want[i])
			}
		}
	}
	stop := errors.New("stop")
	calls := 0
	err := WalkEntries(e.ctx, tbl.IO, snap, WalkOptions{Concurrency: 2}, func(FileEntry) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("walk after fn error: err %v, %d calls", err, calls)
	}
	n := 0
	if err := WalkEntries(e.ctx, tbl.IO, snap, WalkOptions{Content: DeletesOnly}, func(FileEntry) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("DeletesOnly on a table without deletes: %d entries, err %v", n, err)
	}
}
