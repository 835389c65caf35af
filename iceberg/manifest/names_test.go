package manifest

import (
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
)

// TestParseAvroUnicodeNames: Java writes a partition field named größe or
// "na me/é" into the manifest's Avro schema as it is (Java's Avro keeps
// Unicode letters; other characters it escapes as _x<hex>); the schema
// parses, the field keeps its field-id, and a name that was valid is left
// alone.
func TestParseAvroUnicodeNames(t *testing.T) {
	text := `{"type":"record","name":"manifest_entry","fields":[
		{"name":"status","type":"int","field-id":0},
		{"name":"data_file","type":{"type":"record","name":"r2","fields":[
			{"name":"partition","type":{"type":"record","name":"r102","fields":[
				{"name":"größe","type":["null","int"],"default":null,"field-id":1000},
				{"name":"na_x20me_x2Fé","type":["null","string"],"default":null,"field-id":1001}]},"field-id":102}]},"field-id":2}]}`
	if _, err := avro.ParseWithCache(text, "", &avro.SchemaCache{}); err == nil {
		t.Fatal("hamba/avro parses Unicode names now: parseAvro's rewrite is not needed")
	}
	s, err := parseAvro(text)
	if err != nil {
		t.Fatal(err)
	}
	df := s.(*avro.RecordSchema).Fields()[1].Type().(*avro.RecordSchema)
	part := df.Fields()[0].Type().(*avro.RecordSchema)
	for i, want := range []struct {
		name string
		id   int
	}{{"gr_xF6_xDFe", 1000}, {"na_x20me_x2F_xE9", 1001}} {
		f := part.Fields()[i]
		if id, ok := fieldID(f); f.Name() != want.name || !ok || id != want.id {
			t.Errorf("partition field %d: %s id %d, want %s id %d", i, f.Name(), id, want.name, want.id)
		}
	}
	if got, ok := readableNames(`{"type":"record","name":"r","fields":[{"name":"ok","type":"int","doc":"é"}]}`); ok {
		t.Errorf("rewrote a schema whose names are valid: %s", got)
	}
}

// TestParseAvroRepeatedDefinitions: PyIceberg 0.12 writes each of a
// partition struct's decimal(10,2) fields with its own definition of
// fixed "decimal_10_2" (Java writes the name the second time). The Avro
// spec forbids redefining a name and hamba/avro refuses it; Java's Avro
// (1.12) accepts a definition equal to the first, and so does parseAvro:
// both fields read as the fixed decimal. A definition that differs is
// still refused, and a schema that parses is not rewritten.
func TestParseAvroRepeatedDefinitions(t *testing.T) {
	dec := `{"type":"fixed","size":5,"logicalType":"decimal","precision":10,"scale":2,"name":"decimal_10_2"}`
	schema := func(second string) string {
		return `{"type":"record","name":"manifest_entry","fields":[
			{"name":"status","type":"int","field-id":0},
			{"name":"data_file","type":{"type":"record","name":"r2","fields":[
				{"name":"partition","type":{"type":"record","name":"r102","fields":[
					{"name":"p","field-id":1000,"type":["null",` + dec + `],"default":null},
					{"name":"q","field-id":1001,"type":["null",` + second + `],"default":null}]},"field-id":102}]},"field-id":2}]}`
	}
	pyiceberg := schema(dec)
	if _, err := avro.ParseWithCache(pyiceberg, "", &avro.SchemaCache{}); err == nil {
		t.Fatal("hamba/avro parses a repeated definition now: parseAvro's rewrite is not needed")
	}
	s, err := parseAvro(pyiceberg)
	if err != nil {
		t.Fatal(err)
	}
	part := s.(*avro.RecordSchema).Fields()[1].Type().(*avro.RecordSchema).Fields()[0].Type().(*avro.RecordSchema)
	for i, f := range part.Fields() {
		u := f.Type().(*avro.UnionSchema)
		var fixed *avro.FixedSchema
		switch x := u.Types()[1].(type) {
		case *avro.FixedSchema:
			fixed = x
		case *avro.RefSchema:
			fixed, _ = x.Schema().(*avro.FixedSchema)
		}
		if fixed == nil || fixed.Size() != 5 || fixed.Logical() == nil || fixed.Logical().Type() != avro.Decimal {
			t.Fatalf("partition field %d (%s): %s, want the fixed decimal(10,2)", i, f.Name(), u.Types()[1])
		}
		if id, ok := fieldID(f); !ok || id != 1000+i {
			t.Errorf("partition field %s: id %d, want %d", f.Name(), id, 1000+i)
		}
	}

	differs := schema(strings.Replace(dec, `"size":5`, `"size":6`, 1))
	if _, err := parseAvro(differs); err == nil || !strings.Contains(err.Error(), "decimal_10_2") {
		t.Errorf("two different definitions of decimal_10_2: %v, want refused", err)
	}
	java := schema(`"decimal_10_2"`)
	if _, err := parseAvro(java); err != nil {
		t.Errorf("Java's reference: %v", err)
	}
	if got, ok := uniqueNames(java); ok {
		t.Errorf("rewrote a schema with no repeated definition: %s", got)
	}
}
