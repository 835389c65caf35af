package datafile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/icectl/icectl/iceberg/spec"
)

func evolutionFile(t *testing.T) []byte {
	t.Helper()
	v1 := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.IntType{}, Required: true},
		{ID: 2, Name: "name", Type: spec.StringType{}},
		{ID: 3, Name: "f", Type: spec.FloatType{}},
		{ID: 4, Name: "amount", Type: spec.DecimalType{Precision: 5, Scale: 2}},
		{ID: 5, Name: "day", Type: spec.DateType{}},
		{ID: 6, Name: "st", Type: &spec.StructType{Fields: []spec.NestedField{
			{ID: 7, Name: "a", Type: spec.IntType{}},
		}}},
		{ID: 11, Name: "dropped", Type: spec.StringType{}},
	}}
	rec := recordFromJSON(t, v1, `[
		{"id": 1, "name": "one", "f": 1.5, "amount": "123.45", "day": 19000, "st": {"a": 7}, "dropped": "x"},
		{"id": 2, "name": null, "f": null, "amount": null, "day": null, "st": null, "dropped": null},
		{"id": -3, "name": "three", "f": -0.25, "amount": "-0.01", "day": 0, "st": {"a": null}, "dropped": "z"}
	]`)
	defer rec.Release()
	data, _ := writeParquet(t, v1, nil, rec)
	return data
}

func recordFromJSON(t *testing.T, s *spec.Schema, js string) arrow.RecordBatch {
	t.Helper()
	sc, err := ArrowSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestSchemaEvolution reads a file under a later schema: a rename, type
// promotions, added columns with and without initial-default, a dropped
// column and a reordered projection.
func TestSchemaEvolution(t *testing.T) {
	data := evolutionFile(t)
	v2 := &spec.Schema{Fields: []spec.NestedField{
		{ID: 6, Name: "st", Type: &spec.StructType{Fields: []spec.NestedField{
			{ID: 7, Name: "a", Type: spec.LongType{}},
			{ID: 8, Name: "b", Type: spec.StringType{}, InitialDefault: json.RawMessage(`"dflt"`)},
		}}},
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "full_name", Type: spec.StringType{}},
		{ID: 3, Name: "f", Type: spec.DoubleType{}},
		{ID: 4, Name: "amount", Type: spec.DecimalType{Precision: 12, Scale: 2}},
		{ID: 5, Name: "day", Type: spec.TimestampType{}},
		{ID: 9, Name: "added_default", Type: spec.IntType{}, Required: true, InitialDefault: json.RawMessage(`42`)},
		{ID: 10, Name: "added_null", Type: spec.StringType{}},
		{ID: 12, Name: "added_ts", Type: spec.TimestampTzType{}, InitialDefault: json.RawMessage(`"2017-11-16T22:31:08.123456+00:00"`)},
		{ID: 13, Name: "added_dec", Type: spec.DecimalType{Precision: 6, Scale: 3}, InitialDefault: json.RawMessage(`"-1.5"`)},
	}}
	got := readParquet(t, data, ReadOptions{Schema: v2})
	defer release(got)
	names := []string{}
	for _, f := range got[0].Schema().Fields() {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "st,id,full_name,f,amount,day,added_default,added_null,added_ts,added_dec" {
		t.Fatalf("columns %v", names)
	}
	const dayMicros = 19000 * 86400 * 1_000_000
	want := []string{
		`[{"a":7,"b":"dflt"},1,"one",1.5,"123.45",` + itoa(dayMicros) + `,42,null,1510871468123456,"-1.5"]`,
		`[null,2,null,null,null,null,42,null,1510871468123456,"-1.5"]`,
		`[{"a":null,"b":"dflt"},-3,"three",-0.25,"-0.01",0,42,null,1510871468123456,"-1.5"]`,
	}
	compareRows(t, rawRows(t, got...), want)
	dec := got[0].Column(9).(*array.Decimal128)
	if u := dec.Value(0).BigInt().Int64(); u != -1500 {
		t.Fatalf("added_dec unscaled %d, want -1500 at scale 3", u)
	}
}

// rawRows is rowsJSON with timestamps as plain integers.
func rawRows(t *testing.T, batches ...arrow.RecordBatch) []string {
	t.Helper()
	var out []string
	for _, b := range batches {
		for i := range int(b.NumRows()) {
			row := make([]any, b.NumCols())
			for c := range int(b.NumCols()) {
				col := b.Column(c)
				if ts, ok := col.(*array.Timestamp); ok && ts.IsValid(i) {
					row[c] = int64(ts.Value(i))
				} else {
					row[c] = col.GetOneForMarshal(i)
				}
			}
			js, err := json.Marshal(row)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(js))
		}
	}
	return out
}

func itoa(v int64) string { b, _ := json.Marshal(v); return string(b) }

func TestMissingRequiredColumnFails(t *testing.T) {
	data := evolutionFile(t)
	s := &spec.Schema{Fields: []spec.NestedField{{ID: 99, Name: "must", Type: spec.IntType{}, Required: true}}}
	rd, err := OpenReader(context.Background(), bytes.NewReader(data), int64(len(data)), ReadOptions{Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	_, err = rd.Next()
	if err == nil || !strings.Contains(err.Error(), "required field 99 (must)") {
		t.Fatalf("want a missing required field error, got %v", err)
	}
}

func TestIncompatibleTypeFails(t *testing.T) {
	data := evolutionFile(t)
	s := &spec.Schema{Fields: []spec.NestedField{{ID: 2, Name: "name", Type: spec.LongType{}}}}
	rd, err := OpenReader(context.Background(), bytes.NewReader(data), int64(len(data)), ReadOptions{Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if _, err := rd.Next(); err == nil || !strings.Contains(err.Error(), "cannot be read as int64") {
		t.Fatalf("want a type error, got %v", err)
	}
}

// noIDFile writes a Parquet file without field ids, as some writers do.
func noIDFile(t *testing.T) []byte {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "key", Type: arrow.PrimitiveTypes.Int32},
		{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "unmapped", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(
		`[{"key": 1, "label": "a", "tags": ["x", "y"], "unmapped": 5}, {"key": 2, "label": null, "tags": null, "unmapped": 6}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(sc, &buf, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func intp(i int) *int { return &i }

func TestNameMapping(t *testing.T) {
	data := noIDFile(t)
	s := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "name", Type: spec.StringType{}},
		{ID: 3, Name: "tags", Type: &spec.ListType{ElementID: 4, Element: spec.StringType{}}},
		{ID: 5, Name: "other", Type: spec.LongType{}},
	}}
	nm := NameMapping{
		{FieldID: intp(1), Names: []string{"id", "key"}},
		{FieldID: intp(2), Names: []string{"label"}},
		{FieldID: intp(3), Names: []string{"tags"}, Fields: []MappedField{{FieldID: intp(4), Names: []string{"element"}}}},
	}
	got := readParquet(t, data, ReadOptions{Schema: s, NameMapping: nm})
	defer release(got)
	compareRows(t, rowsJSON(t, got...), []string{`[1,"a",["x","y"],null]`, `[2,null,null,null]`})
}

func TestNoFieldIDsWithoutMappingFails(t *testing.T) {
	data := noIDFile(t)
	s := &spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "key", Type: spec.IntType{}}}}
	_, err := OpenReader(context.Background(), bytes.NewReader(data), int64(len(data)), ReadOptions{Schema: s})
	if !errors.Is(err, ErrNoFieldIDs) || !strings.Contains(err.Error(), "no field ids") {
		t.Fatalf("want ErrNoFieldIDs, got %v", err)
	}
}
