package datafile

import (
	"github.com/apache/arrow-go/v18/arrow"

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
