package table

import (
	"errors"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// Delete manifests written by a ManifestSink are committed as they are:
// their ADDED entries inherit the snapshot id and sequence numbers of the
// snapshot that lists them, also when a conflict made the commit retry.
func TestAddManifestsInheritAcrossRetry(t *testing.T) {
	e, tbl := newEnv(t, 3)
	d1 := e.writeData(t, tbl, "d1", 1, 2, 3)
	d2 := e.writeData(t, tbl, "d2", 4, 5)
	tbl, _ = e.commit(t, tbl, appendFiles(d1, d2))
	dvs := e.writeDVs(t, tbl, "dv", map[string][]int64{d1.FilePath: {0}, d2.FilePath: {1}})
	sink, err := NewManifestSink(tbl.IO, tbl.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	for i := range dvs {
		if err := sink.Add(e.ctx, &dvs[i]); err != nil {
			t.Fatal(err)
		}
	}
	added, err := sink.Finish()
	if err != nil {
		t.Fatal(err)
	}
	// A conflict on the first attempt: the retry lists the same manifests.
	cat := &faultCatalog{Catalog: e.cat, before: func(n int) error {
		if n == 1 {
			return conflictErr(n)
		}
		return nil
	}}
	res, snap, err := CommitChange(e.ctx, cat, tbl, Change{Operation: spec.OperationDelete, AddManifests: added}, e.noWait)
	if err != nil {
		t.Fatal(err)
	}
	checkTotals(t, e.ctx, res, snap)
	if snap.Summary["added-dvs"] != "2" || snap.Summary["added-delete-files"] != "2" || snap.Summary["added-position-deletes"] != "2" {
		t.Errorf("summary %v", snap.Summary)
	}
	ents := entriesByPath(t, res, snap)
	if n := len(ents[dvs[0].FilePath]); n != 2 {
		t.Fatalf("%d entries of the Puffin file, want 2", n)
	}
	for _, got := range ents[dvs[0].FilePath] {
		checkEntry(t, got, manifest.StatusAdded, snap.SnapshotID, snap.SequenceNumber, snap.SequenceNumber)
	}
	fs, err := LiveFiles(e.ctx, res.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	ix := DeletesForTable(res.Metadata, fs)
	for _, d := range fs.Data {
		if a := ix.For(d); a.DV == nil || *a.DV.Entry.DataFile.ReferencedDataFile != d.Entry.DataFile.FilePath {
			t.Errorf("%s has no DV", d.Key())
		}
	}

	// A copy without d2's DV lists one file.
	sink2, err := NewManifestSink(res.IO, res.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	if err := added.CopyTo(e.ctx, sink2, func(df *manifest.DataFile) bool { return *df.ReferencedDataFile == d1.FilePath }); err != nil {
		t.Fatal(err)
	}
	copied, err := sink2.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if copied.Files() != 1 {
		t.Errorf("copy lists %d files, want 1", copied.Files())
	}
	if err := copied.Remove(e.ctx, res.IO, res.Metadata); err != nil {
		t.Fatal(err)
	}
	for _, mf := range copied.Manifests {
		if exists(t, res.IO, mf.Path) {
			t.Errorf("%s not removed", mf.Path)
		}
	}
}

// A DV in added manifests whose data file is not live (or that the change
// removes) stops the commit.
func TestAddManifestsRefersToGoneFile(t *testing.T) {
	e, tbl := newEnv(t, 3)
	d1 := e.writeData(t, tbl, "d1", 1, 2, 3)
	tbl, _ = e.commit(t, tbl, appendFiles(d1))
	gone := e.writeData(t, tbl, "gone", 4)
	for _, tc := range []struct {
		name   string
		ref    string
		remove []FileKey
	}{{"not live", gone.FilePath, nil}, {"removed", d1.FilePath, []FileKey{KeyOf(&d1)}}} {
		dvs := e.writeDVs(t, tbl, "dv-"+tc.name, map[string][]int64{tc.ref: {0}})
		sink, err := NewManifestSink(tbl.IO, tbl.Metadata)
		if err != nil {
			t.Fatal(err)
		}
		if err := sink.Add(e.ctx, &dvs[0]); err != nil {
			t.Fatal(err)
		}
		added, err := sink.Finish()
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = CommitChange(e.ctx, e.cat, tbl, Change{Operation: spec.OperationDelete, AddManifests: added, Remove: tc.remove}, e.noWait)
		if !errors.Is(err, ErrFileGone) {
			t.Errorf("%s: commit error %v, want ErrFileGone", tc.name, err)
		}
	}
}
