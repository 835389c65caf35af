package datafile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/spec"
)

// Constants are columns whose value is the same for every row of one file
// and is known without reading it: the spec's first column projection rule,
// "Return the value from partition metadata if an Identity Transform exists
// for the field and the partition value is present in the partition struct
// on data_file object in the manifest". Keys are field ids, values follow
// the conventions of spec/values.go (nil is null).
//
// A constant replaces the file's column even when the file holds one, as
// Java's readers do (PartitionUtil.constantsMap): a migrated Hive file
// holds no partition column at all, and a file whose stored column
// disagrees with its partition value was written wrong, since every row of
// a partition has the partition's value. The rules after the first (name
// mapping, initial-default, null) apply only to columns without a
// constant. A source field inside a struct gets its constant where the
// file stores the struct; a struct the file lacks reads as null, as Java
// reads it (its struct readers see constants only inside a stored struct).
type Constants map[int]any

// constantValue converts v, a partition value of a field's type when the
// file's spec was current, to a value of t, the type the field is read as
// (Iceberg's promotions: int to long, float to double, a decimal's
// precision widened).
func constantValue(t spec.Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	bad := func() (any, error) {
		return nil, fmt.Errorf("partition value %v (%T) is not a value of type %s", v, v, t)
	}
	switch tt := t.(type) {
	case spec.BooleanType:
		if _, ok := v.(bool); ok {
			return v, nil
		}
	case spec.IntType, spec.DateType:
		if _, ok := v.(int32); ok {
			return v, nil
		}
	case spec.LongType:
		switch x := v.(type) {
		case int32:
			return int64(x), nil
		case int64:
			return x, nil
		}
	case spec.TimeType, spec.TimestampType, spec.TimestampTzType, spec.TimestampNsType, spec.TimestampTzNsType:
		if _, ok := v.(int64); ok {
			return v, nil
		}
	case spec.FloatType:
		if _, ok := v.(float32); ok {
			return v, nil
		}
	case spec.DoubleType:
		switch x := v.(type) {
		case float32:
			return float64(x), nil
		case float64:
			return x, nil
		}
	case spec.StringType:
		if _, ok := v.(string); ok {
			return v, nil
		}
	case spec.BinaryType:
		if _, ok := v.([]byte); ok {
			return v, nil
		}
	case spec.FixedType:
		if b, ok := v.([]byte); ok && len(b) == tt.Length {
			return v, nil
		}
	case spec.UUIDType:
		switch x := v.(type) {
		case [16]byte:
			return x, nil
		case []byte:
			if len(x) == 16 {
				return [16]byte(x), nil
			}
		}
	case spec.DecimalType:
		d, ok := v.(spec.Decimal)
		if !ok || d.Unscaled == nil || d.Scale != tt.Scale {
			return bad()
		}
		limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(tt.Precision)), nil)
		if new(big.Int).Abs(d.Unscaled).Cmp(limit) >= 0 {
			return nil, fmt.Errorf("partition value %s does not fit %s", d, t)
		}
		return d, nil
	}
	return bad()
}

// Value is field f's constant in cs, converted to f's type, and whether
// cs has one. A null constant for a required field is an error: no row of
// the file could hold it.
func (cs Constants) Value(f spec.NestedField) (any, bool, error) {
	return resolveConstant(cs, f)
}

func resolveConstant(cs Constants, f spec.NestedField) (any, bool, error) {
	raw, ok := cs[f.ID]
	if !ok {
		return nil, false, nil
	}
	v, err := constantValue(f.Type, raw)
	if err != nil {
		return nil, false, fmt.Errorf("column %s (field id %d): %w", f.Name, f.ID, err)
	}
	if v == nil && f.Required {
		return nil, false, fmt.Errorf("column %s (field id %d) is required, but the file's partition value for it is null", f.Name, f.ID)
	}
	return v, true, nil
}

// constantColumn is v repeated n times as an array of dt; nulls when v is
// nil.
func constantColumn(mem memory.Allocator, f spec.NestedField, dt arrow.DataType, v any, n int) (arrow.Array, error) {
	if v == nil {
		return array.MakeArrayOfNull(mem, dt, n), nil
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	b.Reserve(n)
	for range n {
		if err := appendValue(b, v); err != nil {
			return nil, fmt.Errorf("column %s (field id %d): partition value: %w", f.Name, f.ID, err)
		}
	}
	return b.NewArray(), nil
}

// CheckConstants reads the top-level columns of s from the Parquet file r
// (size bytes) as the file stores them, with no constants applied, and
// returns an error naming the first row whose value is not want's for
// that column (converted to the column's type; nil: null). A column the
// file does not store reads as null. It checks what a writer wrote into a
// partition's columns: a plain Parquet reader sees only that.
func CheckConstants(ctx context.Context, r io.ReaderAt, size int64, s *spec.Schema, want Constants, nm NameMapping) error {
	rd, err := OpenReader(ctx, r, size, ReadOptions{Schema: s, NameMapping: nm})
	if err != nil {
		return err
	}
	defer rd.Close()
	vals := make([]any, len(s.Fields))
	for i, f := range s.Fields {
		v, ok, err := want.Value(f)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("column %s (field id %d): no value to check it against", f.Name, f.ID)
		}
		vals[i] = v
	}
	var row int64
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		err = func() error {
			defer rec.Release()
			for i, f := range s.Fields {
				col := rec.Column(i)
				for k := range col.Len() {
					got, err := rowValue(col, k)
					if err != nil {
						return fmt.Errorf("column %s: %w", f.Name, err)
					}
					if !SameValue(got, vals[i]) {
						return fmt.Errorf("column %s, row %d: the file holds %s, its partition value is %s", f.Name, row+int64(k), showValue(got), showValue(vals[i]))
					}
				}
			}
			return nil
		}()
		if err != nil {
			return err
		}
		row += rec.NumRows()
	}
}

// SameValue reports whether a and b, values of one type in the
// conventions of spec/values.go, are equal; NaN equals NaN.
func SameValue(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if u, ok := a.([16]byte); ok {
		a = u[:]
	}
	if u, ok := b.([16]byte); ok {
		b = u[:]
	}
	switch x := a.(type) {
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case spec.Decimal:
		y, ok := b.(spec.Decimal)
		return ok && x.Unscaled != nil && y.Unscaled != nil && x.Scale == y.Scale && x.Unscaled.Cmp(y.Unscaled) == 0
	case float32:
		y, ok := b.(float32)
		return ok && (x == y || math.IsNaN(float64(x)) && math.IsNaN(float64(y)))
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || math.IsNaN(x) && math.IsNaN(y))
	}
	return a == b
}

func showValue(v any) string {
	if v == nil {
		return "null"
	}
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}
