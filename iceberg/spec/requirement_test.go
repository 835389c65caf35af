package spec

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

var requirementGoldens = []struct {
	req  Requirement
	json string
}{
	{AssertCreate{}, `{"type":"assert-create"}`},
	{AssertTableUUID{UUID: "9c12d441-03fe-4693-9a96-a0705ddf69c1"}, `{"type":"assert-table-uuid","uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1"}`},
	{AssertRefSnapshotID{Ref: "main", SnapshotID: ptr(int64(3055729675574597004))}, `{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":3055729675574597004}`},
	{AssertRefSnapshotID{Ref: "audit"}, `{"type":"assert-ref-snapshot-id","ref":"audit","snapshot-id":null}`},
	{AssertLastAssignedFieldID{ID: 3}, `{"type":"assert-last-assigned-field-id","last-assigned-field-id":3}`},
	{AssertCurrentSchemaID{ID: 1}, `{"type":"assert-current-schema-id","current-schema-id":1}`},
	{AssertLastAssignedPartitionID{ID: 1000}, `{"type":"assert-last-assigned-partition-id","last-assigned-partition-id":1000}`},
	{AssertDefaultSpecID{ID: 0}, `{"type":"assert-default-spec-id","default-spec-id":0}`},
	{AssertDefaultSortOrderID{ID: 3}, `{"type":"assert-default-sort-order-id","default-sort-order-id":3}`},
}

func TestRequirementJSONGolden(t *testing.T) {
	var all []Requirement
	for _, g := range requirementGoldens {
		all = append(all, g.req)
		got, err := json.Marshal(g.req)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != g.json {
			t.Errorf("marshal %s:\n got %s\nwant %s", g.req.Type(), got, g.json)
		}
		back, err := ParseRequirement([]byte(g.json))
		if err != nil {
			t.Fatalf("ParseRequirement(%s): %v", g.json, err)
		}
		if !reflect.DeepEqual(back, g.req) {
			t.Errorf("parse %s:\n got %#v\nwant %#v", g.json, back, g.req)
		}
	}
	b, err := MarshalRequirements(all)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalRequirements(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, all) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", back, all)
	}
}

func TestParseRequirementErrors(t *testing.T) {
	cases := map[string]string{
		`{"type":"assert-view-uuid","uuid":"x"}`:                   `unknown table requirement type "assert-view-uuid"`,
		`{"uuid":"x"}`:                                             `missing string "type"`,
		`{"type":"assert-table-uuid"}`:                             `missing string "uuid"`,
		`{"type":"assert-ref-snapshot-id","ref":"main"}`:           `missing long "snapshot-id"`,
		`{"type":"assert-ref-snapshot-id","snapshot-id":1}`:        `missing string "ref"`,
		`{"type":"assert-current-schema-id"}`:                      `missing int "current-schema-id"`,
		`{"type":"assert-default-spec-id","default-spec-id":1e20}`: `int`,
		`"assert-create"`:                                          `non-object`,
	}
	for in, want := range cases {
		_, err := ParseRequirement([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRequirement(%s) = %v, want error containing %q", in, err, want)
		}
	}
	if _, err := UnmarshalRequirements([]byte(`{"type":"assert-create"}`)); err == nil {
		t.Error("UnmarshalRequirements accepted an object")
	}
	if _, err := MarshalRequirements([]Requirement{nil}); err == nil {
		t.Error("MarshalRequirements accepted nil")
	}
}

func TestRequirementValidate(t *testing.T) {
	base := mustParse(t, readConformance(t, "metadata/valid/TableMetadataV2Valid.json"))
	base.Refs["v1-tag"] = SnapshotRef{SnapshotID: 3051729675574597004, Type: RefTypeTag}
	const cur = int64(3055729675574597004)

	cases := []struct {
		req  Requirement
		base *TableMetadata
		fail string // "" = must pass
	}{
		{AssertCreate{}, nil, ""},
		{AssertCreate{}, base, "table already exists"},
		{AssertTableUUID{UUID: "9c12d441-03fe-4693-9a96-a0705ddf69c1"}, base, ""},
		{AssertTableUUID{UUID: "9C12D441-03FE-4693-9A96-A0705DDF69C1"}, base, ""},
		{AssertTableUUID{UUID: "00000000-03fe-4693-9a96-a0705ddf69c1"}, base, "UUID does not match"},
		{AssertTableUUID{UUID: "9c12d441-03fe-4693-9a96-a0705ddf69c1"}, nil, "table does not exist"},
		{AssertRefSnapshotID{Ref: "main", SnapshotID: ptr(cur)}, base, ""},
		{AssertRefSnapshotID{Ref: "main", SnapshotID: ptr(cur - 1)}, base, "branch main has changed: expected id 3055729675574597003 != 3055729675574597004"},
		{AssertRefSnapshotID{Ref: "main"}, base, "branch main was created concurrently"},
		{AssertRefSnapshotID{Ref: "v1-tag"}, base, "tag v1-tag was created concurrently"},
		{AssertRefSnapshotID{Ref: "dev"}, base, ""},
		{AssertRefSnapshotID{Ref: "dev", SnapshotID: ptr(cur)}, base, "branch or tag dev is missing"},
		{AssertRefSnapshotID{Ref: "main"}, nil, ""},
		{AssertLastAssignedFieldID{ID: 3}, base, ""},
		{AssertLastAssignedFieldID{ID: 2}, base, "last assigned field id changed"},
		{AssertLastAssignedFieldID{ID: 2}, nil, ""},
		{AssertCurrentSchemaID{ID: 1}, base, ""},
		{AssertCurrentSchemaID{ID: 0}, base, "current schema changed: expected id 0 != 1"},
		{AssertCurrentSchemaID{ID: 0}, nil, "table does not exist"},
		{AssertLastAssignedPartitionID{ID: 1000}, base, ""},
		{AssertLastAssignedPartitionID{ID: 999}, base, "last assigned partition id changed"},
		{AssertDefaultSpecID{ID: 0}, base, ""},
		{AssertDefaultSpecID{ID: 1}, base, "default partition spec changed"},
		{AssertDefaultSpecID{ID: 0}, nil, "table does not exist"},
		{AssertDefaultSortOrderID{ID: 3}, base, ""},
		{AssertDefaultSortOrderID{ID: 0}, base, "default sort order changed"},
		{AssertDefaultSortOrderID{ID: 3}, nil, "table does not exist"},
	}
	for _, c := range cases {
		err := c.req.Validate(c.base)
		name := c.req.Type()
		switch {
		case c.fail == "" && err != nil:
			t.Errorf("%s %+v: unexpected error %v", name, c.req, err)
		case c.fail != "" && err == nil:
			t.Errorf("%s %+v: passed, want failure %q", name, c.req, c.fail)
		case c.fail != "" && (!errors.Is(err, ErrRequirementFailed) || !strings.Contains(err.Error(), c.fail)):
			t.Errorf("%s %+v: error %v, want ErrRequirementFailed containing %q", name, c.req, err, c.fail)
		}
	}

	if err := ValidateRequirements(base, []Requirement{
		AssertTableUUID{UUID: base.TableUUID}, AssertRefSnapshotID{Ref: "main", SnapshotID: ptr(cur)},
	}); err != nil {
		t.Errorf("ValidateRequirements: %v", err)
	}
	err := ValidateRequirements(base, []Requirement{AssertTableUUID{UUID: base.TableUUID}, AssertCreate{}})
	if !errors.Is(err, ErrRequirementFailed) {
		t.Errorf("ValidateRequirements = %v, want ErrRequirementFailed", err)
	}
}
