package spec

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPrimitiveTypeJSON(t *testing.T) {
	cases := []struct {
		in   string
		want Type
		out  string // canonical spelling, when it differs from in
	}{
		{"boolean", BooleanType{}, ""},
		{"int", IntType{}, ""},
		{"long", LongType{}, ""},
		{"float", FloatType{}, ""},
		{"double", DoubleType{}, ""},
		{"date", DateType{}, ""},
		{"time", TimeType{}, ""},
		{"timestamp", TimestampType{}, ""},
		{"timestamptz", TimestampTzType{}, ""},
		{"timestamp_ns", TimestampNsType{}, ""},
		{"timestamptz_ns", TimestampTzNsType{}, ""},
		{"string", StringType{}, ""},
		{"uuid", UUIDType{}, ""},
		{"binary", BinaryType{}, ""},
		{"unknown", UnknownType{}, ""},
		{"variant", VariantType{}, ""},
		{"fixed[16]", FixedType{Length: 16}, ""},
		{"fixed[ 3 ]", FixedType{Length: 3}, "fixed[3]"},
		{"decimal(9, 2)", DecimalType{Precision: 9, Scale: 2}, ""},
		{"decimal(38,0)", DecimalType{Precision: 38, Scale: 0}, "decimal(38, 0)"},
		{"geometry", GeometryType{}, ""},
		{"geometry(srid:3857)", GeometryType{CRS: "srid:3857"}, ""},
		{"geometry( OGC:CRS84 )", GeometryType{CRS: "OGC:CRS84"}, "geometry(OGC:CRS84)"},
		{"geography", GeographyType{}, ""},
		{"geography(srid:4269)", GeographyType{CRS: "srid:4269"}, ""},
		{"geography(srid:4269,vincenty)", GeographyType{CRS: "srid:4269", Algorithm: "vincenty"}, "geography(srid:4269, vincenty)"},
	}
	for _, c := range cases {
		got, err := UnmarshalType([]byte(`"` + c.in + `"`))
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("%q parsed to %#v, want %#v", c.in, got, c.want)
		}
		out, err := MarshalType(got)
		if err != nil {
			t.Errorf("%q: marshal: %v", c.in, err)
			continue
		}
		want := c.out
		if want == "" {
			want = c.in
		}
		if string(out) != `"`+want+`"` {
			t.Errorf("%q written as %s, want %q", c.in, out, want)
		}
	}
}

func TestPrimitiveTypeErrors(t *testing.T) {
	for _, in := range []string{"integer", "decimal(39, 0)", "decimal(5, 6)", "fixed[x]", "geometry(", "", "list", "struct"} {
		if typ, err := ParsePrimitiveType(in); err == nil {
			t.Errorf("%q parsed to %v, want error", in, typ)
		}
	}
	if _, err := UnmarshalType([]byte(`{"fields": []}`)); err == nil || !strings.Contains(err.Error(), "cannot parse type from json") {
		t.Errorf("struct without type: err = %v", err)
	}
	if _, err := UnmarshalType([]byte(`{"type": "list", "element-id": 1}`)); err == nil {
		t.Error("list without element must fail")
	}
	if _, err := UnmarshalType([]byte(`{"type": "map", "key-id": 1, "key": "int", "value-id": 2}`)); err == nil {
		t.Error("map without value must fail")
	}
	if _, err := UnmarshalType([]byte(`{"type": "tuple"}`)); err == nil {
		t.Error("unknown nested type must fail")
	}
}

func TestNestedTypeJSON(t *testing.T) {
	in := `{"type":"struct","fields":[` +
		`{"id":1,"name":"a","required":true,"type":"int","doc":"first"},` +
		`{"id":2,"name":"l","required":false,"type":{"type":"list","element-id":3,"element":{"type":"struct","fields":[` +
		`{"id":4,"name":"s","required":false,"type":"string","initial-default":"x","write-default":"y"}]},"element-required":true}},` +
		`{"id":5,"name":"m","required":false,"type":{"type":"map","key-id":6,"key":"string","value-id":7,"value":{"type":"list","element-id":8,"element":"decimal(10, 3)","element-required":false},"value-required":false},"x-extra":[1]}` +
		`]}`
	typ, err := UnmarshalType([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	st, ok := typ.(*StructType)
	if !ok || len(st.Fields) != 3 {
		t.Fatalf("parsed %#v", typ)
	}
	l := st.Fields[1].Type.(*ListType)
	if l.ElementID != 3 || !l.ElementRequired {
		t.Errorf("list = %#v", l)
	}
	inner := l.Element.(*StructType).Fields[0]
	if string(inner.InitialDefault) != `"x"` || string(inner.WriteDefault) != `"y"` {
		t.Errorf("defaults = %s / %s", inner.InitialDefault, inner.WriteDefault)
	}
	m := st.Fields[2].Type.(*MapType)
	if m.KeyID != 6 || m.ValueID != 7 || m.ValueRequired || m.Key != (StringType{}) {
		t.Errorf("map = %#v", m)
	}
	if m.Value.(*ListType).Element != (DecimalType{Precision: 10, Scale: 3}) {
		t.Errorf("map value = %#v", m.Value)
	}
	if string(st.Fields[2].Extra["x-extra"]) != "[1]" {
		t.Errorf("field extra = %v", st.Fields[2].Extra)
	}
	out, err := MarshalType(typ)
	if err != nil {
		t.Fatal(err)
	}
	if !equalValues(decodeJSON(t, out), decodeJSON(t, []byte(in))) {
		t.Errorf("nested type round trip:\n in  %s\n out %s", in, out)
	}
	if got := st.String(); !strings.HasPrefix(got, "struct<1: a: required int, 2: l: optional list<") {
		t.Errorf("String() = %s", got)
	}
}

func TestSchemaLookups(t *testing.T) {
	var s Schema
	if err := json.Unmarshal([]byte(`{"type":"struct","schema-id":4,"fields":[
		{"id":1,"name":"a","required":true,"type":{"type":"struct","fields":[{"id":2,"name":"b","required":false,"type":"long"}]}},
		{"id":3,"name":"m","required":false,"type":{"type":"map","key-id":4,"key":"string","value-id":5,"value":"int","value-required":true}}]}`), &s); err != nil {
		t.Fatal(err)
	}
	if s.ID != 4 || s.HighestFieldID() != 5 {
		t.Errorf("id %d highest %d", s.ID, s.HighestFieldID())
	}
	if f, ok := s.FindField(5); !ok || f.Name != "value" || f.Type != (IntType{}) || !f.Required {
		t.Errorf("FindField(5) = %+v %v", f, ok)
	}
	if f, ok := s.FindFieldByName("a.b"); !ok || f.ID != 2 {
		t.Errorf("FindFieldByName(a.b) = %+v %v", f, ok)
	}
	if _, ok := s.FindFieldByName("a.c"); ok {
		t.Error("a.c must not resolve")
	}
}
