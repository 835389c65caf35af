package datafile

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// posColumn is _pos for n rows starting at position start.
func posColumn(mem memory.Allocator, start int64, n int) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.Reserve(n)
	for i := range n {
		b.UnsafeAppend(start + int64(i))
	}
	return b.NewArray()
}

// inheritColumn applies lineage inheritance: stored non-null values are
// kept, nulls (or a column the file does not have) take inherited(i).
func inheritColumn(mem memory.Allocator, stored arrow.Array, n int, inherited func(i int) int64) (arrow.Array, error) {
	var in *array.Int64
	if stored != nil {
		var ok bool
		if in, ok = stored.(*array.Int64); !ok {
			return nil, fmt.Errorf("lineage column is %s in the file, want int64", stored.DataType())
		}
	}
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.Reserve(n)
	for i := range n {
		if in != nil && in.IsValid(i) {
			b.UnsafeAppend(in.Value(i))
		} else {
			b.UnsafeAppend(inherited(i))
		}
	}
	return b.NewArray(), nil
}

// FillSequence returns rec with the nulls of its last column,
// _last_updated_sequence_number, replaced by seq: a rewrite of a file
// committed before a v3 upgrade (no first_row_id, so the reader gives
// null lineage) writes the sequence number inheritance would have given
// its rows, so that they keep it once the file is replaced. The result
// is rec itself (retained) when that column has no null.
func FillSequence(rec arrow.RecordBatch, seq int64) arrow.RecordBatch {
	last := int(rec.NumCols()) - 1
	col, ok := rec.Column(last).(*array.Int64)
	if !ok || col.NullN() == 0 {
		rec.Retain()
		return rec
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Reserve(col.Len())
	for i := range col.Len() {
		if col.IsNull(i) {
			b.UnsafeAppend(seq)
		} else {
			b.UnsafeAppend(col.Value(i))
		}
	}
	filled := b.NewInt64Array()
	defer filled.Release()
	cols := make([]arrow.Array, rec.NumCols())
	copy(cols, rec.Columns())
	cols[last] = filled
	return array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
}
