package scan

import (
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// maxSliceRuns is the most runs of kept rows a column is cut into and
// concatenated; past it, arrow's filter kernel copies flat columns in one
// pass (scattered deletes, such as every tenth row, make thousands of
// runs per batch, and concatenating thousands of tiny slices is slow).
const maxSliceRuns = 16

// filter drops deleted rows from a batch.
type filter struct {
	deleted *roaring64.Bitmap // nil when no position deletes apply
	groups  []eqGroup
	buf     []byte
}

// apply returns the surviving rows of rec (whose first row is at position
// pos in the file) in outSchema, or nil when none survive.
func (f *filter) apply(ctx context.Context, rec arrow.RecordBatch, pos int64, outIdx []int, outSchema *arrow.Schema, path string, opts Options) (arrow.RecordBatch, error) {
	n := int(rec.NumRows())
	keep, kept, err := f.keep(rec, pos)
	if err != nil {
		return nil, err
	}
	if kept == 0 {
		return nil, nil
	}
	mem := memory.DefaultAllocator
	cols := make([]arrow.Array, 0, outSchema.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	sel := newSelection(keep, kept == n, mem)
	defer sel.release()
	for _, j := range outIdx {
		c, err := sel.take(ctx, rec.Column(j))
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	if opts.WithFile {
		b := array.NewStringBuilder(mem)
		b.Reserve(kept)
		for range kept {
			b.Append(path)
		}
		cols = append(cols, b.NewArray())
		b.Release()
	}
	if opts.WithPos {
		b := array.NewInt64Builder(mem)
		b.Reserve(kept)
		for i, k := range keep {
			if k {
				b.Append(pos + int64(i))
			}
		}
		cols = append(cols, b.NewArray())
		b.Release()
	}
	return array.NewRecordBatch(outSchema, cols, int64(kept)), nil
}

// keep marks the rows of rec that no delete removes and counts them. The
// deleted positions in the batch's range are visited through the bitmap,
// so a batch costs its deletes, not a lookup per row.
func (f *filter) keep(rec arrow.RecordBatch, pos int64) ([]bool, int, error) {
	n := int(rec.NumRows())
	keep := make([]bool, n)
	for i := range keep {
		keep[i] = true
	}
	kept := n
	if f.deleted != nil && !f.deleted.IsEmpty() {
		start, end := uint64(pos), uint64(pos)+uint64(n)
		it := f.deleted.Iterator()
		it.AdvanceIfNeeded(start)
		for it.HasNext() {
			p := it.Next()
			if p >= end {
				break
			}
			keep[p-start] = false
			kept--
		}
	}
	if len(f.groups) == 0 {
		return keep, kept, nil
	}
	for i := range n {
		if !keep[i] {
			continue
		}
		hit, err := f.equalityDeleted(rec, i)
		if err != nil {
			return nil, 0, err
		}
		if hit {
			keep[i] = false
			kept--
		}
	}
	return keep, kept, nil
}

// equalityDeleted reports whether an equality delete matches row i.
func (f *filter) equalityDeleted(rec arrow.RecordBatch, i int) (bool, error) {
	for _, g := range f.groups {
		f.buf = f.buf[:0]
		var err error
		for _, j := range g.cols {
			if f.buf, err = appendKey(f.buf, rec.Column(j), i); err != nil {
				return false, err
			}
		}
		for _, s := range g.sets {
			if _, hit := s[string(f.buf)]; hit {
				return true, nil
			}
		}
	}
	return false, nil
}

// selection copies the kept rows of a batch's columns.
type selection struct {
	keep []bool
	all  bool
	runs []run
	mask arrow.Array // the keep mask as an array, made on first use
	mem  memory.Allocator
}

type run struct{ start, end int }

func newSelection(keep []bool, all bool, mem memory.Allocator) *selection {
	s := &selection{keep: keep, all: all, mem: mem}
	if !all {
		s.runs = keepRuns(keep)
	}
	return s
}

func (s *selection) release() {
	if s.mask != nil {
		s.mask.Release()
	}
}

// take returns the kept rows of a, as a new reference.
func (s *selection) take(ctx context.Context, a arrow.Array) (arrow.Array, error) {
	if s.all {
		a.Retain()
		return a, nil
	}
	if len(s.runs) == 1 {
		return array.NewSlice(a, int64(s.runs[0].start), int64(s.runs[0].end)), nil
	}
	if len(s.runs) > maxSliceRuns && flat(a.DataType()) {
		if s.mask == nil {
			b := array.NewBooleanBuilder(s.mem)
			b.AppendValues(s.keep, nil)
			s.mask = b.NewArray()
			b.Release()
		}
		out, err := compute.FilterArray(ctx, a, s.mask, *compute.DefaultFilterOptions())
		if err != nil {
			return nil, fmt.Errorf("filter %s column: %w", a.DataType(), err)
		}
		return out, nil
	}
	parts := make([]arrow.Array, len(s.runs))
	for k, r := range s.runs {
		parts[k] = array.NewSlice(a, int64(r.start), int64(r.end))
	}
	out, err := array.Concatenate(parts, s.mem)
	for _, p := range parts {
		p.Release()
	}
	if err != nil {
		return nil, fmt.Errorf("filter column: %w", err)
	}
	return out, nil
}

// flat reports whether t is a non-nested type arrow's filter kernel
// handles. Nested and extension columns keep the slice path, whose
// handling of child offsets and validity is the one the rest of the
// package has been tested with. Booleans do too: arrow-go v18.8.0's
// filter kernel returned nulls for a nullable boolean column
// (TestFilterKeepsExactlyTheSurvivingRows).
func flat(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DATE32, arrow.TIME64, arrow.TIMESTAMP, arrow.DECIMAL128,
		arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY:
		return true
	}
	return false
}

func keepRuns(keep []bool) []run {
	var out []run
	for i := 0; i < len(keep); {
		if !keep[i] {
			i++
			continue
		}
		j := i
		for j < len(keep) && keep[j] {
			j++
		}
		out = append(out, run{i, j})
		i = j
	}
	return out
}
