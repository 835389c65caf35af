package datafile

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/iceberg/spec"
)

// TestRowGroupsCutBySize: with a small row-group-size-bytes a file gets
// several row groups of about that size, not one per batch.
func TestRowGroupsCutBySize(t *testing.T) {
	s := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "s", Type: spec.StringType{}},
		{ID: 3, Name: "d", Type: spec.DoubleType{}},
	}}
	const target = 256 * 1024
	var batches []arrow.RecordBatch
	for k := range 8 {
		batches = append(batches, genBatch(t, s, 50000, k))
	}
	defer release(batches)
	data, m := writeParquet(t, s, map[string]string{PropRowGroupSizeBytes: "262144", PropCompressionCodec: "snappy"}, batches...)
	info, err := InspectParquet(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	rgs := info.RowGroups
	if len(rgs) < 4 || len(rgs) == len(batches) && len(data) < 3*target {
		t.Fatalf("%d row groups for a %d-byte file", len(rgs), len(data))
	}
	var rows int64
	for i, rg := range rgs {
		rows += rg.NumRows
		t.Logf("row group %d: %d rows %d bytes", i, rg.NumRows, rg.CompressedSize)
		if i < len(rgs)-1 && (rg.CompressedSize < target/2 || rg.CompressedSize > target*2) {
			t.Errorf("row group %d: %d bytes, target %d", i, rg.CompressedSize, target)
		}
		if rg.Columns[0].Codec != "SNAPPY" {
			t.Errorf("row group %d codec %s", i, rg.Columns[0].Codec)
		}
	}
	if rows != 400000 || m.RecordCount != 400000 || info.NumRows != 400000 {
		t.Fatalf("rows %d, metrics %d, footer %d", rows, m.RecordCount, info.NumRows)
	}
}

func TestWriterProperties(t *testing.T) {
	s := &spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}}}}
	for codec, want := range map[string]string{"": "ZSTD", "gzip": "GZIP", "ZSTD": "ZSTD", "uncompressed": "UNCOMPRESSED", "none": "UNCOMPRESSED", "lz4": "LZ4_RAW", "brotli": "BROTLI"} {
		props := map[string]string{PropCompressionLevel: "3"}
		if codec != "" {
			props[PropCompressionCodec] = codec
		}
		if codec == "gzip" || codec == "brotli" {
			delete(props, PropCompressionLevel)
		}
		b := genBatch(t, s, 100, 0)
		data, _ := writeParquet(t, s, props, b)
		b.Release()
		info, err := InspectParquet(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if got := info.RowGroups[0].Columns[0].Codec; got != want {
			t.Errorf("codec %q: file uses %s, want %s", codec, got, want)
		}
	}
	for _, props := range []map[string]string{
		{PropCompressionCodec: "lzo2"},
		{PropCompressionLevel: "high"},
		{PropRowGroupSizeBytes: "-5"},
	} {
		if _, err := NewWriter(&bytes.Buffer{}, s, props); err == nil {
			t.Errorf("props %v accepted", props)
		}
	}
}

func TestWriterRejectsMismatchedBatch(t *testing.T) {
	s := &spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}}}
	w, err := NewWriter(&bytes.Buffer{}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	other := &spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "id", Type: spec.StringType{}}}}
	b := genBatch(t, other, 10, 0)
	defer b.Release()
	if err := w.Write(b); err == nil || !strings.Contains(err.Error(), "want int64") {
		t.Fatalf("want a type error, got %v", err)
	}
	nulls := genBatch(t, &spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}}}}, 10, 0)
	defer nulls.Release()
	if err := w.Write(nulls); err == nil || !strings.Contains(err.Error(), "required column id has") {
		t.Fatalf("want a required-column error, got %v", err)
	}
}

func TestInspectParquet(t *testing.T) {
	s := allTypesSchema()
	b := genBatch(t, s, 300, 1)
	defer b.Release()
	data, _ := writeParquet(t, s, nil, b)
	info, err := InspectParquet(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if info.NumRows != 300 || !strings.Contains(info.CreatedBy, "icectl") {
		t.Fatalf("num_rows %d created_by %q", info.NumRows, info.CreatedBy)
	}
	byName := map[string]ParquetNode{}
	for _, n := range info.Schema {
		byName[n.Name] = n
	}
	for _, f := range s.Fields {
		n, ok := byName[f.Name]
		if _, unknown := f.Type.(spec.UnknownType); unknown {
			if ok {
				t.Errorf("unknown column %s stored", f.Name)
			}
			continue
		}
		if !ok || n.FieldID == nil || int(*n.FieldID) != f.ID {
			t.Errorf("column %s: node %+v, want field id %d", f.Name, n, f.ID)
		}
	}
	if lt := byName["u"].LogicalType; !strings.Contains(strings.ToLower(lt), "uuid") {
		t.Errorf("uuid column logical type %q", lt)
	}
	if lt := byName["tstz"].LogicalType; !strings.Contains(lt, "isAdjustedToUTC=true") || !strings.Contains(lt, "micro") {
		t.Errorf("timestamptz logical type %q", lt)
	}
	if lt := byName["ts"].LogicalType; !strings.Contains(lt, "isAdjustedToUTC=false") {
		t.Errorf("timestamp logical type %q", lt)
	}
	if pt := byName["dec9"].PhysicalType; pt != "INT32" {
		t.Errorf("decimal(9,2) stored as %s, want INT32", pt)
	}
	col := info.RowGroups[0].Columns[0]
	if col.Path != "id" || col.Codec != "ZSTD" || col.Statistics == nil || col.Statistics.NullCount == nil || col.Statistics.Min == nil {
		t.Fatalf("id column chunk %+v", col)
	}
	found := false
	for _, kv := range info.KeyValueMetadata {
		found = found || kv.Key == "iceberg.schema"
	}
	if !found {
		t.Error("iceberg.schema key/value metadata missing")
	}
	_ = context.Background
}
