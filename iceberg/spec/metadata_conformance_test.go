package spec

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// xyzFields is the x, y, z schema of the Java fixtures.
var xyzFields = []NestedField{
	{ID: 1, Name: "x", Type: LongType{}, Required: true},
	{ID: 2, Name: "y", Type: LongType{}, Required: true, Doc: "comment"},
	{ID: 3, Name: "z", Type: LongType{}, Required: true},
}

var identityXSpec = PartitionSpec{ID: 0, Fields: []PartitionField{
	{SourceID: 1, FieldID: 1000, Name: "x", Transform: Transform{Kind: TransformIdentity}},
}}

var sortOrder3 = SortOrder{OrderID: 3, Fields: []SortField{
	{SourceID: 2, Transform: Transform{Kind: TransformIdentity}, Direction: "asc", NullOrder: "nulls-first"},
	{SourceID: 3, Transform: Transform{Kind: TransformBucket, Param: 4}, Direction: "desc", NullOrder: "nulls-last"},
}}

func checkEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !equalValues(got, want) {
		t.Errorf("%s:\n got  %#v\n want %#v", what, got, want)
	}
}

func TestConformanceV1Valid(t *testing.T) {
	m := mustParse(t, readConformance(t, "metadata/valid/TableMetadataV1Valid.json"))
	checkEqual(t, "format-version", m.FormatVersion, 1)
	checkEqual(t, "table-uuid", m.TableUUID, "d20125c8-7284-442c-9aea-15fee620737c")
	checkEqual(t, "location", m.Location, "s3://bucket/test/location")
	checkEqual(t, "last-updated-ms", m.LastUpdatedMS, int64(1602638573874))
	checkEqual(t, "last-column-id", m.LastColumnID, 3)
	checkEqual(t, "last-sequence-number", m.LastSequenceNumber, int64(0))
	checkEqual(t, "schemas", m.Schemas, []Schema{{ID: 0, Fields: xyzFields}})
	checkEqual(t, "current schema", m.CurrentSchema(), &Schema{ID: 0, Fields: xyzFields})
	checkEqual(t, "specs", m.PartitionSpecs, []PartitionSpec{identityXSpec})
	checkEqual(t, "default spec", m.DefaultSpec(), &identityXSpec)
	// Java derives last-partition-id from the specs when v1 omits it.
	checkEqual(t, "last-partition-id", m.LastPartitionID, 1000)
	checkEqual(t, "sort orders", m.SortOrders, []SortOrder{{OrderID: 0}})
	checkEqual(t, "default sort order", m.DefaultSortOrderID, 0)
	if m.CurrentSnapshotID != nil || m.CurrentSnapshot() != nil {
		t.Errorf("current-snapshot-id -1 must read as no current snapshot, got %v", *m.CurrentSnapshotID)
	}
	checkEqual(t, "snapshots", len(m.Snapshots), 0)
	checkEqual(t, "refs", len(m.Refs), 0)
	checkEqual(t, "properties", m.Properties, map[string]string{})
}

func checkV2Common(t *testing.T, m *TableMetadata) {
	t.Helper()
	checkEqual(t, "format-version", m.FormatVersion, 2)
	checkEqual(t, "table-uuid", m.TableUUID, "9c12d441-03fe-4693-9a96-a0705ddf69c1")
	checkEqual(t, "location", m.Location, "s3://bucket/test/location")
	checkEqual(t, "last-sequence-number", m.LastSequenceNumber, int64(34))
	checkEqual(t, "last-updated-ms", m.LastUpdatedMS, int64(1602638573590))
	checkEqual(t, "last-column-id", m.LastColumnID, 3)
	checkEqual(t, "last-partition-id", m.LastPartitionID, 1000)
}

func TestConformanceV2Valid(t *testing.T) {
	m := mustParse(t, readConformance(t, "metadata/valid/TableMetadataV2Valid.json"))
	checkV2Common(t, m)
	checkEqual(t, "current-schema-id", m.CurrentSchemaID, 1)
	checkEqual(t, "schemas", m.Schemas, []Schema{
		{ID: 0, Fields: xyzFields[:1]},
		{ID: 1, IdentifierFieldIDs: []int{1, 2}, Fields: xyzFields},
	})
	checkEqual(t, "specs", m.PartitionSpecs, []PartitionSpec{identityXSpec})
	checkEqual(t, "sort orders", m.SortOrders, []SortOrder{sortOrder3})
	checkEqual(t, "default sort order", m.DefaultSortOrderID, 3)
	checkEqual(t, "snapshots", m.Snapshots, []Snapshot{
		{SnapshotID: 3051729675574597004, SequenceNumber: 0, TimestampMS: 1515100955770,
			ManifestList: "s3://a/b/1.avro", Summary: map[string]string{"operation": "append"}},
		{SnapshotID: 3055729675574597004, ParentSnapshotID: ptr(int64(3051729675574597004)), SequenceNumber: 1,
			TimestampMS: 1555100955770, ManifestList: "s3://a/b/2.avro", SchemaID: ptr(1),
			Summary: map[string]string{"operation": "append"}},
	})
	checkEqual(t, "current-snapshot-id", m.CurrentSnapshotID, ptr(int64(3055729675574597004)))
	if cur := m.CurrentSnapshot(); cur == nil || cur.SnapshotID != 3055729675574597004 || cur.Operation() != OperationAppend {
		t.Errorf("current snapshot = %+v", cur)
	}
	// No "refs" key: the main branch is implied by current-snapshot-id.
	checkEqual(t, "refs", m.Refs, map[string]SnapshotRef{
		MainBranch: {SnapshotID: 3055729675574597004, Type: RefTypeBranch},
	})
	checkEqual(t, "snapshot-log", m.SnapshotLog, []SnapshotLogEntry{
		{TimestampMS: 1515100955770, SnapshotID: 3051729675574597004},
		{TimestampMS: 1555100955770, SnapshotID: 3055729675574597004},
	})
	checkEqual(t, "metadata-log", len(m.MetadataLog), 0)
	checkEqual(t, "properties", m.Properties, map[string]string{})
}

func TestConformanceV2ValidMinimal(t *testing.T) {
	m := mustParse(t, readConformance(t, "metadata/valid/TableMetadataV2ValidMinimal.json"))
	checkV2Common(t, m)
	checkEqual(t, "schemas", m.Schemas, []Schema{{ID: 0, Fields: xyzFields}})
	checkEqual(t, "specs", m.PartitionSpecs, []PartitionSpec{identityXSpec})
	checkEqual(t, "sort orders", m.SortOrders, []SortOrder{sortOrder3})
	checkEqual(t, "default sort order", m.DefaultSortOrderID, 3)
	checkEqual(t, "snapshots", len(m.Snapshots), 0)
	checkEqual(t, "snapshot-log", len(m.SnapshotLog), 0)
	checkEqual(t, "metadata-log", len(m.MetadataLog), 0)
	checkEqual(t, "properties", m.Properties, map[string]string{})
	checkEqual(t, "refs", len(m.Refs), 0)
	if m.CurrentSnapshot() != nil {
		t.Error("minimal metadata has no current snapshot")
	}
}

func TestConformanceV3ValidMinimal(t *testing.T) {
	m := mustParse(t, readConformance(t, "metadata/valid/TableMetadataV3ValidMinimal.json"))
	checkEqual(t, "format-version", m.FormatVersion, 3)
	checkEqual(t, "next-row-id", m.NextRowID, ptr(int64(0)))
	checkEqual(t, "last-sequence-number", m.LastSequenceNumber, int64(34))
	checkEqual(t, "snapshots", len(m.Snapshots), 0)
	x := m.CurrentSchema().Fields[0]
	checkEqual(t, "x initial-default", string(x.InitialDefault), "1")
	checkEqual(t, "x write-default", string(x.WriteDefault), "1")
	checkEqual(t, "x", x.ID, 1)
	checkEqual(t, "y initial-default", m.CurrentSchema().Fields[1].InitialDefault == nil, true)
}

func TestConformanceStatisticsFiles(t *testing.T) {
	m := mustParse(t, readConformance(t, "metadata/valid/TableMetadataStatisticsFiles.json"))
	checkEqual(t, "statistics", m.Statistics, []StatisticsFile{{
		SnapshotID:            3055729675574597004,
		StatisticsPath:        "s3://a/b/stats.puffin",
		FileSizeInBytes:       413,
		FileFooterSizeInBytes: 42,
		BlobMetadata: []BlobMetadata{{
			Type: "ndv", SnapshotID: 3055729675574597004, SequenceNumber: 1, Fields: []int{1},
		}},
	}})
	if p := m.Statistics[0].BlobMetadata[0].Properties; len(p) != 0 {
		t.Errorf("blob properties = %v, want {}", p)
	}
}

func TestConformancePartitionStatisticsFiles(t *testing.T) {
	m := mustParse(t, readConformance(t, "metadata/valid/TableMetadataPartitionStatisticsFiles.json"))
	checkEqual(t, "partition-statistics", m.PartitionStatistics, []PartitionStatisticsFile{{
		SnapshotID: 3055729675574597004, StatisticsPath: "s3://a/b/partition-stats.parquet", FileSizeInBytes: 43,
	}})
}

func TestConformanceInvalid(t *testing.T) {
	want := map[string]string{
		"TableMetadataUnsupportedVersion.json":       "cannot read unsupported version 42",
		"TableMetadataV2MissingSchemas.json":         "schemas must exist in format v2",
		"TableMetadataV2MissingLastPartitionId.json": "last-partition-id must exist in format v2",
		"TableMetadataV1MissingSchemaType.json":      "cannot parse type from json:",
	}
	files := conformanceFiles(t, "metadata/invalid")
	if len(files) != len(want) {
		t.Errorf("found %d invalid files, expectations for %d", len(files), len(want))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			msg, ok := want[name]
			if !ok {
				t.Fatalf("no expected error for %s", name)
			}
			_, err := ParseMetadata(readConformance(t, "metadata/invalid/"+name))
			if err == nil {
				t.Fatal("parsed, want an error")
			}
			if !strings.Contains(strings.ToLower(err.Error()), msg) {
				t.Errorf("error %q does not contain %q", err, msg)
			}
		})
	}
}

func TestUnsupportedVersionSentinel(t *testing.T) {
	_, err := ParseMetadata(readConformance(t, "metadata/invalid/TableMetadataUnsupportedVersion.json"))
	if !errors.Is(err, ErrUnsupportedFormatVersion) {
		t.Fatalf("error %v does not wrap ErrUnsupportedFormatVersion", err)
	}
	if !strings.Contains(err.Error(), "newer than icectl supports") {
		t.Errorf("error %q does not say the table is newer than icectl supports", err)
	}
	m := mustParse(t, readConformance(t, "metadata/valid/TableMetadataV3ValidMinimal.json"))
	m.FormatVersion = 4
	if _, err := m.Marshal(false); !errors.Is(err, ErrUnsupportedFormatVersion) {
		t.Errorf("writing v4: error %v, want ErrUnsupportedFormatVersion", err)
	}
}

func TestConformanceValidAllParse(t *testing.T) {
	for _, f := range conformanceFiles(t, "metadata/valid") {
		t.Run(filepath.Base(f), func(t *testing.T) {
			m := mustParse(t, readConformance(t, "metadata/valid/"+filepath.Base(f)))
			if reflect.ValueOf(m.Properties).IsNil() || m.Refs == nil {
				t.Error("Properties and Refs must be non-nil after parse")
			}
		})
	}
}
