package datafile

import (
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/icectl/icectl/iceberg/spec"
)

// NameMapping and MappedField are the table's schema.name-mapping.default
// (spec.ParseNameMapping reads it).
type (
	NameMapping = spec.NameMapping
	MappedField = spec.MappedField
)

// shape is how a field nests: a struct's fields, a list's element, or a
// map's key and value.
type shape uint8

const (
	shapePrimitive shape = iota
	shapeStruct
	shapeList
	shapeMap
)

// idField is a field of a Parquet file as it is read (a column, a struct's
// field, a list's element, a map's key or value) with the Iceberg field id
// it is matched by, -1 when it has none and is never read. Its shape is
// the one pqarrow gives the file's Arrow schema, so that the Reader's
// Arrow fields line up with it.
type idField struct {
	id       int32
	shape    shape
	children []*idField // struct: fields; list: element; map: key, value
}

// fileIDs are the field ids of a Parquet file's schema: the one place the
// Reader and the Transcoder take them from.
type fileIDs struct {
	fields []*idField            // the top-level columns, in file order
	nodes  map[schema.Node]int32 // by node; the repeated groups of lists and maps get -1
}

// node returns the field id of node n, -1 when it has none.
func (f *fileIDs) node(n schema.Node) int32 {
	if id, ok := f.nodes[n]; ok {
		return id
	}
	return -1
}

// resolveIDs gives every field of a Parquet file's schema its field id, by
// Java's rules: the ids the file stores when it stores any on a field (ids
// on the repeated groups of lists and maps do not count, as in
// ParquetSchemaUtil.hasIds); else the ids the name mapping nm gives the
// fields' name paths (ApplyNameMapping), where a list's element is named
// "element" and a map's key and value "key" and "value" whatever the file
// calls them. A field neither gives an id keeps none and is not read. A
// file without ids is refused without a mapping (ErrNoFieldIDs), and when
// the mapping names none of its columns.
func resolveIDs(s *schema.Schema, nm NameMapping) (*fileIDs, error) {
	root := s.Root()
	ids := walkIDs(root, nil, false)
	if root.NumFields() == 0 || anyID(ids.fields) {
		return ids, nil
	}
	if nm == nil {
		return nil, ErrNoFieldIDs
	}
	ids = walkIDs(root, nm, true)
	if !anyID(ids.fields) {
		return nil, mappedNoneErr(topNames(s))
	}
	return ids, nil
}

func walkIDs(root *schema.GroupNode, nm NameMapping, byName bool) *fileIDs {
	r := resolver{byName: byName, ids: &fileIDs{nodes: map[schema.Node]int32{}}}
	for i := range root.NumFields() {
		n := root.Field(i)
		r.ids.fields = append(r.ids.fields, r.field(n, n.Name(), nm))
	}
	return r.ids
}

func anyID(fs []*idField) bool {
	for _, f := range fs {
		if f.id >= 0 || anyID(f.children) {
			return true
		}
	}
	return false
}

// resolver is one walk of resolveIDs: by the file's ids, or by name.
type resolver struct {
	byName bool
	ids    *fileIDs
}

// field resolves node n, which the mapping calls name among the mapped
// fields m, and the fields below it.
func (r *resolver) field(n schema.Node, name string, m []MappedField) *idField {
	id, sub := r.lookup(name, m, n.FieldID())
	r.ids.nodes[n] = id
	f := &idField{id: id}
	g, isGroup := n.(*schema.GroupNode)
	switch {
	case n.RepetitionType() == parquet.Repetitions.Repeated:
		// Repeated outside a list or map: pqarrow reads a list whose
		// element is the node again (a struct with the node's id, a
		// primitive with none).
		stored := int32(-1)
		if isGroup {
			stored = n.FieldID()
		}
		elID, elSub := r.lookup("element", sub, stored)
		el := &idField{id: elID}
		if isGroup {
			r.structFields(el, g, elSub)
		}
		f.shape, f.children = shapeList, []*idField{el}
	case !isGroup:
	case isListGroup(g) && g.NumFields() == 1:
		f.shape, f.children = shapeList, []*idField{r.listElement(g, sub)}
	case isMapGroup(g) && g.NumFields() == 1:
		kv, ok := g.Field(0).(*schema.GroupNode)
		switch {
		case ok && kv.NumFields() == 2:
			r.ids.nodes[kv] = -1
			f.shape, f.children = shapeMap, []*idField{r.field(kv.Field(0), "key", sub), r.field(kv.Field(1), "value", sub)}
		case ok && kv.NumFields() == 1:
			// Keys alone: pqarrow reads a list of them.
			f.shape, f.children = shapeList, []*idField{r.listElement(g, sub)}
		}
	default:
		r.structFields(f, g, sub)
	}
	return f
}

// listElement resolves the element of list group g: the element node of
// the standard three levels, else the repeated node itself (the older
// two-level layouts the Parquet format's backward-compatibility rules
// list), a struct when it is a group.
func (r *resolver) listElement(g *schema.GroupNode, sub []MappedField) *idField {
	rep := g.Field(0)
	if el, ok := threeLevelElement(g, rep); ok {
		r.ids.nodes[rep] = -1
		return r.field(el, "element", sub)
	}
	id, elSub := r.lookup("element", sub, rep.FieldID())
	r.ids.nodes[rep] = id
	el := &idField{id: id}
	if rg, ok := rep.(*schema.GroupNode); ok {
		r.structFields(el, rg, elSub)
	}
	return el
}

func (r *resolver) structFields(f *idField, g *schema.GroupNode, sub []MappedField) {
	f.shape = shapeStruct
	for i := range g.NumFields() {
		c := g.Field(i)
		f.children = append(f.children, r.field(c, c.Name(), sub))
	}
}

// lookup returns the id of a field the mapping calls name among m, and
// the mapped fields below it; stored when the file's ids are used.
func (r *resolver) lookup(name string, m []MappedField, stored int32) (int32, []MappedField) {
	if !r.byName {
		return max(stored, -1), nil
	}
	mf, ok := lookupMapping(m, name)
	if !ok || mf.FieldID == nil {
		return -1, mf.Fields
	}
	return int32(*mf.FieldID), mf.Fields
}

func lookupMapping(m []MappedField, name string) (MappedField, bool) {
	for _, mf := range m {
		for _, n := range mf.Names {
			if n == name {
				return mf, true
			}
		}
	}
	return MappedField{}, false
}

func isListGroup(g *schema.GroupNode) bool {
	_, ok := g.LogicalType().(schema.ListLogicalType)
	return ok || g.ConvertedType() == schema.ConvertedTypes.List
}

func isMapGroup(g *schema.GroupNode) bool {
	_, ok := g.LogicalType().(schema.MapLogicalType)
	return ok || g.ConvertedType() == schema.ConvertedTypes.Map || g.ConvertedType() == schema.ConvertedTypes.MapKeyValue
}

// threeLevelElement returns the element of a list stored in the standard
// three levels (list group, repeated group, element); a repeated field
// that is itself the element gives false. The names "array" and
// "<list>_tuple" mark a two-level list of one-field structs, as pqarrow
// and Java read them.
func threeLevelElement(list *schema.GroupNode, rep schema.Node) (schema.Node, bool) {
	g, ok := rep.(*schema.GroupNode)
	if !ok || g.NumFields() != 1 || g.Name() == "array" || g.Name() == list.Name()+"_tuple" {
		return nil, false
	}
	return g.Field(0), true
}

// topNames lists the top-level columns of a Parquet schema, for errors.
func topNames(s *schema.Schema) string {
	root := s.Root()
	names := make([]string, root.NumFields())
	for i := range names {
		names[i] = root.Field(i).Name()
	}
	return listNames(names)
}
