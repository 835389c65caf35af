package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/spec"
)

// WriteRows writes rows as one Parquet file of schema s on w, for the
// small files Iceberg keeps beside its metadata (partition statistics).
// A row holds one value per field of s in the Go conventions of
// spec/values.go, a struct as []any of its fields' values; nil is null. It
// returns the bytes written.
func WriteRows(w io.Writer, s *spec.Schema, rows [][]any) (n int64, err error) {
	defer recoverError(&err, "write rows")
	pw, err := NewWriter(w, s, nil)
	if err != nil {
		return 0, err
	}
	sc := pw.Schema()
	mem := memory.DefaultAllocator
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for r, row := range rows {
		if len(row) != len(sc.Fields()) {
			return 0, fmt.Errorf("write rows: row %d has %d values, the schema %d fields", r, len(row), len(sc.Fields()))
		}
		for i, v := range row {
			if err := appendRowValue(b.Field(i), v); err != nil {
				return 0, fmt.Errorf("write rows: row %d, field %s: %w", r, sc.Field(i).Name, err)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := pw.Write(rec); err != nil {
		return 0, err
	}
	if _, err := pw.Close(); err != nil {
		return 0, err
	}
	return pw.BytesWritten(), nil
}

// appendRowValue appends v, a value of spec/values.go or a struct's
// []any, to b; a value of another Go type than b's is an error.
func appendRowValue(b array.Builder, v any) (err error) {
	if v == nil {
		b.AppendNull()
		return nil
	}
	if sb, ok := b.(*array.StructBuilder); ok {
		vals, ok := v.([]any)
		if !ok || len(vals) != sb.NumField() {
			return fmt.Errorf("want a struct of %d values, got %T", sb.NumField(), v)
		}
		sb.Append(true)
		for i, fv := range vals {
			if err := appendRowValue(sb.FieldBuilder(i), fv); err != nil {
				return err
			}
		}
		return nil
	}
	if d, ok := v.(spec.Decimal); ok && d.Unscaled == nil {
		return errors.New("decimal without a value")
	}
	defer func() {
		// appendValue asserts the Go type a builder takes.
		if r := recover(); r != nil {
			err = fmt.Errorf("value %v (%T) does not fit a column of type %s", v, v, b.Type())
		}
	}()
	return appendValue(b, v)
}

// ReadRows reads every row of the Parquet file r (size bytes) in schema s,
// columns matched by field id as Reader matches them, values in the
// conventions WriteRows takes. A field the file lacks reads as its
// initial-default or null; a required one without a default is an error.
func ReadRows(ctx context.Context, r io.ReaderAt, size int64, s *spec.Schema) (rows [][]any, err error) {
	rd, err := OpenReader(ctx, r, size, ReadOptions{Schema: s})
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	defer recoverError(&err, "read rows")
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		for i := range int(rec.NumRows()) {
			row := make([]any, rec.NumCols())
			for c := range row {
				if row[c], err = rowValue(rec.Column(c), i); err != nil {
					return nil, fmt.Errorf("read rows: column %s: %w", rec.ColumnName(c), err)
				}
			}
			rows = append(rows, row)
		}
	}
}

// Value is the value at i of arr, an array as Reader returns them, in
// the conventions of spec/values.go; nil is null.
func Value(arr arrow.Array, i int) (any, error) { return rowValue(arr, i) }

// rowValue is the value at i of arr in the conventions of spec/values.go.
func rowValue(arr arrow.Array, i int) (any, error) {
	if arr.IsNull(i) {
		return nil, nil
	}
	switch a := arr.(type) {
	case array.ExtensionArray:
		return rowValue(a.Storage(), i)
	case *array.LargeString:
		return a.Value(i), nil
	case *array.LargeBinary:
		return append([]byte(nil), a.Value(i)...), nil
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Int32:
		return a.Value(i), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Float32:
		return a.Value(i), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.Date32:
		return int32(a.Value(i)), nil
	case *array.Time64:
		return int64(a.Value(i)), nil
	case *array.Timestamp:
		return int64(a.Value(i)), nil
	case *array.String:
		return a.Value(i), nil
	case *array.Binary:
		return append([]byte(nil), a.Value(i)...), nil
	case *array.FixedSizeBinary:
		return append([]byte(nil), a.Value(i)...), nil
	case *array.Decimal128:
		dt := a.DataType().(*arrow.Decimal128Type)
		return spec.Decimal{Unscaled: a.Value(i).BigInt(), Scale: int(dt.Scale)}, nil
	case *array.Struct:
		vals := make([]any, a.NumField())
		for f := range vals {
			v, err := rowValue(a.Field(f), i)
			if err != nil {
				return nil, err
			}
			vals[f] = v
		}
		return vals, nil
	}
	return nil, fmt.Errorf("values of type %s are not supported", arr.DataType())
}
