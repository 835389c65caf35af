package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode"

	"github.com/icectl/icectl/iceberg/spec"
)

// avroSchemaJSON converts an Iceberg struct to the Avro schema JSON Java's
// TypeToSchema writes: records named "r<field id>", optional fields as
// ["null", T] with default null, ids as field-id/element-id properties, maps
// with non-string keys as arrays of k<id>_v<id> records, and Java's key order
// (name, type, doc, default, then properties in insertion order).
func avroSchemaJSON(rootName string, fields []spec.NestedField) (string, error) {
	c := &schemaConv{named: map[string]bool{}}
	var b bytes.Buffer
	if err := c.record(&b, rootName, fields); err != nil {
		return "", err
	}
	return b.String(), nil
}

type schemaConv struct {
	named map[string]bool // named types already defined; later uses are by name
}

func jstr(b *bytes.Buffer, s string) {
	j, _ := json.Marshal(s)
	b.Write(j)
}

func (c *schemaConv) record(b *bytes.Buffer, name string, fields []spec.NestedField) error {
	if c.named[name] {
		jstr(b, name)
		return nil
	}
	c.named[name] = true
	b.WriteString(`{"type":"record","name":`)
	jstr(b, name)
	b.WriteString(`,"fields":[`)
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		fname, valid := avroName(f.Name)
		b.WriteString(`{"name":`)
		jstr(b, fname)
		b.WriteString(`,"type":`)
		if !f.Required {
			b.WriteString(`["null",`)
		}
		if err := c.typ(b, f.ID, f.Type); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if !f.Required {
			b.WriteByte(']')
		}
		if f.Doc != "" {
			b.WriteString(`,"doc":`)
			jstr(b, f.Doc)
		}
		if !f.Required {
			b.WriteString(`,"default":null`)
		}
		if !valid {
			b.WriteString(`,"iceberg-field-name":`)
			jstr(b, f.Name)
		}
		b.WriteString(`,"field-id":` + strconv.Itoa(f.ID) + `}`)
	}
	b.WriteString(`]}`)
	return nil
}

func (c *schemaConv) fixed(b *bytes.Buffer, name string, size int, extra string) {
	if c.named[name] {
		jstr(b, name)
		return
	}
	c.named[name] = true
	fmt.Fprintf(b, `{"type":"fixed","name":%q,"size":%d%s}`, name, size, extra)
}

func (c *schemaConv) typ(b *bytes.Buffer, id int, t spec.Type) error {
	switch v := t.(type) {
	case *spec.StructType:
		return c.record(b, "r"+strconv.Itoa(id), v.Fields)
	case *spec.ListType:
		b.WriteString(`{"type":"array","items":`)
		if !v.ElementRequired {
			b.WriteString(`["null",`)
		}
		if err := c.typ(b, v.ElementID, v.Element); err != nil {
			return err
		}
		if !v.ElementRequired {
			b.WriteByte(']')
		}
		b.WriteString(`,"element-id":` + strconv.Itoa(v.ElementID) + `}`)
	case *spec.MapType:
		if _, ok := v.Key.(spec.StringType); ok {
			return fmt.Errorf("string-keyed maps are not used in manifests")
		}
		b.WriteString(`{"type":"array","items":`)
		kv := []spec.NestedField{
			{ID: v.KeyID, Name: "key", Type: v.Key, Required: true},
			{ID: v.ValueID, Name: "value", Type: v.Value, Required: v.ValueRequired},
		}
		if err := c.record(b, fmt.Sprintf("k%d_v%d", v.KeyID, v.ValueID), kv); err != nil {
			return err
		}
		b.WriteString(`,"logicalType":"map"}`)
	case spec.BooleanType:
		b.WriteString(`"boolean"`)
	case spec.IntType:
		b.WriteString(`"int"`)
	case spec.LongType:
		b.WriteString(`"long"`)
	case spec.FloatType:
		b.WriteString(`"float"`)
	case spec.DoubleType:
		b.WriteString(`"double"`)
	case spec.DateType:
		b.WriteString(`{"type":"int","logicalType":"date"}`)
	case spec.TimeType:
		b.WriteString(`{"type":"long","logicalType":"time-micros"}`)
	case spec.TimestampType:
		b.WriteString(`{"type":"long","logicalType":"timestamp-micros","adjust-to-utc":false}`)
	case spec.TimestampTzType:
		b.WriteString(`{"type":"long","logicalType":"timestamp-micros","adjust-to-utc":true}`)
	case spec.TimestampNsType:
		b.WriteString(`{"type":"long","logicalType":"timestamp-nanos","adjust-to-utc":false}`)
	case spec.TimestampTzNsType:
		b.WriteString(`{"type":"long","logicalType":"timestamp-nanos","adjust-to-utc":true}`)
	case spec.StringType:
		b.WriteString(`"string"`)
	case spec.UUIDType:
		c.fixed(b, "uuid_fixed", 16, `,"logicalType":"uuid"`)
	case spec.FixedType:
		c.fixed(b, "fixed_"+strconv.Itoa(v.Length), v.Length, "")
	case spec.BinaryType, spec.GeometryType, spec.GeographyType:
		b.WriteString(`"bytes"`)
	case spec.DecimalType:
		c.fixed(b, fmt.Sprintf("decimal_%d_%d", v.Precision, v.Scale), decimalRequiredBytes(v.Precision),
			fmt.Sprintf(`,"logicalType":"decimal","precision":%d,"scale":%d`, v.Precision, v.Scale))
	case spec.UnknownType:
		b.WriteString(`"null"`)
	default:
		return fmt.Errorf("type %v cannot be written to a manifest", t)
	}
	return nil
}

// decimalRequiredBytes is the fixed size Java uses for a decimal precision.
func decimalRequiredBytes(precision int) int {
	for n := 1; n < 24; n++ {
		// the largest unscaled value n bytes hold is 2^(8n-1)-1
		if float64(precision) <= float64(8*n-1)*0.30102999566398120 {
			return n
		}
	}
	return 24
}

// avroName sanitizes a name as Java's AvroSchemaUtil.sanitize does.
func avroName(name string) (string, bool) {
	valid := name != ""
	for i, r := range name {
		if !(r == '_' || (r < 128 && unicode.IsLetter(r)) || (i > 0 && r < 128 && unicode.IsDigit(r))) {
			valid = false
			break
		}
	}
	if valid {
		return name, true
	}
	var b bytes.Buffer
	for i, r := range name {
		switch {
		case r == '_' || (r < 128 && unicode.IsLetter(r)):
			b.WriteRune(r)
		case r < 128 && unicode.IsDigit(r):
			if i == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "_x%X", r)
		}
	}
	return b.String(), false
}
