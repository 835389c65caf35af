package compact

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan"
	"github.com/icectl/icectl/plan/where"
)

// outputSpec is the spec g's outputs are written in: the plan's output
// spec, else the group's own.
func outputSpec(p *plan.Plan, g *plan.Group) int {
	if id := p.Options.OutputSpecID; id != nil {
		return *id
	}
	return g.SpecID
}

// repartitioner routes the rows of a group written in another spec than its own
// to one outputs per partition of the output spec: a file of an old spec
// may hold rows of many partitions of the new one. Each row's partition
// tuple is computed with the output spec's transforms from the row's
// values, as a writer in that spec would.
type repartitioner struct {
	md     *spec.TableMetadata
	ps     *spec.PartitionSpec
	fields []partSource
	// newKid starts the outputs of one partition tuple, in its directory.
	newKid func(tuple []any) *outputs
	kids   map[string]*outputs
	order  []string // kids in the order they were started
}

// partSource is one field of the output spec with where its source
// column is in a row batch.
type partSource struct {
	tr   spec.Transform
	src  spec.Type
	path []int // column index, then child indexes into structs; nil: void
}

// newFanout prepares the routing of rows of the arrow schema as, in
// schema, to ps's partitions.
func newFanout(md *spec.TableMetadata, schema *spec.Schema, ps *spec.PartitionSpec, as *arrow.Schema) (*repartitioner, error) {
	f := &repartitioner{md: md, ps: ps, kids: map[string]*outputs{}}
	for _, pf := range ps.Fields {
		s := partSource{tr: pf.Transform}
		if pf.Transform.Kind != spec.TransformVoid {
			if len(pf.SourceIDs) > 1 {
				return nil, fmt.Errorf("output spec %d: field %s has a multi-argument transform, which icectl cannot evaluate", ps.ID, pf.Name)
			}
			src, ok := schema.FindField(pf.SourceID)
			if !ok {
				return nil, fmt.Errorf("output spec %d: source field %d of %s is not in the current schema", ps.ID, pf.SourceID, pf.Name)
			}
			s.src = src.Type
			if s.path = fieldPath(as.Fields(), pf.SourceID); s.path == nil {
				return nil, fmt.Errorf("output spec %d: source column %s of %s is not among the columns written", ps.ID, src.Name, pf.Name)
			}
		}
		f.fields = append(f.fields, s)
	}
	return f, nil
}

// fieldPath finds the column of field id among fields, descending into
// structs: the column's index, then its child indexes; nil if absent.
func fieldPath(fields []arrow.Field, id int) []int {
	want := strconv.Itoa(id)
	for i, af := range fields {
		if v, ok := af.Metadata.GetValue(datafile.FieldIDKey); ok && v == want {
			return []int{i}
		}
		if st, ok := af.Type.(*arrow.StructType); ok {
			if p := fieldPath(st.Fields(), id); p != nil {
				return append([]int{i}, p...)
			}
		}
	}
	return nil
}

// column is the array at path in rec, and whether row i is null on the
// way to it (a null struct makes its children null).
func column(rec arrow.RecordBatch, path []int) []arrow.Array {
	arrs := []arrow.Array{rec.Column(path[0])}
	for _, c := range path[1:] {
		arrs = append(arrs, arrs[len(arrs)-1].(*array.Struct).Field(c))
	}
	return arrs
}

// tuples computes the output partition tuple of every row of rec, and a
// key per row that equal tuples share.
func (f *repartitioner) tuples(rec arrow.RecordBatch) ([]string, map[string][]any, error) {
	n := int(rec.NumRows())
	cols := make([][]arrow.Array, len(f.fields))
	for j, s := range f.fields {
		if s.path != nil {
			cols[j] = column(rec, s.path)
		}
	}
	keys := make([]string, n)
	byKey := map[string][]any{}
	tuple := make([]any, len(f.fields))
	for i := range n {
		for j, s := range f.fields {
			var v any
			if cols[j] != nil {
				var err error
				if v, err = valueAt(cols[j], s.src, i); err != nil {
					return nil, nil, fmt.Errorf("output spec %d: %w", f.ps.ID, err)
				}
			}
			pv, err := where.Apply(s.tr, s.src, v)
			if err != nil {
				return nil, nil, fmt.Errorf("output spec %d: %s: %w", f.ps.ID, s.tr, err)
			}
			tuple[j] = pv
		}
		k := table.PartitionKey(int32(f.ps.ID), tuple)
		keys[i] = k
		if _, ok := byKey[k]; !ok {
			byKey[k] = append([]any(nil), tuple...)
		}
	}
	return keys, byKey, nil
}

// write routes rec's rows to the outputs of their partitions; a batch of
// one partition goes whole, else each partition's rows are taken in
// order.
func (f *repartitioner) write(rec arrow.RecordBatch) error {
	if rec.NumRows() == 0 {
		return nil
	}
	keys, byKey, err := f.tuples(rec)
	if err != nil {
		return err
	}
	if len(byKey) == 1 {
		return f.kid(keys[0], byKey[keys[0]]).write(rec)
	}
	rows := map[string][]int32{}
	var order []string
	for i, k := range keys {
		if _, ok := rows[k]; !ok {
			order = append(order, k)
		}
		rows[k] = append(rows[k], int32(i))
	}
	for _, k := range order {
		if err := f.writeRows(f.kid(k, byKey[k]), rec, rows[k]); err != nil {
			return err
		}
	}
	return nil
}

// writeRows writes the rows idx of rec to o.
func (f *repartitioner) writeRows(o *outputs, rec arrow.RecordBatch, idx []int32) error {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	b.AppendValues(idx, nil)
	ix := b.NewInt32Array()
	b.Release()
	defer ix.Release()
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for j, c := range rec.Columns() {
		t, err := compute.TakeArray(context.Background(), c, ix)
		if err != nil {
			return fmt.Errorf("route rows to their partitions: %w", err)
		}
		cols[j] = t
	}
	sub := array.NewRecordBatch(rec.Schema(), cols, int64(len(idx)))
	defer sub.Release()
	return o.write(sub)
}

// kid is the outputs of the partition with key k and tuple t.
func (f *repartitioner) kid(k string, t []any) *outputs {
	o := f.kids[k]
	if o == nil {
		o = f.newKid(t)
		f.kids[k] = o
		f.order = append(f.order, k)
	}
	return o
}

// valueAt is row i of the column (arrs: the struct path to it, last the
// column) as an Iceberg value of type t; nil when null.
func valueAt(arrs []arrow.Array, t spec.Type, i int) (any, error) {
	for _, a := range arrs {
		if a.IsNull(i) {
			return nil, nil
		}
	}
	// The reader's conversion (datafile.Value), but a uuid as the [16]byte
	// the transforms take.
	v, err := datafile.Value(arrs[len(arrs)-1], i)
	if err != nil {
		return nil, fmt.Errorf("cannot partition by a %s column: %w", t, err)
	}
	if b, ok := v.([]byte); ok {
		if _, isUUID := t.(spec.UUIDType); isUUID && len(b) == 16 {
			return [16]byte(b), nil
		}
	}
	return v, nil
}
