package table

import (
	"errors"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
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

// A ManifestSink refuses what a commit of AddDeletes refuses: a
// position-delete file in v3, a DV before v3, a DV without its data
// file, a data file among the deletes. Nothing is written for them.
func TestManifestSinkRefusesWhatTheCommitRefuses(t *testing.T) {
	e3, tbl3 := newEnv(t, 3)
	d := e3.writeData(t, tbl3, "d", 1, 2)
	pos := e3.writePosDeletes(t, tbl3, "p", map[string][]int64{d.FilePath: {0}}, false)
	dv := e3.writeDVs(t, tbl3, "dv", map[string][]int64{d.FilePath: {0}})[0]
	noRef := dv
	noRef.ReferencedDataFile = nil
	_, tbl2 := newEnv(t, 2)
	for _, c := range []struct {
		name string
		tbl  *catalog.Table
		df   manifest.DataFile
		want string
	}{
		{"position deletes in v3", tbl3, pos, "format v3 tables take deletion vectors"},
		{"DV without its data file", tbl3, noRef, "has no referenced data file"},
		{"data file", tbl3, d, "has content 0"},
		{"DV in v2", tbl2, dv, "deletion vectors need format v3"},
	} {
		sink, err := NewManifestSink(c.tbl.IO, c.tbl.Metadata)
		if err != nil {
			t.Fatal(err)
		}
		err = sink.Add(e3.ctx, &c.df)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
		added, err := sink.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if n := added.Files(); n != 0 {
			t.Errorf("%s: %d files added", c.name, n)
		}
	}
}

// A delete file added with AddWithDataSequence keeps that data sequence
// number (its file sequence number and snapshot id are the commit's),
// also through CopyTo; the manifest's min_sequence_number says so.
func TestAddManifestsWithDataSequence(t *testing.T) {
	e, tbl := newEnv(t, 2)
	d1 := e.writeData(t, tbl, "d1", 1, 2, 3)
	tbl, first := e.commit(t, tbl, appendFiles(d1))
	d2 := e.writeData(t, tbl, "d2", 4, 5)
	tbl, _ = e.commit(t, tbl, appendFiles(d2))
	pos := e.writePosDeletes(t, tbl, "pos", map[string][]int64{d1.FilePath: {0}}, true)
	sink, err := NewManifestSink(tbl.IO, tbl.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.AddWithDataSequence(e.ctx, &pos, first.SequenceNumber); err != nil {
		t.Fatal(err)
	}
	added, err := sink.Finish()
	if err != nil {
		t.Fatal(err)
	}
	sink2, err := NewManifestSink(tbl.IO, tbl.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	if err := added.CopyTo(e.ctx, sink2, func(*manifest.DataFile) bool { return true }); err != nil {
		t.Fatal(err)
	}
	copied, err := sink2.Finish()
	if err != nil {
		t.Fatal(err)
	}
	res, snap, err := CommitChange(e.ctx, e.cat, tbl, Change{Operation: spec.OperationDelete, AddManifests: copied}, e.noWait)
	if err != nil {
		t.Fatal(err)
	}
	ents := entriesByPath(t, res, snap)
	if len(ents[pos.FilePath]) != 1 {
		t.Fatalf("%d entries of %s, want 1", len(ents[pos.FilePath]), pos.FilePath)
	}
	checkEntry(t, ents[pos.FilePath][0], manifest.StatusAdded, snap.SnapshotID, first.SequenceNumber, snap.SequenceNumber)
	mfs, err := ManifestFiles(e.ctx, res.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.Content == manifest.ManifestContentDeletes && mf.MinSequenceNumber != first.SequenceNumber {
			t.Errorf("delete manifest min_sequence_number %d, want %d", mf.MinSequenceNumber, first.SequenceNumber)
		}
	}
	if err := added.Remove(e.ctx, res.IO, res.Metadata); err != nil {
		t.Fatal(err)
	}
}
