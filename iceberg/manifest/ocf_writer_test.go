package manifest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/hamba/avro/v2/ocf"
)

// TestManifestManyBlocks writes a manifest of several container blocks
// (the deflate compressor is reused from block to block) and reads it
// back with this package's reader and with hamba's independent decoder:
// every entry, in order, with the header metadata Java's readers need.
func TestManifestManyBlocks(t *testing.T) {
	schema, ps := allTypesTable()
	base := sampleEntries(3, ManifestContentData)[0]
	// Entries here are over 100 bytes each, so this is at least three
	// blocks of javaSyncInterval bytes.
	const n = 3*javaSyncInterval/100 + 37
	es := make([]Entry, n)
	for i := range es {
		es[i] = base
		es[i].DataFile.FilePath = fmt.Sprintf("s3://b/t/data/f%05d.parquet", i)
		es[i].DataFile.RecordCount = int64(i + 1)
	}
	data, mf := writeManifest(t, WriterOptions{Version: 3, Content: ManifestContentData, Schema: schema, Spec: ps, SnapshotID: 42}, es)
	if *mf.AddedFilesCount != n {
		t.Fatalf("added files = %d, want %d", *mf.AddedFilesCount, n)
	}
	_, got := readEntries(t, bytes.NewReader(data), nil)
	if len(got) != n {
		t.Fatalf("read %d entries, want %d", len(got), n)
	}
	for i, e := range got {
		if e.DataFile.FilePath != es[i].DataFile.FilePath || e.DataFile.RecordCount != int64(i+1) {
			t.Fatalf("entry %d = %s with %d rows", i, e.DataFile.FilePath, e.DataFile.RecordCount)
		}
	}

	dec, err := ocf.NewDecoder(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("hamba decoder: %v", err)
	}
	meta := dec.Metadata()
	if string(meta["avro.codec"]) != "deflate" || string(meta["format-version"]) != "3" || string(meta["content"]) != "data" || len(meta["avro.schema"]) == 0 {
		t.Fatalf("header metadata: codec %q format-version %q content %q", meta["avro.codec"], meta["format-version"], meta["content"])
	}
	count := 0
	for dec.HasNext() {
		var rec map[string]any
		if err := dec.Decode(&rec); err != nil {
			t.Fatalf("hamba decode record %d: %v", count, err)
		}
		df := rec["data_file"].(map[string]any)
		if df["file_path"] != es[count].DataFile.FilePath {
			t.Fatalf("hamba record %d: file_path %v", count, df["file_path"])
		}
		count++
	}
	if err := dec.Error(); err != nil {
		t.Fatal(err)
	}
	if count != n {
		t.Fatalf("hamba read %d records, want %d", count, n)
	}
}
