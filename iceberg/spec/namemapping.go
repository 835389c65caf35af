package spec

import (
	"encoding/json"
	"fmt"
)

// NameMapping is the table property schema.name-mapping.default: how to
// find field ids for data files written without them (imported Parquet).
type NameMapping []MappedField

// MappedField maps the names a column was written under to its field id.
// FieldID is nil for names that map to no field.
type MappedField struct {
	FieldID *int
	Names   []string
	Fields  []MappedField
}

// PropNameMapping is the table property holding the name mapping.
const PropNameMapping = "schema.name-mapping.default"

// NameMappingOf returns the name mapping of table properties props, nil
// when they have none.
func NameMappingOf(props map[string]string) (NameMapping, error) {
	s := props[PropNameMapping]
	if s == "" {
		return nil, nil
	}
	nm, err := ParseNameMapping([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("table property %s: %w", PropNameMapping, err)
	}
	return nm, nil
}

// ParseNameMapping reads a name mapping JSON document.
func ParseNameMapping(data []byte) (NameMapping, error) {
	var nm NameMapping
	if err := json.Unmarshal(data, &nm); err != nil {
		return nil, fmt.Errorf("parse name mapping: %w", err)
	}
	return nm, nil
}

// Find returns the mapping of the column at path (one name per nesting
// level), matching any of each field's names.
func (nm NameMapping) Find(path ...string) (MappedField, bool) {
	fields := []MappedField(nm)
	for i, name := range path {
		var next *MappedField
		for j := range fields {
			for _, n := range fields[j].Names {
				if n == name {
					next = &fields[j]
					break
				}
			}
			if next != nil {
				break
			}
		}
		if next == nil {
			return MappedField{}, false
		}
		if i == len(path)-1 {
			return *next, true
		}
		fields = next.Fields
	}
	return MappedField{}, false
}

func (f *MappedField) UnmarshalJSON(data []byte) error {
	o, err := decodeObject(data, "name mapping field")
	if err != nil {
		return err
	}
	var out MappedField
	if out.FieldID, err = o.optInt("field-id"); err != nil {
		return err
	}
	if !o.has("names") {
		return o.missing("list", "names")
	}
	if out.Names, err = o.optStringList("names"); err != nil {
		return err
	}
	if out.Fields, err = parseList[MappedField](o, "fields"); err != nil {
		return err
	}
	*f = out
	return nil
}

func (f MappedField) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	if f.FieldID != nil {
		w.field("field-id", *f.FieldID)
	}
	w.field("names", nonNil(f.Names))
	if len(f.Fields) > 0 {
		w.field("fields", f.Fields)
	}
	return w.bytes()
}
