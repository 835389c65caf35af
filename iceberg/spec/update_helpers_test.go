package spec

import (
	"bytes"
	"testing"
	"time"
)

func testSchema() Schema {
	return Schema{
		ID: 7, // NewTableMetadata renumbers the schema itself to 0
		Fields: []NestedField{
			{ID: 1, Name: "id", Type: LongType{}, Required: true},
			{ID: 2, Name: "data", Type: StringType{}},
			{ID: 5, Name: "ts", Type: TimestampTzType{}},
		},
	}
}

func testSpec() PartitionSpec {
	return PartitionSpec{Fields: []PartitionField{
		{SourceID: 5, Name: "ts_day", Transform: Transform{Kind: TransformDay}, FieldID: -1},
		{SourceID: 1, Name: "id_bucket", Transform: Transform{Kind: TransformBucket, Param: 16}, FieldID: -1},
	}}
}

func newTestTable(t testing.TB, formatVersion int) *TableMetadata {
	t.Helper()
	m, err := NewTableMetadata(testSchema(), testSpec(), SortOrder{}, "s3://bucket/db/t/", map[string]string{"owner": "h1"}, formatVersion)
	if err != nil {
		t.Fatalf("NewTableMetadata: %v", err)
	}
	m.LastUpdatedMS = 1_000_000 // fixed so tests can predict log entries
	return m
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms) }

// testSnapshot is a valid v2/v3 snapshot; v3 fields are filled from
// firstRowID/addedRows when given.
func testSnapshot(id int64, parent *int64, seq, ts int64) Snapshot {
	return Snapshot{
		SnapshotID:       id,
		ParentSnapshotID: parent,
		SequenceNumber:   seq,
		TimestampMS:      ts,
		ManifestList:     "s3://bucket/db/t/metadata/snap-" + time.UnixMilli(ts).UTC().Format("150405.000") + ".avro",
		Summary:          map[string]string{"operation": OperationAppend, "added-records": "10"},
	}
}

func v3Snapshot(id int64, parent *int64, seq, ts, firstRowID, addedRows int64) Snapshot {
	s := testSnapshot(id, parent, seq, ts)
	s.FirstRowID = &firstRowID
	s.AddedRows = &addedRows
	return s
}

func mainRef(id int64) SetSnapshotRef {
	return SetSnapshotRef{RefName: MainBranch, Ref: SnapshotRef{SnapshotID: id, Type: RefTypeBranch}}
}

func mustApply(t testing.TB, base *TableMetadata, nowMS int64, loc string, ups ...Update) *TableMetadata {
	t.Helper()
	m, err := ApplyUpdates(base, ups, ApplyOptions{Now: msTime(nowMS), BaseMetadataLocation: loc})
	if err != nil {
		t.Fatalf("ApplyUpdates: %v", err)
	}
	return m
}

// mustMarshal is the byte image used to prove metadata did not change.
func mustMarshal(t testing.TB, m *TableMetadata) []byte {
	t.Helper()
	b, err := m.Marshal(false)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	return b
}

// checkRoundTrip proves the result of ApplyUpdates is writable and reads
// back as the same metadata.
func checkRoundTrip(t testing.TB, m *TableMetadata) {
	t.Helper()
	b := mustMarshal(t, m)
	back, err := ParseMetadata(b)
	if err != nil {
		t.Fatalf("ParseMetadata of applied metadata: %v\n%s", err, b)
	}
	if b2 := mustMarshal(t, back); !bytes.Equal(b, b2) {
		t.Fatalf("applied metadata does not round-trip:\n%s\n---\n%s", b, b2)
	}
}
