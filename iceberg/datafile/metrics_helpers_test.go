package datafile

import (
	"bytes"
	"math/big"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/spec"
)

// mtField is an Arrow field carrying an Iceberg field id.
func mtField(id int, name string, dt arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: dt, Nullable: true,
		Metadata: arrow.NewMetadata([]string{FieldIDKey}, []string{strconv.Itoa(id)})}
}

// mtColumn builds one column with append; values are Go values as in
// spec/values.go, nil meaning null.
func mtColumn(t testing.TB, dt arrow.DataType, vals []any) arrow.Array {
	t.Helper()
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		mtAppend(t, b, v)
	}
	return b.NewArray()
}

func mtAppend(t testing.TB, b array.Builder, v any) {
	t.Helper()
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.Int16Builder:
		b.Append(int16(v.(int32)))
	case *array.Int32Builder:
		b.Append(v.(int32))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Uint64Builder:
		b.Append(uint64(v.(int64)))
	case *array.Float32Builder:
		b.Append(v.(float32))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.Date32Builder:
		b.Append(arrow.Date32(v.(int32)))
	case *array.Date64Builder:
		b.Append(arrow.Date64(v.(int64)))
	case *array.Time64Builder:
		b.Append(arrow.Time64(v.(int64)))
	case *array.Time32Builder:
		b.Append(arrow.Time32(v.(int32)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(int64)))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.LargeStringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		b.Append(v.([]byte))
	case *array.FixedSizeBinaryBuilder:
		switch x := v.(type) {
		case [16]byte:
			b.Append(x[:])
		default:
			b.Append(v.([]byte))
		}
	case *array.Decimal128Builder:
		d := v.(spec.Decimal)
		b.Append(decimal128.FromBigInt(d.Unscaled))
	default:
		t.Fatalf("mtAppend: no case for %T", b)
	}
}

// mtRecord builds a record batch from columns given as (field, array).
func mtRecord(t testing.TB, fields []arrow.Field, cols []arrow.Array) arrow.RecordBatch {
	t.Helper()
	n := int64(0)
	if len(cols) > 0 {
		n = int64(cols[0].Len())
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, n)
}

// mtCollect runs one collector over the batches and finishes without a
// footer.
func mtCollect(t testing.TB, schema *spec.Schema, cfg MetricsConfig, recs ...arrow.RecordBatch) Metrics {
	t.Helper()
	c := NewMetricsCollector(schema, cfg)
	for _, r := range recs {
		if err := c.Add(r); err != nil {
			t.Fatalf("Add: %v", err)
		}
	}
	m, err := c.Finish(nil)
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	return m
}

func mtEncode(t testing.TB, typ spec.Type, v any) []byte {
	t.Helper()
	b, err := spec.EncodeValue(typ, v)
	if err != nil {
		t.Fatalf("encode %v as %s: %v", v, typ, err)
	}
	return b
}

func mtSchema(fields ...spec.NestedField) *spec.Schema {
	return &spec.Schema{Fields: fields}
}

func mtOpt(id int, name string, typ spec.Type) spec.NestedField {
	return spec.NestedField{ID: id, Name: name, Type: typ}
}

func mtBytesEqual(a, b []byte) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }

func mtBig(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("bad big int " + s)
	}
	return v
}

func mtSlice(a arrow.Array, i, j int64) arrow.Array { return array.NewSlice(a, i, j) }

// mtStructColumn builds a struct column; valid[i] false makes row i a null
// struct whose children still hold the given values, as Arrow allows.
func mtStructColumn(t testing.TB, st *arrow.StructType, valid []bool, children ...[]any) arrow.Array {
	t.Helper()
	b := array.NewStructBuilder(memory.DefaultAllocator, st)
	defer b.Release()
	for i, ok := range valid {
		b.Append(ok)
		for j, vals := range children {
			if vals[i] == nil {
				b.FieldBuilder(j).AppendNull()
			} else {
				mtAppend(t, b.FieldBuilder(j), vals[i])
			}
		}
	}
	return b.NewArray()
}
