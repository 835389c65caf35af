package spec

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Schema is a table schema: a struct with an id and optional identifier
// fields.
type Schema struct {
	ID                 int
	IdentifierFieldIDs []int
	Fields             []NestedField
	Extra              map[string]json.RawMessage
}

// AsStruct returns the schema's fields as a struct type.
func (s *Schema) AsStruct() *StructType { return &StructType{Fields: s.Fields} }

// FindField returns the field with the given id anywhere in the schema,
// including list elements and map keys and values.
func (s *Schema) FindField(id int) (NestedField, bool) {
	var found NestedField
	ok := false
	walkFields(s.AsStruct(), func(f NestedField) bool {
		if f.ID == id {
			found, ok = f, true
			return false
		}
		return true
	})
	return found, ok
}

// FindFieldByName resolves a dotted name ("a.b.c") through nested structs.
// Names compare exactly, as Iceberg's case-sensitive lookup does.
func (s *Schema) FindFieldByName(name string) (NestedField, bool) {
	parts := strings.Split(name, ".")
	st := s.AsStruct()
	for i, p := range parts {
		var next *NestedField
		for j := range st.Fields {
			if st.Fields[j].Name == p {
				next = &st.Fields[j]
				break
			}
		}
		if next == nil {
			return NestedField{}, false
		}
		if i == len(parts)-1 {
			return *next, true
		}
		inner, ok := next.Type.(*StructType)
		if !ok {
			return NestedField{}, false
		}
		st = inner
	}
	return NestedField{}, false
}

// HighestFieldID returns the largest field id used in the schema.
func (s *Schema) HighestFieldID() int {
	max := 0
	walkFields(s.AsStruct(), func(f NestedField) bool {
		if f.ID > max {
			max = f.ID
		}
		return true
	})
	return max
}

// walkFields visits every field depth-first, list elements and map keys and
// values included (as synthetic fields named "element", "key", "value").
// fn returns false to stop.
func walkFields(t Type, fn func(NestedField) bool) bool {
	switch v := t.(type) {
	case *StructType:
		for _, f := range v.Fields {
			if !fn(f) || !walkFields(f.Type, fn) {
				return false
			}
		}
	case *ListType:
		el := NestedField{ID: v.ElementID, Name: "element", Type: v.Element, Required: v.ElementRequired}
		if !fn(el) || !walkFields(v.Element, fn) {
			return false
		}
	case *MapType:
		k := NestedField{ID: v.KeyID, Name: "key", Type: v.Key, Required: true}
		val := NestedField{ID: v.ValueID, Name: "value", Type: v.Value, Required: v.ValueRequired}
		if !fn(k) || !walkFields(v.Key, fn) || !fn(val) || !walkFields(v.Value, fn) {
			return false
		}
	}
	return true
}

// WalkFields visits every field of t depth-first; fn returns false to stop.
func WalkFields(t Type, fn func(NestedField) bool) { walkFields(t, fn) }

type schemaJSON struct {
	Type               string        `json:"type"`
	SchemaID           *int          `json:"schema-id,omitempty"`
	IdentifierFieldIDs []int         `json:"identifier-field-ids,omitempty"`
	Fields             []NestedField `json:"fields"`
}

var schemaKnownKeys = []string{"type", "schema-id", "identifier-field-ids", "fields"}

func (s Schema) MarshalJSON() ([]byte, error) {
	id := s.ID
	fields := s.Fields
	if fields == nil {
		fields = []NestedField{}
	}
	b, err := marshalJSON(schemaJSON{Type: "struct", SchemaID: &id, IdentifierFieldIDs: s.IdentifierFieldIDs, Fields: fields})
	if err != nil {
		return nil, err
	}
	return mergeExtra(b, s.Extra)
}

func (s *Schema) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("cannot parse schema: %w", err)
	}
	var sj schemaJSON
	if err := json.Unmarshal(data, &sj); err != nil {
		return fmt.Errorf("cannot parse schema: %w", err)
	}
	if sj.Type != "struct" {
		return fmt.Errorf("cannot parse type from json: schema must have \"type\": \"struct\", got %q", sj.Type)
	}
	if _, ok := raw["fields"]; !ok {
		return fmt.Errorf("cannot parse schema: missing fields")
	}
	*s = Schema{IdentifierFieldIDs: sj.IdentifierFieldIDs, Fields: sj.Fields, Extra: extraKeys(raw, schemaKnownKeys)}
	if sj.SchemaID != nil {
		s.ID = *sj.SchemaID
	}
	return nil
}
