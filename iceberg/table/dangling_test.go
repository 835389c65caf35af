package table

import (
	"slices"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// Each rule of DataReach at its boundary, before and after a change that
// removes data files and adds fresh ones: what dangles is exactly what
// DeleteIndex.For applies to no remaining file.
func TestDataReachDangling(t *testing.T) {
	md := &spec.TableMetadata{PartitionSpecs: []spec.PartitionSpec{
		{ID: 0},
		{ID: 1, Fields: []spec.PartitionField{{SourceID: 1, FieldID: 1000, Name: "p", Transform: spec.ParseTransform("identity")}}},
	}}
	ref := func(e FileEntry, path string) FileEntry {
		e.Entry.DataFile.ReferencedDataFile = &path
		return e
	}
	data := []FileEntry{
		entry(manifest.ContentData, "a1", 3, 1, "a"),
		entry(manifest.ContentData, "a2", 5, 1, "a"),
		entry(manifest.ContentData, "b1", 4, 1, "b"),
	}
	deletes := []FileEntry{
		entry(manifest.ContentEqualityDeletes, "eq-a3", 3, 1, "a"),  // a1 has seq 3, not < 3
		entry(manifest.ContentEqualityDeletes, "eq-a4", 4, 1, "a"),  // applies to a1
		entry(manifest.ContentEqualityDeletes, "eq-c9", 9, 1, "c"),  // no data in c
		entry(manifest.ContentPositionDeletes, "pos-a2", 2, 1, "a"), // below a1's 3
		entry(manifest.ContentPositionDeletes, "pos-a3", 3, 1, "a"), // a1 at 3: applies
		ref(entry(manifest.ContentPositionDeletes, "fs-b1", 4, 1, "b"), "b1"),
		ref(entry(manifest.ContentPositionDeletes, "fs-gone", 9, 1, "b"), "gone"),
		ref(entry(manifest.ContentPositionDeletes, "fs-oldseq", 3, 1, "b"), "b1"), // b1 is newer
		ref(entry(manifest.ContentPositionDeletes, "fs-otherpart", 9, 1, "a"), "b1"),
		dvEntry("dv.puffin", "a2", 4, 5, 1, "a"),
		dvEntry("dv.puffin", "gone", 90, 5, 1, "a"),
		entry(manifest.ContentEqualityDeletes, "eq-global4", 4, 0), // a1 at 3 < 4
		entry(manifest.ContentEqualityDeletes, "eq-global3", 3, 0), // none below 3
	}
	r := NewDataReach(md, data)
	got := keyStrings(r.Dangling(deletes, DataChange{}))
	want := []string{"dv.puffin@90", "eq-a3", "eq-c9", "eq-global3", "fs-gone", "fs-oldseq", "fs-otherpart", "pos-a2"}
	if !slices.Equal(got, want) {
		t.Errorf("dangling before any change:\n got %v\nwant %v", got, want)
	}
	checkAgainstIndex(t, md, data, deletes, got)

	// a1 and a2 are rewritten into an output at seq 5 in partition a, b1
	// into one at seq 4: equality deletes of a up to 5 dangle, position
	// deletes of a and b, file-scoped or not, and the DV of a2 dangle (no
	// position delete names an output). eq-global4 still applies to nothing
	// below 4: the outputs are at 4 and 5.
	gone := map[string]bool{"a1": true, "a2": true, "b1": true}
	ch := DataChange{Removed: func(p string) bool { return gone[p] },
		Added: []AddedData{{SpecID: 1, Partition: []any{"a"}, Seq: 5}, {SpecID: 1, Partition: []any{"b"}, Seq: 4}}}
	got = keyStrings(r.Dangling(deletes, ch))
	want = []string{"dv.puffin@4", "dv.puffin@90", "eq-a3", "eq-a4", "eq-c9", "eq-global3", "eq-global4",
		"fs-b1", "fs-gone", "fs-oldseq", "fs-otherpart", "pos-a2", "pos-a3"}
	if !slices.Equal(got, want) {
		t.Errorf("dangling after the rewrite:\n got %v\nwant %v", got, want)
	}
	// An output at a lower sequence number (another compaction's) makes an
	// equality delete apply again; a position delete never does.
	ch.Added = append(ch.Added, AddedData{SpecID: 1, Partition: []any{"a"}, Seq: 2})
	got = keyStrings(r.Dangling(deletes, ch))
	for _, k := range []string{"eq-a3", "eq-a4", "eq-global3", "eq-global4"} {
		if slices.Contains(got, k) {
			t.Errorf("%s dangles though an added file at seq 2 is in its scope", k)
		}
	}
	if !slices.Contains(got, "pos-a3") {
		t.Errorf("pos-a3 kept for an added file no position delete can name")
	}
}

func keyStrings(ks []FileKey) []string {
	out := []string{}
	for _, k := range ks {
		out = append(out, k.String())
	}
	return out
}

// checkAgainstIndex checks that the dangling deletes are exactly those the
// scan-planning index applies to no data file (Candidates: a DV does not
// hide position deletes here).
func checkAgainstIndex(t *testing.T, md *spec.TableMetadata, data, deletes []FileEntry, dangling []string) {
	t.Helper()
	ix := DeletesForTable(md, &FileSet{Data: data, Deletes: deletes})
	applies := map[string]bool{}
	for _, d := range data {
		c := ix.Candidates(d)
		for _, l := range [][]FileEntry{c.DVs, c.PositionDeletes, c.EqualityDeletes} {
			for _, e := range l {
				applies[e.Key().String()] = true
			}
		}
	}
	for _, d := range deletes {
		k := d.Key().String()
		if applies[k] == slices.Contains(dangling, k) {
			t.Errorf("%s: applies to a data file %v, dangling %v", k, applies[k], !applies[k])
		}
	}
}

// A position-delete file cannot name a data file added after it, however
// low that file's data sequence number (a compaction's output at its
// starting sequence number): it dangles once the files it could name are
// gone. An equality delete still applies to such a file.
func TestDataReachFileSequenceNumbers(t *testing.T) {
	md := &spec.TableMetadata{PartitionSpecs: []spec.PartitionSpec{
		{ID: 1, Fields: []spec.PartitionField{{SourceID: 1, FieldID: 1000, Name: "p", Transform: spec.ParseTransform("identity")}}},
	}}
	withFileSeq := func(e FileEntry, fs int64) FileEntry {
		e.Entry.FileSequenceNumber = ptr(fs)
		return e
	}
	data := []FileEntry{
		withFileSeq(entry(manifest.ContentData, "out", 3, 1, "a"), 9), // a rewrite at starting sequence number 3, committed at 9
		entry(manifest.ContentData, "unknown", 3, 1, "b"),             // no file sequence number
	}
	deletes := []FileEntry{
		withFileSeq(entry(manifest.ContentPositionDeletes, "pos-before", 5, 1, "a"), 6), // written before out existed
		withFileSeq(entry(manifest.ContentPositionDeletes, "pos-after", 5, 1, "a"), 10), // may name out
		withFileSeq(entry(manifest.ContentPositionDeletes, "pos-same", 5, 1, "a"), 9),   // committed with out
		withFileSeq(entry(manifest.ContentEqualityDeletes, "eq-before", 5, 1, "a"), 6),  // values, not paths
		withFileSeq(entry(manifest.ContentPositionDeletes, "pos-b", 5, 1, "b"), 6),      // out's file seq unknown: kept
	}
	got := keyStrings(NewDataReach(md, data).Dangling(deletes, DataChange{}))
	if want := []string{"pos-before"}; !slices.Equal(got, want) {
		t.Errorf("dangling %v, want %v", got, want)
	}
}
