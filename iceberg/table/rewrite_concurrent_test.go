package table

import (
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// TestReplaceRewritesManyManifestsConcurrently removes one of the two
// files of each of ten appends in one replace: the ten manifests are
// rewritten concurrently, yet named in list order, and each keeps its
// other file EXISTING with its own sequence numbers.
func TestReplaceRewritesManyManifestsConcurrently(t *testing.T) {
	e, tbl := newEnv(t, 2)
	const appends = 10
	var removed, kept []manifest.DataFile
	for i := range appends {
		a := e.writeData(t, tbl, fmt.Sprintf("a%d", i), int64(2*i))
		b := e.writeData(t, tbl, fmt.Sprintf("b%d", i), int64(2*i+1))
		tbl, _ = e.commit(t, tbl, appendFiles(a, b))
		removed, kept = append(removed, a), append(kept, b)
	}
	before, err := ManifestFiles(e.ctx, tbl.IO, tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	out := e.writeData(t, tbl, "out", 0, 2, 4, 6, 8, 10, 12, 14, 16, 18)
	ch := Change{Operation: spec.OperationReplace, AddData: []manifest.DataFile{out}, DataSequenceNumber: ptr(int64(1))}
	for _, df := range removed {
		ch.Remove = append(ch.Remove, PathKey(df.FilePath))
	}
	tbl, snap := e.commit(t, tbl, ch)

	mfs, err := ManifestFiles(e.ctx, tbl.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != appends+1 {
		t.Fatalf("%d manifests after the replace, want %d", len(mfs), appends+1)
	}
	for i, mf := range mfs {
		if !strings.HasSuffix(path.Base(mf.Path), fmt.Sprintf("-m%d.avro", i)) {
			t.Errorf("manifest %d is %s, want the name ending -m%d.avro", i, path.Base(mf.Path), i)
		}
	}
	ents := entriesByPath(t, tbl, snap)
	checkEntry(t, one(t, ents, out.FilePath), manifest.StatusAdded, snap.SnapshotID, 1, int64(appends+1))
	for i := range appends {
		// Rewrite i (manifest i+1) is of the base's manifest i, newest first.
		seq := before[i].SequenceNumber
		a, b := one(t, ents, removed[seq-1].FilePath), one(t, ents, kept[seq-1].FilePath)
		checkEntry(t, a, manifest.StatusDeleted, snap.SnapshotID, seq, seq)
		addedBy := *b.Entry.SnapshotID
		checkEntry(t, b, manifest.StatusExisting, addedBy, seq, seq)
		if a.Manifest.Path != mfs[i+1].Path || b.Manifest.Path != mfs[i+1].Path {
			t.Errorf("files of append %d are in %s and %s, want both in %s", seq, a.Manifest.Path, b.Manifest.Path, mfs[i+1].Path)
		}
	}

	// A walk through one cache parses the shared entry schema once.
	cache := manifest.NewSchemaCache()
	if _, err := LiveFilesWith(e.ctx, tbl.IO, snap, WalkOptions{Schemas: cache}); err != nil {
		t.Fatal(err)
	}
	if hits, misses := cache.Stats(); misses != 1 || hits != appends {
		t.Errorf("walk of %d manifests: %d schema parses and %d cache hits, want 1 and %d", appends+1, misses, hits, appends)
	}
}
