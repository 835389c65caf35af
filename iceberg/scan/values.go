package scan

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// Values reads the live rows of snap as Rows does and calls fn with the
// single-value serialization of each non-null value (datafile.
// SerializedValues) and the index of its column in the schema of opts, in
// row order column by column within each batch. The slice fn gets is
// reused: fn must copy what it keeps. It returns the number of rows read.
func Values(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, snap *spec.Snapshot, opts Options, fn func(col int, b []byte)) (int64, error) {
	var rows int64
	err := Rows(ctx, fio, md, snap, opts, func(rec arrow.RecordBatch) error {
		rows += rec.NumRows()
		for i := range int(rec.NumCols()) {
			if err := datafile.SerializedValues(rec.Column(i), func(b []byte) { fn(i, b) }); err != nil {
				return fmt.Errorf("column %s: %w", rec.ColumnName(i), err)
			}
		}
		return nil
	})
	return rows, err
}
