package spec

import (
	"encoding/json"
	"testing"
)

func TestParseTransform(t *testing.T) {
	cases := []struct {
		in   string
		want Transform
		out  string
	}{
		{"identity", Transform{Kind: TransformIdentity}, "identity"},
		{"bucket[16]", Transform{Kind: TransformBucket, Param: 16}, "bucket[16]"},
		{"bucket[ 4 ]", Transform{Kind: TransformBucket, Param: 4}, "bucket[4]"},
		{"truncate[10]", Transform{Kind: TransformTruncate, Param: 10}, "truncate[10]"},
		{"year", Transform{Kind: TransformYear}, "year"},
		{"month", Transform{Kind: TransformMonth}, "month"},
		{"day", Transform{Kind: TransformDay}, "day"},
		{"hour", Transform{Kind: TransformHour}, "hour"},
		{"void", Transform{Kind: TransformVoid}, "void"},
		{"bucket[0]", Transform{Kind: TransformUnknown, Raw: "bucket[0]"}, "bucket[0]"},
		{"zorder", Transform{Kind: TransformUnknown, Raw: "zorder"}, "zorder"},
	}
	for _, c := range cases {
		got := ParseTransform(c.in)
		if got != c.want {
			t.Errorf("ParseTransform(%q) = %#v, want %#v", c.in, got, c.want)
		}
		if got.String() != c.out {
			t.Errorf("%q prints as %q, want %q", c.in, got.String(), c.out)
		}
	}
}

func TestTransformResultType(t *testing.T) {
	dec := DecimalType{Precision: 9, Scale: 2}
	cases := []struct {
		tr   string
		src  Type
		want Type
	}{
		{"identity", dec, dec},
		{"truncate[4]", StringType{}, StringType{}},
		{"void", LongType{}, LongType{}},
		{"bucket[8]", StringType{}, IntType{}},
		{"year", DateType{}, IntType{}},
		{"month", TimestampType{}, IntType{}},
		{"hour", TimestampTzType{}, IntType{}},
		{"day", TimestampType{}, DateType{}},
		{"zorder", LongType{}, nil},
	}
	for _, c := range cases {
		if got := ParseTransform(c.tr).ResultType(c.src); got != c.want {
			t.Errorf("%s(%s) = %v, want %v", c.tr, c.src, got, c.want)
		}
	}
}

func TestPartitionSpecJSON(t *testing.T) {
	in := `{"spec-id":2,"fields":[{"name":"b","transform":"bucket[4]","source-id":1,"field-id":1000},` +
		`{"name":"z","transform":"zorder","source-ids":[1,2],"field-id":1001,"x-extra":"kept"}]}`
	var spec PartitionSpec
	if err := json.Unmarshal([]byte(in), &spec); err != nil {
		t.Fatal(err)
	}
	if spec.ID != 2 || spec.Fields[1].SourceIDs[1] != 2 || string(spec.Fields[1].Extra["x-extra"]) != `"kept"` {
		t.Errorf("spec = %+v", spec)
	}
	out, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if !equalValues(decodeJSON(t, out), decodeJSON(t, []byte(in))) {
		t.Errorf("spec round trip:\n in  %s\n out %s", in, out)
	}
	schema := &Schema{Fields: []NestedField{{ID: 1, Name: "a", Type: StringType{}}, {ID: 2, Name: "b", Type: LongType{}}}}
	pt := spec.PartitionType(schema)
	if pt.Fields[0].Type != (IntType{}) || pt.Fields[0].ID != 1000 || pt.Fields[1].Type != nil {
		t.Errorf("partition type = %+v", pt)
	}
	if spec.IsUnpartitioned() {
		t.Error("spec with fields is partitioned")
	}
	void := PartitionSpec{Fields: []PartitionField{{Transform: Transform{Kind: TransformVoid}}}}
	if !void.IsUnpartitioned() {
		t.Error("an all-void spec is unpartitioned")
	}
	if err := json.Unmarshal([]byte(`{"name":"n","transform":"identity"}`), &PartitionField{}); err == nil {
		t.Error("partition field without source-id must fail")
	}
}

func TestSortOrderJSON(t *testing.T) {
	in := `{"order-id":1,"fields":[{"transform":"identity","source-id":2,"direction":"asc","null-order":"nulls-first"},` +
		`{"transform":"bucket[4]","source-ids":[1,3],"direction":"desc","null-order":"nulls-last"}]}`
	var o SortOrder
	if err := json.Unmarshal([]byte(in), &o); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if !equalValues(decodeJSON(t, out), decodeJSON(t, []byte(in))) {
		t.Errorf("sort order round trip:\n in  %s\n out %s", in, out)
	}
}
