// Package spec is the Iceberg table-metadata model: types, schemas, partition
// specs, sort orders, snapshots, refs and the table metadata JSON codec for
// format versions 1 to 3.
//
// It does no IO and must never silently drop or rewrite a field it does not
// understand: metadata we read and write back has to come out unchanged apart
// from what a maintenance operation deliberately changes.
package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Reserved field ids of metadata columns (spec "Reserved Field IDs").
const (
	FieldIDFilePath                  = 2147483546 // position delete file_path
	FieldIDPos                       = 2147483545 // position delete pos
	FieldIDDeleteRow                 = 2147483544 // position delete row
	FieldIDMetaFile                  = 2147483646 // _file
	FieldIDMetaPos                   = 2147483645 // _pos
	FieldIDMetaDeleted               = 2147483644 // _deleted
	FieldIDMetaSpecID                = 2147483643 // _spec_id
	FieldIDMetaPartition             = 2147483642 // _partition
	FieldIDRowID                     = 2147483540 // _row_id
	FieldIDLastUpdatedSequenceNumber = 2147483539 // _last_updated_sequence_number
	MaxUserFieldID                   = 2147483447
	RowIDColumnName                  = "_row_id"
	LastUpdatedSequenceNumberColumn  = "_last_updated_sequence_number"
	PositionDeleteFilePathColumnName = "file_path"
	PositionDeletePosColumnName      = "pos"
)

// Type is an Iceberg type. Primitive types are comparable values; nested
// types are pointers.
type Type interface {
	// String is the type's JSON spelling for primitives ("long",
	// "decimal(9,2)") and a readable form for nested types.
	String() string
	isType()
}

// PrimitiveType is implemented by every non-nested type.
type PrimitiveType interface {
	Type
	isPrimitive()
}

type (
	BooleanType       struct{}
	IntType           struct{}
	LongType          struct{}
	FloatType         struct{}
	DoubleType        struct{}
	DateType          struct{}
	TimeType          struct{} // microseconds since midnight
	TimestampType     struct{} // microseconds, no zone
	TimestampTzType   struct{} // microseconds, UTC
	TimestampNsType   struct{} // nanoseconds, no zone (v3)
	TimestampTzNsType struct{} // nanoseconds, UTC (v3)
	StringType        struct{}
	UUIDType          struct{}
	BinaryType        struct{}
	UnknownType       struct{} // v3: always null, never stored in data files
	VariantType       struct{} // v3
	FixedType         struct{ Length int }
	DecimalType       struct{ Precision, Scale int }
	// GeometryType and GeographyType keep the parameters exactly as written
	// so that they round-trip; empty means the spec default.
	GeometryType  struct{ CRS string }
	GeographyType struct{ CRS, Algorithm string }
)

func (BooleanType) String() string       { return "boolean" }
func (IntType) String() string           { return "int" }
func (LongType) String() string          { return "long" }
func (FloatType) String() string         { return "float" }
func (DoubleType) String() string        { return "double" }
func (DateType) String() string          { return "date" }
func (TimeType) String() string          { return "time" }
func (TimestampType) String() string     { return "timestamp" }
func (TimestampTzType) String() string   { return "timestamptz" }
func (TimestampNsType) String() string   { return "timestamp_ns" }
func (TimestampTzNsType) String() string { return "timestamptz_ns" }
func (StringType) String() string        { return "string" }
func (UUIDType) String() string          { return "uuid" }
func (BinaryType) String() string        { return "binary" }
func (UnknownType) String() string       { return "unknown" }
func (VariantType) String() string       { return "variant" }
func (t FixedType) String() string       { return fmt.Sprintf("fixed[%d]", t.Length) }
func (t DecimalType) String() string     { return fmt.Sprintf("decimal(%d, %d)", t.Precision, t.Scale) }
func (t GeometryType) String() string {
	if t.CRS == "" {
		return "geometry"
	}
	return "geometry(" + t.CRS + ")"
}
func (t GeographyType) String() string {
	switch {
	case t.CRS == "" && t.Algorithm == "":
		return "geography"
	case t.Algorithm == "":
		return "geography(" + t.CRS + ")"
	default:
		return "geography(" + t.CRS + ", " + t.Algorithm + ")"
	}
}

func (BooleanType) isType()       {}
func (IntType) isType()           {}
func (LongType) isType()          {}
func (FloatType) isType()         {}
func (DoubleType) isType()        {}
func (DateType) isType()          {}
func (TimeType) isType()          {}
func (TimestampType) isType()     {}
func (TimestampTzType) isType()   {}
func (TimestampNsType) isType()   {}
func (TimestampTzNsType) isType() {}
func (StringType) isType()        {}
func (UUIDType) isType()          {}
func (BinaryType) isType()        {}
func (UnknownType) isType()       {}
func (VariantType) isType()       {}
func (FixedType) isType()         {}
func (DecimalType) isType()       {}
func (GeometryType) isType()      {}
func (GeographyType) isType()     {}

func (BooleanType) isPrimitive()       {}
func (IntType) isPrimitive()           {}
func (LongType) isPrimitive()          {}
func (FloatType) isPrimitive()         {}
func (DoubleType) isPrimitive()        {}
func (DateType) isPrimitive()          {}
func (TimeType) isPrimitive()          {}
func (TimestampType) isPrimitive()     {}
func (TimestampTzType) isPrimitive()   {}
func (TimestampNsType) isPrimitive()   {}
func (TimestampTzNsType) isPrimitive() {}
func (StringType) isPrimitive()        {}
func (UUIDType) isPrimitive()          {}
func (BinaryType) isPrimitive()        {}
func (UnknownType) isPrimitive()       {}
func (VariantType) isPrimitive()       {}
func (FixedType) isPrimitive()         {}
func (DecimalType) isPrimitive()       {}
func (GeometryType) isPrimitive()      {}
func (GeographyType) isPrimitive()     {}

// NestedField is a struct field, and also how list elements and map keys and
// values are described when walking a schema.
type NestedField struct {
	ID       int
	Name     string
	Type     Type
	Required bool
	Doc      string
	// InitialDefault and WriteDefault are kept as the raw JSON single value
	// (v3); nil means absent.
	InitialDefault json.RawMessage
	WriteDefault   json.RawMessage
	// Extra holds keys we do not interpret, so they round-trip.
	Extra map[string]json.RawMessage
}

// StructType is an ordered list of fields.
type StructType struct {
	Fields []NestedField
}

// ListType is a list whose elements have their own field id.
type ListType struct {
	ElementID       int
	Element         Type
	ElementRequired bool
}

// MapType is a map whose keys and values have their own field ids.
type MapType struct {
	KeyID         int
	Key           Type
	ValueID       int
	Value         Type
	ValueRequired bool
}

func (*StructType) isType() {}
func (*ListType) isType()   {}
func (*MapType) isType()    {}

func (t *StructType) String() string {
	var b strings.Builder
	b.WriteString("struct<")
	for i, f := range t.Fields {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d: %s: ", f.ID, f.Name)
		if f.Required {
			b.WriteString("required ")
		} else {
			b.WriteString("optional ")
		}
		b.WriteString(f.Type.String())
	}
	b.WriteString(">")
	return b.String()
}
func (t *ListType) String() string { return "list<" + t.Element.String() + ">" }
func (t *MapType) String() string {
	return "map<" + t.Key.String() + ", " + t.Value.String() + ">"
}

// Field returns the direct child field with the given id.
func (t *StructType) Field(id int) (NestedField, bool) {
	for _, f := range t.Fields {
		if f.ID == id {
			return f, true
		}
	}
	return NestedField{}, false
}

var (
	fixedRe     = regexp.MustCompile(`^fixed\[\s*(\d+)\s*\]$`)
	decimalRe   = regexp.MustCompile(`^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$`)
	geometryRe  = regexp.MustCompile(`^geometry\s*\(\s*([^)]*?)\s*\)$`)
	geographyRe = regexp.MustCompile(`^geography\s*\(\s*([^,)]*?)\s*(?:,\s*([^)]*?)\s*)?\)$`)
)

// ParsePrimitiveType parses a primitive type from its JSON spelling.
func ParsePrimitiveType(s string) (PrimitiveType, error) {
	switch s {
	case "boolean":
		return BooleanType{}, nil
	case "int":
		return IntType{}, nil
	case "long":
		return LongType{}, nil
	case "float":
		return FloatType{}, nil
	case "double":
		return DoubleType{}, nil
	case "date":
		return DateType{}, nil
	case "time":
		return TimeType{}, nil
	case "timestamp":
		return TimestampType{}, nil
	case "timestamptz":
		return TimestampTzType{}, nil
	case "timestamp_ns":
		return TimestampNsType{}, nil
	case "timestamptz_ns":
		return TimestampTzNsType{}, nil
	case "string":
		return StringType{}, nil
	case "uuid":
		return UUIDType{}, nil
	case "binary":
		return BinaryType{}, nil
	case "unknown":
		return UnknownType{}, nil
	case "variant":
		return VariantType{}, nil
	case "geometry":
		return GeometryType{}, nil
	case "geography":
		return GeographyType{}, nil
	}
	if m := fixedRe.FindStringSubmatch(s); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, fmt.Errorf("cannot parse type %q: %w", s, err)
		}
		return FixedType{Length: n}, nil
	}
	if m := decimalRe.FindStringSubmatch(s); m != nil {
		p, err1 := strconv.Atoi(m[1])
		sc, err2 := strconv.Atoi(m[2])
		if err1 != nil || err2 != nil || p > 38 || sc > p {
			return nil, fmt.Errorf("cannot parse type %q: invalid decimal precision or scale", s)
		}
		return DecimalType{Precision: p, Scale: sc}, nil
	}
	if m := geometryRe.FindStringSubmatch(s); m != nil {
		return GeometryType{CRS: m[1]}, nil
	}
	if m := geographyRe.FindStringSubmatch(s); m != nil {
		return GeographyType{CRS: m[1], Algorithm: m[2]}, nil
	}
	return nil, fmt.Errorf("cannot parse type from json: unknown type %q", s)
}

// MarshalType writes a type in its Iceberg JSON form.
func MarshalType(t Type) ([]byte, error) {
	return marshalJSON(typeJSON{t})
}

// UnmarshalType reads a type from its Iceberg JSON form.
func UnmarshalType(data []byte) (Type, error) {
	var tj typeJSON
	if err := json.Unmarshal(data, &tj); err != nil {
		return nil, err
	}
	return tj.Type, nil
}

// typeJSON adapts Type to encoding/json.
type typeJSON struct{ Type Type }

type fieldJSON struct {
	ID             int             `json:"id"`
	Name           string          `json:"name"`
	Required       bool            `json:"required"`
	Type           typeJSON        `json:"type"`
	Doc            string          `json:"doc,omitempty"`
	InitialDefault json.RawMessage `json:"initial-default,omitempty"`
	WriteDefault   json.RawMessage `json:"write-default,omitempty"`
}

var fieldKnownKeys = []string{"id", "name", "required", "type", "doc", "initial-default", "write-default"}

func (f NestedField) MarshalJSON() ([]byte, error) {
	b, err := marshalJSON(fieldJSON{
		ID: f.ID, Name: f.Name, Required: f.Required, Type: typeJSON{f.Type}, Doc: f.Doc,
		InitialDefault: f.InitialDefault, WriteDefault: f.WriteDefault,
	})
	if err != nil {
		return nil, err
	}
	return mergeExtra(b, f.Extra)
}

func (f *NestedField) UnmarshalJSON(data []byte) error {
	var fj fieldJSON
	if err := json.Unmarshal(data, &fj); err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	if _, ok := raw["id"]; !ok {
		return fmt.Errorf("cannot parse field %q: missing id", fj.Name)
	}
	if _, ok := raw["type"]; !ok || fj.Type.Type == nil {
		return fmt.Errorf("cannot parse field %q: missing type", fj.Name)
	}
	*f = NestedField{
		ID: fj.ID, Name: fj.Name, Required: fj.Required, Type: fj.Type.Type, Doc: fj.Doc,
		InitialDefault: fj.InitialDefault, WriteDefault: fj.WriteDefault,
		Extra: extraKeys(raw, fieldKnownKeys),
	}
	return nil
}

type structJSON struct {
	Type   string        `json:"type"`
	Fields []NestedField `json:"fields"`
}

type listJSON struct {
	Type            string   `json:"type"`
	ElementID       int      `json:"element-id"`
	Element         typeJSON `json:"element"`
	ElementRequired bool     `json:"element-required"`
}

type mapJSON struct {
	Type          string   `json:"type"`
	KeyID         int      `json:"key-id"`
	Key           typeJSON `json:"key"`
	ValueID       int      `json:"value-id"`
	Value         typeJSON `json:"value"`
	ValueRequired bool     `json:"value-required"`
}

func (t typeJSON) MarshalJSON() ([]byte, error) {
	switch v := t.Type.(type) {
	case nil:
		return nil, fmt.Errorf("nil type")
	case *StructType:
		fields := v.Fields
		if fields == nil {
			fields = []NestedField{}
		}
		return marshalJSON(structJSON{Type: "struct", Fields: fields})
	case *ListType:
		return marshalJSON(listJSON{Type: "list", ElementID: v.ElementID, Element: typeJSON{v.Element}, ElementRequired: v.ElementRequired})
	case *MapType:
		return marshalJSON(mapJSON{Type: "map", KeyID: v.KeyID, Key: typeJSON{v.Key}, ValueID: v.ValueID, Value: typeJSON{v.Value}, ValueRequired: v.ValueRequired})
	default:
		return marshalJSON(v.String())
	}
}

func (t *typeJSON) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		p, err := ParsePrimitiveType(s)
		if err != nil {
			return err
		}
		t.Type = p
		return nil
	}
	var head struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("cannot parse type from json: %s", truncateJSON(data))
	}
	if head.Type == nil {
		return fmt.Errorf("cannot parse type from json: missing \"type\" in %s", truncateJSON(data))
	}
	switch *head.Type {
	case "struct":
		var s structJSON
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		t.Type = &StructType{Fields: s.Fields}
	case "list":
		var l listJSON
		if err := json.Unmarshal(data, &l); err != nil {
			return err
		}
		if l.Element.Type == nil {
			return fmt.Errorf("cannot parse type from json: list without element")
		}
		t.Type = &ListType{ElementID: l.ElementID, Element: l.Element.Type, ElementRequired: l.ElementRequired}
	case "map":
		var m mapJSON
		if err := json.Unmarshal(data, &m); err != nil {
			return err
		}
		if m.Key.Type == nil || m.Value.Type == nil {
			return fmt.Errorf("cannot parse type from json: map without key or value")
		}
		t.Type = &MapType{KeyID: m.KeyID, Key: m.Key.Type, ValueID: m.ValueID, Value: m.Value.Type, ValueRequired: m.ValueRequired}
	default:
		return fmt.Errorf("cannot parse type from json: unknown type %q", *head.Type)
	}
	return nil
}

// truncateJSON quotes a value of a JSON document for an error: at most
// maxQuoted bytes, escaped, so an error never carries much of a file, nor
// a control character.
func truncateJSON(b []byte) string {
	if len(b) > maxQuoted {
		return strconv.Quote(string(b[:maxQuoted])) + "..."
	}
	return strconv.Quote(string(b))
}

// maxQuoted is how many bytes of its input an error may quote.
const maxQuoted = 32

// describeNonObject says what a document that should be a JSON object is,
// quoting none of it.
func describeNonObject(b []byte) string {
	switch {
	case len(b) == 0:
		return "the input is empty"
	case !json.Valid(b):
		return fmt.Sprintf("the input (%d bytes) is not JSON", len(b))
	case b[0] == '[':
		return "the input is a JSON array"
	case b[0] == '"':
		return "the input is a JSON string"
	case b[0] == 'n':
		return "the input is JSON null"
	case b[0] == 't' || b[0] == 'f':
		return "the input is a JSON boolean"
	}
	return "the input is a JSON number"
}

// extraKeys returns the entries of raw whose keys are not in known, or nil.
func extraKeys(raw map[string]json.RawMessage, known []string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for k, v := range raw {
		isKnown := false
		for _, kk := range known {
			if k == kk {
				isKnown = true
				break
			}
		}
		if !isKnown {
			if out == nil {
				out = map[string]json.RawMessage{}
			}
			out[k] = v
		}
	}
	return out
}

// mergeExtra adds extra keys to a marshalled JSON object. They go first,
// sorted: encoding/json matches keys case-insensitively, so an unknown key
// such as "ſource-id" also lands in the known field; writing the known key
// last makes it win again when the output is read back.
func mergeExtra(obj []byte, extra map[string]json.RawMessage) ([]byte, error) {
	if len(extra) == 0 {
		return obj, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if _, ok := m[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := marshalJSON(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		if err := json.Compact(&b, extra[k]); err != nil {
			return nil, fmt.Errorf("extra field %q: %w", k, err)
		}
	}
	rest := bytes.TrimSpace(obj)[1:] // after '{'
	if len(keys) > 0 && !bytes.Equal(bytes.TrimSpace(rest), []byte("}")) {
		b.WriteByte(',')
	}
	b.Write(rest)
	return b.Bytes(), nil
}
