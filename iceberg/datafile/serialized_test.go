package datafile

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/spec"
)

// TestSerializedValues: for every type, SerializedValues of an Arrow
// column gives the single-value serialization of its values
// (spec.EncodeValue, Java's Conversions.toByteBuffer), nulls skipped.
func TestSerializedValues(t *testing.T) {
	mem := memory.NewGoAllocator()
	type col struct {
		typ  spec.Type
		arr  arrow.Array
		vals []any // nil is null
	}
	var cols []col
	add := func(typ spec.Type, b array.Builder, vals []any, app func(v any)) {
		for _, v := range vals {
			if v == nil {
				b.AppendNull()
			} else {
				app(v)
			}
		}
		cols = append(cols, col{typ, b.NewArray(), vals})
	}
	{
		b := array.NewBooleanBuilder(mem)
		add(spec.BooleanType{}, b, []any{true, nil, false, true}, func(v any) { b.Append(v.(bool)) })
	}
	{
		b := array.NewInt32Builder(mem)
		add(spec.IntType{}, b, []any{int32(1), nil, int32(-7), int32(1)}, func(v any) { b.Append(v.(int32)) })
	}
	{
		b := array.NewDate32Builder(mem)
		add(spec.DateType{}, b, []any{int32(19000), nil, int32(-1)}, func(v any) { b.Append(arrow.Date32(v.(int32))) })
	}
	{
		b := array.NewInt64Builder(mem)
		add(spec.LongType{}, b, []any{int64(1) << 40, nil, int64(-3)}, func(v any) { b.Append(v.(int64)) })
	}
	{
		b := array.NewTime64Builder(mem, &arrow.Time64Type{Unit: arrow.Microsecond})
		add(spec.TimeType{}, b, []any{int64(3_600_000_000), nil, int64(0)}, func(v any) { b.Append(arrow.Time64(v.(int64))) })
	}
	for _, typ := range []spec.Type{spec.TimestampType{}, spec.TimestampTzType{}, spec.TimestampNsType{}} {
		b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond})
		add(typ, b, []any{int64(1_700_000_000_000_000), nil, int64(-1)}, func(v any) { b.Append(arrow.Timestamp(v.(int64))) })
	}
	{
		b := array.NewFloat32Builder(mem)
		nan := math.Float32frombits(0x7fc00000)
		add(spec.FloatType{}, b, []any{float32(1.5), nil, nan, float32(math.Copysign(0, -1)), float32(0)}, func(v any) { b.Append(v.(float32)) })
	}
	{
		b := array.NewFloat64Builder(mem)
		nan := math.Float64frombits(0x7ff8000000000000)
		add(spec.DoubleType{}, b, []any{2.5, nil, nan, math.Copysign(0, -1), 0.0}, func(v any) { b.Append(v.(float64)) })
	}
	{
		b := array.NewStringBuilder(mem)
		add(spec.StringType{}, b, []any{"a", nil, "héllo", "a"}, func(v any) { b.Append(v.(string)) })
	}
	{
		b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		add(spec.BinaryType{}, b, []any{[]byte{1, 2}, nil, []byte{0}}, func(v any) { b.Append(v.([]byte)) })
	}
	{
		b := array.NewFixedSizeBinaryBuilder(mem, &arrow.FixedSizeBinaryType{ByteWidth: 3})
		add(spec.FixedType{Length: 3}, b, []any{[]byte{1, 2, 3}, nil, []byte{0, 0, 0}}, func(v any) { b.Append(v.([]byte)) })
	}
	{
		b := array.NewFixedSizeBinaryBuilder(mem, &arrow.FixedSizeBinaryType{ByteWidth: 16})
		u := [16]byte{0x12, 0x34, 15: 0xff}
		add(spec.UUIDType{}, b, []any{u, nil, [16]byte{}}, func(v any) { x := v.([16]byte); b.Append(x[:]) })
	}
	{
		dt := &arrow.Decimal128Type{Precision: 10, Scale: 2}
		b := array.NewDecimal128Builder(mem, dt)
		vals := []any{spec.Decimal{Unscaled: big.NewInt(12345), Scale: 2}, nil,
			spec.Decimal{Unscaled: big.NewInt(-1), Scale: 2}, spec.Decimal{Unscaled: big.NewInt(128), Scale: 2}}
		add(spec.DecimalType{Precision: 10, Scale: 2}, b, vals, func(v any) { b.Append(decimal128.FromBigInt(v.(spec.Decimal).Unscaled)) })
	}
	for _, c := range cols {
		var got, want []string
		if err := SerializedValues(c.arr, func(b []byte) { got = append(got, string(b)) }); err != nil {
			t.Fatalf("%s: %v", c.typ, err)
		}
		for _, v := range c.vals {
			if v == nil {
				continue
			}
			b, err := spec.EncodeValue(c.typ, v)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, string(b))
		}
		if fmt.Sprintf("%x", got) != fmt.Sprintf("%x", want) {
			t.Errorf("%s: %x, want %x", c.typ, got, want)
		}
		c.arr.Release()
	}
}
