package table

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

func appendFiles(files ...manifest.DataFile) Change {
	return Change{Operation: spec.OperationAppend, AddData: files}
}

// entriesByPath reads every entry of snap, DELETED ones included.
func entriesByPath(t *testing.T, tbl *catalog.Table, snap *spec.Snapshot) map[string][]FileEntry {
	t.Helper()
	out := map[string][]FileEntry{}
	err := WalkEntries(context.Background(), tbl.IO, snap, WalkOptions{IncludeDeleted: true, Concurrency: 2}, func(e FileEntry) error {
		p := e.Entry.DataFile.FilePath
		out[p] = append(out[p], e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func one(t *testing.T, m map[string][]FileEntry, path string) FileEntry {
	t.Helper()
	if len(m[path]) != 1 {
		t.Fatalf("%s: %d entries, want 1", path, len(m[path]))
	}
	return m[path][0]
}

func checkEntry(t *testing.T, e FileEntry, status manifest.EntryStatus, snapID, seq, fileSeq int64) {
	t.Helper()
	got := e.Entry
	if got.Status != status || *got.SnapshotID != snapID || *got.SequenceNumber != seq || *got.FileSequenceNumber != fileSeq {
		t.Errorf("%s: status %d snapshot %d seq %d file seq %d; want %d %d %d %d", e.Key(),
			got.Status, *got.SnapshotID, *got.SequenceNumber, *got.FileSequenceNumber, status, snapID, seq, fileSeq)
	}
}

func exists(t *testing.T, fio fileio.FileIO, path string) bool {
	t.Helper()
	f, err := fio.Open(context.Background(), path)
	if errors.Is(err, fileio.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	return true
}

func TestAppendV2FileNamesAndInheritance(t *testing.T) {
	e, tbl := newEnv(t, 2)
	d1 := e.writeData(t, tbl, "d1", 1, 2, 3)
	tbl, s1 := e.commit(t, tbl, appendFiles(d1))
	d2 := e.writeData(t, tbl, "d2", 4)
	tbl, s2 := e.commit(t, tbl, appendFiles(d2))

	if s1.SequenceNumber != 1 || s2.SequenceNumber != 2 || *s2.ParentSnapshotID != s1.SnapshotID {
		t.Errorf("sequence numbers %d, %d; parent %v", s1.SequenceNumber, s2.SequenceNumber, s2.ParentSnapshotID)
	}
	if tbl.Metadata.CurrentSnapshot().SnapshotID != s2.SnapshotID {
		t.Errorf("current snapshot is not the new one")
	}
	meta := MetadataLocation(tbl.Metadata)
	uuidRE := `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`
	if !regexp.MustCompile("^" + regexp.QuoteMeta(meta) + `/snap-` + itoa(s2.SnapshotID) + `-1-` + uuidRE + `\.avro$`).MatchString(s2.ManifestList) {
		t.Errorf("manifest list name %s", s2.ManifestList)
	}
	mfs, err := ManifestFiles(e.ctx, tbl.IO, s2)
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 2 {
		t.Fatalf("%d manifests, want 2", len(mfs))
	}
	for _, mf := range mfs {
		if !regexp.MustCompile("^" + regexp.QuoteMeta(meta) + "/" + uuidRE + `-m0\.avro$`).MatchString(mf.Path) {
			t.Errorf("manifest name %s", mf.Path)
		}
	}
	// New manifests come first, with the snapshot's sequence number.
	if mfs[0].AddedSnapshotID != s2.SnapshotID || mfs[0].SequenceNumber != 2 || mfs[1].SequenceNumber != 1 {
		t.Errorf("manifest list order/sequence: %+v", mfs)
	}
	ents := entriesByPath(t, tbl, s2)
	checkEntry(t, one(t, ents, d1.FilePath), manifest.StatusAdded, s1.SnapshotID, 1, 1)
	checkEntry(t, one(t, ents, d2.FilePath), manifest.StatusAdded, s2.SnapshotID, 2, 2)
	if s2.Summary["added-data-files"] != "1" || s2.Summary["added-records"] != "1" || s2.Summary["operation"] != "append" {
		t.Errorf("summary %v", s2.Summary)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func TestReplaceV2WithPositionDeletes(t *testing.T) {
	e, tbl := newEnv(t, 2)
	d1 := e.writeData(t, tbl, "d1", 1, 2, 3)
	d2 := e.writeData(t, tbl, "d2", 4, 5, 6)
	tbl, s1 := e.commit(t, tbl, appendFiles(d1, d2))
	pd := e.writePosDeletes(t, tbl, "pd", map[string][]int64{d1.FilePath: {0}, d2.FilePath: {1}}, false)
	tbl, s2 := e.commit(t, tbl, Change{Operation: spec.OperationDelete, AddDeletes: []manifest.DataFile{pd}})
	if s2.Summary["added-position-delete-files"] != "1" || s2.Summary["added-position-deletes"] != "2" || s2.Summary["total-delete-files"] != "1" {
		t.Errorf("delete summary %v", s2.Summary)
	}
	fs, err := LiveFiles(e.ctx, tbl.IO, s2)
	if err != nil {
		t.Fatal(err)
	}
	ix := DeletesFor(fs)
	for _, d := range fs.Data {
		if a := ix.For(d); len(a.PositionDeletes) != 1 {
			t.Errorf("%s: %d position deletes apply, want 1", d.Key(), len(a.PositionDeletes))
		}
	}

	d3 := e.writeData(t, tbl, "d3", 2, 3, 4, 6)
	tbl, s3 := e.commit(t, tbl, Change{
		Operation: spec.OperationReplace, AddData: []manifest.DataFile{d3},
		Remove:             []FileKey{PathKey(d1.FilePath), PathKey(d2.FilePath), PathKey(pd.FilePath)},
		DataSequenceNumber: ptr(s1.SequenceNumber),
	})
	ents := entriesByPath(t, tbl, s3)
	checkEntry(t, one(t, ents, d3.FilePath), manifest.StatusAdded, s3.SnapshotID, 1, 3)
	checkEntry(t, one(t, ents, d1.FilePath), manifest.StatusDeleted, s3.SnapshotID, 1, 1)
	checkEntry(t, one(t, ents, d2.FilePath), manifest.StatusDeleted, s3.SnapshotID, 1, 1)
	checkEntry(t, one(t, ents, pd.FilePath), manifest.StatusDeleted, s3.SnapshotID, 2, 2)
	fs, err = LiveFiles(e.ctx, tbl.IO, s3)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Data) != 1 || len(fs.Deletes) != 0 || fs.Data[0].Key().Path != d3.FilePath {
		t.Errorf("live after replace: data %v deletes %v", keys(fs.Data), keys(fs.Deletes))
	}
	want := map[string]string{"operation": "replace", "deleted-data-files": "2", "added-data-files": "1",
		"removed-position-delete-files": "1", "removed-delete-files": "1", "removed-position-deletes": "2",
		"deleted-records": "6", "added-records": "4", "total-records": "4", "total-delete-files": "0"}
	for k, v := range want {
		if s3.Summary[k] != v {
			t.Errorf("summary %s = %q, want %q", k, s3.Summary[k], v)
		}
	}
	// The rewritten manifests record the removal; the manifests of s1 and
	// s2 are gone from the list.
	mfs, err := ManifestFiles(e.ctx, tbl.IO, s3)
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.AddedSnapshotID != s3.SnapshotID || mf.SequenceNumber != 3 {
			t.Errorf("manifest %s from snapshot %d seq %d carried into the replace", mf.Path, mf.AddedSnapshotID, mf.SequenceNumber)
		}
	}
	if mfs[0].MinSequenceNumber != 1 {
		t.Errorf("min sequence number of the added manifest = %d, want 1 (explicit data seq)", mfs[0].MinSequenceNumber)
	}
}

func TestV3DVsAndRowIDs(t *testing.T) {
	e, tbl := newEnv(t, 3)
	d1 := e.writeData(t, tbl, "d1", 1, 2, 3)
	d2 := e.writeData(t, tbl, "d2", 4, 5)
	tbl, s1 := e.commit(t, tbl, appendFiles(d1, d2))
	if *s1.FirstRowID != 0 || *s1.AddedRows != 5 || *tbl.Metadata.NextRowID != 5 {
		t.Errorf("first snapshot first-row-id %d added-rows %d next-row-id %d", *s1.FirstRowID, *s1.AddedRows, *tbl.Metadata.NextRowID)
	}
	ents := entriesByPath(t, tbl, s1)
	if *one(t, ents, d1.FilePath).Entry.DataFile.FirstRowID != 0 || *one(t, ents, d2.FilePath).Entry.DataFile.FirstRowID != 3 {
		t.Errorf("first_row_id of d1/d2 not 0/3")
	}
	dvs := e.writeDVs(t, tbl, "dv", map[string][]int64{d1.FilePath: {0}, d2.FilePath: {1}})
	tbl, s2 := e.commit(t, tbl, Change{Operation: spec.OperationDelete, AddDeletes: dvs})
	if s2.Summary["added-dvs"] != "2" || *s2.FirstRowID != 5 || *s2.AddedRows != 0 {
		t.Errorf("DV snapshot: summary %v first-row-id %d added-rows %d", s2.Summary, *s2.FirstRowID, *s2.AddedRows)
	}
	var dv1, dv2 manifest.DataFile
	for _, d := range dvs {
		if *d.ReferencedDataFile == d1.FilePath {
			dv1 = d
		} else {
			dv2 = d
		}
	}
	// Rewrite d1 without its deleted row; its DV goes, d2's stays.
	d1b := e.writeData(t, tbl, "d1b", 2, 3)
	tbl, s3 := e.commit(t, tbl, Change{
		Operation: spec.OperationReplace, AddData: []manifest.DataFile{d1b},
		Remove: []FileKey{PathKey(d1.FilePath), KeyOf(&dv1)},
	})
	fs, err := LiveFiles(e.ctx, tbl.IO, s3)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Deletes) != 1 || fs.Deletes[0].Key() != KeyOf(&dv2) {
		t.Fatalf("live deletes %v, want only %s", keys(fs.Deletes), KeyOf(&dv2))
	}
	if s3.Summary["removed-dvs"] != "1" || s3.Summary["total-position-deletes"] != "1" {
		t.Errorf("summary %v", s3.Summary)
	}
	ix := DeletesFor(fs)
	var rowIDs []int64
	for _, d := range fs.Data {
		df := d.Entry.DataFile
		if df.FirstRowID == nil {
			t.Fatalf("%s has no first_row_id", df.FilePath)
		}
		for i := int64(0); i < df.RecordCount; i++ {
			rowIDs = append(rowIDs, *df.FirstRowID+i)
		}
		switch df.FilePath {
		case d2.FilePath:
			if a := ix.For(d); a.DV == nil || a.DV.Key() != KeyOf(&dv2) {
				t.Errorf("d2 lost its DV")
			}
		case d1b.FilePath:
			if a := ix.For(d); !a.Empty() {
				t.Errorf("deletes apply to the rewritten file: %+v", a)
			}
		}
	}
	sort.Slice(rowIDs, func(i, j int) bool { return rowIDs[i] < rowIDs[j] })
	for i := 1; i < len(rowIDs); i++ {
		if rowIDs[i] == rowIDs[i-1] {
			t.Errorf("row id %d assigned twice", rowIDs[i])
		}
	}
	if *s3.FirstRowID != *s2.FirstRowID+*s2.AddedRows || *tbl.Metadata.NextRowID != *s3.FirstRowID+*s3.AddedRows {
		t.Errorf("row id ranges: s3 %d+%d, next %d", *s3.FirstRowID, *s3.AddedRows, *tbl.Metadata.NextRowID)
	}
	// The DV entry of d2 kept its explicit sequence numbers, and d2 its
	// first_row_id, through the rewritten manifests.
	ents = entriesByPath(t, tbl, s3)
	for _, x := range ents[dv2.FilePath] {
		if x.Key() == KeyOf(&dv2) {
			checkEntry(t, x, manifest.StatusExisting, s2.SnapshotID, 2, 2)
		} else {
			checkEntry(t, x, manifest.StatusDeleted, s3.SnapshotID, 2, 2)
		}
	}
	if got := *one(t, ents, d2.FilePath).Entry.DataFile.FirstRowID; got != 3 {
		t.Errorf("d2 first_row_id = %d after the rewrite, want 3", got)
	}
}

func TestUpgradeAssignsRowIDsToV2Manifests(t *testing.T) {
	e, tbl := newEnv(t, 2)
	d1 := e.writeData(t, tbl, "d1", 1, 2, 3)
	tbl, _ = e.commit(t, tbl, appendFiles(d1))
	d2 := e.writeData(t, tbl, "d2", 4, 5, 6, 7)
	tbl, _ = e.commit(t, tbl, appendFiles(d2))
	tbl, err := e.cat.CommitTable(e.ctx, tbl, nil, []spec.Update{spec.UpgradeFormatVersion{FormatVersion: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if *tbl.Metadata.NextRowID != 0 {
		t.Fatalf("next-row-id after upgrade = %d", *tbl.Metadata.NextRowID)
	}
	d3 := e.writeData(t, tbl, "d3", 8, 9)
	tbl, s3 := e.commit(t, tbl, appendFiles(d3))
	if *s3.FirstRowID != 0 || *s3.AddedRows != 9 || *tbl.Metadata.NextRowID != 9 {
		t.Errorf("first v3 snapshot: first-row-id %d added-rows %d next-row-id %d, want 0 9 9", *s3.FirstRowID, *s3.AddedRows, *tbl.Metadata.NextRowID)
	}
	mfs, err := ManifestFiles(e.ctx, tbl.IO, s3)
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.FirstRowID == nil {
			t.Errorf("manifest %s has no first_row_id", mf.Path)
		}
	}
	ents := entriesByPath(t, tbl, s3)
	seen := map[int64]bool{}
	for _, p := range []string{d1.FilePath, d2.FilePath, d3.FilePath} {
		df := one(t, ents, p).Entry.DataFile
		if df.FirstRowID == nil {
			t.Fatalf("%s has no first_row_id", p)
		}
		for i := int64(0); i < df.RecordCount; i++ {
			id := *df.FirstRowID + i
			if id < 0 || id >= 9 || seen[id] {
				t.Errorf("row id %d of %s out of range or repeated", id, p)
			}
			seen[id] = true
		}
	}
}

func TestConflictRebuildsOnNewBase(t *testing.T) {
	e, t0 := newEnv(t, 3)
	d1 := e.writeData(t, t0, "d1", 1)
	t0, _ = e.commit(t, t0, appendFiles(d1))
	// Another writer commits after t0 was loaded.
	other := e.writeData(t, t0, "other", 2, 3)
	_, sOther := e.commit(t, t0, appendFiles(other))

	fc := &faultCatalog{Catalog: e.cat}
	d2 := e.writeData(t, t0, "d2", 4)
	var lists []string
	res, snap, err := CommitChange(e.ctx, fc, t0, Change{
		Operation: spec.OperationAppend, AddData: []manifest.DataFile{d2},
		Validate: func(_ *catalog.Table, base *spec.Snapshot) error {
			lists = append(lists, base.ManifestList)
			return nil
		},
	}, e.noWait)
	if err != nil {
		t.Fatal(err)
	}
	checkTotals(t, e.ctx, res, snap)
	if fc.calls.Load() != 2 || len(lists) != 2 {
		t.Fatalf("%d commit calls, %d builds; want 2 and 2", fc.calls.Load(), len(lists))
	}
	if *snap.ParentSnapshotID != sOther.SnapshotID || snap.SequenceNumber != 3 || *snap.FirstRowID != 3 {
		t.Errorf("rebuilt snapshot: parent %d seq %d first-row-id %d", *snap.ParentSnapshotID, snap.SequenceNumber, *snap.FirstRowID)
	}
	if !strings.Contains(snap.ManifestList, "-2-") {
		t.Errorf("second attempt's manifest list %s is not numbered 2", snap.ManifestList)
	}
	fs, err := LiveFiles(e.ctx, res.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Data) != 3 {
		t.Errorf("live data %v, want d1, other, d2", keys(fs.Data))
	}
	// The first attempt's manifest list is gone; the reused manifest of the
	// added file is referenced and kept.
	first := strings.Replace(snap.ManifestList, "-2-", "-1-", 1)
	if exists(t, res.IO, first) {
		t.Errorf("failed attempt's manifest list %s still exists", first)
	}
	mfs, _ := ManifestFiles(e.ctx, res.IO, snap)
	for _, mf := range mfs {
		if !exists(t, res.IO, mf.Path) {
			t.Errorf("referenced manifest %s is missing", mf.Path)
		}
	}
}

func TestReplaceOfVanishedFileStops(t *testing.T) {
	e, t0 := newEnv(t, 2)
	d1 := e.writeData(t, t0, "d1", 1, 2)
	d2 := e.writeData(t, t0, "d2", 3)
	t0, _ = e.commit(t, t0, appendFiles(d1, d2))
	// Someone else deletes d1 first.
	e.commit(t, t0, Change{Operation: spec.OperationDelete, Remove: []FileKey{PathKey(d1.FilePath)}})

	metaDir := strings.TrimPrefix(MetadataLocation(t0.Metadata), "file://")
	before := countAvro(t, metaDir)
	fc := &faultCatalog{Catalog: e.cat}
	d3 := e.writeData(t, t0, "d3", 1, 2, 3)
	_, _, err := CommitChange(e.ctx, fc, t0, Change{
		Operation: spec.OperationReplace, AddData: []manifest.DataFile{d3},
		Remove: []FileKey{PathKey(d1.FilePath), PathKey(d2.FilePath)},
	}, e.noWait)
	if !errors.Is(err, ErrFileGone) {
		t.Fatalf("err = %v, want ErrFileGone", err)
	}
	if n := fc.calls.Load(); n != 1 {
		t.Errorf("%d commit attempts, want 1 (the conflict), then no retry", n)
	}
	// Nothing this change wrote may remain.
	if after := countAvro(t, metaDir); after != before {
		t.Errorf("%d Avro files in the metadata directory, %d before the failed change", after, before)
	}
}

func TestNewDeletesOnRewrittenFileStop(t *testing.T) {
	e, t0 := newEnv(t, 2)
	d1 := e.writeData(t, t0, "d1", 1, 2, 3)
	t0, _ = e.commit(t, t0, appendFiles(d1))
	pd := e.writePosDeletes(t, t0, "pd", map[string][]int64{d1.FilePath: {2}}, true)
	e.commit(t, t0, Change{Operation: spec.OperationDelete, AddDeletes: []manifest.DataFile{pd}})

	d2 := e.writeData(t, t0, "d2", 1, 2, 3) // planned before the delete: row 3 is back
	_, _, err := CommitChange(e.ctx, e.cat, t0, Change{
		Operation: spec.OperationReplace, AddData: []manifest.DataFile{d2}, Remove: []FileKey{PathKey(d1.FilePath)},
	}, e.noWait)
	if !errors.Is(err, ErrNewDeletes) {
		t.Fatalf("err = %v, want ErrNewDeletes", err)
	}
}

func TestChangeValidation(t *testing.T) {
	e, tbl := newEnv(t, 3)
	d1 := e.writeData(t, tbl, "d1", 1)
	tbl, _ = e.commit(t, tbl, appendFiles(d1))
	pd := e.writePosDeletes(t, tbl, "pd", map[string][]int64{d1.FilePath: {0}}, true)
	cases := map[string]Change{
		"no operation":               {AddData: []manifest.DataFile{d1}},
		"empty":                      {Operation: "append"},
		"duplicate add":              appendFiles(d1),
		"position deletes in v3":     {Operation: "delete", AddDeletes: []manifest.DataFile{pd}},
		"remove a file not in table": {Operation: "delete", Remove: []FileKey{PathKey("nope")}},
		"first_row_id on a new file": appendFiles(manifest.DataFile{FilePath: "x", FirstRowID: ptr(int64(1)), Partition: []any{}}),
	}
	for name, ch := range cases {
		if _, _, err := CommitChange(e.ctx, e.cat, tbl, ch, e.noWait); err == nil {
			t.Errorf("%s: committed", name)
		}
	}
	cur, err := e.cat.LoadTable(e.ctx, e.id)
	if err != nil {
		t.Fatal(err)
	}
	if len(cur.Metadata.Snapshots) != 1 {
		t.Errorf("%d snapshots after refused changes, want 1", len(cur.Metadata.Snapshots))
	}
}

func countAvro(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".avro") {
			n++
		}
	}
	return n
}

func TestRetryReusesManifestsAndUnknownKeepsThem(t *testing.T) {
	e, tbl := newEnv(t, 2)
	d1 := e.writeData(t, tbl, "d1", 1)
	d2 := e.writeData(t, tbl, "d2", 2)
	tbl, _ = e.commit(t, tbl, appendFiles(d1, d2))
	metaDir := strings.TrimPrefix(MetadataLocation(tbl.Metadata), "file://")
	before := countAvro(t, metaDir)

	fc := &faultCatalog{Catalog: e.cat}
	fc.before = func(n int) error {
		if n == 1 {
			return conflictErr(n)
		}
		return nil
	}
	fc.after = func(n int, res *catalog.Table, err error) (*catalog.Table, error) {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("lost answer: %w", catalog.ErrCommitStateUnknown)
	}
	d3 := e.writeData(t, tbl, "d3", 1, 2)
	_, _, err := CommitChange(e.ctx, fc, tbl, Change{
		Operation: spec.OperationReplace, AddData: []manifest.DataFile{d3},
		Remove: []FileKey{PathKey(d1.FilePath), PathKey(d2.FilePath)},
	}, e.noWait)
	if !errors.Is(err, catalog.ErrCommitStateUnknown) {
		t.Fatalf("err = %v, want ErrCommitStateUnknown", err)
	}
	// Attempt 2 reused both manifests of attempt 1 (added file, rewritten
	// manifest) and wrote only a new manifest list; attempt 1's list is
	// gone, and nothing of attempt 2 was removed.
	if after := countAvro(t, metaDir); after != before+3 {
		t.Errorf("%d Avro files, want %d (2 manifests + 1 manifest list)", after, before+3)
	}
	cur, err := e.cat.LoadTable(e.ctx, e.id)
	if err != nil {
		t.Fatal(err)
	}
	snap := cur.Metadata.CurrentSnapshot()
	if !strings.Contains(snap.ManifestList, "-2-") {
		t.Fatalf("landed manifest list %s is not attempt 2's", snap.ManifestList)
	}
	checkTotals(t, e.ctx, cur, snap)
	fs, err := LiveFiles(e.ctx, cur.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Data) != 1 || fs.Data[0].Key().Path != d3.FilePath {
		t.Errorf("live data %v", keys(fs.Data))
	}
}

// A base that lists a file twice is refused, naming the file; a
// fingerprint shared by distinct keys is not a duplicate.
func TestBaseIndexDuplicates(t *testing.T) {
	p := &producer{seed: maphash.MakeSeed()}
	a := FileEntry{Entry: manifest.Entry{DataFile: manifest.DataFile{Content: manifest.ContentData, FilePath: "s3://b/t/data/a.parquet"}}}
	b := FileEntry{Entry: manifest.Entry{DataFile: manifest.DataFile{Content: manifest.ContentData, FilePath: "s3://b/t/data/b.parquet"}}}
	pass := func(es ...FileEntry) (*baseState, func(func(FileEntry) error) error) {
		st := p.newBaseState()
		each := func(fn func(FileEntry) error) error {
			for _, e := range es {
				if err := fn(e); err != nil {
					return err
				}
			}
			return nil
		}
		if err := each(func(e FileEntry) error { return p.addBase(st, e) }); err != nil {
			t.Fatal(err)
		}
		return st, each
	}
	st, each := pass(a, b, a)
	if err := p.index(st, each); err == nil || !strings.Contains(err.Error(), "file s3://b/t/data/a.parquet is listed twice") {
		t.Errorf("a listed twice: %v", err)
	}
	st, each = pass(a, b)
	if err := p.index(st, each); err != nil || !st.hasKey(p.keyHash(KeyOf(&b.Entry.DataFile))) || !st.hasLive(maphash.String(p.seed, a.Entry.DataFile.FilePath)) {
		t.Errorf("a and b: %v", err)
	}
	// Two distinct keys behind one fingerprint, as a 64-bit collision
	// would give.
	st.liveKeys = append(st.liveKeys, st.liveKeys[0])
	if err := p.index(st, each); err != nil {
		t.Errorf("a fingerprint collision was taken for a duplicate: %v", err)
	}
}
