package datafile

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/spec"
)

// partitionSchemas are a table's schema (cur) and the data columns of a
// Hive-migrated file (hive: no partition columns), for the projection
// rule-1 tests: identity partitions on every kind of source type, one
// promoted since (p_long was an int).
func partitionSchemas() (cur, hive *spec.Schema) {
	cur = &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "v", Type: spec.StringType{}},
		{ID: 3, Name: "p_int", Type: spec.IntType{}},
		{ID: 4, Name: "p_long", Type: spec.LongType{}},
		{ID: 5, Name: "p_str", Type: spec.StringType{}},
		{ID: 6, Name: "p_date", Type: spec.DateType{}},
		{ID: 7, Name: "p_dec", Type: spec.DecimalType{Precision: 9, Scale: 2}},
		{ID: 8, Name: "p_bool", Type: spec.BooleanType{}},
		{ID: 9, Name: "p_ts", Type: spec.TimestampType{}},
		{ID: 10, Name: "p_uuid", Type: spec.UUIDType{}},
	}}
	hive = &spec.Schema{Fields: cur.Fields[:2]}
	return cur, hive
}

// partitionValues are one partition's values as a manifest holds them
// (p_long as the int it was when the file was written).
func partitionValues() Constants {
	return Constants{3: int32(-7), 4: int32(42), 5: "a b/c=d%é", 6: int32(19782),
		7: spec.Decimal{Unscaled: big.NewInt(-12345), Scale: 2}, 8: true, 9: int64(1709201730123456),
		10: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}
}

// nullColumns is b with every column but the first two replaced by nulls:
// what icectl's compaction wrote into a migrated file's partition columns
// before it applied the first projection rule.
func nullColumns(t *testing.T, b arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	cols := make([]arrow.Array, b.NumCols())
	for i := range cols {
		if i < 2 {
			cols[i] = b.Column(i)
			cols[i].Retain()
		} else {
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, b.Column(i).DataType(), int(b.NumRows()))
		}
		defer cols[i].Release()
	}
	return array.NewRecordBatch(b.Schema(), cols, b.NumRows())
}

// TestPartitionConstants: a column the file's partition gives (the spec's
// first projection rule) reads as the partition value in every row,
// whether the file lacks the column (a Hive-migrated file) or holds it as
// nulls (a file compacted before the rule was applied), through the
// Reader and the Transcoder alike, and the file written holds the value
// with metrics that say so.
func TestPartitionConstants(t *testing.T) {
	cur, hive := partitionSchemas()
	consts := partitionValues()
	hb := genBatch(t, hive, 3000, 1)
	defer hb.Release()
	hiveFile, _ := writeParquet(t, hive, nil, hb)
	cb := genBatch(t, cur, 2000, 2)
	defer cb.Release()
	nb := nullColumns(t, cb)
	defer nb.Release()
	damaged, _ := writeParquet(t, cur, nil, nb)

	parts := &spec.Schema{Fields: cur.Fields[2:]}
	// Neither file holds the values as stored.
	for name, data := range map[string][]byte{"hive": hiveFile, "damaged": damaged} {
		err := CheckConstants(context.Background(), bytes.NewReader(data), int64(len(data)), parts, consts, nil)
		if err == nil || !strings.Contains(err.Error(), "partition value") {
			t.Fatalf("%s input: CheckConstants = %v, want a mismatch", name, err)
		}
	}

	srcs := []tcSource{{data: hiveFile, dataSeq: 1, consts: consts}, {data: damaged, dataSeq: 2, consts: consts, deleted: randomDeletesN(2000, 3)}}
	got, want := compareWithAndWithoutLineage(t, cur, srcs)
	for name, out := range map[string][]byte{"transcoded": got, "arrow": want} {
		if err := CheckConstants(context.Background(), bytes.NewReader(out), int64(len(out)), parts, consts, nil); err != nil {
			t.Errorf("%s output: %v", name, err)
		}
	}
	m := writtenMetrics(t, cur, srcs)
	for _, f := range cur.Fields[2:] {
		v, _, err := consts.Value(f)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := spec.EncodeValue(f.Type, v)
		if err != nil {
			t.Fatal(err)
		}
		if m.NullValueCounts[f.ID] != 0 || m.ValueCounts[f.ID] != m.RecordCount ||
			!bytes.Equal(m.LowerBounds[f.ID], enc) || !bytes.Equal(m.UpperBounds[f.ID], enc) {
			t.Errorf("column %s: nulls %d, values %d of %d rows, bounds %x..%x, want %x", f.Name, m.NullValueCounts[f.ID],
				m.ValueCounts[f.ID], m.RecordCount, m.LowerBounds[f.ID], m.UpperBounds[f.ID], enc)
		}
	}
}

// TestPartitionConstantNull: a null partition value reads as null (as
// Java's constantsMap gives it), and cannot fill a required column.
func TestPartitionConstantNull(t *testing.T) {
	cur, hive := partitionSchemas()
	hb := genBatch(t, hive, 500, 1)
	defer hb.Release()
	data, _ := writeParquet(t, hive, nil, hb)
	nulls := Constants{3: nil, 5: nil}
	batches := readParquet(t, data, ReadOptions{Schema: cur, Constants: nulls})
	defer release(batches)
	for _, b := range batches {
		for _, c := range []int{2, 4} {
			if b.Column(c).NullN() != b.Column(c).Len() {
				t.Fatalf("column %s has %d nulls of %d", b.ColumnName(c), b.Column(c).NullN(), b.Column(c).Len())
			}
		}
	}
	req := &spec.Schema{Fields: append([]spec.NestedField{}, cur.Fields...)}
	req.Fields[2].Required = true
	_, err := OpenReader(context.Background(), bytes.NewReader(data), int64(len(data)), ReadOptions{Schema: req, Constants: nulls})
	if err == nil || !strings.Contains(err.Error(), "required") {
		t.Fatalf("required column with a null partition value: %v", err)
	}
}

// TestPartitionConstantWrongType: a partition value that is not a value
// of the column's type is an error, not a column of something else.
func TestPartitionConstantWrongType(t *testing.T) {
	cur, hive := partitionSchemas()
	hb := genBatch(t, hive, 10, 1)
	defer hb.Release()
	data, _ := writeParquet(t, hive, nil, hb)
	for _, c := range []Constants{{3: "x"}, {7: spec.Decimal{Unscaled: big.NewInt(1), Scale: 3}}, {7: spec.Decimal{Unscaled: big.NewInt(1e10), Scale: 2}}} {
		if _, err := OpenReader(context.Background(), bytes.NewReader(data), int64(len(data)), ReadOptions{Schema: cur, Constants: c}); err == nil {
			t.Errorf("constants %v: no error", c)
		}
	}
}

func randomDeletesN(rows, every int) *roaring64.Bitmap {
	b := roaring64.New()
	for i := 0; i < rows; i += every {
		b.Add(uint64(i))
	}
	return b
}

// writtenMetrics is the Transcoder's metrics for srcs, without lineage.
func writtenMetrics(t *testing.T, cur *spec.Schema, srcs []tcSource) Metrics {
	t.Helper()
	for i := range srcs {
		srcs[i].firstRowID = nil
	}
	_, m := transcodePath(t, cur, nil, srcs, 2)
	return m
}

// TestPartitionConstantNested: a source field inside a struct the file
// stores reads as the partition value; a struct the file lacks reads as
// null, as Java's readers give them; the Transcoder leaves such inputs to
// the Reader.
func TestPartitionConstantNested(t *testing.T) {
	cur := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "st", Type: &spec.StructType{Fields: []spec.NestedField{{ID: 3, Name: "q", Type: spec.IntType{}}, {ID: 4, Name: "r", Type: spec.StringType{}}}}},
	}}
	consts := Constants{3: int32(7)}
	b := genBatch(t, cur, 50, 1)
	defer b.Release()
	stored, _ := writeParquet(t, cur, nil, b)
	lacking, _ := writeParquet(t, &spec.Schema{Fields: cur.Fields[:1]}, nil, genBatch(t, &spec.Schema{Fields: cur.Fields[:1]}, 50, 1))
	for name, data := range map[string][]byte{"stored": stored, "lacking": lacking} {
		batches := readParquet(t, data, ReadOptions{Schema: cur, Constants: consts})
		for _, rec := range batches {
			st := rec.Column(1).(*array.Struct)
			q := st.Field(0).(*array.Int32)
			for i := range st.Len() {
				switch {
				case name == "lacking" && st.IsValid(i):
					t.Fatalf("lacking: row %d: struct not null", i)
				case name == "stored" && st.IsValid(i) && (q.IsNull(i) || q.Value(i) != 7):
					t.Fatalf("stored: row %d: st.q = %v, want 7", i, q.GetOneForMarshal(i))
				}
			}
		}
		release(batches)
		tc, err := NewTranscoder(&bytes.Buffer{}, cur, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tc.WriteRowGroup(context.Background(), []TranscodeInput{{Path: name, File: openTc(t, data), Constants: consts}})
		if !errors.Is(err, ErrNotTranscodable) {
			t.Errorf("%s: transcoder: %v, want ErrNotTranscodable", name, err)
		}
	}
}
