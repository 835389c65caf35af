package datafile

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/icectl/icectl/iceberg/spec"
)

// mtNestedSchema: id long, tags list<string>, props map<string, double>,
// s struct<a int, inner struct<b string>>, pts list<struct<x double>>.
func mtNestedSchema() *spec.Schema {
	return mtSchema(
		mtOpt(1, "id", spec.LongType{}),
		mtOpt(2, "tags", &spec.ListType{ElementID: 3, Element: spec.StringType{}}),
		mtOpt(4, "props", &spec.MapType{KeyID: 5, Key: spec.StringType{}, ValueID: 6, Value: spec.DoubleType{}}),
		mtOpt(7, "s", &spec.StructType{Fields: []spec.NestedField{
			mtOpt(8, "a", spec.IntType{}),
			mtOpt(9, "inner", &spec.StructType{Fields: []spec.NestedField{mtOpt(10, "b", spec.StringType{})}}),
		}}),
		mtOpt(11, "pts", &spec.ListType{ElementID: 12, Element: &spec.StructType{Fields: []spec.NestedField{mtOpt(13, "x", spec.DoubleType{})}}}),
	)
}

// mtNestedRecord builds five rows exercising null and empty lists and maps,
// null structs at two levels, null elements and NaN:
//
//	id   tags        props             s                      pts
//	1    [a, null]   {k: 1.5}          {1, {x}}               [{1}]
//	2    null        null              null                   null
//	3    []          {}                {null, null}           []
//	4    [zz]        {a: NaN, b: null} {5, {null}}            [null, {NaN}]
//	null [null]      {c: 2}            {-1, {y}}              [{null}]
func mtNestedRecord(t testing.TB) arrow.RecordBatch {
	t.Helper()
	mem := memory.DefaultAllocator
	tagEl := mtField(3, "element", arrow.BinaryTypes.String)
	keyF := mtField(5, "key", arrow.BinaryTypes.String)
	keyF.Nullable = false
	mapT := arrow.MapOfFields(keyF, mtField(6, "value", arrow.PrimitiveTypes.Float64))
	innerT := arrow.StructOf(mtField(10, "b", arrow.BinaryTypes.String))
	sT := arrow.StructOf(mtField(8, "a", arrow.PrimitiveTypes.Int32), mtField(9, "inner", innerT))
	ptEl := mtField(12, "element", arrow.StructOf(mtField(13, "x", arrow.PrimitiveTypes.Float64)))

	ids := mtColumn(t, arrow.PrimitiveTypes.Int64, []any{int64(1), int64(2), int64(3), int64(4), nil})

	lb := array.NewListBuilderWithField(mem, tagEl)
	vb := lb.ValueBuilder().(*array.StringBuilder)
	lb.Append(true)
	vb.Append("a")
	vb.AppendNull()
	lb.AppendNull()
	lb.AppendEmptyValue()
	lb.Append(true)
	vb.Append("zz")
	lb.Append(true)
	vb.AppendNull()
	tags := lb.NewArray()

	mb := array.NewMapBuilderWithType(mem, mapT)
	kb, ib := mb.KeyBuilder().(*array.StringBuilder), mb.ItemBuilder().(*array.Float64Builder)
	mb.Append(true)
	kb.Append("k")
	ib.Append(1.5)
	mb.AppendNull()
	mb.AppendEmptyValue()
	mb.Append(true)
	kb.Append("a")
	ib.Append(math.NaN())
	kb.Append("b")
	ib.AppendNull()
	mb.Append(true)
	kb.Append("c")
	ib.Append(2)
	props := mb.NewArray()

	sb := array.NewStructBuilder(mem, sT)
	ab := sb.FieldBuilder(0).(*array.Int32Builder)
	inb := sb.FieldBuilder(1).(*array.StructBuilder)
	bb := inb.FieldBuilder(0).(*array.StringBuilder)
	sb.Append(true)
	ab.Append(1)
	inb.Append(true)
	bb.Append("x")
	sb.AppendNull()
	sb.Append(true)
	ab.AppendNull()
	inb.AppendNull()
	sb.Append(true)
	ab.Append(5)
	inb.Append(true)
	bb.AppendNull()
	sb.Append(true)
	ab.Append(-1)
	inb.Append(true)
	bb.Append("y")
	s := sb.NewArray()

	pb := array.NewListBuilderWithField(mem, ptEl)
	psb := pb.ValueBuilder().(*array.StructBuilder)
	xb := psb.FieldBuilder(0).(*array.Float64Builder)
	pb.Append(true)
	psb.Append(true)
	xb.Append(1)
	pb.AppendNull()
	pb.AppendEmptyValue()
	pb.Append(true)
	psb.AppendNull()
	psb.Append(true)
	xb.Append(math.NaN())
	pb.Append(true)
	psb.Append(true)
	xb.AppendNull()
	pts := pb.NewArray()

	fields := []arrow.Field{
		mtField(1, "id", arrow.PrimitiveTypes.Int64),
		mtField(2, "tags", arrow.ListOfField(tagEl)),
		mtField(4, "props", mapT),
		mtField(7, "s", sT),
		mtField(11, "pts", arrow.ListOfField(ptEl)),
	}
	return mtRecord(t, fields, []arrow.Array{ids, tags, props, s, pts})
}

func TestMetricsNestedColumns(t *testing.T) {
	m := mtCollect(t, mtNestedSchema(), MetricsConfig{Default: MetricsMode{Kind: MetricsFull}}, mtNestedRecord(t))
	want := []struct {
		id                  int
		values, nulls, nans int64
		float               bool
		lo, hi              any // nil: no bounds
		typ                 spec.Type
	}{
		{1, 5, 1, 0, false, int64(1), int64(4), spec.LongType{}},
		{3, 6, 4, 0, false, nil, nil, nil},                       // list element: counts only
		{5, 6, 2, 0, false, nil, nil, nil},                       // map key
		{6, 6, 3, 1, true, nil, nil, nil},                        // map value
		{8, 5, 2, 0, false, int32(-1), int32(5), spec.IntType{}}, // struct child
		{10, 5, 3, 0, false, "x", "y", spec.StringType{}},        // struct in struct
		{13, 6, 4, 1, true, nil, nil, nil},                       // struct in list
	}
	for _, w := range want {
		if m.ValueCounts[w.id] != w.values || m.NullValueCounts[w.id] != w.nulls {
			t.Errorf("id %d: %d values %d nulls, want %d %d", w.id, m.ValueCounts[w.id], m.NullValueCounts[w.id], w.values, w.nulls)
		}
		if nan, ok := m.NaNValueCounts[w.id]; ok != w.float || nan != w.nans {
			t.Errorf("id %d: NaN count %d (present %v), want %d (present %v)", w.id, nan, ok, w.nans, w.float)
		}
		var lo, hi []byte
		if w.lo != nil {
			lo, hi = mtEncode(t, w.typ, w.lo), mtEncode(t, w.typ, w.hi)
		}
		if !mtBytesEqual(m.LowerBounds[w.id], lo) || !mtBytesEqual(m.UpperBounds[w.id], hi) {
			t.Errorf("id %d: bounds %x %x, want %x %x", w.id, m.LowerBounds[w.id], m.UpperBounds[w.id], lo, hi)
		}
	}
	for _, id := range []int{2, 4, 7, 9, 11, 12} {
		if _, ok := m.ValueCounts[id]; ok {
			t.Errorf("non-leaf id %d got a value count", id)
		}
	}
}

// TestMetricsNestedSlice checks that a sliced nested batch counts only its
// own rows, including list values owned by rows outside the slice.
func TestMetricsNestedSlice(t *testing.T) {
	rec := mtNestedRecord(t)
	whole := mtCollect(t, mtNestedSchema(), DefaultMetricsConfig(), rec.NewSlice(0, 2), rec.NewSlice(2, 5))
	one := mtCollect(t, mtNestedSchema(), DefaultMetricsConfig(), rec)
	for id, v := range one.ValueCounts {
		if whole.ValueCounts[id] != v || whole.NullValueCounts[id] != one.NullValueCounts[id] || whole.NaNValueCounts[id] != one.NaNValueCounts[id] {
			t.Errorf("id %d: sliced %d/%d/%d, whole %d/%d/%d", id, whole.ValueCounts[id], whole.NullValueCounts[id], whole.NaNValueCounts[id],
				v, one.NullValueCounts[id], one.NaNValueCounts[id])
		}
	}
	tail := mtCollect(t, mtNestedSchema(), DefaultMetricsConfig(), rec.NewSlice(3, 5))
	if tail.ValueCounts[3] != 2 || tail.NullValueCounts[3] != 1 {
		t.Errorf("tags.element in rows 3-4: %d values %d nulls, want 2 1", tail.ValueCounts[3], tail.NullValueCounts[3])
	}
	if tail.ValueCounts[13] != 3 || tail.NaNValueCounts[13] != 1 || tail.NullValueCounts[13] != 2 {
		t.Errorf("pts.element.x in rows 3-4: %d values %d nulls %d NaN, want 3 2 1", tail.ValueCounts[13], tail.NullValueCounts[13], tail.NaNValueCounts[13])
	}
}

// mtWriteParquet writes the batches with pqarrow, rowGroup rows per row
// group, and returns the file's footer.
func mtWriteParquet(t testing.TB, recs []arrow.RecordBatch, rowGroup int64) *metadata.FileMetaData {
	t.Helper()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(rowGroup), parquet.WithStats(true))
	w, err := pqarrow.NewFileWriter(recs[0].Schema(), &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	return rd.MetaData()
}

// TestMetricsMatchParquetFooter writes real Parquet files and checks the
// collector against the footer: column sizes and split offsets come from it,
// and value and null counts must equal the column chunks' num_values and
// null_count, which is what Java reads.
func TestMetricsMatchParquetFooter(t *testing.T) {
	rec := mtNestedRecord(t)
	recs := []arrow.RecordBatch{rec, rec.NewSlice(1, 5), rec}
	md := mtWriteParquet(t, recs, 4)
	if md.NumRowGroups() < 3 {
		t.Fatalf("want several row groups, got %d", md.NumRowGroups())
	}
	cfg := DefaultMetricsConfig()
	cfg.Columns = map[string]MetricsMode{"props.value": {Kind: MetricsNone}}
	c := NewMetricsCollector(mtNestedSchema(), cfg)
	for _, r := range recs {
		if err := c.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	m, err := c.Finish(md)
	if err != nil {
		t.Fatal(err)
	}
	sizes, values, nulls := map[int]int64{}, map[int]int64{}, map[int]int64{}
	var starts []int64
	for i := 0; i < md.NumRowGroups(); i++ {
		rg := md.RowGroup(i)
		for j := 0; j < rg.NumColumns(); j++ {
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				t.Fatal(err)
			}
			id := int(md.Schema.Column(j).SchemaNode().FieldID())
			sizes[id] += cc.TotalCompressedSize()
			values[id] += cc.NumValues()
			st, err := cc.Statistics()
			if err != nil || st == nil || !st.HasNullCount() {
				t.Fatalf("column %d: no null count in statistics (%v)", id, err)
			}
			nulls[id] += st.NullCount()
			if j == 0 {
				start := cc.DataPageOffset()
				if cc.HasDictionaryPage() && cc.DictionaryPageOffset() < start {
					start = cc.DictionaryPageOffset()
				}
				starts = append(starts, start)
			}
		}
	}
	if m.RecordCount != md.NumRows {
		t.Errorf("RecordCount %d, footer %d", m.RecordCount, md.NumRows)
	}
	for id := range sizes {
		if id == 6 {
			if _, ok := m.ColumnSizes[6]; ok {
				t.Errorf("mode none column 6 got a column size")
			}
			continue
		}
		if m.ColumnSizes[id] != sizes[id] || sizes[id] <= 0 {
			t.Errorf("id %d: column size %d, footer %d", id, m.ColumnSizes[id], sizes[id])
		}
		if m.ValueCounts[id] != values[id] {
			t.Errorf("id %d: value count %d, footer num_values %d", id, m.ValueCounts[id], values[id])
		}
		if m.NullValueCounts[id] != nulls[id] {
			t.Errorf("id %d: null count %d, footer null_count %d", id, m.NullValueCounts[id], nulls[id])
		}
	}
	if !slices.IsSorted(m.SplitOffsets) || !slices.Equal(m.SplitOffsets, starts) || m.SplitOffsets[0] != 4 {
		t.Errorf("split offsets %v, row group starts %v (first must follow the 4-byte magic)", m.SplitOffsets, starts)
	}

	// A footer of another file is refused.
	c2 := NewMetricsCollector(mtNestedSchema(), cfg)
	if err := c2.Add(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Finish(md); err == nil {
		t.Error("Finish accepted a footer with a different row count")
	}
}
