package manifest

import (
	"bytes"
	"strings"
	"testing"
)

// A file_path that is relative and climbs with ".." is refused by every
// reader; absolute paths anywhere, and relative paths that do not climb,
// read as before.
func TestRelativeDotDotPathsRefused(t *testing.T) {
	schema, ps := allTypesTable()
	for _, c := range []struct {
		path string
		bad  bool
	}{
		{"../../etc/passwd", true},
		{"data/../../../etc/passwd", true},
		{`..\windows`, true},
		{"..", true},
		{"/etc/passwd", false},
		{"/warehouse/t/../other/f.parquet", false},
		{"s3://bucket/t/../other/f.parquet", false},
		{"file:///tmp/../f.parquet", false},
		{"data/f..parquet", false},
		{"data/f.parquet", false},
	} {
		es := sampleEntries(2, ManifestContentData)
		es[1].DataFile.FilePath = c.path
		d, _ := writeManifest(t, WriterOptions{Version: 2, Schema: schema, Spec: ps, SnapshotID: 7}, es)
		errs := map[string]error{"reader": drainManifest(d), "scanner": drainScan(d)}
		for name, err := range errs {
			if c.bad && (err == nil || !strings.Contains(err.Error(), "relative path with \"..\"")) {
				t.Errorf("%s, %q: %v, want a refusal", name, c.path, err)
			}
			if !c.bad && err != nil {
				t.Errorf("%s, %q: %v", name, c.path, err)
			}
		}
	}
	var buf bytes.Buffer
	lw, err := NewListWriter(&buf, 2, 1, nil, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	zero, zeroRows := int32(0), int64(0)
	mf := ManifestFile{Path: "../../m.avro", Length: 10, SequenceNumber: 1, MinSequenceNumber: 1, AddedSnapshotID: 1,
		AddedFilesCount: &zero, ExistingFilesCount: &zero, DeletedFilesCount: &zero,
		AddedRowsCount: &zeroRows, ExistingRowsCount: &zeroRows, DeletedRowsCount: &zeroRows}
	if err := lw.Add(mf); err != nil {
		t.Fatal(err)
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := drainList(buf.Bytes()); err == nil || !strings.Contains(err.Error(), "manifest_path") {
		t.Errorf("manifest list naming ../../m.avro: %v", err)
	}
}
