package spec

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSnapshotJSONRoundTrip(t *testing.T) {
	in := `{"snapshot-id":7,"parent-snapshot-id":6,"sequence-number":5,"timestamp-ms":1700000000000,` +
		`"summary":{"operation":"replace","added-data-files":"1"},"manifest-list":"s3://b/m.avro","schema-id":2,` +
		`"first-row-id":10,"added-rows":3,"key-id":"k","x-extra":{"a":1}}`
	var s Snapshot
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	checkEqual(t, "snapshot", s, Snapshot{
		SnapshotID: 7, ParentSnapshotID: ptr(int64(6)), SequenceNumber: 5, TimestampMS: 1700000000000,
		Summary:      map[string]string{"operation": "replace", "added-data-files": "1"},
		ManifestList: "s3://b/m.avro", SchemaID: ptr(2), FirstRowID: ptr(int64(10)), AddedRows: ptr(int64(3)),
		KeyID: ptr("k"), Extra: map[string]json.RawMessage{"x-extra": json.RawMessage(`{"a":1}`)},
	})
	if s.Operation() != OperationReplace {
		t.Errorf("operation = %q", s.Operation())
	}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("written as\n%s\nwant (Java key order)\n%s", out, in)
	}
}

func TestSnapshotErrors(t *testing.T) {
	cases := map[string]string{
		`{"timestamp-ms":1}`:                                   `missing long "snapshot-id"`,
		`{"snapshot-id":1}`:                                    `missing long "timestamp-ms"`,
		`{"snapshot-id":"1","timestamp-ms":1}`:                 `"snapshot-id" is not a valid long`,
		`{"snapshot-id":1,"timestamp-ms":1,"summary":{"a":1}}`: `"summary" is not a valid map of strings`,
		`[]`: "non-object",
	}
	for in, want := range cases {
		var s Snapshot
		err := json.Unmarshal([]byte(in), &s)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
}

func TestSnapshotRefValidation(t *testing.T) {
	valid := `{"format-version":2,"table-uuid":"u","location":"l","last-sequence-number":1,"last-updated-ms":5,` +
		`"last-column-id":1,"current-schema-id":0,"schemas":[{"type":"struct","schema-id":0,"fields":[]}],` +
		`"default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"last-partition-id":999,` +
		`"default-sort-order-id":0,"sort-orders":[{"order-id":0,"fields":[]}],"current-snapshot-id":1,` +
		`"snapshots":[{"snapshot-id":1,"timestamp-ms":1,"sequence-number":1,"summary":{"operation":"append"},"manifest-list":"m"}],` +
		`"refs":REFS}`
	mustParse(t, []byte(strings.Replace(valid, "REFS", `{"main":{"snapshot-id":1,"type":"branch"}}`, 1)))
	cases := map[string]string{
		`{"main":{"snapshot-id":2,"type":"branch"}}`:                           "not in snapshots",
		`{"main":{"snapshot-id":1,"type":"tag"}}`:                              "must be a branch",
		`{"main":{"snapshot-id":1,"type":"trunk"}}`:                            "invalid type",
		`{"t":{"snapshot-id":1,"type":"tag","min-snapshots-to-keep":1}}`:       "tags do not support",
		`{"main":{"snapshot-id":1,"type":"branch","min-snapshots-to-keep":0}}`: "must be greater than 0",
		`{"main":{"snapshot-id":1,"type":"branch","max-ref-age-ms":10}}`:       "never expires",
		`{"main":{"snapshot-id":1}}`:                                           `missing string "type"`,
	}
	for refs, want := range cases {
		_, err := ParseMetadata([]byte(strings.Replace(valid, "REFS", refs, 1)))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("refs %s: error %v, want %q", refs, err, want)
		}
	}
	// refs without main while a current snapshot is set: allowed, as in Java,
	// and main is not synthesized.
	m := mustParse(t, []byte(strings.Replace(valid, "REFS", `{"b":{"snapshot-id":1,"type":"branch"}}`, 1)))
	if _, ok := m.Refs[MainBranch]; ok {
		t.Error("main must not be synthesized when refs is present")
	}
	// main set while there is no current snapshot.
	noCurrent := strings.Replace(valid, `"current-snapshot-id":1,`, ``, 1)
	if _, err := ParseMetadata([]byte(strings.Replace(noCurrent, "REFS", `{"main":{"snapshot-id":1,"type":"branch"}}`, 1))); err == nil ||
		!strings.Contains(err.Error(), "current snapshot is not set") {
		t.Errorf("main without current snapshot: %v", err)
	}
}

func TestMetadataValidationErrors(t *testing.T) {
	base := string(readConformance(t, "metadata/valid/TableMetadataV2Valid.json"))
	cases := []struct{ from, to, want string }{
		{`"current-schema-id": 1`, `"current-schema-id": 7`, "current-schema-id=7"},
		{`"default-spec-id": 0`, `"default-spec-id": 3`, "default-spec-id=3"},
		{`"default-sort-order-id": 3`, `"default-sort-order-id": 4`, "default-sort-order-id=4"},
		{`"current-snapshot-id": 3055729675574597004`, `"current-snapshot-id": 12`, "cannot find current snapshot 12"},
		{`"last-sequence-number": 34`, `"last-sequence-number": 0`, "greater than last-sequence-number"},
		{`"table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",`, ``, "table-uuid must exist in format v2"},
		{`"location": "s3://bucket/test/location",`, ``, `missing string "location"`},
		{`"last-column-id": 3`, `"last-column-id": "3"`, `"last-column-id" is not a valid int`},
		{`"last-column-id": 3`, `"last-column-id": 3000000000`, "out of int range"},
		{`"direction": "asc"`, `"direction": "up"`, `invalid direction "up"`},
		{`"properties": {}`, `"properties": {"a": 1}`, `"properties" is not a valid map of strings`},
		{`"timestamp-ms": 1555100955770
    }
  ],
  "metadata-log"`, `"timestamp-ms": 1
    }
  ],
  "metadata-log"`, "snapshot-log entries are not in time order"},
		{`"format-version": 2`, `"format-version": 0`, "invalid format version 0"},
		{`"sort-orders"`, `"x-sort-orders"`, "sort-orders must exist in format v2"},
		{`"partition-specs"`, `"x-partition-specs"`, "partition-specs must exist in format v2"},
	}
	for _, c := range cases {
		doc := strings.Replace(base, c.from, c.to, 1)
		if doc == base {
			t.Fatalf("fixture edit %q did not apply", c.from)
		}
		_, err := ParseMetadata([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s -> %s: error %v, want %q", c.from, c.to, err, c.want)
		}
	}
	v3 := strings.Replace(string(readConformance(t, "metadata/valid/TableMetadataV3ValidMinimal.json")), `"next-row-id": 0,`, ``, 1)
	if _, err := ParseMetadata([]byte(v3)); err == nil || !strings.Contains(err.Error(), "next-row-id must exist in format v3") {
		t.Errorf("v3 without next-row-id: %v", err)
	}
	for _, in := range []string{``, `[]`, `"x"`, `{"format-version":1`, `null`} {
		if _, err := ParseMetadata([]byte(in)); err == nil {
			t.Errorf("%q parsed, want error", in)
		}
	}
}
