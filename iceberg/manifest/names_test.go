package manifest

import (
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
