package compact

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/spec"
)

// sorter orders rows by a sort order or a z-order. Rows are sorted in
// memory one run at a time: the batches of a group are gathered until
// they hold the sort buffer (Options.SortBuffer), then sorted and written
// in order, cut into files of the target size, so the files of a run
// cover disjoint ranges of the order and readers skip them by their
// column bounds. Memory stays bounded by the buffer per running group;
// the price is that runs of one group may overlap in range (a group
// smaller than the buffer is one run).
//
// Transforms that preserve order (identity, truncate and the time
// transforms) sort by the source column, which orders the transformed
// values too; bucket and other transforms are refused.
type sorter struct {
	keys   []sortKey
	zorder []int // with a z-order, its columns
}

type sortKey struct {
	col        int
	desc       bool
	nullsFirst bool
}

// newSorter returns nil for an unsorted order.
func newSorter(o *ordering, schema *arrow.Schema) (*sorter, error) {
	if o == nil {
		return nil, nil
	}
	if len(o.zorder) > 0 {
		s := &sorter{}
		for _, id := range o.zorder {
			col := columnOf(schema, id)
			if col < 0 {
				return nil, fmt.Errorf("z-order: field %d is not a top-level column of the current schema", id)
			}
			if _, err := newZorderColumn(array.MakeArrayOfNull(memory.DefaultAllocator, schema.Field(col).Type, 0)); err != nil {
				return nil, fmt.Errorf("z-order: field %d: %w", id, err)
			}
			s.zorder = append(s.zorder, col)
		}
		return s, nil
	}
	order := o.order
	if order == nil || len(order.Fields) == 0 {
		return nil, nil
	}
	s := &sorter{}
	for _, f := range order.Fields {
		switch f.Transform.Kind {
		case spec.TransformIdentity, spec.TransformTruncate, spec.TransformYear, spec.TransformMonth,
			spec.TransformDay, spec.TransformHour:
		case spec.TransformVoid:
			continue
		default:
			return nil, fmt.Errorf("sort order %d: cannot sort by transform %s of field %d", order.OrderID, f.Transform, f.SourceID)
		}
		col := columnOf(schema, f.SourceID)
		if col < 0 {
			return nil, fmt.Errorf("sort order %d: field %d is not a top-level column of the current schema", order.OrderID, f.SourceID)
		}
		if _, err := comparator(array.MakeArrayOfNull(memory.DefaultAllocator, schema.Field(col).Type, 0)); err != nil {
			return nil, fmt.Errorf("sort order %d: field %d: %w", order.OrderID, f.SourceID, err)
		}
		desc := f.Direction == "desc"
		nullsFirst := f.NullOrder == "nulls-first"
		s.keys = append(s.keys, sortKey{col: col, desc: desc, nullsFirst: nullsFirst})
	}
	if len(s.keys) == 0 {
		return nil, nil
	}
	return s, nil
}

// columnOf returns the index of the column of field id in schema, or -1.
func columnOf(schema *arrow.Schema, id int) int {
	for i, af := range schema.Fields() {
		if v, ok := af.Metadata.GetValue(datafile.FieldIDKey); ok && v == strconv.Itoa(id) {
			return i
		}
	}
	return -1
}

// sort concatenates recs and returns their rows in order, rows of equal
// keys in input order (as a stable sort: the row index breaks ties, so
// the faster unstable sort gives the same rows in the same order).
func (s *sorter) sort(recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	mem := memory.DefaultAllocator
	schema := recs[0].Schema()
	ncols := int(recs[0].NumCols())
	cols := make([]arrow.Array, ncols)
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for j := range ncols {
		parts := make([]arrow.Array, len(recs))
		for i, r := range recs {
			parts[i] = r.Column(j)
		}
		c, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, fmt.Errorf("sort rows: %w", err)
		}
		cols[j] = c
	}
	n := cols[0].Len()
	cmps, err := s.comparators(cols, n)
	if err != nil {
		return nil, err
	}
	perm := make([]int64, n)
	for i := range perm {
		perm[i] = int64(i)
	}
	slices.SortFunc(perm, func(a, b int64) int {
		for _, c := range cmps {
			if r := c(int(a), int(b)); r != 0 {
				return r
			}
		}
		return cmp.Compare(a, b)
	})
	idx := array.NewInt64Builder(mem)
	idx.AppendValues(perm, nil)
	indices := idx.NewInt64Array()
	idx.Release()
	defer indices.Release()
	out := make([]arrow.Array, ncols)
	for j := range ncols {
		t, err := compute.TakeArray(context.Background(), cols[j], indices)
		if err != nil {
			for _, o := range out[:j] {
				o.Release()
			}
			return nil, fmt.Errorf("sort rows: %w", err)
		}
		out[j] = t
	}
	rec := array.NewRecordBatch(schema, out, int64(n))
	for _, o := range out {
		o.Release()
	}
	return rec, nil
}

// comparators compares rows i and j of cols by s's order, one function a
// key: a z-order is one key, its rows' interleaved bytes.
func (s *sorter) comparators(cols []arrow.Array, n int) ([]func(i, j int) int, error) {
	if len(s.zorder) > 0 {
		arrays := make([]arrow.Array, len(s.zorder))
		for k, c := range s.zorder {
			arrays[k] = cols[c]
		}
		keys, w, err := zorderKeys(arrays, n)
		if err != nil {
			return nil, err
		}
		return []func(i, j int) int{func(i, j int) int {
			return slices.Compare(keys[i*w:(i+1)*w], keys[j*w:(j+1)*w])
		}}, nil
	}
	cmps := make([]func(i, j int) int, len(s.keys))
	for k, key := range s.keys {
		c, err := comparator(cols[key.col])
		if err != nil {
			return nil, err
		}
		a, key := cols[key.col], key
		cmps[k] = func(i, j int) int {
			ni, nj := a.IsNull(i), a.IsNull(j)
			switch {
			case ni && nj:
				return 0
			case ni || nj:
				r := 1
				if ni == key.nullsFirst {
					r = -1
				}
				return r
			}
			r := c(i, j)
			if key.desc {
				r = -r
			}
			return r
		}
	}
	return cmps, nil
}

// comparator compares two non-null values of a.
func comparator(a arrow.Array) (func(i, j int) int, error) {
	switch a := a.(type) {
	case *array.Boolean:
		return func(i, j int) int { return cmpBool(a.Value(i), a.Value(j)) }, nil
	case *array.Int32:
		return func(i, j int) int { return cmp.Compare(a.Value(i), a.Value(j)) }, nil
	case *array.Int64:
		return func(i, j int) int { return cmp.Compare(a.Value(i), a.Value(j)) }, nil
	case *array.Float32:
		return func(i, j int) int { return cmp.Compare(a.Value(i), a.Value(j)) }, nil
	case *array.Float64:
		return func(i, j int) int { return cmp.Compare(a.Value(i), a.Value(j)) }, nil
	case *array.Date32:
		return func(i, j int) int { return cmp.Compare(a.Value(i), a.Value(j)) }, nil
	case *array.Time64:
		return func(i, j int) int { return cmp.Compare(a.Value(i), a.Value(j)) }, nil
	case *array.Timestamp:
		return func(i, j int) int { return cmp.Compare(a.Value(i), a.Value(j)) }, nil
	case *array.String:
		return func(i, j int) int { return cmp.Compare(a.Value(i), a.Value(j)) }, nil
	case *array.LargeString:
		return func(i, j int) int { return cmp.Compare(a.Value(i), a.Value(j)) }, nil
	case *array.Binary:
		return func(i, j int) int { return bytes.Compare(a.Value(i), a.Value(j)) }, nil
	case *array.FixedSizeBinary:
		return func(i, j int) int { return bytes.Compare(a.Value(i), a.Value(j)) }, nil
	case *array.Decimal128:
		return func(i, j int) int { return a.Value(i).Cmp(a.Value(j)) }, nil
	}
	return nil, fmt.Errorf("cannot sort by a column of type %s", a.DataType())
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
