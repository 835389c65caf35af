package table

import (
	"errors"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// TestBaseFilesOnlyOfTheBase: a commit builds on the live files its
// caller read (Change.BaseFiles) only when they are all the live files of
// the snapshot the attempt builds on; otherwise it reads the base itself.
func TestBaseFilesOnlyOfTheBase(t *testing.T) {
	e, t0 := newEnv(t, 2)
	d1 := e.writeData(t, t0, "d1", 1, 2)
	d2 := e.writeData(t, t0, "d2", 3)
	t0, s0 := e.commit(t, t0, appendFiles(d1, d2))
	fs0, err := LiveFiles(e.ctx, t0.IO, s0)
	if err != nil {
		t.Fatal(err)
	}

	// Taken when they are the base's: a set that leaves d2 out shows in
	// the summary's totals.
	partial := *fs0
	partial.Data = []FileEntry{fs0.Data[0]}
	if partial.Data[0].Entry.DataFile.FilePath != d1.FilePath {
		partial.Data[0] = fs0.Data[1]
	}
	d3 := e.writeData(t, t0, "d3", 1, 2)
	_, snap, err := CommitChange(e.ctx, e.cat, t0, Change{
		Operation: spec.OperationReplace, AddData: []manifest.DataFile{d3}, Remove: []FileKey{PathKey(d1.FilePath)},
		BaseFiles: func(*spec.Snapshot) *FileSet { return &partial },
	}, e.noWait)
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Summary["total-data-files"]; got != "1" {
		t.Errorf("total-data-files = %s, want 1: the commit did not build on the base files it was given", got)
	}

	// Not taken when read from another snapshot: a retry against a head
	// where d1 is gone must see it gone, whatever the caller read before.
	e2, u0 := newEnv(t, 2)
	d1 = e2.writeData(t, u0, "d1", 1, 2)
	d2 = e2.writeData(t, u0, "d2", 3)
	u0, s0 = e2.commit(t, u0, appendFiles(d1, d2))
	fs0, err = LiveFiles(e2.ctx, u0.IO, s0)
	if err != nil {
		t.Fatal(err)
	}
	e2.commit(t, u0, Change{Operation: spec.OperationDelete, Remove: []FileKey{PathKey(d1.FilePath)}})
	var asked []int64
	d3 = e2.writeData(t, u0, "d3", 1, 2, 3)
	_, _, err = CommitChange(e2.ctx, e2.cat, u0, Change{
		Operation: spec.OperationReplace, AddData: []manifest.DataFile{d3},
		Remove: []FileKey{PathKey(d1.FilePath), PathKey(d2.FilePath)},
		BaseFiles: func(snap *spec.Snapshot) *FileSet {
			asked = append(asked, snap.SnapshotID)
			return fs0
		},
	}, e2.noWait)
	if !errors.Is(err, ErrFileGone) {
		t.Fatalf("err = %v, want ErrFileGone: the retry built on files read from an older snapshot", err)
	}
	if len(asked) != 2 || asked[0] != s0.SnapshotID || asked[1] == s0.SnapshotID {
		t.Errorf("BaseFiles asked for snapshots %v, want %d then the new head", asked, s0.SnapshotID)
	}

	// Not taken when it holds only some content: the summary still
	// counts the delete file.
	e3, v0 := newEnv(t, 2)
	d1 = e3.writeData(t, v0, "d1", 1, 2)
	d2 = e3.writeData(t, v0, "d2", 3)
	v0, _ = e3.commit(t, v0, appendFiles(d1, d2))
	pd := e3.writePosDeletes(t, v0, "pd", map[string][]int64{d1.FilePath: {0}}, true)
	v0, s1 := e3.commit(t, v0, Change{Operation: spec.OperationDelete, AddDeletes: []manifest.DataFile{pd}})
	dataOnly, err := LiveFilesWith(e3.ctx, v0.IO, s1, WalkOptions{Content: DataOnly})
	if err != nil {
		t.Fatal(err)
	}
	d4 := e3.writeData(t, v0, "d4", 3)
	_, snap = e3.commit(t, v0, Change{
		Operation: spec.OperationReplace, AddData: []manifest.DataFile{d4}, Remove: []FileKey{PathKey(d2.FilePath)},
		BaseFiles: func(*spec.Snapshot) *FileSet { return dataOnly },
	})
	if got := snap.Summary["total-delete-files"]; got != "1" {
		t.Errorf("total-delete-files = %s, want 1", got)
	}
}
