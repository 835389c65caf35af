package datafile

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/iceberg/spec"
)

// metricsNode mirrors one schema field; leaves hold the accumulators.
type metricsNode struct {
	field    spec.NestedField
	children []*metricsNode // struct fields; list: element; map: key, value
	leaf     *metricsLeaf
	mask     []bool // scratch for the reach passed to children
}

// metricsReach says which slots [lo, hi) of an array a top-level row
// reaches: all of them when mask is nil, else those with mask[i-lo] set.
// count is the number reached. phantom counts the null slots Parquet writes
// for every leaf below a null struct or a null or empty list or map.
type metricsReach struct {
	lo, hi  int
	mask    []bool
	count   int64
	phantom int64
}

func (c *MetricsCollector) newNode(f spec.NestedField, name string, cfg MetricsConfig, repeated bool) *metricsNode {
	n := &metricsNode{field: f}
	switch t := f.Type.(type) {
	case *spec.StructType:
		for _, cf := range t.Fields {
			if ch := c.newNode(cf, name+"."+cf.Name, cfg, repeated); ch != nil {
				n.children = append(n.children, ch)
			}
		}
	case *spec.ListType:
		el := spec.NestedField{ID: t.ElementID, Name: "element", Type: t.Element, Required: t.ElementRequired}
		ch := c.newNode(el, name+".element", cfg, true)
		if ch == nil {
			return nil
		}
		n.children = []*metricsNode{ch}
	case *spec.MapType:
		k := spec.NestedField{ID: t.KeyID, Name: "key", Type: t.Key, Required: true}
		v := spec.NestedField{ID: t.ValueID, Name: "value", Type: t.Value, Required: t.ValueRequired}
		kn := c.newNode(k, name+".key", cfg, true)
		vn := c.newNode(v, name+".value", cfg, true)
		if kn == nil || vn == nil {
			return nil
		}
		n.children = []*metricsNode{kn, vn}
	case spec.UnknownType, spec.VariantType:
		return nil
	case spec.PrimitiveType:
		l := newMetricsLeaf(f.ID, name, t, cfg.ColumnMode(name), repeated)
		n.leaf = l
		c.leaves = append(c.leaves, l)
	default:
		return nil
	}
	return n
}

// visit walks arr, the column of node, over the slots r reaches.
// batchRows is the number of top-level rows of the batch.
func (c *MetricsCollector) visit(node *metricsNode, arr arrow.Array, r metricsReach, batchRows int64) error {
	if ext, ok := arr.(array.ExtensionArray); ok {
		arr = ext.Storage()
	}
	if node.leaf != nil {
		if err := node.leaf.add(arr, r); err != nil {
			return fmt.Errorf("metrics: column %q (id %d): %w", node.leaf.name, node.leaf.id, err)
		}
		node.leaf.rows += batchRows
		return nil
	}
	switch t := node.field.Type.(type) {
	case *spec.StructType:
		return c.visitStruct(node, arr, r, batchRows)
	case *spec.ListType:
		switch a := arr.(type) {
		case *array.List:
			return c.visitRepeated(node, a, a.Offsets(), a.ListValues(), nil, r, batchRows)
		case *array.LargeList:
			return c.visitRepeated(node, a, a.Offsets(), a.ListValues(), nil, r, batchRows)
		}
	case *spec.MapType:
		if a, ok := arr.(*array.Map); ok {
			return c.visitRepeated(node, a, a.Offsets(), a.Keys(), a.Items(), r, batchRows)
		}
	default:
		return fmt.Errorf("metrics: column %q (id %d): unsupported type %s", node.field.Name, node.field.ID, t)
	}
	return fmt.Errorf("metrics: column %q (id %d) of type %s holds Arrow %s", node.field.Name, node.field.ID, node.field.Type, arr.DataType())
}

func (c *MetricsCollector) visitStruct(node *metricsNode, arr arrow.Array, r metricsReach, batchRows int64) error {
	a, ok := arr.(*array.Struct)
	if !ok {
		return fmt.Errorf("metrics: column %q (id %d) of type struct holds Arrow %s", node.field.Name, node.field.ID, arr.DataType())
	}
	st := a.DataType().(*arrow.StructType)
	child := r
	if a.NullN() > 0 {
		node.mask = metricsGrowMask(node.mask, r.hi-r.lo)
		child.mask, child.count = node.mask, 0
		for i := r.lo; i < r.hi; i++ {
			reached := r.mask == nil || r.mask[i-r.lo]
			if reached && a.IsNull(i) {
				child.phantom++
				reached = false
			}
			node.mask[i-r.lo] = reached
			if reached {
				child.count++
			}
		}
	}
	for i := range st.NumFields() {
		f := st.Field(i)
		id, err := metricsFieldID(f)
		if err != nil {
			return fmt.Errorf("metrics: struct %q field %q: %w", node.field.Name, f.Name, err)
		}
		var cn *metricsNode
		for _, ch := range node.children {
			if ch.field.ID == id {
				cn = ch
				break
			}
		}
		if cn == nil {
			return fmt.Errorf("metrics: struct %q field %q has field id %d, which is not a metrics field of the struct", node.field.Name, f.Name, id)
		}
		col := a.Field(i)
		if col.Len() != a.Len() {
			return fmt.Errorf("metrics: struct %q field %q has %d values for %d structs", node.field.Name, f.Name, col.Len(), a.Len())
		}
		if err := c.visit(cn, col, child, batchRows); err != nil {
			return err
		}
	}
	return nil
}

// metricsVisitOffsets computes the reach of a list's or map's values; offs
// starts at the parent's first slot.
func metricsVisitOffsets[O int32 | int64](node *metricsNode, parent arrow.Array, offs []O, childLen int, r metricsReach) (metricsReach, error) {
	if len(offs) < parent.Len()+1 {
		return metricsReach{}, fmt.Errorf("metrics: column %q: %d offsets for %d lists", node.field.Name, len(offs), parent.Len())
	}
	child := metricsReach{phantom: r.phantom}
	if r.hi == r.lo {
		return child, nil
	}
	lo, hi := int(offs[r.lo]), int(offs[r.hi])
	if lo < 0 || hi < lo || hi > childLen {
		return metricsReach{}, fmt.Errorf("metrics: column %q: list offsets [%d, %d) outside %d values", node.field.Name, lo, hi, childLen)
	}
	child.lo, child.hi = lo, hi
	// A mask is needed only when a slot that is not reached, or null, still
	// owns values; Arrow allows that for null lists.
	needMask := false
	for i := r.lo; i < r.hi; i++ {
		s, e := offs[i], offs[i+1]
		if e < s {
			return metricsReach{}, fmt.Errorf("metrics: column %q: decreasing list offsets at %d", node.field.Name, i)
		}
		reached := r.mask == nil || r.mask[i-r.lo]
		if !reached {
			needMask = needMask || e > s
			continue
		}
		if parent.IsNull(i) {
			child.phantom++
			needMask = needMask || e > s
			continue
		}
		if e == s {
			child.phantom++ // empty list: one null slot in each leaf
		}
	}
	if !needMask {
		child.count = int64(hi - lo)
		return child, nil
	}
	node.mask = metricsGrowMask(node.mask, hi-lo)
	clear(node.mask)
	for i := r.lo; i < r.hi; i++ {
		if (r.mask != nil && !r.mask[i-r.lo]) || parent.IsNull(i) {
			continue
		}
		s, e := int(offs[i]), int(offs[i+1])
		for j := s; j < e; j++ {
			node.mask[j-lo] = true
		}
		child.count += int64(e - s)
	}
	child.mask = node.mask
	return child, nil
}

// visitRepeated handles lists (values only) and maps (keys and values).
func (c *MetricsCollector) visitRepeated(node *metricsNode, parent arrow.Array, offsets any, first, second arrow.Array, r metricsReach, batchRows int64) error {
	// Offsets() of Arrow lists and maps ignore the array's own offset.
	base := parent.Data().Offset()
	var child metricsReach
	var err error
	switch o := offsets.(type) {
	case []int32:
		if base > len(o) {
			return fmt.Errorf("metrics: column %q: list offset %d beyond its offsets", node.field.Name, base)
		}
		child, err = metricsVisitOffsets(node, parent, o[base:], first.Len(), r)
	case []int64:
		if base > len(o) {
			return fmt.Errorf("metrics: column %q: list offset %d beyond its offsets", node.field.Name, base)
		}
		child, err = metricsVisitOffsets(node, parent, o[base:], first.Len(), r)
	}
	if err != nil {
		return err
	}
	if err := c.visit(node.children[0], first, child, batchRows); err != nil {
		return err
	}
	if second != nil {
		if second.Len() != first.Len() {
			return fmt.Errorf("metrics: map %q has %d keys and %d values", node.field.Name, first.Len(), second.Len())
		}
		return c.visit(node.children[1], second, child, batchRows)
	}
	return nil
}

func metricsGrowMask(m []bool, n int) []bool {
	if cap(m) < n {
		return make([]bool, n)
	}
	return m[:n]
}
