package manifest

import (
	"bytes"
	"math"
	"math/big"
	"reflect"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
)

func ptr[T any](v T) *T { return &v }

// allTypesTable has one column per partition-able type, each partitioned by
// identity, plus a few transforms.
func allTypesTable() (*spec.Schema, spec.PartitionSpec) {
	prims := []spec.Type{
		spec.BooleanType{}, spec.IntType{}, spec.LongType{}, spec.FloatType{}, spec.DoubleType{},
		spec.DateType{}, spec.TimeType{}, spec.TimestampType{}, spec.TimestampTzType{},
		spec.TimestampNsType{}, spec.TimestampTzNsType{}, spec.StringType{}, spec.UUIDType{},
		spec.FixedType{Length: 3}, spec.BinaryType{}, spec.DecimalType{Precision: 9, Scale: 2},
		spec.DecimalType{Precision: 38, Scale: 10},
	}
	s := &spec.Schema{ID: 3}
	var ps spec.PartitionSpec
	ps.ID = 7
	for i, t := range prims {
		id := i + 1
		s.Fields = append(s.Fields, spec.NestedField{ID: id, Name: "c" + t.String(), Type: t})
		ps.Fields = append(ps.Fields, spec.PartitionField{SourceID: id, FieldID: 1000 + i, Name: "p-" + t.String(), Transform: spec.Transform{Kind: spec.TransformIdentity}})
	}
	ps.Fields = append(ps.Fields,
		spec.PartitionField{SourceID: 8, FieldID: 1100, Name: "ts_day", Transform: spec.Transform{Kind: spec.TransformDay}},
		spec.PartitionField{SourceID: 12, FieldID: 1101, Name: "s_bucket", Transform: spec.Transform{Kind: spec.TransformBucket, Param: 16}})
	return s, ps
}

func allTypesPartition(k int) []any {
	return []any{
		k%2 == 0, int32(k), int64(k) << 40, float32(k) + 0.5, -float64(k) - 0.25,
		int32(19000 + k), int64(k) * 1e6, int64(k) * 1e9, int64(k) * 2e9, int64(k) * 3e9, int64(k) * 4e9,
		"s" + string(rune('a'+k)), [16]byte{byte(k), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		[]byte{byte(k), 2, 3}, []byte{byte(k)}, spec.Decimal{Unscaled: big.NewInt(int64(-12345 * (k + 1))), Scale: 2},
		spec.Decimal{Unscaled: new(big.Int).Lsh(big.NewInt(int64(k+1)), 100), Scale: 10},
		int32(19000 + k), int32(k % 16),
	}
}

func sampleEntries(version int, content ManifestContent) []Entry {
	var es []Entry
	for k := 0; k < 4; k++ {
		df := DataFile{
			Content: ContentData, FilePath: "s3://b/t/data/f" + string(rune('0'+k)) + ".parquet", FileFormat: "PARQUET",
			Partition: allTypesPartition(k), RecordCount: int64(100 * (k + 1)), FileSizeInBytes: int64(4096 * (k + 1)),
			ColumnSizes: map[int]int64{1: 10, 2: 20}, ValueCounts: map[int]int64{1: 100}, NullValueCounts: map[int]int64{1: 0},
			NaNValueCounts: map[int]int64{4: 1}, LowerBounds: map[int][]byte{2: {1, 0, 0, 0}}, UpperBounds: map[int][]byte{2: {9, 0, 0, 0}},
			KeyMetadata: []byte{0xde, 0xad}, SplitOffsets: []int64{4, 1000}, SortOrderID: ptr(int32(0)),
		}
		if k == 3 {
			df.Partition = make([]any, len(df.Partition)) // all null
		}
		e := Entry{Status: StatusAdded, DataFile: df}
		if k == 1 {
			e.Status = StatusExisting
			e.SnapshotID, e.SequenceNumber, e.FileSequenceNumber = ptr(int64(11)), ptr(int64(3)), ptr(int64(4))
		}
		if k == 2 {
			e.Status = StatusDeleted
			e.SequenceNumber, e.FileSequenceNumber = ptr(int64(2)), ptr(int64(2))
		}
		if content == ManifestContentDeletes {
			e.DataFile.SortOrderID = nil
			if k%2 == 0 {
				e.DataFile.Content = ContentEqualityDeletes
				e.DataFile.EqualityIDs = []int{1, 2}
			} else {
				e.DataFile.Content = ContentPositionDeletes
				e.DataFile.ReferencedDataFile = ptr("s3://b/t/data/x.parquet")
				if version >= 3 {
					e.DataFile.FileFormat = "PUFFIN"
					e.DataFile.ContentOffset, e.DataFile.ContentSizeInBytes = ptr(int64(4)), ptr(int64(42))
				}
			}
		} else if version >= 3 && k == 1 {
			e.DataFile.FirstRowID = ptr(int64(500))
		}
		es = append(es, e)
	}
	return es
}

func writeManifest(t testing.TB, opts WriterOptions, es []Entry) ([]byte, ManifestFile) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if err := w.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.ManifestFile("s3://b/t/metadata/m.avro", int64(buf.Len()))
}

func TestManifestRoundTrip(t *testing.T) {
	schema, ps := allTypesTable()
	for _, version := range []int{2, 3} {
		for _, content := range []ManifestContent{ManifestContentData, ManifestContentDeletes} {
			es := sampleEntries(version, content)
			data, mf := writeManifest(t, WriterOptions{Version: version, Content: content, Schema: schema, Spec: ps, SnapshotID: 42}, es)
			meta, got := readEntries(t, bytes.NewReader(data), nil)
			if meta.FormatVersion != version || meta.Content != content || meta.Spec.ID != 7 || len(meta.Spec.Fields) != len(ps.Fields) || meta.Schema.ID != 3 {
				t.Fatalf("v%d content %d: meta = %+v", version, content, meta)
			}
			if len(got) != len(es) {
				t.Fatalf("got %d entries, want %d", len(got), len(es))
			}
			for i := range es {
				want := es[i]
				want.DataFile.SpecID = 7
				if want.SnapshotID == nil && want.Status != StatusExisting {
					want.SnapshotID = ptr(int64(42))
				}
				if !reflect.DeepEqual(got[i], want) {
					t.Errorf("v%d content %d entry %d:\n got %+v\nwant %+v", version, content, i, got[i], want)
				}
			}
			if *mf.AddedFilesCount != 2 || *mf.ExistingFilesCount != 1 || *mf.DeletedFilesCount != 1 ||
				*mf.AddedRowsCount != 100+400 || *mf.ExistingRowsCount != 200 || *mf.DeletedRowsCount != 300 {
				t.Errorf("counts = %+v", mf)
			}
			if mf.MinSequenceNumber != 3 || mf.SequenceNumber != UnassignedSequenceNumber || mf.AddedSnapshotID != 42 || mf.SpecID != 7 {
				t.Errorf("sequence numbers %d/%d snapshot %d", mf.SequenceNumber, mf.MinSequenceNumber, mf.AddedSnapshotID)
			}
		}
	}
}

func TestPartitionSummaries(t *testing.T) {
	schema, ps := allTypesTable()
	es := sampleEntries(2, ManifestContentData)
	_, mf := writeManifest(t, WriterOptions{Version: 2, Schema: schema, Spec: ps, SnapshotID: 1}, es)
	pt := ps.PartitionType(schema)
	for i, f := range pt.Fields {
		s := mf.Partitions[i]
		if !s.ContainsNull {
			t.Errorf("%s: contains_null false, but entry 3 is all null", f.Name)
		}
		// DELETED entries count too (Java summarises every entry written).
		var lo, hi any
		for _, e := range es[:3] {
			v := e.DataFile.Partition[i]
			if lo == nil || compareValues(v, lo) < 0 {
				lo = v
			}
			if hi == nil || compareValues(v, hi) > 0 {
				hi = v
			}
		}
		wantLo, _ := spec.EncodeValue(f.Type, lo)
		wantHi, _ := spec.EncodeValue(f.Type, hi)
		if !bytes.Equal(s.LowerBound, wantLo) || !bytes.Equal(s.UpperBound, wantHi) {
			t.Errorf("%s: bounds %x..%x, want %x..%x", f.Name, s.LowerBound, s.UpperBound, wantLo, wantHi)
		}
	}
	// float handling: NaN, -0.0/+0.0, all-null.
	fs := &fieldStats{typ: spec.DoubleType{}}
	fs.add(0.0)
	fs.add(math.Copysign(0, -1))
	fs.add(math.NaN())
	s := fs.summary()
	lo, _ := spec.DecodeValue(spec.DoubleType{}, s.LowerBound)
	hi, _ := spec.DecodeValue(spec.DoubleType{}, s.UpperBound)
	if !math.Signbit(lo.(float64)) || math.Signbit(hi.(float64)) || s.ContainsNaN == nil || !*s.ContainsNaN {
		t.Errorf("float summary = lower %v upper %v nan %v", lo, hi, s.ContainsNaN)
	}
	fs = &fieldStats{typ: spec.DoubleType{}}
	fs.add(nil)
	fs.add(math.NaN())
	if s := fs.summary(); s.LowerBound != nil || s.UpperBound != nil || !s.ContainsNull {
		t.Errorf("all null/NaN summary = %+v", s)
	}
}

func TestInheritance(t *testing.T) {
	schema, ps := allTypesTable()
	es := sampleEntries(3, ManifestContentData)
	// entry 0 ADDED (100 rows, null row id), 1 EXISTING (row id 500),
	// 2 DELETED (null), 3 ADDED (400 rows, null)
	data, _ := writeManifest(t, WriterOptions{Version: 3, Schema: schema, Spec: ps, SnapshotID: 42}, es)
	_, got := readEntries(t, bytes.NewReader(data), &ManifestFile{SequenceNumber: 9, AddedSnapshotID: 42, FirstRowID: ptr(int64(1000))})
	wantRow := []any{int64(1000), int64(500), nil, int64(1100)}
	wantSeq := []any{int64(9), int64(3), int64(2), int64(9)}
	for i, e := range got {
		if deref(e.DataFile.FirstRowID) != wantRow[i] || deref(e.SequenceNumber) != wantSeq[i] || e.SnapshotID == nil {
			t.Errorf("entry %d: first_row_id %v seq %v snapshot %v, want %v %v", i, deref(e.DataFile.FirstRowID), deref(e.SequenceNumber), deref(e.SnapshotID), wantRow[i], wantSeq[i])
		}
	}
	_, got = readEntries(t, bytes.NewReader(data), &ManifestFile{SequenceNumber: 9, AddedSnapshotID: 42})
	for i, e := range got {
		if e.DataFile.FirstRowID != nil {
			t.Errorf("entry %d: first_row_id %v with a manifest without one, want nil", i, *e.DataFile.FirstRowID)
		}
	}
}

func TestManifestListRoundTripAndRowIDs(t *testing.T) {
	var buf bytes.Buffer
	lw, err := NewListWriter(&buf, 3, 77, nil, 5, ptr(int64(1000)))
	if err != nil {
		t.Fatal(err)
	}
	counts := [][2]int64{{100, 25}, {0, 100}, {125, 25}}
	var in []ManifestFile
	for i, c := range counts {
		mf := ManifestFile{Path: "m" + string(rune('0'+i)), Length: 10, SequenceNumber: UnassignedSequenceNumber, MinSequenceNumber: UnassignedSequenceNumber,
			AddedSnapshotID: 77, AddedFilesCount: ptr(int32(1)), ExistingFilesCount: ptr(int32(1)), DeletedFilesCount: ptr(int32(0)),
			AddedRowsCount: ptr(c[0]), ExistingRowsCount: ptr(c[1]), DeletedRowsCount: ptr(int64(0)),
			Partitions: []FieldSummary{{ContainsNull: true, ContainsNaN: ptr(false), LowerBound: []byte{1}, UpperBound: []byte{2}}}, KeyMetadata: []byte{7}}
		in = append(in, mf)
		if err := lw.Add(mf); err != nil {
			t.Fatal(err)
		}
	}
	del := in[0]
	del.Path, del.Content, del.FirstRowID = "d", ManifestContentDeletes, ptr(int64(5))
	if err := lw.Add(del); err != nil {
		t.Fatal(err)
	}
	if got := deref(lw.NextRowID()); got != int64(1375) {
		t.Errorf("next row id = %v, want 1375", got)
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	h, got := readList(t, bytes.NewReader(buf.Bytes()))
	if h.FormatVersion != 3 || deref(h.SnapshotID) != int64(77) || h.ParentSnapshotID != nil || deref(h.FirstRowID) != int64(1000) || h.Metadata["parent-snapshot-id"] != "null" {
		t.Errorf("header = %+v", h)
	}
	want := []any{int64(1000), int64(1125), int64(1225), nil}
	for i, mf := range got {
		if deref(mf.FirstRowID) != want[i] || mf.SequenceNumber != 5 || mf.MinSequenceNumber != 5 {
			t.Errorf("manifest %d: first_row_id %v seq %d/%d, want %v 5/5", i, deref(mf.FirstRowID), mf.SequenceNumber, mf.MinSequenceNumber, want[i])
		}
		exp := in[min(i, 2)]
		exp.SequenceNumber, exp.MinSequenceNumber, exp.FirstRowID = 5, 5, mf.FirstRowID
		if i == 3 {
			exp = in[0]
			exp.SequenceNumber, exp.MinSequenceNumber, exp.FirstRowID = 5, 5, nil
			exp.Path, exp.Content = "d", ManifestContentDeletes
		}
		if !reflect.DeepEqual(mf, exp) {
			t.Errorf("manifest %d:\n got %+v\nwant %+v", i, mf, exp)
		}
	}
	// v2
	buf.Reset()
	lw, err = NewListWriter(&buf, 2, 78, ptr(int64(77)), 6, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := lw.Add(in[0]); err != nil {
		t.Fatal(err)
	}
	lw.Close()
	h, got = readList(t, bytes.NewReader(buf.Bytes()))
	if h.FormatVersion != 2 || deref(h.ParentSnapshotID) != int64(77) || len(got) != 1 || got[0].FirstRowID != nil || lw.NextRowID() != nil {
		t.Errorf("v2 list: header %+v entries %+v", h, got)
	}
}

// With InheritSnapshotID, ADDED entries without a snapshot id are written
// with none and take the list's added_snapshot_id when read; DELETED ones
// still get the writer's.
func TestInheritSnapshotID(t *testing.T) {
	schema, ps := allTypesTable()
	es := sampleEntries(3, ManifestContentData)
	for i := range es {
		es[i].SnapshotID = nil
	}
	data, _ := writeManifest(t, WriterOptions{Version: 3, Schema: schema, Spec: ps, SnapshotID: 42, InheritSnapshotID: true}, es)
	_, raw := readEntries(t, bytes.NewReader(data), nil)
	_, got := readEntries(t, bytes.NewReader(data), &ManifestFile{SequenceNumber: 9, AddedSnapshotID: 77})
	for i := range got {
		want := int64(77)
		switch es[i].Status {
		case StatusAdded:
			if raw[i].SnapshotID != nil {
				t.Errorf("entry %d (ADDED): written snapshot id %d, want null", i, *raw[i].SnapshotID)
			}
		case StatusDeleted:
			want = 42
		}
		if deref(got[i].SnapshotID) != want {
			t.Errorf("entry %d (status %d): snapshot id %v, want %d", i, es[i].Status, deref(got[i].SnapshotID), want)
		}
	}
}

// TestPromotedPartitionSource: after identity(k)'s source was promoted
// from int to long and identity(f)'s from float to double, entries read
// from older manifests still hold an int32 and a float32. Written into a
// manifest of the current spec beside entries that hold the wider values,
// they are widened: read back as int64 and float64, and the summary's
// bounds are the long and double encodings.
func TestPromotedPartitionSource(t *testing.T) {
	schema := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "k", Type: spec.LongType{}},
		{ID: 2, Name: "f", Type: spec.DoubleType{}},
	}}
	ps := spec.PartitionSpec{Fields: []spec.PartitionField{
		{SourceID: 1, FieldID: 1000, Name: "k", Transform: spec.ParseTransform("identity")},
		{SourceID: 2, FieldID: 1001, Name: "f", Transform: spec.ParseTransform("identity")},
	}}
	old := []any{int32(7), float32(1.5)}
	es := []Entry{
		{Status: StatusExisting, SnapshotID: ptr(int64(1)), SequenceNumber: ptr(int64(1)), FileSequenceNumber: ptr(int64(1)),
			DataFile: DataFile{Content: ContentData, FilePath: "old.parquet", FileFormat: "PARQUET", Partition: old, RecordCount: 1, FileSizeInBytes: 10}},
		{Status: StatusAdded,
			DataFile: DataFile{Content: ContentData, FilePath: "new.parquet", FileFormat: "PARQUET", Partition: []any{int64(9999999999), 0.25}, RecordCount: 1, FileSizeInBytes: 10}},
	}
	data, mf := writeManifest(t, WriterOptions{Version: 2, Schema: schema, Spec: ps, SnapshotID: 2}, es)
	if old[0] != int32(7) || old[1] != float32(1.5) {
		t.Errorf("the caller's partition values were changed: %v", old)
	}
	_, got := readEntries(t, bytes.NewReader(data), &ManifestFile{SequenceNumber: 2, AddedSnapshotID: 2})
	if p := got[0].DataFile.Partition; p[0] != int64(7) || p[1] != float64(1.5) {
		t.Errorf("old entry read back as %#v, want int64 7 and float64 1.5", p)
	}
	for i, want := range [][2]any{{int64(7), int64(9999999999)}, {0.25, 1.5}} {
		lo, _ := spec.EncodeValue(ps.PartitionType(schema).Fields[i].Type, want[0])
		hi, _ := spec.EncodeValue(ps.PartitionType(schema).Fields[i].Type, want[1])
		if s := mf.Partitions[i]; !bytes.Equal(s.LowerBound, lo) || !bytes.Equal(s.UpperBound, hi) {
			t.Errorf("field %d: bounds %x..%x, want %x..%x", i, s.LowerBound, s.UpperBound, lo, hi)
		}
	}
}
