package table

import (
	"math"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

func entry(content manifest.FileContent, path string, seq int64, specID int32, part ...any) FileEntry {
	if part == nil {
		part = []any{}
	}
	return FileEntry{Entry: manifest.Entry{
		Status: manifest.StatusExisting, SequenceNumber: ptr(seq),
		DataFile: manifest.DataFile{Content: content, FilePath: path, SpecID: specID, Partition: part},
	}}
}

func dvEntry(path, ref string, off, seq int64, specID int32, part ...any) FileEntry {
	e := entry(manifest.ContentPositionDeletes, path, seq, specID, part...)
	e.Entry.DataFile.ReferencedDataFile = &ref
	e.Entry.DataFile.ContentOffset = ptr(off)
	e.Entry.DataFile.ContentSizeInBytes = ptr(int64(40))
	return e
}

func keys(es []FileEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Key().String())
	}
	return out
}

func sameKeys(t *testing.T, what string, got []FileEntry, want ...string) {
	t.Helper()
	g := keys(got)
	if len(g) != len(want) {
		t.Errorf("%s: got %v, want %v", what, g, want)
		return
	}
	for i := range g {
		if g[i] != want[i] {
			t.Errorf("%s: got %v, want %v", what, g, want)
			return
		}
	}
}

func TestDeleteIndexDV(t *testing.T) {
	data := entry(manifest.ContentData, "d1", 5, 1, int32(7))
	other := entry(manifest.ContentData, "d2", 5, 1, int32(7))
	ix := DeletesFor(&FileSet{Deletes: []FileEntry{
		dvEntry("p.puffin", "d1", 4, 5, 1, int32(7)),                  // same seq: applies (<=)
		dvEntry("q.puffin", "d1", 4, 4, 1, int32(7)),                  // older than the data file
		dvEntry("r.puffin", "d1", 4, 9, 2, int32(7)),                  // other spec
		dvEntry("s.puffin", "d1", 4, 9, 1, int32(8)),                  // other partition
		entry(manifest.ContentPositionDeletes, "pos", 6, 1, int32(7)), // suppressed by the DV
	}})
	a := ix.For(data)
	if a.DV == nil || a.DV.Key().Path != "p.puffin" {
		t.Fatalf("DV for d1 = %v, want p.puffin", a.DV)
	}
	if len(a.PositionDeletes) != 0 {
		t.Errorf("position deletes applied despite a DV: %v", keys(a.PositionDeletes))
	}
	b := ix.For(other)
	if b.DV != nil {
		t.Errorf("DV of d1 applied to d2")
	}
	sameKeys(t, "position deletes of d2", b.PositionDeletes, "pos")
	if newer := ix.For(entry(manifest.ContentData, "d1", 6, 1, int32(7))); newer.DV != nil {
		t.Errorf("DV with seq 5 applied to a data file with seq 6")
	}
}

func TestDeleteIndexPositionDeletes(t *testing.T) {
	scoped := entry(manifest.ContentPositionDeletes, "scoped", 3, 1, "a")
	scoped.Entry.DataFile.ReferencedDataFile = ptr("d1")
	scopedOtherPart := entry(manifest.ContentPositionDeletes, "scoped-b", 3, 1, "b")
	scopedOtherPart.Entry.DataFile.ReferencedDataFile = ptr("d1")
	ix := DeletesFor(&FileSet{Deletes: []FileEntry{
		scoped, scopedOtherPart,
		entry(manifest.ContentPositionDeletes, "part-eq", 3, 1, "a"),  // same seq applies
		entry(manifest.ContentPositionDeletes, "part-old", 2, 1, "a"), // older
		entry(manifest.ContentPositionDeletes, "part-b", 5, 1, "b"),   // other partition
		entry(manifest.ContentPositionDeletes, "spec0", 5, 0),         // other spec
	}})
	a := ix.For(entry(manifest.ContentData, "d1", 3, 1, "a"))
	sameKeys(t, "d1", a.PositionDeletes, "part-eq", "scoped")
	b := ix.For(entry(manifest.ContentData, "d2", 3, 1, "a"))
	sameKeys(t, "d2", b.PositionDeletes, "part-eq")
	if len(a.EqualityDeletes) != 0 || a.DV != nil {
		t.Errorf("unexpected deletes for d1: %+v", a)
	}
}

func TestDeleteIndexEquality(t *testing.T) {
	eq := func(path string, seq int64, specID int32, part ...any) FileEntry {
		e := entry(manifest.ContentEqualityDeletes, path, seq, specID, part...)
		e.Entry.DataFile.EqualityIDs = []int{1}
		return e
	}
	ix := DeletesFor(&FileSet{Deletes: []FileEntry{
		eq("same-seq", 4, 1, int64(1)), // not strictly newer
		eq("newer", 5, 1, int64(1)),
		eq("other-part", 9, 1, int64(2)),
		eq("global", 6, 0), // unpartitioned spec: everywhere
		eq("global-old", 3, 0),
	}})
	a := ix.For(entry(manifest.ContentData, "d", 4, 1, int64(1)))
	sameKeys(t, "equality deletes", a.EqualityDeletes, "newer", "global")
	if len(a.PositionDeletes) != 0 {
		t.Errorf("position deletes: %v", keys(a.PositionDeletes))
	}
}

func TestDeleteIndexVoidSpecIsGlobal(t *testing.T) {
	md := &spec.TableMetadata{PartitionSpecs: []spec.PartitionSpec{
		{ID: 0, Fields: []spec.PartitionField{{SourceID: 1, FieldID: 1000, Name: "v", Transform: spec.ParseTransform("void")}}},
		{ID: 1, Fields: []spec.PartitionField{{SourceID: 1, FieldID: 1001, Name: "id", Transform: spec.ParseTransform("identity")}}},
	}}
	e := entry(manifest.ContentEqualityDeletes, "void-eq", 5, 0, nil)
	e.Entry.DataFile.EqualityIDs = []int{1}
	fs := &FileSet{Deletes: []FileEntry{e}}
	data := entry(manifest.ContentData, "d", 1, 1, int64(3))
	if got := DeletesForTable(md, fs).For(data); len(got.EqualityDeletes) != 1 {
		t.Errorf("equality delete of a void-only spec did not apply globally: %+v", got)
	}
	if got := DeletesFor(fs).For(data); len(got.EqualityDeletes) != 0 {
		t.Errorf("without specs, a non-empty tuple must not be global: %+v", got)
	}
}

func TestDeleteIndexFloatPartitions(t *testing.T) {
	nan1 := math.Float64frombits(0x7ff8000000000001)
	nan2 := math.Float64frombits(0x7ff8000000000002)
	ix := DeletesFor(&FileSet{Deletes: []FileEntry{
		entry(manifest.ContentPositionDeletes, "nan", 2, 1, nan1),
		entry(manifest.ContentPositionDeletes, "negzero", 2, 1, math.Copysign(0, -1)),
		entry(manifest.ContentPositionDeletes, "f32", 2, 1, float32(1.5)),
		entry(manifest.ContentPositionDeletes, "i32", 2, 1, int32(7)),
	}})
	sameKeys(t, "NaN partition", ix.For(entry(manifest.ContentData, "d", 1, 1, nan2)).PositionDeletes, "nan")
	sameKeys(t, "+0.0 partition", ix.For(entry(manifest.ContentData, "d", 1, 1, 0.0)).PositionDeletes)
	sameKeys(t, "-0.0 partition", ix.For(entry(manifest.ContentData, "d", 1, 1, math.Copysign(0, -1))).PositionDeletes, "negzero")
	// A float and the same double, an int and the same long, are one
	// partition: a spec field holds both only once its source column was
	// promoted, and the older manifests still carry the narrower value
	// (PartitionKey).
	sameKeys(t, "float32 vs float64", ix.For(entry(manifest.ContentData, "d", 1, 1, float64(1.5))).PositionDeletes, "f32")
	sameKeys(t, "int32 vs int64", ix.For(entry(manifest.ContentData, "d", 1, 1, int64(7))).PositionDeletes, "i32")
	sameKeys(t, "int32 vs other int64", ix.For(entry(manifest.ContentData, "d", 1, 1, int64(8))).PositionDeletes)
	sameKeys(t, "float32", ix.For(entry(manifest.ContentData, "d", 1, 1, float32(1.5))).PositionDeletes, "f32")
	sameKeys(t, "null vs value", ix.For(entry(manifest.ContentData, "d", 1, 1, nil)).PositionDeletes)
}

// Data files of one partition share the lists of partition-wide deletes
// (so memory does not grow with files x deletes), and a caller appending to
// its list never changes another's.
func TestDeleteIndexSharesPartitionLists(t *testing.T) {
	ix := DeletesFor(&FileSet{Deletes: []FileEntry{
		entry(manifest.ContentPositionDeletes, "p1", 5, 1, "a"),
		entry(manifest.ContentPositionDeletes, "p2", 6, 1, "a"),
		entry(manifest.ContentEqualityDeletes, "e1", 7, 1, "a"),
	}})
	a := ix.For(entry(manifest.ContentData, "d1", 3, 1, "a"))
	b := ix.For(entry(manifest.ContentData, "d2", 3, 1, "a"))
	sameKeys(t, "d1", a.PositionDeletes, "p1", "p2")
	sameKeys(t, "d2", b.PositionDeletes, "p1", "p2")
	if &a.PositionDeletes[0] != &b.PositionDeletes[0] {
		t.Error("two files of one partition and sequence number got copies of the same deletes")
	}
	_ = append(a.PositionDeletes, entry(manifest.ContentPositionDeletes, "x", 9, 1, "a"))
	_ = append(a.EqualityDeletes, entry(manifest.ContentEqualityDeletes, "y", 9, 1, "a"))
	sameKeys(t, "d2 after an append to d1's list", b.PositionDeletes, "p1", "p2")
	sameKeys(t, "d2 equality", b.EqualityDeletes, "e1")
	c := ix.For(entry(manifest.ContentData, "d3", 6, 1, "a"))
	sameKeys(t, "d3 (newer)", c.PositionDeletes, "p2")
}
