package spec

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func wantErr(t *testing.T, err error, contains string, retryable bool) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", contains)
	}
	if !strings.Contains(err.Error(), contains) {
		t.Fatalf("error %q does not contain %q", err, contains)
	}
	if errors.Is(err, ErrRequirementFailed) != retryable {
		t.Fatalf("error %q: errors.Is(ErrRequirementFailed) = %v, want %v", err, !retryable, retryable)
	}
}

func apply(base *TableMetadata, nowMS int64, ups ...Update) (*TableMetadata, error) {
	return ApplyUpdates(base, ups, ApplyOptions{Now: msTime(nowMS)})
}

// A compaction-style commit: add-snapshot + set main, as REST sends it.
func TestApplyAppendCommitV2(t *testing.T) {
	base := newTestTable(t, 2)
	s1 := testSnapshot(101, nil, 1, 2_000_000)
	m := mustApply(t, base, 2_000_100, "s3://bucket/db/t/metadata/00000-a.metadata.json", AddSnapshot{s1}, mainRef(101))

	if m.CurrentSnapshotID == nil || *m.CurrentSnapshotID != 101 {
		t.Fatalf("current snapshot = %v, want 101", m.CurrentSnapshotID)
	}
	if m.LastSequenceNumber != 1 || m.LastUpdatedMS != 2_000_100 {
		t.Errorf("last-sequence-number %d, last-updated-ms %d; want 1, 2000100", m.LastSequenceNumber, m.LastUpdatedMS)
	}
	wantLog := []SnapshotLogEntry{{TimestampMS: 2_000_100, SnapshotID: 101}}
	if !reflect.DeepEqual(m.SnapshotLog, wantLog) {
		t.Errorf("snapshot-log = %+v, want %+v", m.SnapshotLog, wantLog)
	}
	wantMeta := []MetadataLogEntry{{TimestampMS: 1_000_000, MetadataFile: "s3://bucket/db/t/metadata/00000-a.metadata.json"}}
	if !reflect.DeepEqual(m.MetadataLog, wantMeta) {
		t.Errorf("metadata-log = %+v, want %+v", m.MetadataLog, wantMeta)
	}
	if r := m.Refs[MainBranch]; r.SnapshotID != 101 || r.Type != RefTypeBranch {
		t.Errorf("main = %+v", r)
	}
	checkRoundTrip(t, m)

	// The next commit: parent 101, sequence 2.
	m2 := mustApply(t, m, 3_000_000, "s3://bucket/db/t/metadata/00001-b.metadata.json",
		AddSnapshot{testSnapshot(102, ptr(int64(101)), 2, 2_999_000)}, mainRef(102))
	if len(m2.SnapshotLog) != 2 || m2.SnapshotLog[1].SnapshotID != 102 || len(m2.MetadataLog) != 2 ||
		m2.MetadataLog[1].TimestampMS != 2_000_100 {
		t.Errorf("second commit logs: snapshot-log %+v metadata-log %+v", m2.SnapshotLog, m2.MetadataLog)
	}
	checkRoundTrip(t, m2)
}

func TestApplyAddSnapshotRules(t *testing.T) {
	v2 := mustApply(t, newTestTable(t, 2), 2_000_000, "", AddSnapshot{testSnapshot(1, nil, 5, 1_500_000)}, mainRef(1))
	v3 := newTestTable(t, 3)
	v3 = mustApply(t, v3, 2_000_000, "", AddSnapshot{v3Snapshot(1, nil, 1, 1_500_000, 0, 40)}, mainRef(1))
	if *v3.NextRowID != 40 {
		t.Fatalf("next-row-id = %d, want 40", *v3.NextRowID)
	}
	v1 := newTestTable(t, 1)

	noList := testSnapshot(2, ptr(int64(1)), 6, 1_600_000)
	noList.ManifestList = ""
	noOp := testSnapshot(2, ptr(int64(1)), 6, 1_600_000)
	noOp.Summary = map[string]string{"added-records": "1"}
	noFirst := v3Snapshot(2, ptr(int64(1)), 2, 1_600_000, 40, 5)
	noFirst.FirstRowID = nil
	noAdded := v3Snapshot(2, ptr(int64(1)), 2, 1_600_000, 40, 5)
	noAdded.AddedRows = nil

	cases := []struct {
		name      string
		base      *TableMetadata
		snap      Snapshot
		want      string
		retryable bool
	}{
		{"duplicate id", v2, testSnapshot(1, nil, 6, 1_600_000), "snapshot already exists for id: 1", false},
		{"same sequence number", v2, testSnapshot(2, ptr(int64(1)), 5, 1_600_000), "sequence number 5 older than last sequence number 5", true},
		{"older sequence number", v2, testSnapshot(2, ptr(int64(1)), 3, 1_600_000), "older than last sequence number", true},
		{"no manifest list", v2, noList, "no manifest-list", false},
		{"no operation", v2, noOp, "no summary operation", false},
		{"v1 sequence number", v1, testSnapshot(2, nil, 1, 1_600_000), "format v1 has no sequence numbers", false},
		{"v3 no first-row-id", v3, noFirst, "first-row-id is required", false},
		{"v3 no added-rows", v3, noAdded, "added-rows is required", false},
		{"v3 negative added-rows", v3, v3Snapshot(2, ptr(int64(1)), 2, 1_600_000, 40, -1), "added-rows is negative", false},
		{"v3 first-row-id behind", v3, v3Snapshot(2, ptr(int64(1)), 2, 1_600_000, 39, 5), "first-row-id is behind table next-row-id: 39 < 40", true},
		{"v3 overflow", v3, v3Snapshot(2, ptr(int64(1)), 2, 1_600_000, 1<<62, 1<<62), "overflows", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := mustMarshal(t, c.base)
			_, err := apply(c.base, 3_000_000, AddSnapshot{c.snap}, mainRef(c.snap.SnapshotID))
			wantErr(t, err, c.want, c.retryable)
			if !bytes.Equal(before, mustMarshal(t, c.base)) {
				t.Error("failed ApplyUpdates changed its base")
			}
		})
	}

	// first-row-id ahead of next-row-id is allowed; next-row-id moves past
	// the whole range the snapshot used.
	m := mustApply(t, v3, 3_000_000, "", AddSnapshot{v3Snapshot(2, ptr(int64(1)), 2, 1_600_000, 100, 5)})
	if *m.NextRowID != 105 {
		t.Errorf("next-row-id = %d, want 105", *m.NextRowID)
	}
	// v1 snapshots carry no sequence number and leave last-sequence-number 0.
	m1 := mustApply(t, v1, 3_000_000, "", AddSnapshot{testSnapshot(9, nil, 0, 1_600_000)}, mainRef(9))
	if m1.LastSequenceNumber != 0 || *m1.CurrentSnapshotID != 9 {
		t.Errorf("v1: last-sequence-number %d current %v", m1.LastSequenceNumber, m1.CurrentSnapshotID)
	}
	checkRoundTrip(t, m1)
}

func TestApplySetSnapshotRef(t *testing.T) {
	base := mustApply(t, newTestTable(t, 2), 2_000_000, "",
		AddSnapshot{testSnapshot(1, nil, 1, 1_500_000)}, mainRef(1),
		AddSnapshot{testSnapshot(2, ptr(int64(1)), 2, 1_600_000)})
	// base: log [(2000000, 1)], current 1, snapshot 2 not referenced

	t.Run("branch does not move main", func(t *testing.T) {
		m := mustApply(t, base, 3_000_000, "", SetSnapshotRef{RefName: "dev", Ref: SnapshotRef{SnapshotID: 2, Type: RefTypeBranch, MinSnapshotsToKeep: ptr(2)}})
		if *m.CurrentSnapshotID != 1 || len(m.SnapshotLog) != 1 || m.Refs["dev"].SnapshotID != 2 {
			t.Errorf("current %d log %+v refs %+v", *m.CurrentSnapshotID, m.SnapshotLog, m.Refs)
		}
	})
	t.Run("rollback main logs the change at Now", func(t *testing.T) {
		m := mustApply(t, base, 3_000_000, "", mainRef(2))
		m = mustApply(t, m, 4_000_000, "", mainRef(1))
		want := []SnapshotLogEntry{{TimestampMS: 2_000_000, SnapshotID: 1}, {TimestampMS: 3_000_000, SnapshotID: 2}, {TimestampMS: 4_000_000, SnapshotID: 1}}
		if !reflect.DeepEqual(m.SnapshotLog, want) {
			t.Errorf("snapshot-log = %+v, want %+v", m.SnapshotLog, want)
		}
	})
	t.Run("same main is a no-op for the log", func(t *testing.T) {
		m := mustApply(t, base, 3_000_000, "", mainRef(1),
			SetSnapshotRef{RefName: MainBranch, Ref: SnapshotRef{SnapshotID: 1, Type: RefTypeBranch, MinSnapshotsToKeep: ptr(5)}})
		if len(m.SnapshotLog) != 1 || *m.Refs[MainBranch].MinSnapshotsToKeep != 5 {
			t.Errorf("log %+v main %+v", m.SnapshotLog, m.Refs[MainBranch])
		}
	})
	errCases := []struct {
		name string
		up   SetSnapshotRef
		want string
	}{
		{"unknown snapshot", mainRef(77), "cannot set main to unknown snapshot: 77"},
		{"main as tag", SetSnapshotRef{RefName: MainBranch, Ref: SnapshotRef{SnapshotID: 1, Type: RefTypeTag}}, "cannot set main to a tag"},
		{"main max-ref-age", SetSnapshotRef{RefName: MainBranch, Ref: SnapshotRef{SnapshotID: 1, Type: RefTypeBranch, MaxRefAgeMS: ptr(int64(5))}}, "never expires"},
		{"bad type", SetSnapshotRef{RefName: "x", Ref: SnapshotRef{SnapshotID: 1, Type: "twig"}}, `invalid type "twig"`},
		{"tag with min snapshots", SetSnapshotRef{RefName: "x", Ref: SnapshotRef{SnapshotID: 1, Type: RefTypeTag, MinSnapshotsToKeep: ptr(1)}}, "tags do not support"},
		{"zero min snapshots", SetSnapshotRef{RefName: "x", Ref: SnapshotRef{SnapshotID: 1, Type: RefTypeBranch, MinSnapshotsToKeep: ptr(0)}}, "min-snapshots-to-keep must be greater than 0"},
		{"negative snapshot age", SetSnapshotRef{RefName: "x", Ref: SnapshotRef{SnapshotID: 1, Type: RefTypeBranch, MaxSnapshotAgeMS: ptr(int64(-1))}}, "max-snapshot-age-ms must be greater than 0"},
		{"zero ref age", SetSnapshotRef{RefName: "x", Ref: SnapshotRef{SnapshotID: 1, Type: RefTypeTag, MaxRefAgeMS: ptr(int64(0))}}, "max-ref-age-ms must be greater than 0"},
		{"empty name", SetSnapshotRef{Ref: SnapshotRef{SnapshotID: 1, Type: RefTypeTag}}, "ref name must not be empty"},
	}
	for _, c := range errCases {
		t.Run(c.name, func(t *testing.T) {
			_, err := apply(base, 3_000_000, c.up)
			wantErr(t, err, c.want, false)
		})
	}
	// A tag may carry max-ref-age-ms.
	m := mustApply(t, base, 3_000_000, "", SetSnapshotRef{RefName: "v1", Ref: SnapshotRef{SnapshotID: 2, Type: RefTypeTag, MaxRefAgeMS: ptr(int64(1000))}})
	checkRoundTrip(t, m)
}

// Java drops snapshots that a commit made current and then replaced.
func TestApplyIntermediateSnapshotsLeaveTheLog(t *testing.T) {
	base := newTestTable(t, 3)
	m := mustApply(t, base, 2_000_000, "",
		AddSnapshot{v3Snapshot(1, nil, 1, 1_500_000, 0, 10)}, mainRef(1),
		AddSnapshot{v3Snapshot(2, ptr(int64(1)), 2, 1_600_000, 10, 7)}, mainRef(2))
	want := []SnapshotLogEntry{{TimestampMS: 2_000_000, SnapshotID: 2}}
	if !reflect.DeepEqual(m.SnapshotLog, want) {
		t.Errorf("snapshot-log = %+v, want %+v", m.SnapshotLog, want)
	}
	if *m.NextRowID != 17 || m.LastSequenceNumber != 2 {
		t.Errorf("next-row-id %d last-sequence-number %d, want 17, 2", *m.NextRowID, m.LastSequenceNumber)
	}
	checkRoundTrip(t, m)
}

func TestApplyRemoveSnapshots(t *testing.T) {
	base := newTestTable(t, 2)
	base = mustApply(t, base, 2_000_000, "", AddSnapshot{testSnapshot(1, nil, 1, 1_900_000)}, mainRef(1))
	base = mustApply(t, base, 3_000_000, "", AddSnapshot{testSnapshot(2, ptr(int64(1)), 2, 2_900_000)}, mainRef(2))
	base = mustApply(t, base, 4_000_000, "", AddSnapshot{testSnapshot(3, ptr(int64(2)), 3, 3_900_000)}, mainRef(3),
		SetSnapshotRef{RefName: "old", Ref: SnapshotRef{SnapshotID: 1, Type: RefTypeTag}},
		SetStatistics{StatisticsFile{SnapshotID: 1, StatisticsPath: "s1.puffin", FileSizeInBytes: 10, FileFooterSizeInBytes: 5}},
		SetStatistics{StatisticsFile{SnapshotID: 3, StatisticsPath: "s3.puffin", FileSizeInBytes: 10, FileFooterSizeInBytes: 5}},
		SetPartitionStatistics{PartitionStatisticsFile{SnapshotID: 2, StatisticsPath: "p2.parquet", FileSizeInBytes: 10}},
		SetPartitionStatistics{PartitionStatisticsFile{SnapshotID: 3, StatisticsPath: "p3.parquet", FileSizeInBytes: 10}})
	// log: (2e6,1) (3e6,2) (4e6,3)

	t.Run("expire middle snapshot clears history before it", func(t *testing.T) {
		m := mustApply(t, base, 5_000_000, "", RemoveSnapshots{SnapshotIDs: []int64{2, 999}})
		if len(m.Snapshots) != 2 || m.Snapshots[0].SnapshotID != 1 || m.Snapshots[1].SnapshotID != 3 {
			t.Errorf("snapshots = %+v", m.Snapshots)
		}
		want := []SnapshotLogEntry{{TimestampMS: 4_000_000, SnapshotID: 3}}
		if !reflect.DeepEqual(m.SnapshotLog, want) {
			t.Errorf("snapshot-log = %+v, want %+v", m.SnapshotLog, want)
		}
		if len(m.PartitionStatistics) != 1 || m.PartitionStatistics[0].SnapshotID != 3 || len(m.Statistics) != 2 {
			t.Errorf("statistics %+v partition statistics %+v", m.Statistics, m.PartitionStatistics)
		}
		if _, ok := m.Refs["old"]; !ok {
			t.Error("tag on a kept snapshot was removed")
		}
		checkRoundTrip(t, m)
	})
	t.Run("expire oldest drops its ref and statistics", func(t *testing.T) {
		m := mustApply(t, base, 5_000_000, "", RemoveSnapshots{SnapshotIDs: []int64{1}})
		if _, ok := m.Refs["old"]; ok {
			t.Error("tag pointing at a removed snapshot survived")
		}
		if len(m.Statistics) != 1 || m.Statistics[0].SnapshotID != 3 {
			t.Errorf("statistics = %+v", m.Statistics)
		}
		want := []SnapshotLogEntry{{TimestampMS: 3_000_000, SnapshotID: 2}, {TimestampMS: 4_000_000, SnapshotID: 3}}
		if !reflect.DeepEqual(m.SnapshotLog, want) {
			t.Errorf("snapshot-log = %+v, want %+v", m.SnapshotLog, want)
		}
	})
	t.Run("removing the current snapshot clears main", func(t *testing.T) {
		m := mustApply(t, base, 5_000_000, "", RemoveSnapshots{SnapshotIDs: []int64{3}})
		if m.CurrentSnapshotID != nil || m.CurrentSnapshot() != nil {
			t.Errorf("current snapshot = %v", *m.CurrentSnapshotID)
		}
		if _, ok := m.Refs[MainBranch]; ok {
			t.Error("main survived")
		}
		if len(m.SnapshotLog) != 0 {
			t.Errorf("snapshot-log = %+v, want empty", m.SnapshotLog)
		}
		checkRoundTrip(t, m)
	})
	t.Run("remove-snapshot-ref main", func(t *testing.T) {
		m := mustApply(t, base, 5_000_000, "", RemoveSnapshotRef{RefName: MainBranch}, RemoveSnapshotRef{RefName: "missing"})
		if m.CurrentSnapshotID != nil || len(m.Refs) != 1 || len(m.Snapshots) != 3 {
			t.Errorf("current %v refs %+v", m.CurrentSnapshotID, m.Refs)
		}
		checkRoundTrip(t, m)
	})
	t.Run("remove-statistics", func(t *testing.T) {
		m := mustApply(t, base, 5_000_000, "", RemoveStatistics{SnapshotID: 1}, RemovePartitionStatistics{SnapshotID: 3}, RemoveStatistics{SnapshotID: 42})
		if len(m.Statistics) != 1 || m.Statistics[0].SnapshotID != 3 || len(m.PartitionStatistics) != 1 || m.PartitionStatistics[0].SnapshotID != 2 {
			t.Errorf("statistics %+v partition statistics %+v", m.Statistics, m.PartitionStatistics)
		}
	})
	t.Run("set-statistics replaces in place", func(t *testing.T) {
		m := mustApply(t, base, 5_000_000, "", SetStatistics{StatisticsFile{SnapshotID: 1, StatisticsPath: "new.puffin", FileSizeInBytes: 1, FileFooterSizeInBytes: 1}})
		if len(m.Statistics) != 2 || m.Statistics[0].StatisticsPath != "new.puffin" {
			t.Errorf("statistics = %+v", m.Statistics)
		}
	})
}

func TestApplyUpgradeFormatVersion(t *testing.T) {
	v2 := mustApply(t, newTestTable(t, 2), 2_000_000, "", AddSnapshot{testSnapshot(1, nil, 1, 1_500_000)}, mainRef(1))
	m := mustApply(t, v2, 3_000_000, "", UpgradeFormatVersion{FormatVersion: 3})
	if m.FormatVersion != 3 || m.NextRowID == nil || *m.NextRowID != 0 {
		t.Fatalf("upgraded: version %d next-row-id %v", m.FormatVersion, m.NextRowID)
	}
	if m.Snapshots[0].FirstRowID != nil {
		t.Error("upgrade changed an existing snapshot")
	}
	checkRoundTrip(t, m)
	// The first v3 commit must now carry row lineage.
	if _, err := apply(m, 4_000_000, AddSnapshot{testSnapshot(2, ptr(int64(1)), 2, 3_500_000)}); err == nil {
		t.Error("v3 accepted a snapshot without first-row-id")
	}
	same := mustApply(t, m, 4_000_000, "", UpgradeFormatVersion{FormatVersion: 3})
	if same.FormatVersion != 3 || *same.NextRowID != 0 {
		t.Errorf("same-version upgrade changed metadata: %d %d", same.FormatVersion, *same.NextRowID)
	}
	_, err := apply(m, 4_000_000, UpgradeFormatVersion{FormatVersion: 2})
	wantErr(t, err, "cannot downgrade v3 table to v2", false)
	_, err = apply(v2, 4_000_000, UpgradeFormatVersion{FormatVersion: 4})
	wantErr(t, err, "icectl supports format v1 to v3", false)
	if !errors.Is(err, ErrUnsupportedFormatVersion) {
		t.Errorf("upgrade to v4: %v does not wrap ErrUnsupportedFormatVersion", err)
	}

	v1 := newTestTable(t, 1)
	m2 := mustApply(t, v1, 2_000_000, "", UpgradeFormatVersion{FormatVersion: 2})
	if m2.FormatVersion != 2 {
		t.Errorf("v1 upgrade: version %d", m2.FormatVersion)
	}
	checkRoundTrip(t, m2)
}

func TestApplyProperties(t *testing.T) {
	base := newTestTable(t, 2)
	m := mustApply(t, base, 2_000_000, "", SetProperties{Updates: map[string]string{"a": "1", "owner": "x"}}, RemoveProperties{Removals: []string{"a", "nope"}})
	want := map[string]string{"owner": "x"}
	if !reflect.DeepEqual(m.Properties, want) {
		t.Errorf("properties = %v, want %v", m.Properties, want)
	}
	_, err := apply(base, 2_000_000, SetProperties{Updates: map[string]string{PropFormatVersion: "3"}})
	wantErr(t, err, "use an upgrade-format-version update", false)
	_, err = apply(base, 2_000_000, SetProperties{Updates: map[string]string{"current-snapshot-id": "3"}})
	wantErr(t, err, `reserved table property "current-snapshot-id"`, false)
}

func TestApplyMetadataLogTrim(t *testing.T) {
	m := newTestTable(t, 2)
	m = mustApply(t, m, 1_500_000, "", SetProperties{Updates: map[string]string{PropMetadataPreviousVersionsMax: "2"}})
	for i, loc := range []string{"m0", "m1", "m2", "m3"} {
		m = mustApply(t, m, int64(2_000_000+i*1000), loc, SetProperties{Updates: map[string]string{"step": loc}})
	}
	want := []MetadataLogEntry{{TimestampMS: 2_001_000, MetadataFile: "m2"}, {TimestampMS: 2_002_000, MetadataFile: "m3"}}
	if !reflect.DeepEqual(m.MetadataLog, want) {
		t.Errorf("metadata-log = %+v, want %+v", m.MetadataLog, want)
	}
	// A smaller limit set in the same commit applies to that commit; 0 means 1.
	m = mustApply(t, m, 3_000_000, "m4", SetProperties{Updates: map[string]string{PropMetadataPreviousVersionsMax: "0"}})
	if len(m.MetadataLog) != 1 || m.MetadataLog[0].MetadataFile != "m4" {
		t.Errorf("metadata-log = %+v, want only m4", m.MetadataLog)
	}
	_, err := ApplyUpdates(m, []Update{SetProperties{Updates: map[string]string{PropMetadataPreviousVersionsMax: "ten"}}},
		ApplyOptions{Now: msTime(4_000_000), BaseMetadataLocation: "m5"})
	wantErr(t, err, "is not an integer", false)
}

func TestApplySchemaSpecSortOrder(t *testing.T) {
	base := newTestTable(t, 2)
	wider := testSchema()
	wider.Fields = append(wider.Fields, NestedField{ID: 9, Name: "extra", Type: IntType{}})
	m := mustApply(t, base, 2_000_000, "",
		AddSchema{Schema: wider}, SetCurrentSchema{SchemaID: LastAdded},
		AddSpec{Spec: PartitionSpec{Fields: []PartitionField{{SourceID: 9, Name: "extra", Transform: Transform{Kind: TransformIdentity}, FieldID: -1}}}},
		SetDefaultSpec{SpecID: LastAdded},
		AddSortOrder{SortOrder: SortOrder{Fields: []SortField{{SourceID: 9, Transform: Transform{Kind: TransformIdentity}, Direction: "desc", NullOrder: "nulls-last"}}}},
		SetDefaultSortOrder{SortOrderID: LastAdded})
	if m.CurrentSchemaID != 1 || m.LastColumnID != 9 || len(m.Schemas) != 2 {
		t.Errorf("schema: current %d last-column-id %d schemas %d", m.CurrentSchemaID, m.LastColumnID, len(m.Schemas))
	}
	if m.DefaultSpecID != 1 || m.LastPartitionID != 1002 || m.DefaultSpec().Fields[0].FieldID != 1002 {
		t.Errorf("spec: default %d last-partition-id %d fields %+v", m.DefaultSpecID, m.LastPartitionID, m.DefaultSpec().Fields)
	}
	if m.DefaultSortOrderID != 1 || len(m.SortOrders) != 2 {
		t.Errorf("sort order: default %d orders %+v", m.DefaultSortOrderID, m.SortOrders)
	}
	checkRoundTrip(t, m)

	// Identical schema, spec and order are reused, not added again.
	again := mustApply(t, m, 3_000_000, "", AddSchema{Schema: wider}, SetCurrentSchema{SchemaID: LastAdded},
		AddSpec{Spec: *m.DefaultSpec()}, AddSortOrder{SortOrder: m.SortOrders[1]}, AddSortOrder{SortOrder: SortOrder{}})
	if len(again.Schemas) != 2 || len(again.PartitionSpecs) != 2 || len(again.SortOrders) != 2 {
		t.Errorf("reuse added copies: %d schemas %d specs %d orders", len(again.Schemas), len(again.PartitionSpecs), len(again.SortOrders))
	}
	back := mustApply(t, m, 3_000_000, "", SetCurrentSchema{SchemaID: 0}, SetDefaultSpec{SpecID: 0}, SetDefaultSortOrder{SortOrderID: 0})
	if back.CurrentSchemaID != 0 || back.DefaultSpecID != 0 || back.DefaultSortOrderID != 0 {
		t.Errorf("set back: %d %d %d", back.CurrentSchemaID, back.DefaultSpecID, back.DefaultSortOrderID)
	}

	errCases := []struct {
		name string
		ups  []Update
		want string
	}{
		{"unknown schema", []Update{SetCurrentSchema{SchemaID: 5}}, "unknown schema: 5"},
		{"no added schema", []Update{SetCurrentSchema{SchemaID: LastAdded}}, "no schema has been added"},
		{"no added spec", []Update{SetDefaultSpec{SpecID: LastAdded}}, "no spec has been added"},
		{"unknown spec", []Update{SetDefaultSpec{SpecID: 8}}, "unknown spec: 8"},
		{"no added order", []Update{SetDefaultSortOrder{SortOrderID: LastAdded}}, "no sort order has been added"},
		{"unknown order", []Update{SetDefaultSortOrder{SortOrderID: 8}}, "unknown sort order: 8"},
		{"duplicate field id", []Update{AddSchema{Schema: Schema{Fields: []NestedField{{ID: 1, Name: "a", Type: IntType{}}, {ID: 1, Name: "b", Type: IntType{}}}}}}, "same id 1"},
		{"v3 type in v2", []Update{AddSchema{Schema: Schema{Fields: []NestedField{{ID: 1, Name: "a", Type: VariantType{}}}}}}, "needs format v3"},
		{"spec source missing", []Update{AddSpec{Spec: PartitionSpec{Fields: []PartitionField{{SourceID: 77, Name: "x", Transform: Transform{Kind: TransformIdentity}}}}}}, "cannot find source column 77"},
		{"spec unknown transform", []Update{AddSpec{Spec: PartitionSpec{Fields: []PartitionField{{SourceID: 1, Name: "x", Transform: ParseTransform("zorder")}}}}}, `unknown transform "zorder"`},
		{"spec duplicate field id", []Update{AddSpec{Spec: PartitionSpec{Fields: []PartitionField{
			{SourceID: 1, Name: "x", Transform: Transform{Kind: TransformIdentity}, FieldID: 1005},
			{SourceID: 2, Name: "y", Transform: Transform{Kind: TransformIdentity}, FieldID: 1005}}}}}, "duplicate field id 1005"},
		{"order bad direction", []Update{AddSortOrder{SortOrder: SortOrder{Fields: []SortField{{SourceID: 1, Transform: Transform{Kind: TransformIdentity}, Direction: "up", NullOrder: "nulls-last"}}}}}, `invalid direction "up"`},
		{"reassign uuid", []Update{AssignUUID{UUID: "00000000-0000-4000-8000-000000000000"}}, "cannot reassign table uuid"},
		{"bad uuid", []Update{AssignUUID{UUID: "nope"}}, "invalid table uuid"},
		{"empty location", []Update{SetLocation{}}, "location must not be empty"},
	}
	for _, c := range errCases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ApplyUpdates(m, c.ups, ApplyOptions{Now: msTime(3_000_000)})
			wantErr(t, err, c.want, false)
		})
	}
	// Removing the specs and schemas no longer in use keeps the default
	// and current ones; ids the table lacks are ignored, as in Java.
	trimmed := mustApply(t, m, 3_000_000, "", RemovePartitionSpecs{SpecIDs: []int{0, 7}}, RemoveSchemas{SchemaIDs: []int{0, 9}})
	if len(trimmed.PartitionSpecs) != 1 || trimmed.PartitionSpecs[0].ID != 1 || len(trimmed.Schemas) != 1 || trimmed.Schemas[0].ID != 1 {
		t.Errorf("remove specs/schemas: specs %+v schemas %d", trimmed.PartitionSpecs, len(trimmed.Schemas))
	}
	checkRoundTrip(t, trimmed)
	for _, c := range []struct {
		up   Update
		want string
	}{
		{RemovePartitionSpecs{SpecIDs: []int{1}}, "cannot remove the default partition spec 1"},
		{RemoveSchemas{SchemaIDs: []int{0, 1}}, "cannot remove the current schema 1"},
	} {
		_, err := ApplyUpdates(m, []Update{c.up}, ApplyOptions{Now: msTime(3_000_000)})
		wantErr(t, err, c.want, false)
	}
	same := mustApply(t, m, 3_000_000, "", AssignUUID{UUID: m.TableUUID}, SetLocation{Location: "s3://elsewhere/t"})
	if same.TableUUID != m.TableUUID || same.Location != "s3://elsewhere/t" {
		t.Errorf("uuid %s location %s", same.TableUUID, same.Location)
	}
}

// ApplyUpdates must leave its base exactly as it was, whatever it applies.
func TestApplyDoesNotMutateBase(t *testing.T) {
	for _, name := range []string{"TableMetadataV2Valid.json", "TableMetadataStatisticsFiles.json", "TableMetadataPartitionStatisticsFiles.json"} {
		t.Run(name, func(t *testing.T) {
			base := mustParse(t, readConformance(t, "metadata/valid/"+name))
			before := mustMarshal(t, base)
			shallow := *base
			cur := *base.CurrentSnapshotID
			s := testSnapshot(42, &cur, base.LastSequenceNumber+1, 1_602_638_600_000)
			m := mustApply(t, base, 1_602_638_700_000, "s3://bucket/test/location/metadata/v1.metadata.json",
				AddSnapshot{s}, mainRef(42),
				SetSnapshotRef{RefName: "b", Ref: SnapshotRef{SnapshotID: cur, Type: RefTypeBranch}},
				RemoveSnapshots{SnapshotIDs: []int64{cur}},
				SetProperties{Updates: map[string]string{"k": "v"}},
				SetStatistics{StatisticsFile{SnapshotID: 42, StatisticsPath: "x", FileSizeInBytes: 1, FileFooterSizeInBytes: 1}},
				SetPartitionStatistics{PartitionStatisticsFile{SnapshotID: 42, StatisticsPath: "y", FileSizeInBytes: 1}},
				AddSchema{Schema: Schema{Fields: []NestedField{{ID: 1, Name: "x", Type: LongType{}, Required: true}, {ID: 10, Name: "n", Type: IntType{}}}}},
				SetCurrentSchema{SchemaID: LastAdded},
				UpgradeFormatVersion{FormatVersion: 3})
			if !bytes.Equal(before, mustMarshal(t, base)) {
				t.Fatal("ApplyUpdates changed its base metadata")
			}
			if !reflect.DeepEqual(shallow, *base) {
				t.Fatal("ApplyUpdates changed a field of its base")
			}
			// The result is independent of the base, too.
			m.Properties["late"] = "x"
			m.Refs["late"] = SnapshotRef{}
			m.Snapshots[0].SnapshotID = -5
			if !bytes.Equal(before, mustMarshal(t, base)) {
				t.Fatal("changing the result changed the base")
			}
		})
	}
}

func TestApplyEdgeCases(t *testing.T) {
	base := newTestTable(t, 2)
	if _, err := ApplyUpdates(nil, []Update{SetLocation{"x"}}, ApplyOptions{Now: msTime(1)}); err == nil {
		t.Error("nil base accepted")
	}
	if _, err := ApplyUpdates(base, []Update{SetLocation{"x"}}, ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "Now") {
		t.Errorf("zero Now: %v", err)
	}
	if _, err := ApplyUpdates(base, []Update{nil}, ApplyOptions{Now: msTime(2_000_000)}); err == nil {
		t.Error("nil update accepted")
	}
	var nilPtr *SetLocation
	if _, err := ApplyUpdates(base, []Update{nilPtr}, ApplyOptions{Now: msTime(2_000_000)}); err == nil {
		t.Error("nil pointer update accepted")
	}
	m := mustApply(t, base, 2_000_000, "", &SetLocation{Location: "s3://p"})
	if m.Location != "s3://p" {
		t.Errorf("pointer update not applied: %s", m.Location)
	}
	same, err := ApplyUpdates(base, nil, ApplyOptions{Now: msTime(9_000_000), BaseMetadataLocation: "x"})
	if err != nil || !bytes.Equal(mustMarshal(t, same), mustMarshal(t, base)) || same == base {
		t.Errorf("no updates: err %v, want an equal copy", err)
	}
	// Time may not run backwards past the logs (Java allows one minute of skew).
	withSnap := mustApply(t, base, 2_000_000, "", AddSnapshot{testSnapshot(1, nil, 1, 1_900_000)}, mainRef(1))
	if _, err := apply(withSnap, 1_000_000, SetProperties{Updates: map[string]string{"a": "b"}}); err == nil {
		t.Error("last-updated-ms before the snapshot-log was accepted")
	}
}
