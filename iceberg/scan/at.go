package scan

import (
	"context"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// RowsAt returns the rows of one data file at the given positions, as
// stored (no delete applied), rendered as "column=value, ..." in the
// table's current schema, in position order. Positions the file does not
// have are left out. It is for reports that name rows, such as the rows a
// lost deletion vector shows again; it reads the whole file.
func RowsAt(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, entry table.FileEntry, positions []int64) ([]string, error) {
	want := slices.Clone(positions)
	slices.Sort(want)
	out := make([]string, 0, len(want))
	if len(want) == 0 {
		return out, nil
	}
	err := ReadFile(ctx, fio, md, entry, table.Applicable{}, Options{WithPos: true}, func(rec arrow.RecordBatch) error {
		cols := rec.Columns()
		pos := cols[len(cols)-1].(*array.Int64)
		for i := range pos.Len() {
			if _, ok := slices.BinarySearch(want, pos.Value(i)); !ok {
				continue
			}
			var b strings.Builder
			for j, c := range cols[:len(cols)-1] {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString(rec.ColumnName(j))
				b.WriteByte('=')
				if c.IsNull(i) {
					b.WriteString("null")
				} else {
					b.WriteString(c.ValueStr(i))
				}
			}
			out = append(out, b.String())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
