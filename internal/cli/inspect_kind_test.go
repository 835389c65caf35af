package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/testing/deletefiles"
)

// writeParquetFile writes a real Parquet file (position deletes, written
// by the same code as compaction's).
func writeParquetFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "deletes.parquet")
	_, err := deletefiles.WritePositionDeletes(context.Background(), fileio.NewLocal(), "file://"+path, nil,
		map[string][]int64{"file:///data/a.parquet": {1, 2}}, true)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestInspectWrongKind runs every inspect subcommand on a file of every
// other kind: each names the file's kind and the command that reads it,
// exits 2 and prints nothing on stdout (no raw bytes).
func TestInspectWrongKind(t *testing.T) {
	files := map[string]string{
		"parquet":  writeParquetFile(t),
		"manifest": vector(t, "avro/manifest-list-v2-1.avro"),
		"puffin":   vector(t, "puffin/single-blob-dv.puffin"),
		"metadata": vector(t, "metadata/valid/TableMetadataV1Valid.json"),
	}
	describe := map[string]string{
		"parquet": "is a Parquet data file", "manifest": "is an Avro manifest file", "puffin": "is a Puffin file", "metadata": "is a table metadata file (JSON)",
	}
	for cmd := range files {
		for kind, path := range files {
			if kind == cmd {
				continue
			}
			r := runCLI(t, nil, "inspect", cmd, path)
			want := path + " " + describe[kind] + "; use `icectl inspect " + kind + " " + path + "`"
			if r.code != ExitUsage || !strings.Contains(r.stderr, want) || r.stdout != "" {
				t.Errorf("inspect %s on a %s file: exit %d, stdout %q, stderr %q; want exit 2 and %q", cmd, kind, r.code, r.stdout, r.stderr, want)
			}
		}
		// And the right kind still works.
		runCLI(t, nil, "inspect", cmd, files[cmd]).mustSucceed(t)
	}
	// dv: a bare blob is read whole, a Puffin file's deletion vectors all
	// (TestInspectDVFromFilesDeletes); other kinds are named.
	for kind, path := range files {
		if kind == "puffin" {
			continue
		}
		r := runCLI(t, nil, "inspect", "dv", path)
		want := "use `icectl inspect " + kind + " " + path + "`"
		if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("inspect dv on a %s file: exit %d, %q; want %q", kind, r.code, r.stderr, want)
		}
	}
	r := runCLI(t, nil, "inspect", "dv", files["parquet"], "--offset", "4", "--length", "8")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "is a Parquet data file") {
		t.Errorf("inspect dv --offset on a Parquet file: exit %d, %q", r.code, r.stderr)
	}
	// Leading white space before a JSON object still reads as JSON.
	data, err := os.ReadFile(files["metadata"])
	if err != nil {
		t.Fatal(err)
	}
	ws := writeTemp(t, "ws.metadata.json", append([]byte("\n  "), data...))
	if r := runCLI(t, nil, "inspect", "parquet", ws); r.code != ExitUsage || !strings.Contains(r.stderr, "is a table metadata file") {
		t.Errorf("inspect parquet on indented JSON: exit %d, %q", r.code, r.stderr)
	}
}
