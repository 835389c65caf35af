package datafile

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"

	"github.com/icectl/icectl/iceberg/spec"
)

// missingColumn builds the column of a field the file does not store: its
// initial-default repeated n times, or nulls.
func missingColumn(mem memory.Allocator, f spec.NestedField, dt arrow.DataType, n int) (arrow.Array, error) {
	hasDefault := len(f.InitialDefault) > 0 && strings.TrimSpace(string(f.InitialDefault)) != "null"
	if st, ok := f.Type.(*spec.StructType); ok && hasDefault {
		// A struct's default is the defaults of its fields.
		return missingStruct(mem, st, dt.(*arrow.StructType), n)
	}
	if !hasDefault {
		if f.Required {
			return nil, fmt.Errorf("required field %d (%s) is not in the file and has no initial-default", f.ID, f.Name)
		}
		return array.MakeArrayOfNull(mem, dt, n), nil
	}
	v, err := parseDefault(f.Type, f.InitialDefault)
	if err != nil {
		return nil, fmt.Errorf("field %d (%s): initial-default %s: %w", f.ID, f.Name, f.InitialDefault, err)
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	b.Reserve(n)
	for range n {
		if err := appendValue(b, v); err != nil {
			return nil, fmt.Errorf("field %d (%s): initial-default: %w", f.ID, f.Name, err)
		}
	}
	return b.NewArray(), nil
}

func missingStruct(mem memory.Allocator, st *spec.StructType, dt *arrow.StructType, n int) (arrow.Array, error) {
	var kids []arrow.Array
	defer func() {
		for _, k := range kids {
			k.Release()
		}
	}()
	i := 0
	for _, f := range st.Fields {
		if _, ok := f.Type.(spec.UnknownType); ok {
			continue
		}
		k, err := missingColumn(mem, f, dt.Field(i).Type, n)
		if err != nil {
			return nil, err
		}
		kids = append(kids, k)
		i++
	}
	return array.NewStructArrayWithFields(kids, dt.Fields())
}

// parseDefault reads a JSON single value (spec Appendix C) into the Go
// value conventions of spec/values.go.
func parseDefault(t spec.Type, raw json.RawMessage) (any, error) {
	var s string
	str := func() error { return json.Unmarshal(raw, &s) }
	switch tt := t.(type) {
	case spec.BooleanType:
		var b bool
		err := json.Unmarshal(raw, &b)
		return b, err
	case spec.IntType:
		var i int32
		err := json.Unmarshal(raw, &i)
		return i, err
	case spec.LongType:
		var i int64
		err := json.Unmarshal(raw, &i)
		return i, err
	case spec.FloatType:
		var f float32
		err := json.Unmarshal(raw, &f)
		return f, err
	case spec.DoubleType:
		var f float64
		err := json.Unmarshal(raw, &f)
		return f, err
	case spec.StringType:
		err := str()
		return s, err
	case spec.DateType:
		if err := str(); err != nil {
			return nil, err
		}
		d, err := time.Parse("2006-01-02", s)
		if err != nil {
			return nil, err
		}
		return int32(d.Unix() / 86400), nil
	case spec.TimeType:
		if err := str(); err != nil {
			return nil, err
		}
		d, err := time.Parse("15:04:05.999999999", s)
		if err != nil {
			return nil, err
		}
		midnight := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
		return d.Sub(midnight).Microseconds(), nil
	case spec.TimestampType, spec.TimestampTzType, spec.TimestampNsType, spec.TimestampTzNsType:
		if err := str(); err != nil {
			return nil, err
		}
		ts, err := parseTimestamp(s)
		if err != nil {
			return nil, err
		}
		switch t.(type) {
		case spec.TimestampNsType, spec.TimestampTzNsType:
			return ts.UnixNano(), nil
		}
		return ts.UnixMicro(), nil
	case spec.UUIDType:
		if err := str(); err != nil {
			return nil, err
		}
		u, err := uuid.Parse(s)
		if err != nil {
			return nil, err
		}
		return [16]byte(u), nil
	case spec.FixedType, spec.BinaryType:
		if err := str(); err != nil {
			return nil, err
		}
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil, err
		}
		if ft, ok := tt.(spec.FixedType); ok && len(b) != ft.Length {
			return nil, fmt.Errorf("want %d bytes, got %d", ft.Length, len(b))
		}
		return b, nil
	case spec.DecimalType:
		if err := str(); err != nil {
			return nil, err
		}
		return parseDecimal(s, tt.Scale)
	}
	return nil, fmt.Errorf("defaults of type %s are not supported", t)
}

func parseTimestamp(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999"} {
		if ts, err := time.Parse(layout, s); err == nil {
			return ts, nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid timestamp %q", s)
}

// parseDecimal reads "123.45" into an unscaled integer of the given scale.
func parseDecimal(s string, scale int) (spec.Decimal, error) {
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(digits, ".")
	if len(frac) > scale {
		return spec.Decimal{}, fmt.Errorf("decimal %q has more than %d fraction digits", s, scale)
	}
	frac += strings.Repeat("0", scale-len(frac))
	v, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok || intPart+frac == "" {
		return spec.Decimal{}, fmt.Errorf("invalid decimal %q", s)
	}
	if neg {
		v.Neg(v)
	}
	return spec.Decimal{Unscaled: v, Scale: scale}, nil
}

// appendValue appends one Go value (spec/values.go conventions) to a
// builder of the matching Arrow type.
func appendValue(b array.Builder, v any) error {
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.Int32Builder:
		b.Append(v.(int32))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Float32Builder:
		b.Append(v.(float32))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.Date32Builder:
		b.Append(arrow.Date32(v.(int32)))
	case *array.Time64Builder:
		b.Append(arrow.Time64(v.(int64)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(int64)))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		b.Append(v.([]byte))
	case *array.FixedSizeBinaryBuilder:
		switch x := v.(type) {
		case [16]byte:
			b.Append(x[:])
		case []byte:
			b.Append(x)
		}
	case *array.Decimal128Builder:
		b.Append(decimal128.FromBigInt(v.(spec.Decimal).Unscaled))
	default:
		return fmt.Errorf("cannot build a constant column of type %s", b.Type())
	}
	return nil
}
