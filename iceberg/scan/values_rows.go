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

// FileRows reads one live data file with deletes as ReadFile does and
// calls fn with each surviving row's position in the file and its values
// of schema's fields, in their order and the conventions of
// spec/values.go (nil: null), for callers that judge rows one by one
// (delete-rows) without handling Arrow. row is reused between calls.
func FileRows(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, entry table.FileEntry, deletes table.Applicable,
	schema *spec.Schema, fn func(pos int64, row []any) error) error {
	n := len(schema.Fields)
	row := make([]any, n)
	return ReadFile(ctx, fio, md, entry, deletes, Options{Schema: schema, WithPos: true}, func(rec arrow.RecordBatch) error {
		pos, ok := rec.Column(n).(*array.Int64)
		if !ok {
			return fmt.Errorf("read %s: _pos is %s", entry.Entry.DataFile.FilePath, rec.Column(n).DataType())
		}
		return eachRow(rec, n, row, func(i int) error { return fn(pos.Value(i), row) })
	})
}

// SnapshotRows reads the rows of snap as Rows does and calls fn with each
// row's values of schema's fields (nil: the current schema), in the
// conventions of spec/values.go. row is reused between calls.
func SnapshotRows(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, snap *spec.Snapshot, schema *spec.Schema,
	fn func(row []any) error) error {
	if schema == nil {
		schema = md.CurrentSchema()
	}
	n := len(schema.Fields)
	row := make([]any, n)
	return Rows(ctx, fio, md, snap, Options{Schema: schema}, func(rec arrow.RecordBatch) error {
		return eachRow(rec, n, row, func(int) error { return fn(row) })
	})
}

// eachRow fills row with the first n columns of each row of rec in turn
// and calls fn with the row's index.
func eachRow(rec arrow.RecordBatch, n int, row []any, fn func(i int) error) error {
	for i := range int(rec.NumRows()) {
		for c := range n {
			v, err := datafile.Value(rec.Column(c), i)
			if err != nil {
				return fmt.Errorf("column %s: %w", rec.ColumnName(c), err)
			}
			row[c] = v
		}
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}
