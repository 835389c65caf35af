package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/iceberg/spec"
)

func runJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), args, &out); err != nil {
		t.Fatalf("iceberg-read %s: %v", strings.Join(args, " "), err)
	}
	dec := json.NewDecoder(&out)
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("iceberg-read %s: output is not JSON: %v", strings.Join(args, " "), err)
	}
	return doc
}

// TestDVAndPuffinCommands writes a DV file with icectl and reads it through
// the command line, flags after the file as scripts pass them.
func TestDVAndPuffinCommands(t *testing.T) {
	path, b := writeDV(t)
	doc := runJSON(t, "dv", path, "--offset", strconv.FormatInt(b.Offset, 10), "--length", strconv.FormatInt(b.Length, 10))
	if doc["cardinality"].(json.Number).String() != "4" || doc["referenced_data_file"] != "file:/d/a.parquet" {
		t.Errorf("dv: %v", doc)
	}
	var got []string
	for _, p := range doc["positions"].([]any) {
		got = append(got, p.(json.Number).String())
	}
	if strings.Join(got, ",") != "1,5,4294967296,4294967303" {
		t.Errorf("dv positions %v", got)
	}
	// A wrong referenced data file is refused by iceberg-go's checks.
	var out bytes.Buffer
	err := run(context.Background(), []string{"dv", "--offset", strconv.FormatInt(b.Offset, 10), "--length",
		strconv.FormatInt(b.Length, 10), "--referenced-data-file", "file:/d/other.parquet", path}, &out)
	if err == nil {
		t.Error("dv with the wrong referenced data file succeeded")
	}

	doc = runJSON(t, "puffin", path)
	blobsDoc := doc["blobs"].([]any)
	if len(blobsDoc) != 1 || blobsDoc[0].(map[string]any)["type"] != "deletion-vector-v1" {
		t.Errorf("puffin: %v", doc)
	}
}

// writeDV writes a puffin file with icectl holding one DV of four
// positions for file:/d/a.parquet, and returns its path and the blob.
func writeDV(t *testing.T) (string, puffin.DVBlob) {
	t.Helper()
	bm := roaring64.New()
	bm.AddMany([]uint64{1, 5, 1 << 32, 1<<32 + 7})
	var buf bytes.Buffer
	blobs, _, err := puffin.WriteDVs(&buf, []puffin.DV{{ReferencedDataFile: "file:/d/a.parquet", Positions: bm}}, map[string]string{"created-by": "test"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dv.puffin")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, blobs[0]
}

// TestManifestCommands writes a v3 manifest and list with icectl and reads
// them through the command line, with and without inheritance.
func TestManifestCommands(t *testing.T) {
	dir := t.TempDir()
	schema := &spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}}}
	pspec := spec.PartitionSpec{ID: 0}
	var mbuf bytes.Buffer
	w, err := manifest.NewWriter(&mbuf, manifest.WriterOptions{Version: 3, Content: manifest.ManifestContentData, Schema: schema, Spec: pspec, SnapshotID: 9})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := w.Add(manifest.Entry{Status: manifest.StatusAdded, DataFile: manifest.DataFile{
			Content: manifest.ContentData, FilePath: "file:/d/" + strconv.Itoa(i) + ".parquet", FileFormat: "PARQUET",
			Partition: []any{}, RecordCount: 10, FileSizeInBytes: 100,
		}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(dir, "m0.avro")
	if err := os.WriteFile(mpath, mbuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var lbuf bytes.Buffer
	first := int64(100)
	lw, err := manifest.NewListWriter(&lbuf, 3, 9, nil, 4, &first)
	if err != nil {
		t.Fatal(err)
	}
	if err := lw.Add(w.ManifestFile("file:/t/metadata/m0.avro", int64(mbuf.Len()))); err != nil {
		t.Fatal(err)
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	lpath := filepath.Join(dir, "snap-9.avro")
	if err := os.WriteFile(lpath, lbuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	list := runJSON(t, "manifest-list", lpath)
	mf := list["manifests"].([]any)[0].(map[string]any)
	if mf["first_row_id"].(json.Number).String() != "100" || mf["sequence_number"].(json.Number).String() != "4" {
		t.Errorf("manifest-list entry: %v", mf)
	}
	if list["header"].(map[string]any)["first-row-id"] != "100" {
		t.Errorf("manifest-list header: %v", list["header"])
	}

	m := runJSON(t, "manifest", mpath, "--manifest-list", lpath)
	entries := m["entries"].([]any)
	if len(entries) != 2 {
		t.Fatalf("manifest: %d entries", len(entries))
	}
	for i, e := range entries {
		e := e.(map[string]any)
		stored := e["stored"].(map[string]any)
		inh := e["inherited"].(map[string]any)
		if stored["sequence_number"] != nil || stored["first_row_id"] != nil {
			t.Errorf("entry %d stored: %v, want null sequence number and first_row_id", i, stored)
		}
		wantRow := strconv.Itoa(100 + 10*i)
		if inh["sequence_number"].(json.Number).String() != "4" || inh["first_row_id"].(json.Number).String() != wantRow {
			t.Errorf("entry %d inherited: %v, want sequence 4, first_row_id %s", i, inh, wantRow)
		}
	}
	m = runJSON(t, "manifest", mpath)
	if _, ok := m["entries"].([]any)[0].(map[string]any)["inherited"]; ok {
		t.Error("manifest without --manifest-list reports inherited values")
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"nope"},
		{"manifest-list"},
		{"dv", "x.puffin"},
		{"scan", "--table", "a.b", "--catalog-name", "c"},
		{"scan", "--catalog-uri", "mysql://x", "--table", "a.b", "--catalog-name", "c"},
		{"puffin", filepath.Join(t.TempDir(), "missing.puffin")},
		{"write-fixture", "--table", "a.b", "--catalog-uri", "sqlite:x.db"},
		{"write-fixture", "--catalog-name", "c", "--table", "a.b"},
		{"write-fixture", "--catalog-name", "c", "--catalog-uri", "sqlite:x.db"},
		{"write-fixture", "--catalog-name", "c", "--table", "a.b", "--catalog-uri", "sqlite:x.db", "extra"},
	} {
		var out bytes.Buffer
		if err := run(context.Background(), args, &out); err == nil {
			t.Errorf("iceberg-read %q succeeded", args)
		}
	}
}

// TestWriteFixtureCommand writes a v3 fixture through the command line and
// scans it back with the scan subcommand.
func TestWriteFixtureCommand(t *testing.T) {
	dir := t.TempDir()
	uri := "sqlite:///" + filepath.Join(dir, "catalog.db")
	fx := runJSON(t, "write-fixture", "--catalog-uri", uri, "--warehouse", "file://"+dir, "--catalog-name", "c",
		"--table", "ns.t", "--format-version", "3", "--rows", "20", "--delete-every", "5", "--partitioned")
	if fx["row_count"].(json.Number).String() != "16" || fx["deleted_rows"].(json.Number).String() != "4" {
		t.Errorf("write-fixture: row_count %v, deleted_rows %v; want 16 and 4", fx["row_count"], fx["deleted_rows"])
	}
	if fx["format_version"].(json.Number).String() != "3" {
		t.Errorf("write-fixture: format_version %v", fx["format_version"])
	}
	sc := runJSON(t, "scan", "--catalog-uri", uri, "--catalog-name", "c", "--table", "ns.t")
	if sc["checksum"] != fx["checksum"] || sc["row_count"].(json.Number) != fx["row_count"].(json.Number) {
		t.Errorf("scan: %v rows %v; write-fixture reported %v rows %v", sc["row_count"], sc["checksum"], fx["row_count"], fx["checksum"])
	}
}
