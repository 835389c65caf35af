package datafile

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/icectl/icectl/iceberg/spec"
)

// NameMapping and MappedField are the table's schema.name-mapping.default
// (spec.ParseNameMapping reads it).
type (
	NameMapping = spec.NameMapping
	MappedField = spec.MappedField
)

// applyNameMapping gives the file's columns the ids the mapping assigns to
// their names; columns the mapping does not name keep no id and are never
// read.
func applyNameMapping(ffs []*fileField, m []MappedField) {
	for _, ff := range ffs {
		mf, ok := lookupMapping(m, ff.field.Name)
		if !ok {
			continue
		}
		if mf.FieldID != nil {
			ff.id = *mf.FieldID
		}
		applyNestedMapping(ff, mf.Fields)
	}
}

func applyNestedMapping(ff *fileField, m []MappedField) {
	kind := nestedKind(ff.field.Type)
	for i, c := range ff.children {
		name := c.field.Name
		switch kind {
		case "list":
			name = "element"
		case "map":
			name = [2]string{"key", "value"}[i]
		}
		mf, ok := lookupMapping(m, name)
		if !ok {
			continue
		}
		if mf.FieldID != nil {
			c.id = *mf.FieldID
		}
		applyNestedMapping(c, mf.Fields)
	}
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

// nestedKind names the shape of a nested Arrow type: "struct", "list",
// "map", or "" for a primitive.
func nestedKind(dt arrow.DataType) string {
	switch dt.(type) {
	case *arrow.StructType:
		return "struct"
	case *arrow.MapType:
		return "map"
	case arrow.ListLikeType:
		return "list"
	}
	return ""
}

// parquetIDs gives the Iceberg field id of every node of a Parquet file's
// schema: the stored field ids when the file has any, else the ids the
// name mapping nm gives the nodes' name paths (nil nm: none). The repeated
// groups of lists and maps have no field of their own and get -1, as does
// a node neither names. stored reports whether the file had ids.
func parquetIDs(s *schema.Schema, nm NameMapping) (ids map[schema.Node]int32, stored bool) {
	ids = map[schema.Node]int32{}
	root := s.Root()
	for i := range root.NumFields() {
		if anyStoredID(root.Field(i)) {
			stored = true
			break
		}
	}
	for i := range root.NumFields() {
		n := root.Field(i)
		if stored {
			storeIDs(n, ids)
		} else {
			mapIDs(n, n.Name(), nm, ids)
		}
	}
	return ids, stored
}

func anyStoredID(n schema.Node) bool {
	if n.FieldID() >= 0 {
		return true
	}
	if g, ok := n.(*schema.GroupNode); ok {
		for i := range g.NumFields() {
			if anyStoredID(g.Field(i)) {
				return true
			}
		}
	}
	return false
}

func storeIDs(n schema.Node, ids map[schema.Node]int32) {
	ids[n] = n.FieldID()
	if g, ok := n.(*schema.GroupNode); ok {
		for i := range g.NumFields() {
			storeIDs(g.Field(i), ids)
		}
	}
}

// mapIDs gives node n, looked up as name among the mapped fields m, and
// its descendants their mapped ids. The mapping names a list's element
// "element" and a map's key and value "key" and "value" (the spec's name
// mapping), whatever the file calls them.
func mapIDs(n schema.Node, name string, m []MappedField, ids map[schema.Node]int32) {
	ids[n] = -1
	mf, ok := lookupMapping(m, name)
	if ok && mf.FieldID != nil {
		ids[n] = int32(*mf.FieldID)
	}
	g, isGroup := n.(*schema.GroupNode)
	if !isGroup {
		return
	}
	var sub []MappedField
	if ok {
		sub = mf.Fields
	}
	switch {
	case isListGroup(g) && g.NumFields() == 1:
		rep := g.Field(0)
		if elem, ok := threeLevelElement(g, rep); ok {
			ids[rep] = -1
			mapIDs(elem, "element", sub, ids)
			return
		}
		mapIDs(rep, "element", sub, ids)
	case isMapGroup(g) && g.NumFields() == 1:
		kv, ok := g.Field(0).(*schema.GroupNode)
		if !ok || kv.NumFields() != 2 {
			break
		}
		ids[kv] = -1
		mapIDs(kv.Field(0), "key", sub, ids)
		mapIDs(kv.Field(1), "value", sub, ids)
	default:
		for i := range g.NumFields() {
			c := g.Field(i)
			mapIDs(c, c.Name(), sub, ids)
		}
	}
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
// that is itself the element (the older two-level layouts the Parquet
// format's backward-compatibility rules list) gives false.
func threeLevelElement(list *schema.GroupNode, rep schema.Node) (schema.Node, bool) {
	g, ok := rep.(*schema.GroupNode)
	if !ok || g.NumFields() != 1 || g.Name() == "array" || g.Name() == list.Name()+"_tuple" {
		return nil, false
	}
	return g.Field(0), true
}

// anyMapped reports whether ids gives any node a field id.
func anyMapped(ids map[schema.Node]int32) bool {
	for _, id := range ids {
		if id >= 0 {
			return true
		}
	}
	return false
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
