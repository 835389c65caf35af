package table

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/hamba/avro/v2/ocf"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// relist is the first v3 commit of an upgrade: no file added or removed,
// the manifests listed again so that each data manifest gets a first_row_id.
func relist(to int) Change {
	return Change{Operation: spec.OperationReplace, RelistOnly: true, FormatVersion: to}
}

func TestRelistUpgradeAssignsRowIDsInOneCommit(t *testing.T) {
	e, tbl := newEnv(t, 2)
	d1 := e.writeData(t, tbl, "d1", 1, 2, 3)
	tbl, _ = e.commit(t, tbl, appendFiles(d1))
	d2 := e.writeData(t, tbl, "d2", 4, 5, 6, 7)
	pd := e.writePosDeletes(t, tbl, "p1", map[string][]int64{d1.FilePath: {1}}, false)
	tbl, before := e.commit(t, tbl, Change{Operation: spec.OperationOverwrite, AddData: []manifest.DataFile{d2}, AddDeletes: []manifest.DataFile{pd}})
	oldMfs, err := ManifestFiles(e.ctx, tbl.IO, before)
	if err != nil {
		t.Fatal(err)
	}
	logLen := len(tbl.Metadata.MetadataLog)

	tbl, snap := e.commit(t, tbl, relist(3))
	md := tbl.Metadata
	if md.FormatVersion != 3 || len(md.MetadataLog) != logLen+1 {
		t.Fatalf("format v%d after %d metadata versions, want v3 in one commit", md.FormatVersion, len(md.MetadataLog)-logLen)
	}
	if *snap.ParentSnapshotID != before.SnapshotID || snap.Operation() != spec.OperationReplace {
		t.Errorf("snapshot parent %d operation %q", *snap.ParentSnapshotID, snap.Operation())
	}
	if *snap.FirstRowID != 0 || *snap.AddedRows != 7 || *md.NextRowID != 7 {
		t.Errorf("first-row-id %d added-rows %d next-row-id %d, want 0 7 7", *snap.FirstRowID, *snap.AddedRows, *md.NextRowID)
	}
	if _, ok := md.SnapshotByID(before.SnapshotID); !ok || before.FirstRowID != nil {
		t.Error("the snapshot before the upgrade changed")
	}
	mfs, err := ManifestFiles(e.ctx, tbl.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != len(oldMfs) {
		t.Fatalf("%d manifests, want the %d of the parent", len(mfs), len(oldMfs))
	}
	for i, mf := range mfs {
		if mf.Path != oldMfs[i].Path {
			t.Errorf("manifest %d is %s, want the parent's %s unchanged", i, mf.Path, oldMfs[i].Path)
		}
		if (mf.Content == manifest.ManifestContentData) != (mf.FirstRowID != nil) {
			t.Errorf("manifest %s (content %d) first_row_id %v", mf.Path, mf.Content, mf.FirstRowID)
		}
	}
	checkRowIDs(t, tbl, snap, 7, d1, d2)

	// A relist of a table whose manifests all have ids assigns nothing.
	tbl, again := e.commit(t, tbl, relist(3))
	if *again.AddedRows != 0 || *tbl.Metadata.NextRowID != 7 {
		t.Errorf("second relist: added-rows %d next-row-id %d", *again.AddedRows, *tbl.Metadata.NextRowID)
	}
}

// checkRowIDs checks that the data files get disjoint row-id ranges
// covering [0, n).
func checkRowIDs(t *testing.T, tbl *catalog.Table, snap *spec.Snapshot, n int64, files ...manifest.DataFile) {
	t.Helper()
	ents := entriesByPath(t, tbl, snap)
	seen := map[int64]bool{}
	for _, f := range files {
		df := one(t, ents, f.FilePath).Entry.DataFile
		if df.FirstRowID == nil {
			t.Fatalf("%s has no first_row_id", f.FilePath)
		}
		for i := range df.RecordCount {
			id := *df.FirstRowID + i
			if id < 0 || id >= n || seen[id] {
				t.Errorf("row id %d of %s out of range or repeated", id, f.FilePath)
			}
			seen[id] = true
		}
	}
}

func TestChangeRelistChecks(t *testing.T) {
	for _, c := range []struct {
		ch   Change
		want string
	}{
		{Change{Operation: spec.OperationReplace}, "adds and removes nothing"},
		{Change{Operation: spec.OperationReplace, RelistOnly: true, Remove: []FileKey{PathKey("x")}}, "must add and remove nothing"},
		{Change{Operation: spec.OperationReplace, RelistOnly: true, FormatVersion: 4}, "format version 4"},
	} {
		if err := c.ch.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.ch, err, c.want)
		}
	}
}

// v1ListSchema is a v1 manifest list as early writers wrote it: the
// required fields only, no file or row counts.
const v1ListSchema = `{"type":"record","name":"manifest_file","fields":[
{"name":"manifest_path","type":"string","field-id":500},
{"name":"manifest_length","type":"long","field-id":501},
{"name":"partition_spec_id","type":"int","field-id":502},
{"name":"added_snapshot_id","type":["null","long"],"default":null,"field-id":503}]}`

// rewriteAsV1List replaces snap's manifest list by a v1 list of the same
// manifests without counts.
func rewriteAsV1List(t *testing.T, e *env, tbl *catalog.Table, snap *spec.Snapshot) {
	t.Helper()
	mfs, err := ManifestFiles(e.ctx, tbl.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc, err := ocf.NewEncoderWithSchema(avro.MustParse(v1ListSchema), &buf, ocf.WithMetadata(map[string][]byte{"format-version": []byte("1")}))
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.Content != manifest.ManifestContentData {
			t.Fatal("a v1 list holds data manifests only")
		}
		id := mf.AddedSnapshotID
		if err := enc.Encode(map[string]any{"manifest_path": mf.Path, "manifest_length": mf.Length,
			"partition_spec_id": mf.SpecID, "added_snapshot_id": &id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	w, err := tbl.IO.Create(e.ctx, snap.ManifestList)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(buf.Bytes())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ManifestFiles(e.ctx, tbl.IO, snap)
	if err != nil || len(got) != len(mfs) || got[0].AddedFilesCount != nil {
		t.Fatalf("rewritten list: %d manifests, counts %v, %v", len(got), got[0].AddedFilesCount, err)
	}
}

// Manifests carried over from a v1 list without counts get them by reading
// the manifest (issue 12: writing the v3 list failed, naming a random
// missing count).
func TestCarriedOverManifestsWithoutCounts(t *testing.T) {
	e, tbl := newEnv(t, 2)
	d1 := e.writeData(t, tbl, "d1", 1, 2, 3)
	tbl, _ = e.commit(t, tbl, appendFiles(d1))
	d2 := e.writeData(t, tbl, "d2", 4, 5)
	tbl, s2 := e.commit(t, tbl, appendFiles(d2))
	rewriteAsV1List(t, e, tbl, s2)

	tbl, snap := e.commit(t, tbl, relist(3))
	if *snap.AddedRows != 5 || *tbl.Metadata.NextRowID != 5 {
		t.Errorf("added-rows %d next-row-id %d, want 5 5", *snap.AddedRows, *tbl.Metadata.NextRowID)
	}
	mfs, err := ManifestFiles(e.ctx, tbl.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	var files int32
	var rows int64
	for _, mf := range mfs {
		if !hasCounts(mf) || mf.FirstRowID == nil {
			t.Fatalf("manifest %s: counts %v first_row_id %v", mf.Path, hasCounts(mf), mf.FirstRowID)
		}
		files += *mf.AddedFilesCount + *mf.ExistingFilesCount
		rows += *mf.AddedRowsCount + *mf.ExistingRowsCount
	}
	if files != 2 || rows != 5 {
		t.Errorf("counts add up to %d files, %d rows; want 2, 5", files, rows)
	}
	checkRowIDs(t, tbl, snap, 5, d1, d2)

	// And a rewrite of one of those files commits too.
	d3 := e.writeData(t, tbl, "d3", 1, 2, 3)
	e.commit(t, tbl, Change{Operation: spec.OperationReplace, AddData: []manifest.DataFile{d3}, Remove: []FileKey{KeyOf(&d1)}})
}

func TestListWriterNamesTheFirstMissingCount(t *testing.T) {
	for range 20 {
		lw, err := manifest.NewListWriter(&bytes.Buffer{}, 3, 1, nil, 1, ptr(int64(0)))
		if err != nil {
			t.Fatal(err)
		}
		err = lw.Add(manifest.ManifestFile{Path: "m.avro"})
		if err == nil || !strings.Contains(err.Error(), "added_files_count is required in format v3") {
			t.Fatalf("Add without counts: %v", err)
		}
	}
}

// listsOnlyIO refuses to open any file but a manifest list: what a
// metadata-only commit may read.
type listsOnlyIO struct {
	fileio.FileIO
}

func (l listsOnlyIO) Open(ctx context.Context, path string) (fileio.File, error) {
	if !strings.Contains(path, "/snap-") {
		return nil, fmt.Errorf("the relist opened %s, which is not a manifest list", path)
	}
	return l.FileIO.Open(ctx, path)
}

// The upgrade's relist of a table with more small manifests than
// commit.manifest.min-count-to-merge reads the manifest list and nothing
// else: it merges nothing (as Java's FastAppend of nothing, since it adds
// no manifest), takes its totals from the parent's summary, and lists the
// parent's manifests with row ids.
func TestRelistReadsOnlyTheManifestList(t *testing.T) {
	e, tbl := newEnv(t, 2)
	var err error
	tbl, err = e.cat.CommitTable(e.ctx, tbl, nil, []spec.Update{spec.SetProperties{Updates: map[string]string{PropManifestMergeEnabled: "false"}}})
	if err != nil {
		t.Fatal(err)
	}
	n := 12
	for i := range n {
		tbl, _ = e.commit(t, tbl, appendFiles(unwritten(tbl, fmt.Sprintf("u%d", i), int64(i+1))))
	}
	if tbl, err = e.cat.CommitTable(e.ctx, tbl, nil, []spec.Update{spec.RemoveProperties{Removals: []string{PropManifestMergeEnabled}},
		spec.SetProperties{Updates: map[string]string{PropManifestMinMergeCount: "5"}}}); err != nil {
		t.Fatal(err)
	}
	parent := tbl.Metadata.CurrentSnapshot()
	before, err := ManifestFiles(e.ctx, tbl.IO, parent)
	if err != nil {
		t.Fatal(err)
	}
	guarded := *tbl
	guarded.IO = listsOnlyIO{tbl.IO}
	tbl, snap := e.commit(t, &guarded, relist(3))
	after, err := ManifestFiles(e.ctx, tbl.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != n || len(before) != n {
		t.Fatalf("%d manifests after the relist, %d before; want %d (nothing merged)", len(after), len(before), n)
	}
	rows := int64(n * (n + 1) / 2)
	for i, mf := range after {
		if mf.Path != before[i].Path || mf.FirstRowID == nil {
			t.Fatalf("manifest %d: %s with first_row_id %v, want %s with one", i, mf.Path, mf.FirstRowID, before[i].Path)
		}
	}
	if *snap.AddedRows != rows || *tbl.Metadata.NextRowID != rows {
		t.Errorf("added-rows %d next-row-id %d, want %d", *snap.AddedRows, *tbl.Metadata.NextRowID, rows)
	}
	for _, k := range []string{"total-data-files", "total-records", "total-files-size", "total-delete-files"} {
		if snap.Summary[k] != parent.Summary[k] {
			t.Errorf("summary %s = %q, the parent's %q", k, snap.Summary[k], parent.Summary[k])
		}
	}
	checkTotals(t, e.ctx, tbl, snap)
}
