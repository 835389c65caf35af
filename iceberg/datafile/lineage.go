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
