package spec

import (
	"encoding/json"
	"testing"
)

func TestParseNameMapping(t *testing.T) {
	in := `[{"field-id":1,"names":["id","record_id"]},` +
		`{"field-id":2,"names":["data"]},` +
		`{"names":["dropped"]},` +
		`{"field-id":3,"names":["location"],"fields":[{"field-id":4,"names":["lat","latitude"]},{"field-id":5,"names":["long"]}]}]`
	nm, err := ParseNameMapping([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := NameMapping{
		{FieldID: ptr(1), Names: []string{"id", "record_id"}},
		{FieldID: ptr(2), Names: []string{"data"}},
		{Names: []string{"dropped"}},
		{FieldID: ptr(3), Names: []string{"location"}, Fields: []MappedField{
			{FieldID: ptr(4), Names: []string{"lat", "latitude"}},
			{FieldID: ptr(5), Names: []string{"long"}},
		}},
	}
	checkEqual(t, "name mapping", nm, want)
	if f, ok := nm.Find("location", "latitude"); !ok || f.FieldID == nil || *f.FieldID != 4 {
		t.Errorf("Find(location, latitude) = %+v, %v", f, ok)
	}
	if f, ok := nm.Find("record_id"); !ok || *f.FieldID != 1 {
		t.Errorf("Find(record_id) = %+v, %v", f, ok)
	}
	if _, ok := nm.Find("location", "alt"); ok {
		t.Error("location.alt must not resolve")
	}
	out, err := json.Marshal(nm)
	if err != nil {
		t.Fatal(err)
	}
	if !equalValues(decodeJSON(t, out), decodeJSON(t, []byte(in))) {
		t.Errorf("round trip:\n in  %s\n out %s", in, out)
	}
}

func TestParseNameMappingErrors(t *testing.T) {
	for _, in := range []string{`{}`, `[{"field-id":1}]`, `[{"field-id":"x","names":[]}]`, `[{"names":"id"}]`, `[1]`} {
		if _, err := ParseNameMapping([]byte(in)); err == nil {
			t.Errorf("%s parsed, want error", in)
		}
	}
}
