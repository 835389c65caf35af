package health

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

var now = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// testMetadata is a v3 table partitioned by day(ts), with snapshots of the
// given ages.
func testMetadata(ages ...time.Duration) *spec.TableMetadata {
	md := &spec.TableMetadata{
		FormatVersion: 3,
		Schemas: []spec.Schema{{ID: 0, Fields: []spec.NestedField{
			{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
			{ID: 2, Name: "ts", Type: spec.TimestampType{}, Required: true},
		}}},
		PartitionSpecs: []spec.PartitionSpec{
			{ID: 0},
			{ID: 1, Fields: []spec.PartitionField{{SourceID: 2, FieldID: 1000, Name: "ts_day", Transform: spec.Transform{Kind: spec.TransformDay}}}},
		},
		DefaultSpecID: 1,
		Properties:    map[string]string{},
	}
	for i, a := range ages {
		md.Snapshots = append(md.Snapshots, spec.Snapshot{SnapshotID: int64(i + 1), SequenceNumber: int64(i + 1), TimestampMS: now.Add(-a).UnixMilli()})
	}
	if len(ages) > 0 {
		md.CurrentSnapshotID = ptr(int64(len(ages)))
	}
	return md
}

func dataFile(specID int32, size, records int64, part ...any) table.FileEntry {
	return table.FileEntry{Entry: manifest.Entry{DataFile: manifest.DataFile{
		Content: manifest.ContentData, FilePath: "d", SpecID: specID, Partition: part, FileSizeInBytes: size, RecordCount: records}}}
}

func deleteFile(content manifest.FileContent, dv bool, specID int32, records int64, part ...any) table.FileEntry {
	df := manifest.DataFile{Content: content, FilePath: "x.puffin", SpecID: specID, Partition: part, FileSizeInBytes: 1000, RecordCount: records}
	if dv {
		df.ContentOffset, df.ContentSizeInBytes, df.ReferencedDataFile = ptr(int64(4)), ptr(int64(40)), ptr("d")
	}
	return table.FileEntry{Entry: manifest.Entry{DataFile: df}}
}

func thresholds(t *testing.T, md *spec.TableMetadata) Thresholds {
	t.Helper()
	th, err := ThresholdsFor(md)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func TestHistogramAndSmallFiles(t *testing.T) {
	md := testMetadata(time.Hour)
	md.Properties[PropTargetFileSize] = "134217728" // 128 MiB: small below 96 MiB
	fs := &table.FileSet{Data: []table.FileEntry{
		dataFile(1, 0, 0, int32(0)),
		dataFile(1, mib-1, 10, int32(0)),
		dataFile(1, mib, 10, int32(0)),
		dataFile(1, 16*mib, 10, int32(1)),
		dataFile(1, 96*mib-1, 10, int32(1)),
		dataFile(1, 96*mib, 10, int32(1)),
		dataFile(1, 512*mib, 10, int32(1)),
		dataFile(0, 600*mib, 10),
	}}
	r := Analyze(Input{Table: "db.t", Metadata: md, Files: fs, Now: now, Thresholds: thresholds(t, md)})
	if r.SmallFileBytes != 96*mib {
		t.Fatalf("small-file bound %d", r.SmallFileBytes)
	}
	wantFiles := []int{2, 1, 3, 0, 2}
	for i, b := range r.Data.Histogram {
		if b.Files != wantFiles[i] {
			t.Errorf("bucket %s: %d files, want %d", b.Label, b.Files, wantFiles[i])
		}
	}
	if r.Data.Files != 8 || r.Data.SmallFiles != 5 || r.Data.Records != 70 {
		t.Errorf("totals %+v", r.Data)
	}
	var got []string
	for _, p := range r.Partitions {
		got = append(got, p.Partition)
	}
	if strings.Join(got, "|") != "|ts_day=1970-01-01|ts_day=1970-01-02" {
		t.Errorf("partition order %q", got)
	}
	if r.Partitions[1].Data.SmallFiles != 3 || r.Partitions[2].Data.SmallFiles != 2 {
		t.Errorf("per-partition small files %+v", r.Partitions)
	}
	// 3 and 2 small files per partition: under min-input-files (5).
	if hasFinding(r, "small-files") {
		t.Error("small-files finding below min-input-files")
	}
}

func hasFinding(r Report, kind string) bool { return findingOf(r, kind) != nil }

// findingOf is r's finding of kind, nil when it has none.
func findingOf(r Report, kind string) *Finding {
	for i := range r.Findings {
		if r.Findings[i].Kind == kind {
			return &r.Findings[i]
		}
	}
	return nil
}

func TestDeletesByKindAndRatio(t *testing.T) {
	md := testMetadata(time.Hour)
	fs := &table.FileSet{
		Data: []table.FileEntry{dataFile(1, 10, 100, int32(5)), dataFile(1, 10, 100, int32(6))},
		Deletes: []table.FileEntry{
			deleteFile(manifest.ContentPositionDeletes, true, 1, 30, int32(5)),
			deleteFile(manifest.ContentPositionDeletes, false, 1, 10, int32(5)),
			deleteFile(manifest.ContentPositionDeletes, true, 1, 2, int32(6)),
			deleteFile(manifest.ContentEqualityDeletes, false, 0, 7),
		},
	}
	r := Analyze(Input{Table: "db.t", Metadata: md, Files: fs, Now: now, Thresholds: thresholds(t, md)})
	d := r.Deletes
	if d.DV != (KindStats{Count: 2, Records: 32, Bytes: 80}) || d.Position != (KindStats{Count: 1, Records: 10, Bytes: 1000}) ||
		d.Equality != (KindStats{Count: 1, Records: 7, Bytes: 1000}) {
		t.Errorf("kinds %+v", d)
	}
	if d.DeletedRows != 42 || d.DeleteRatio != 0.21 {
		t.Errorf("deleted %d ratio %v", d.DeletedRows, d.DeleteRatio)
	}
	// The unpartitioned equality delete is its own (spec 0) partition.
	if len(r.Partitions) != 3 || r.Partitions[0].SpecID != 0 || r.Partitions[1].Deletes.DeleteRatio != 0.4 {
		t.Errorf("partitions %+v", r.Partitions)
	}
	for _, k := range []string{"delete-ratio", "equality-deletes", "position-delete-files"} {
		if !hasFinding(r, k) {
			t.Errorf("no %s finding: %+v", k, r.Findings)
		}
	}
	// Equality deletes are resolved where they apply, not compacted: into
	// DVs on v3, into position deletes on v2.
	if f := findingOf(r, "equality-deletes"); f == nil || f.Command.String() != "icectl dv merge db.t --equality" || !strings.Contains(f.Message, "into deletion vectors") {
		t.Errorf("v3 equality-deletes finding: %+v", f)
	}
	md.FormatVersion = 2
	r = Analyze(Input{Table: "db.t", Metadata: md, Files: fs, Now: now, Thresholds: thresholds(t, md)})
	if hasFinding(r, "position-delete-files") {
		t.Error("v2 table told to merge position deletes into DVs")
	}
	if f := findingOf(r, "equality-deletes"); f == nil || f.Command.String() != "icectl rewrite-equality-deletes db.t" || !strings.Contains(f.Message, "into position deletes") {
		t.Errorf("v2 equality-deletes finding: %+v", f)
	}
}

func TestSnapshotsManifestsMetadataFindings(t *testing.T) {
	md := testMetadata(10*24*time.Hour, 6*24*time.Hour, time.Hour)
	for range 100 {
		md.MetadataLog = append(md.MetadataLog, spec.MetadataLogEntry{})
	}
	var mfs []manifest.ManifestFile
	for i := range 12 {
		mfs = append(mfs, manifest.ManifestFile{Length: int64(i+1) * 100 * 1024, Content: manifest.ManifestContent(i % 2)})
	}
	mfs = append(mfs, manifest.ManifestFile{Length: 8 * mib})
	r := Analyze(Input{Table: "db.t", Metadata: md, Manifests: mfs, Now: now, Thresholds: thresholds(t, md)})
	if r.Snapshots.Count != 3 || r.Snapshots.Expirable != 2 || *r.Snapshots.OldestAgeMS != (10*24*time.Hour).Milliseconds() {
		t.Errorf("snapshots %+v", r.Snapshots)
	}
	if r.Manifests.Count != 13 || r.Manifests.SmallManifests != 12 || r.Manifests.DeleteManifests != 6 {
		t.Errorf("manifests %+v", r.Manifests)
	}
	if r.MetadataFiles.Count != 101 {
		t.Errorf("metadata files %+v", r.MetadataFiles)
	}
	var kinds, cmds []string
	for _, f := range r.Findings {
		kinds, cmds = append(kinds, f.Kind), append(cmds, f.Recommendation)
	}
	if strings.Join(kinds, ",") != "small-manifests,old-snapshots,untracked-metadata-files" {
		t.Errorf("findings %v", kinds)
	}
	if strings.Join(cmds, ",") != "icectl rewrite-manifests db.t,icectl expire db.t --older-than 5d,icectl orphan db.t" {
		t.Errorf("recommendations %v", cmds)
	}

	// The table's own settings move the thresholds.
	md.Properties[PropMaxSnapshotAgeMS] = "1209600000" // 14 days
	md.Properties[PropDeleteAfterCommit] = "true"
	r = Analyze(Input{Table: "db.t", Metadata: md, Manifests: mfs, Now: now, Thresholds: thresholds(t, md)})
	if hasFinding(r, "old-snapshots") || hasFinding(r, "untracked-metadata-files") {
		t.Errorf("findings despite table settings: %+v", r.Findings)
	}
}

func TestSmallFilesFinding(t *testing.T) {
	md := testMetadata(time.Hour)
	fs := &table.FileSet{}
	for range 5 {
		fs.Data = append(fs.Data, dataFile(1, mib, 1, int32(3)))
	}
	r := Analyze(Input{Table: "db.t", Metadata: md, Files: fs, Now: now, Thresholds: thresholds(t, md)})
	if len(r.Findings) != 1 || r.Findings[0].Kind != "small-files" || r.Findings[0].Recommendation != "icectl compact db.t" ||
		!strings.Contains(r.Findings[0].Message, "5 data files smaller than 384.0 MiB (402653184 bytes) in 1 partition") {
		t.Errorf("findings %+v", r.Findings)
	}
}

func TestEmptyTable(t *testing.T) {
	md := testMetadata()
	r := Analyze(Input{Table: "db.t", Metadata: md, Now: now, Thresholds: thresholds(t, md)})
	if r.Snapshots.OldestMS != nil || len(r.Findings) != 0 || len(r.Partitions) != 0 || r.Deletes.DeleteRatio != 0 {
		t.Errorf("empty table report %+v", r)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
}

func TestThresholdsForRejectsBadProperties(t *testing.T) {
	for k, v := range map[string]string{PropTargetFileSize: "big", PropMaxSnapshotAgeMS: "-1", PropDeleteAfterCommit: "maybe"} {
		md := testMetadata()
		md.Properties[k] = v
		if _, err := ThresholdsFor(md); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}

func TestPartitionText(t *testing.T) {
	ps := &spec.PartitionSpec{Fields: []spec.PartitionField{
		{Name: "y", Transform: spec.Transform{Kind: spec.TransformYear}},
		{Name: "m", Transform: spec.Transform{Kind: spec.TransformMonth}},
		{Name: "d", Transform: spec.Transform{Kind: spec.TransformDay}},
		{Name: "h", Transform: spec.Transform{Kind: spec.TransformHour}},
		{Name: "s", Transform: spec.Transform{Kind: spec.TransformIdentity}},
		{Name: "b", Transform: spec.Transform{Kind: spec.TransformBucket, Param: 4}},
		{Name: "n", Transform: spec.Transform{Kind: spec.TransformIdentity}},
	}}
	got := PartitionText(ps, []any{int32(55), int32(14), int32(19000), int32(456000), "eu", int32(3), nil})
	want := "y=2025/m=1971-03/d=2022-01-08/h=2022-01-08-00/s=eu/b=3/n=null"
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if got := PartitionText(nil, []any{[]byte{1, 2}}); got != "field1=0x0102" {
		t.Errorf("without spec: %s", got)
	}
}

func TestResurrectedRowsFinding(t *testing.T) {
	md := testMetadata()
	md.FormatVersion = 3
	now := time.UnixMilli(md.LastUpdatedMS)
	in := Input{Table: "db.t", Metadata: md, Now: now, Thresholds: thresholds(t, md), Resurrected: []ResurrectedFile{
		{DataFile: "s3://b/t/data/a.parquet", DV: "s3://b/t/data/x.puffin@4", Rows: 7, FirstPositions: []int64{1, 3, 5, 7, 9},
			FirstRows: []string{"id=1", "id=3", "id=5", "id=7", "id=9"}, DeleteFiles: []string{"s3://b/t/data/pos.parquet"}},
		{DataFile: "s3://b/t/data/b.parquet", DV: "s3://b/t/data/x.puffin@60", Rows: 1, FirstPositions: []int64{0},
			FirstRows: []string{"id=100"}, DeleteFiles: []string{"s3://b/t/data/pos.parquet"}},
	}}
	r := Analyze(in)
	if r.Resurrected.DataFiles != 2 || r.Resurrected.Rows != 8 || len(r.Resurrected.Files) != 2 {
		t.Errorf("resurrected = %+v", r.Resurrected)
	}
	if len(r.Findings) == 0 || r.Findings[0].Kind != "resurrected-rows" {
		t.Fatalf("findings = %+v, want resurrected-rows first", r.Findings)
	}
	f := r.Findings[0]
	for _, want := range []string{"8 deleted rows are visible again in 2 data files", "a.parquet", "positions [1 3 5 7 9 ...]", "id=1; id=3"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q lacks %q", f.Message, want)
		}
	}
	if f.Recommendation != "icectl dv merge db.t --repair-resurrected" {
		t.Errorf("recommendation = %q", f.Recommendation)
	}
	if r := Analyze(Input{Table: "db.t", Metadata: md, Now: now, Thresholds: thresholds(t, md)}); hasFinding(r, "resurrected-rows") || r.Resurrected.Files == nil {
		t.Errorf("finding without resurrected rows, or nil files list: %+v", r.Resurrected)
	}
}

// posDeletes is n position-delete files of size bytes each in partition
// part of spec 1.
func posDeletes(n int, size int64, part int32) []table.FileEntry {
	var out []table.FileEntry
	for range n {
		e := deleteFile(manifest.ContentPositionDeletes, false, 1, 1, part)
		e.Entry.DataFile.FileSizeInBytes = size
		out = append(out, e)
	}
	return out
}

// TestSmallPositionDeletes: a v2 partition with min-position-delete-files
// small position-delete files is v2 delete debt, for
// rewrite-position-deletes; fewer, larger or in a v3 table (dv merge's
// finding) it is not.
func TestSmallPositionDeletes(t *testing.T) {
	md := testMetadata(time.Hour)
	md.FormatVersion = 2
	md.Properties[PropDeleteTargetSize] = "10000"
	data := []table.FileEntry{dataFile(1, 10, 100, int32(5)), dataFile(1, 10, 100, int32(6))}
	analyze := func(md *spec.TableMetadata, deletes []table.FileEntry) Report {
		return Analyze(Input{Table: "db.t", Metadata: md, Files: &table.FileSet{Data: data, Deletes: deletes}, Now: now, Thresholds: thresholds(t, md)})
	}
	// Five small files in day 5, four in day 6 and two large ones there.
	deletes := append(posDeletes(5, 9999, 5), posDeletes(4, 100, 6)...)
	deletes = append(deletes, posDeletes(2, 10000, 6)...)
	r := analyze(md, deletes)
	if r.Deletes.SmallPositionFiles != 9 || r.Partitions[0].Deletes.SmallPositionFiles != 5 || r.Partitions[1].Deletes.SmallPositionFiles != 4 {
		t.Errorf("small position-delete files: %d, per partition %d and %d", r.Deletes.SmallPositionFiles,
			r.Partitions[0].Deletes.SmallPositionFiles, r.Partitions[1].Deletes.SmallPositionFiles)
	}
	f := findingOf(r, "small-position-deletes")
	if f == nil {
		t.Fatalf("no small-position-deletes finding: %+v", r.Findings)
	}
	if f.Recommendation != "icectl rewrite-position-deletes db.t" || !strings.Contains(f.Message, "5 position delete files smaller than 9.8 KiB (10000 bytes) in 1 partition with 5 or more") {
		t.Errorf("finding %+v", f)
	}
	if hasFinding(r, "position-delete-files") {
		t.Error("a v2 table is told to merge into deletion vectors")
	}

	// Absent: four small files per partition, or the same files in v3
	// (there dv merge's finding names them).
	if r := analyze(md, append(posDeletes(4, 100, 5), posDeletes(4, 100, 6)...)); hasFinding(r, "small-position-deletes") {
		t.Error("finding with four small files per partition")
	}
	v3 := testMetadata(time.Hour)
	v3.Properties[PropDeleteTargetSize] = "10000"
	r = analyze(v3, deletes)
	if hasFinding(r, "small-position-deletes") || !hasFinding(r, "position-delete-files") {
		t.Errorf("v3 findings %+v, want position-delete-files (dv merge) only", r.Findings)
	}
	for _, f := range r.Findings {
		if f.Kind == "position-delete-files" && f.Recommendation != "icectl dv merge db.t" {
			t.Errorf("v3 recommendation %q", f.Recommendation)
		}
	}
	// The default target is 64 MiB.
	if th := thresholds(t, testMetadata()); th.DeleteTargetFileSize != 64*mib || th.MinPositionDeleteFiles != 5 {
		t.Errorf("default thresholds %d %d", th.DeleteTargetFileSize, th.MinPositionDeleteFiles)
	}
}

// TestUnsortedFiles: a table with a sort order whose partition has
// min-input-files data files written in another order, or none, is
// recommended a sorting compaction; files in its order, a partition with
// fewer, and a table without a sort order are not.
func TestUnsortedFiles(t *testing.T) {
	sorted := func() *spec.TableMetadata {
		md := testMetadata(time.Hour)
		md.SortOrders = []spec.SortOrder{{OrderID: 0}, {OrderID: 1, Fields: []spec.SortField{{SourceID: 1, Transform: spec.ParseTransform("identity"), Direction: "asc", NullOrder: "nulls-first"}}}}
		md.DefaultSortOrderID = 1
		return md
	}
	file := func(part int32, order *int32) table.FileEntry {
		e := dataFile(1, 10, 100, part)
		e.Entry.DataFile.SortOrderID = order
		return e
	}
	var data []table.FileEntry
	// Day 5: five files not in order 1 (none, order 0, order 2); day 6:
	// four unsorted and three in order 1.
	for _, o := range []*int32{nil, nil, ptr(int32(0)), ptr(int32(2)), nil} {
		data = append(data, file(5, o))
	}
	for _, o := range []*int32{nil, nil, nil, nil, ptr(int32(1)), ptr(int32(1)), ptr(int32(1))} {
		data = append(data, file(6, o))
	}
	analyze := func(md *spec.TableMetadata, data []table.FileEntry) Report {
		return Analyze(Input{Table: "db.t", Metadata: md, Files: &table.FileSet{Data: data}, Now: now, Thresholds: thresholds(t, md)})
	}
	r := analyze(sorted(), data)
	if r.SortOrderID == nil || *r.SortOrderID != 1 || r.UnsortedFiles != 9 || r.Partitions[0].UnsortedFiles != 5 || r.Partitions[1].UnsortedFiles != 4 {
		t.Errorf("sort order %v, unsorted %d, per partition %+v", r.SortOrderID, r.UnsortedFiles, r.Partitions)
	}
	f := findingOf(r, "unsorted-files")
	if f == nil {
		t.Fatalf("no unsorted-files finding: %+v", r.Findings)
	}
	if f.Recommendation != "icectl compact db.t --sort --rewrite-all" || !strings.Contains(f.Message, "5 data files not written in the table's sort order 1 in 1 partition with 5 or more") {
		t.Errorf("finding %+v", f)
	}
	js, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(js), `"sort_order_id":1,"unsorted_data_files":9`) {
		t.Errorf("JSON %s (%v)", js, err)
	}

	// Absent: the day 5 files written in order 1; no sort order at all.
	for i := range 5 {
		data[i].Entry.DataFile.SortOrderID = ptr(int32(1))
	}
	if r := analyze(sorted(), data); hasFinding(r, "unsorted-files") || r.UnsortedFiles != 4 {
		t.Errorf("sorted files: %d unsorted, findings %+v", r.UnsortedFiles, r.Findings)
	}
	for i := range 5 {
		data[i].Entry.DataFile.SortOrderID = nil
	}
	if r := analyze(testMetadata(time.Hour), data); hasFinding(r, "unsorted-files") || r.SortOrderID != nil || r.UnsortedFiles != 0 {
		t.Errorf("no sort order: %v %d %+v", r.SortOrderID, r.UnsortedFiles, r.Findings)
	}
}

// TestPerDay: counts by UTC day, oldest day first, whatever the order of
// the timestamps.
func TestPerDay(t *testing.T) {
	day := int64(24 * 3600 * 1000)
	got := perDay([]int64{3*day + 5, day, day + day - 1, 3 * day, 0})
	want := []DayCount{{"1970-01-01", 1}, {"1970-01-02", 2}, {"1970-01-04", 2}}
	if !slices.Equal(got, want) {
		t.Errorf("perDay = %v, want %v", got, want)
	}
	if got := perDay(nil); got == nil || len(got) != 0 {
		t.Errorf("perDay(nil) = %#v, want empty (JSON [])", got)
	}
}
