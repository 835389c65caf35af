package plan

import (
	"fmt"
	"time"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
)

var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testMetadata is a v3 table: id long, cat string, ts timestamptz; spec 0
// partitions by cat, spec 1 by cat and day(ts), spec 2 is unpartitioned.
func testMetadata() *spec.TableMetadata {
	snap := int64(99)
	return &spec.TableMetadata{
		FormatVersion: 3,
		TableUUID:     "9c12d441-03fe-4693-9a96-a0705ddf69c1",
		Location:      "s3://bucket/db/t",
		Schemas: []spec.Schema{{ID: 0, Fields: []spec.NestedField{
			{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
			{ID: 2, Name: "cat", Type: spec.StringType{}},
			{ID: 3, Name: "ts", Type: spec.TimestampTzType{}},
		}}},
		PartitionSpecs: []spec.PartitionSpec{
			{ID: 0, Fields: []spec.PartitionField{{SourceID: 2, FieldID: 1000, Name: "cat", Transform: spec.Transform{Kind: spec.TransformIdentity}}}},
			{ID: 1, Fields: []spec.PartitionField{
				{SourceID: 2, FieldID: 1000, Name: "cat", Transform: spec.Transform{Kind: spec.TransformIdentity}},
				{SourceID: 3, FieldID: 1001, Name: "ts_day", Transform: spec.Transform{Kind: spec.TransformDay}},
			}},
			{ID: 2},
		},
		DefaultSpecID:     1,
		Properties:        map[string]string{},
		CurrentSnapshotID: &snap,
		Snapshots:         []spec.Snapshot{{SnapshotID: snap, SequenceNumber: 10, TimestampMS: 1767225600000}},
	}
}

func i64(v int64) *int64   { return &v }
func str(s string) *string { return &s }

func entry(content manifest.FileContent, path string, specID int32, part []any, size, records, seq int64) table.FileEntry {
	mc := manifest.ManifestContentData
	if content != manifest.ContentData {
		mc = manifest.ManifestContentDeletes
	}
	return table.FileEntry{
		Manifest: manifest.ManifestFile{Path: "m.avro", SpecID: specID, Content: mc},
		Entry: manifest.Entry{
			Status:             manifest.StatusExisting,
			SequenceNumber:     i64(seq),
			FileSequenceNumber: i64(seq),
			DataFile: manifest.DataFile{
				Content: content, FilePath: path, FileFormat: "PARQUET", SpecID: specID,
				Partition: part, FileSizeInBytes: size, RecordCount: records,
			},
		},
	}
}

func dataFile(path string, specID int32, part []any, size, records, seq int64) table.FileEntry {
	return entry(manifest.ContentData, path, specID, part, size, records, seq)
}

func posDelete(path string, specID int32, part []any, records, seq int64, ref string) table.FileEntry {
	e := entry(manifest.ContentPositionDeletes, path, specID, part, 1*kib, records, seq)
	if ref != "" {
		e.Entry.DataFile.ReferencedDataFile = str(ref)
	}
	return e
}

func dv(puffin string, offset int64, specID int32, part []any, records, seq int64, ref string) table.FileEntry {
	e := entry(manifest.ContentPositionDeletes, puffin, specID, part, 4*kib, records, seq)
	e.Entry.DataFile.FileFormat = "PUFFIN"
	e.Entry.DataFile.ReferencedDataFile = str(ref)
	e.Entry.DataFile.ContentOffset = i64(offset)
	e.Entry.DataFile.ContentSizeInBytes = i64(40)
	return e
}

func eqDelete(path string, specID int32, part []any, records, seq int64) table.FileEntry {
	e := entry(manifest.ContentEqualityDeletes, path, specID, part, 1*kib, records, seq)
	e.Entry.DataFile.EqualityIDs = []int{1}
	return e
}

func testInput(data, deletes []table.FileEntry) *Input {
	md := testMetadata()
	return &Input{Metadata: md, MetadataLocation: "s3://bucket/db/t/metadata/00003.metadata.json",
		BaseSnapshot: md.CurrentSnapshot(), Data: data, Deletes: deletes}
}

func resolve(o Options) Resolved {
	r, err := o.Resolve(testMetadata())
	if err != nil {
		panic(err)
	}
	return r
}

// smallOptions: target 100 MiB, so min 75 MiB, max 180 MiB.
func smallOptions() Options { return Options{TargetFileSize: 100 * mib} }

func inputPaths(g Group) []string {
	out := make([]string, len(g.Inputs))
	for i, f := range g.Inputs {
		out[i] = f.Path
	}
	return out
}

func path(i int) string { return fmt.Sprintf("s3://bucket/db/t/data/f%05d.parquet", i) }
