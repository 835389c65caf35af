package manifest

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
)

// benchManifest is 10,000 ADDED data files partitioned by day(ts) and
// bucket(id), with sizes, counts, null counts and bounds for 5 columns.
func benchManifest(b *testing.B) []byte {
	schema := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "ts", Type: spec.TimestampTzType{}},
		{ID: 3, Name: "name", Type: spec.StringType{}},
		{ID: 4, Name: "amount", Type: spec.DecimalType{Precision: 12, Scale: 2}},
		{ID: 5, Name: "score", Type: spec.DoubleType{}},
	}}
	ps := spec.PartitionSpec{ID: 1, Fields: []spec.PartitionField{
		{SourceID: 2, FieldID: 1000, Name: "ts_day", Transform: spec.Transform{Kind: spec.TransformDay}},
		{SourceID: 1, FieldID: 1001, Name: "id_bucket", Transform: spec.Transform{Kind: spec.TransformBucket, Param: 16}},
	}}
	var es []Entry
	for i := 0; i < 10000; i++ {
		m := map[int]int64{}
		lb, ub := map[int][]byte{}, map[int][]byte{}
		for c := 1; c <= 5; c++ {
			m[c] = int64(1000 * c)
			lb[c] = []byte{1, 2, 3, 4, 5, 6, 7, 8}
			ub[c] = []byte{9, 10, 11, 12, 13, 14, 15, 16}
		}
		es = append(es, Entry{Status: StatusAdded, DataFile: DataFile{
			FilePath:   "s3://warehouse/db/events/data/ts_day=2026-01-01/id_bucket=3/00000-0-5f1c0d8e-8a7b-4f5e-9c3d-0123456789ab-00001.parquet",
			FileFormat: "PARQUET", Partition: []any{int32(20000 + i%365), int32(i % 16)},
			RecordCount: 100000, FileSizeInBytes: 128 << 20,
			ColumnSizes: m, ValueCounts: m, NullValueCounts: m, LowerBounds: lb, UpperBounds: ub,
			SplitOffsets: []int64{4}, SortOrderID: ptr(int32(0)),
		}})
	}
	data, _ := writeManifest(b, WriterOptions{Version: 2, Schema: schema, Spec: ps, SnapshotID: 1}, es)
	return data
}

// BenchmarkReadManifest reads the manifest in full and projected
// (WithoutMetrics), as planning reads it.
func BenchmarkReadManifest(b *testing.B) {
	data := benchManifest(b)
	for _, bc := range []struct {
		name string
		opts []ReadOption
	}{
		{"full", nil},
		{"without-metrics", []ReadOption{WithoutMetrics()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n += benchRead(b, data, ManifestFile{SequenceNumber: 3, AddedSnapshotID: 1}, bc.opts)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

// BenchmarkOpenManifest opens and reads a one-entry manifest, the shape of
// a table that took one manifest per append: there, opening (the header,
// its schemas, the reader's buffers) is most of what a read costs. With a
// shared SchemaCache, as every walk and commit has one, each distinct
// header is compiled once.
func BenchmarkOpenManifest(b *testing.B) {
	schema := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "ts", Type: spec.TimestampTzType{}},
		{ID: 3, Name: "name", Type: spec.StringType{}},
	}}
	ps := spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{
		{SourceID: 2, FieldID: 1000, Name: "ts_day", Transform: spec.Transform{Kind: spec.TransformDay}},
	}}
	data, mf := writeManifest(b, WriterOptions{Version: 2, Schema: schema, Spec: ps, SnapshotID: 1}, []Entry{{
		Status: StatusAdded, DataFile: DataFile{
			FilePath: "s3://warehouse/db/events/data/ts_day=2026-01-01/00000-0-5f1c0d8e.parquet", FileFormat: "PARQUET",
			Partition: []any{int32(20000)}, RecordCount: 1000, FileSizeInBytes: 1 << 20,
			ColumnSizes: map[int]int64{1: 10, 2: 20, 3: 30}, LowerBounds: map[int][]byte{1: {1}}, UpperBounds: map[int][]byte{1: {9}},
		}}})
	for _, bc := range []struct {
		name  string
		cache *SchemaCache
		opts  []ReadOption
	}{
		{"no-cache", nil, nil},
		{"cache", NewSchemaCache(), nil},
		{"cache-without-metrics", NewSchemaCache(), []ReadOption{WithoutMetrics()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			opts := append([]ReadOption{WithSchemaCache(bc.cache)}, bc.opts...)
			for b.Loop() {
				benchRead(b, data, mf, opts)
			}
		})
	}
}

// benchRead reads every entry of the manifest data, listed as mf, and
// returns how many there were.
func benchRead(b *testing.B, data []byte, mf ManifestFile, opts []ReadOption) int {
	mr, err := OpenManifest(bytes.NewReader(data), opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer mr.Close()
	mr.InheritFrom(mf)
	for n := 0; ; n++ {
		_, err := mr.Next()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
