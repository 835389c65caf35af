package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	icetable "github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/cli/config"
)

// healthInput is a hand-built v3 table partitioned by day: small files in
// one day, deletes of every kind, old snapshots, many small manifests and
// a full metadata log.
func healthInput() health.Input {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
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
		Properties:    map[string]string{"write.target-file-size-bytes": "134217728"},
	}
	for i, age := range []time.Duration{30 * 24 * time.Hour, 8 * 24 * time.Hour, 2 * time.Hour} {
		md.Snapshots = append(md.Snapshots, spec.Snapshot{SnapshotID: int64(100 + i), SequenceNumber: int64(i + 1), TimestampMS: now.Add(-age).UnixMilli()})
	}
	cur := int64(102)
	md.CurrentSnapshotID = &cur
	for range 100 {
		md.MetadataLog = append(md.MetadataLog, spec.MetadataLogEntry{})
	}
	entry := func(df manifest.DataFile) icetable.FileEntry {
		return icetable.FileEntry{Entry: manifest.Entry{DataFile: df}}
	}
	data := func(specID int32, size, records int64, part ...any) icetable.FileEntry {
		return entry(manifest.DataFile{Content: manifest.ContentData, SpecID: specID, Partition: part, FileSizeInBytes: size, RecordCount: records})
	}
	fs := &icetable.FileSet{}
	for i := range 6 {
		fs.Data = append(fs.Data, data(1, int64(i+1)<<20, 1000, int32(20000)))
	}
	fs.Data = append(fs.Data, data(1, 200<<20, 50000, int32(20001)), data(0, 700<<20, 90000))
	off, size, ref := int64(4), int64(64), "d1.parquet"
	fs.Deletes = []icetable.FileEntry{
		entry(manifest.DataFile{Content: manifest.ContentPositionDeletes, SpecID: 1, Partition: []any{int32(20000)}, RecordCount: 2500, FileSizeInBytes: 4096}),
		entry(manifest.DataFile{Content: manifest.ContentPositionDeletes, SpecID: 1, Partition: []any{int32(20001)}, RecordCount: 100, FileSizeInBytes: 9000,
			ContentOffset: &off, ContentSizeInBytes: &size, ReferencedDataFile: &ref}),
		entry(manifest.DataFile{Content: manifest.ContentEqualityDeletes, SpecID: 0, RecordCount: 12, FileSizeInBytes: 2048, EqualityIDs: []int{1}}),
	}
	var mfs []manifest.ManifestFile
	for i := range 11 {
		mfs = append(mfs, manifest.ManifestFile{Length: int64(i+1) * 4096, Content: manifest.ManifestContent(i % 2)})
	}
	th, err := health.ThresholdsFor(md)
	if err != nil {
		panic(err)
	}
	res := []health.ResurrectedFile{{DataFile: "s3://wh/shop/orders/data/a.parquet", DV: "s3://wh/shop/orders/data/dv.puffin@4",
		Rows: 6, FirstPositions: []int64{1, 3, 5, 7, 9}, FirstRows: []string{"id=1", "id=3", "id=5", "id=7", "id=9"},
		DeleteFiles: []string{"s3://wh/shop/orders/data/pos.parquet"}}}
	return health.Input{Table: "shop.orders", Metadata: md, Files: fs, Manifests: mfs, Now: now, Thresholds: th, Resurrected: res}
}

func TestHealthOutputGolden(t *testing.T) {
	r := health.Analyze(healthInput())
	var text, js bytes.Buffer
	if err := writeHealthText(&text, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "health.txt", text.String())
	if err := writeJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "health.json", js.String())
	// Deterministic: the same input renders the same bytes.
	var again bytes.Buffer
	if err := writeJSON(&again, health.Analyze(healthInput())); err != nil {
		t.Fatal(err)
	}
	if again.String() != js.String() {
		t.Error("health JSON differs between runs")
	}
}

// TestHealthV2AndSortFindings: a v2 table with a sort order, many small
// position-delete files and data files written unsorted gets both
// findings, in text and JSON, each recommending this build's command with
// the catalog flags; the same table without either debt gets neither.
func TestHealthV2AndSortFindings(t *testing.T) {
	in := healthInput()
	md := *in.Metadata
	md.FormatVersion = 2
	md.SortOrders = []spec.SortOrder{{OrderID: 0}, {OrderID: 1, Fields: []spec.SortField{{SourceID: 1, Transform: spec.ParseTransform("identity"), Direction: "asc", NullOrder: "nulls-first"}}}}
	md.DefaultSortOrderID = 1
	in.Metadata, in.Resurrected = &md, nil
	fs := &icetable.FileSet{Data: in.Files.Data}
	for range 5 {
		fs.Deletes = append(fs.Deletes, icetable.FileEntry{Entry: manifest.Entry{DataFile: manifest.DataFile{Content: manifest.ContentPositionDeletes,
			SpecID: 1, Partition: []any{int32(20000)}, RecordCount: 1, FileSizeInBytes: 2000}}})
	}
	in.Files = fs
	f := &Factory{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Getenv: func(string) string { return "" }, Output: outputText}
	root := NewCmdRoot(f)
	flags := config.Flags{URI: "sqlite:////lake/catalog.db"}
	r := health.Analyze(in)
	renderRecommendations(&r, root, flags, false)
	var text, js bytes.Buffer
	if err := writeHealthText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"unsorted files", "8 (not written in sort order 1)",
		"small position deletes  5  below 64.0 MiB",
		"small-position-deletes: 5 position delete files smaller than 64.0 MiB",
		"recommended: icectl rewrite-position-deletes shop.orders --catalog-uri sqlite:////lake/catalog.db",
		"unsorted-files: 6 data files not written in the table's sort order 1 in 1 partition with 5 or more",
		"recommended: icectl compact shop.orders --sort --rewrite-all --catalog-uri sqlite:////lake/catalog.db",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	for _, want := range []string{`"kind": "small-position-deletes"`, `"kind": "unsorted-files"`, `"unsorted_data_files": 8`,
		`"small_position_delete_files": 5`, `"recommendation": "icectl compact shop.orders --sort --rewrite-all --catalog-uri sqlite:////lake/catalog.db"`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %q:\n%s", want, js.String())
		}
	}

	// Without the debt: the data written in the sort order, four small
	// delete files.
	for i := range fs.Data {
		one := int32(1)
		fs.Data[i].Entry.DataFile.SortOrderID = &one
	}
	fs.Deletes = fs.Deletes[:4]
	r = health.Analyze(in)
	for _, fd := range r.Findings {
		if fd.Kind == "unsorted-files" || fd.Kind == "small-position-deletes" {
			t.Errorf("finding %s without the debt: %s", fd.Kind, fd.Message)
		}
	}
}
