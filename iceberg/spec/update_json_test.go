package spec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// updateGoldens pairs each update with its REST JSON (field names and
// order as Java's MetadataUpdateParser writes them).
var updateGoldens = []struct {
	update Update
	json   string
}{
	{AssignUUID{UUID: "9c12d441-03fe-4693-9a96-a0705ddf69c1"},
		`{"action":"assign-uuid","uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1"}`},
	{UpgradeFormatVersion{FormatVersion: 3},
		`{"action":"upgrade-format-version","format-version":3}`},
	{AddSchema{Schema: Schema{ID: 1, IdentifierFieldIDs: []int{1}, Fields: []NestedField{
		{ID: 1, Name: "id", Type: LongType{}, Required: true},
		{ID: 2, Name: "data", Type: StringType{}, Doc: "payload"},
	}}},
		`{"action":"add-schema","schema":{"type":"struct","schema-id":1,"identifier-field-ids":[1],"fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"data","required":false,"type":"string","doc":"payload"}]}}`},
	{SetCurrentSchema{SchemaID: LastAdded},
		`{"action":"set-current-schema","schema-id":-1}`},
	{AddSpec{Spec: PartitionSpec{ID: 1, Fields: []PartitionField{
		{SourceID: 5, FieldID: 1001, Name: "ts_day", Transform: Transform{Kind: TransformDay}},
	}}},
		`{"action":"add-spec","spec":{"spec-id":1,"fields":[{"name":"ts_day","transform":"day","source-id":5,"field-id":1001}]}}`},
	{SetDefaultSpec{SpecID: 1},
		`{"action":"set-default-spec","spec-id":1}`},
	{AddSortOrder{SortOrder: SortOrder{OrderID: 1, Fields: []SortField{
		{SourceID: 2, Transform: Transform{Kind: TransformIdentity}, Direction: "asc", NullOrder: "nulls-first"},
	}}},
		`{"action":"add-sort-order","sort-order":{"order-id":1,"fields":[{"transform":"identity","source-id":2,"direction":"asc","null-order":"nulls-first"}]}}`},
	{SetDefaultSortOrder{SortOrderID: 1},
		`{"action":"set-default-sort-order","sort-order-id":1}`},
	{AddSnapshot{Snapshot: Snapshot{
		SnapshotID: 3055729675574597004, ParentSnapshotID: ptr(int64(3051729675574597004)),
		SequenceNumber: 2, TimestampMS: 1555100955770, ManifestList: "s3://a/b/2.avro",
		Summary: map[string]string{"operation": "replace", "added-data-files": "1"}, SchemaID: ptr(0),
		FirstRowID: ptr(int64(100)), AddedRows: ptr(int64(25)),
	}},
		`{"action":"add-snapshot","snapshot":{"snapshot-id":3055729675574597004,"parent-snapshot-id":3051729675574597004,"sequence-number":2,"timestamp-ms":1555100955770,"summary":{"operation":"replace","added-data-files":"1"},"manifest-list":"s3://a/b/2.avro","schema-id":0,"first-row-id":100,"added-rows":25}}`},
	{SetSnapshotRef{RefName: MainBranch, Ref: SnapshotRef{SnapshotID: 3055729675574597004, Type: RefTypeBranch}},
		`{"action":"set-snapshot-ref","ref-name":"main","snapshot-id":3055729675574597004,"type":"branch"}`},
	{SetSnapshotRef{RefName: "audit", Ref: SnapshotRef{SnapshotID: 12, Type: RefTypeBranch,
		MinSnapshotsToKeep: ptr(3), MaxSnapshotAgeMS: ptr(int64(86400000)), MaxRefAgeMS: ptr(int64(604800000))}},
		`{"action":"set-snapshot-ref","ref-name":"audit","snapshot-id":12,"type":"branch","min-snapshots-to-keep":3,"max-snapshot-age-ms":86400000,"max-ref-age-ms":604800000}`},
	{RemoveSnapshots{SnapshotIDs: []int64{1, 2}},
		`{"action":"remove-snapshots","snapshot-ids":[1,2]}`},
	{RemoveSnapshotRef{RefName: "audit"},
		`{"action":"remove-snapshot-ref","ref-name":"audit"}`},
	{SetLocation{Location: "s3://bucket/new"},
		`{"action":"set-location","location":"s3://bucket/new"}`},
	{SetProperties{Updates: map[string]string{"b": "2", "a": "1"}},
		`{"action":"set-properties","updates":{"a":"1","b":"2"}}`},
	{RemoveProperties{Removals: []string{"a", "b"}},
		`{"action":"remove-properties","removals":["a","b"]}`},
	{SetStatistics{Statistics: StatisticsFile{SnapshotID: 12, StatisticsPath: "s3://a/stats.puffin",
		FileSizeInBytes: 413, FileFooterSizeInBytes: 42, BlobMetadata: []BlobMetadata{
			{Type: "apache-datasketches-theta-v1", SnapshotID: 12, SequenceNumber: 1, Fields: []int{1},
				Properties: map[string]string{"ndv": "3"}}}}},
		`{"action":"set-statistics","snapshot-id":12,"statistics":{"snapshot-id":12,"statistics-path":"s3://a/stats.puffin","file-size-in-bytes":413,"file-footer-size-in-bytes":42,"blob-metadata":[{"type":"apache-datasketches-theta-v1","snapshot-id":12,"sequence-number":1,"fields":[1],"properties":{"ndv":"3"}}]}}`},
	{RemoveStatistics{SnapshotID: 12},
		`{"action":"remove-statistics","snapshot-id":12}`},
	{SetPartitionStatistics{PartitionStatistics: PartitionStatisticsFile{SnapshotID: 12, StatisticsPath: "s3://a/p.parquet", FileSizeInBytes: 43}},
		`{"action":"set-partition-statistics","partition-statistics":{"snapshot-id":12,"statistics-path":"s3://a/p.parquet","file-size-in-bytes":43}}`},
	{RemovePartitionStatistics{SnapshotID: 12},
		`{"action":"remove-partition-statistics","snapshot-id":12}`},
	{RemovePartitionSpecs{SpecIDs: []int{1, 2}},
		`{"action":"remove-partition-specs","spec-ids":[1,2]}`},
	{RemoveSchemas{SchemaIDs: []int{0}},
		`{"action":"remove-schemas","schema-ids":[0]}`},
}

func TestUpdateJSONGolden(t *testing.T) {
	actions := map[string]bool{}
	for _, g := range updateGoldens {
		t.Run(g.update.Action(), func(t *testing.T) {
			actions[g.update.Action()] = true
			got, err := json.Marshal(g.update)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != g.json {
				t.Errorf("marshal:\n got %s\nwant %s", got, g.json)
			}
			back, err := ParseUpdate([]byte(g.json))
			if err != nil {
				t.Fatalf("ParseUpdate: %v", err)
			}
			if !reflect.DeepEqual(back, g.update) {
				t.Errorf("parse:\n got %#v\nwant %#v", back, g.update)
			}
		})
	}
	if len(actions) != 21 {
		t.Errorf("goldens cover %d actions, want all 21", len(actions))
	}
}

func TestUpdatesRoundTrip(t *testing.T) {
	var all []Update
	for _, g := range updateGoldens {
		all = append(all, g.update)
	}
	b, err := MarshalUpdates(all)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalUpdates(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, all) {
		t.Fatalf("round trip changed the updates:\n got %#v\nwant %#v", back, all)
	}
	// MarshalUpdates must be a plain array of the per-update objects.
	var elems []json.RawMessage
	if err := json.Unmarshal(b, &elems); err != nil || len(elems) != len(all) {
		t.Fatalf("MarshalUpdates output is not an array of %d: %v", len(all), err)
	}
	for i, e := range elems {
		if string(e) != updateGoldens[i].json {
			t.Errorf("element %d:\n got %s\nwant %s", i, e, updateGoldens[i].json)
		}
	}
}

func TestParseUpdateLegacyAndDeprecatedKeys(t *testing.T) {
	cases := []struct {
		in   string
		want Update
	}{
		{`{"action":"set-properties","updated":{"k":"v"}}`, SetProperties{Updates: map[string]string{"k": "v"}}},
		{`{"action":"remove-properties","removed":["k"]}`, RemoveProperties{Removals: []string{"k"}}},
		{`{"action":"add-schema","schema":{"type":"struct","schema-id":0,"fields":[]},"last-column-id":4}`,
			AddSchema{Schema: Schema{Fields: []NestedField{}}}},
		{`{"action":"set-statistics","statistics":{"snapshot-id":5,"statistics-path":"p","file-size-in-bytes":1,"file-footer-size-in-bytes":1,"blob-metadata":[]}}`,
			SetStatistics{Statistics: StatisticsFile{SnapshotID: 5, StatisticsPath: "p", FileSizeInBytes: 1, FileFooterSizeInBytes: 1, BlobMetadata: []BlobMetadata{}}}},
		{`{"action":"set-snapshot-ref","ref-name":"t","snapshot-id":5,"type":"tag","x-vendor":1}`,
			SetSnapshotRef{RefName: "t", Ref: SnapshotRef{SnapshotID: 5, Type: RefTypeTag, Extra: map[string]json.RawMessage{"x-vendor": json.RawMessage("1")}}}},
	}
	for _, c := range cases {
		got, err := ParseUpdate([]byte(c.in))
		if err != nil {
			t.Errorf("ParseUpdate(%s): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseUpdate(%s):\n got %#v\nwant %#v", c.in, got, c.want)
		}
	}
}

func TestParseUpdateErrors(t *testing.T) {
	cases := map[string]string{
		`{"action":"drop-table"}`:                              `unknown table update action "drop-table"`,
		`{"action":"add-encryption-key","key":{}}`:             `not supported by icectl`,
		`{"action":"remove-schemas"}`:                          `missing list "schema-ids"`,
		`{"action":"remove-partition-specs","spec-ids":[1.5]}`: `not a valid list of ints`,
		`{"uuid":"x"}`:                                                    `missing string "action"`,
		`{"Action":"assign-uuid","uuid":"x"}`:                             `missing string "action"`,
		`{"action":"assign-uuid"}`:                                        `missing string "uuid"`,
		`{"action":"upgrade-format-version","format-version":"3"}`:        `not a valid int`,
		`{"action":"add-snapshot"}`:                                       `missing object "snapshot"`,
		`{"action":"add-snapshot","snapshot":{"snapshot-id":1}}`:          `timestamp-ms`,
		`{"action":"remove-snapshots"}`:                                   `missing list "snapshot-ids"`,
		`{"action":"remove-snapshots","snapshot-ids":[1.5]}`:              `not a valid list of longs`,
		`{"action":"set-snapshot-ref","snapshot-id":1,"type":"branch"}`:   `missing string "ref-name"`,
		`{"action":"set-snapshot-ref","ref-name":"main","type":"branch"}`: `snapshot-id`,
		`{"action":"set-properties"}`:                                     `missing map "updates"`,
		`{"action":"remove-properties"}`:                                  `missing list "removals"`,
		`{"action":"set-statistics","snapshot-id":6,"statistics":{"snapshot-id":5,"statistics-path":"p","file-size-in-bytes":1,"file-footer-size-in-bytes":1,"blob-metadata":[]}}`: `does not match`,
		`{"action":"remove-statistics"}`: `missing long "snapshot-id"`,
		`[]`:                             `non-object`,
		`null`:                           `non-object`,
	}
	for in, want := range cases {
		_, err := ParseUpdate([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseUpdate(%s) = %v, want error containing %q", in, err, want)
		}
	}
	for _, in := range []string{`null`, `{}`, `[{"action":"nope"}]`, `[1]`} {
		if _, err := UnmarshalUpdates([]byte(in)); err == nil {
			t.Errorf("UnmarshalUpdates(%s) succeeded", in)
		}
	}
	if _, err := MarshalUpdates([]Update{nil}); err == nil {
		t.Error("MarshalUpdates accepted a nil update")
	}
	got, err := UnmarshalUpdates([]byte(`[]`))
	if err != nil || len(got) != 0 {
		t.Errorf("UnmarshalUpdates([]) = %v, %v", got, err)
	}
}
