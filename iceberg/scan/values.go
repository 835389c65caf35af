package scan

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// Values reads the live rows of snap as Rows does and calls fn with the
// single-value serialization of each non-null value (datafile.
// SerializedValues) and the index of its column among the primitive
// columns of the schema of opts, depth first (a struct's fields in its
// place; a field is null where its struct is), in row order column by
// column within each batch. The slice fn gets is
// reused: fn must copy what it keeps. It returns the number of rows read.
func Values(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, snap *spec.Snapshot, opts Options, fn func(col int, b []byte)) (int64, error) {
	if snap == nil {
		return 0, nil
	}
	fs, err := table.LiveFiles(ctx, fio, snap)
	if err != nil {
		return 0, fmt.Errorf("scan snapshot %d: %w", snap.SnapshotID, err)
	}
	rows, err := FileValues(ctx, fio, md, fs, opts, fn)
	if err != nil {
		return 0, fmt.Errorf("scan snapshot %d: %w", snap.SnapshotID, err)
	}
	return rows, nil
}

// FileValues is Values over the data files of fs, each with the deletes
// of fs that apply to it: a caller reads some of a snapshot's live files
// by passing them with all of its delete files.
func FileValues(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, fs *table.FileSet, opts Options, fn func(col int, b []byte)) (int64, error) {
	var rows int64
	err := scanFiles(ctx, fio, md, fs, opts, func(rec arrow.RecordBatch) error {
		rows += rec.NumRows()
		leaf := 0
		for i := range int(rec.NumCols()) {
			if err := leafValues(rec.Column(i), nil, &leaf, fn); err != nil {
				return fmt.Errorf("column %s: %w", rec.ColumnName(i), err)
			}
		}
		return nil
	})
	return rows, err
}

// leafValues serializes the values of arr's primitive columns, depth
// first, numbering them from *leaf on. valid, when not nil, says which
// rows every enclosing struct is non-null in.
func leafValues(arr arrow.Array, valid func(int) bool, leaf *int, fn func(col int, b []byte)) error {
	st, ok := arr.(*array.Struct)
	if !ok {
		col := *leaf
		*leaf++
		return datafile.SerializedValuesWhere(arr, valid, func(b []byte) { fn(col, b) })
	}
	inner := valid
	if st.NullN() > 0 {
		inner = func(i int) bool { return st.IsValid(i) && (valid == nil || valid(i)) }
	}
	for f := range st.NumField() {
		if err := leafValues(st.Field(f), inner, leaf, fn); err != nil {
			return fmt.Errorf("%s: %w", st.DataType().(*arrow.StructType).Field(f).Name, err)
		}
	}
	return nil
}
