package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
)

// docYAML returns the yaml examples of a section of docs/configuration.md.
func docYAML(t *testing.T, heading string) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## "+heading+"\n")
	if !ok {
		t.Fatalf("docs/configuration.md has no section %q", heading)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var out []string
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		t.Fatalf("no yaml example in section %q", heading)
	}
	return out
}

// The documented GCS and Azure catalogs, as written, give the FileIO
// settings they promise.
func TestStoreDocExamples(t *testing.T) {
	gcs := docYAML(t, "Object storage: Google Cloud Storage (`gs://`)")[0]
	lake := resolve(t, Flags{Catalog: "lake"}, lookup(t, "", gcs))
	if c, err := fileio.ParseGCSConfig(lake.Props, func(string) string { return "" }); err != nil || c.ProjectID != "my-project" || c.NoAuth || !strings.HasPrefix(lake.Warehouse, "gs://") {
		t.Errorf("lake: %v, %v (warehouse %s)", c, err, lake.Warehouse)
	}
	emu := resolve(t, Flags{Catalog: "emulator"}, lookup(t, "", gcs))
	if c, err := fileio.ParseGCSConfig(emu.Props, func(string) string { return "" }); err != nil || c.Endpoint != "http://127.0.0.1:4443" || !c.NoAuth {
		t.Errorf("emulator: %v, %v", c, err)
	}
	if fio, err := fileio.Load(t.Context(), emu.Warehouse, emu.Props); err != nil {
		t.Errorf("emulator: %v", err)
	} else if _, ok := fio.(*fileio.GCS); !ok {
		t.Errorf("emulator: %T", fio)
	}

	azure := docYAML(t, "Object storage: Azure Blob Storage and ADLS Gen2 (`abfs://`, `wasb://`)")[0]
	for _, name := range []string{"lake", "pyiceberg-style", "azurite"} {
		c := resolve(t, Flags{Catalog: name}, lookup(t, "", azure))
		if !strings.HasPrefix(c.Warehouse, "abfs") {
			t.Errorf("%s: warehouse %s", name, c.Warehouse)
		}
		if _, err := fileio.ParseAzureConfig(c.Props, func(string) string { return "" }); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if fio, err := fileio.Load(t.Context(), c.Warehouse, c.Props); err != nil {
			t.Errorf("%s: %v", name, err)
		} else if _, ok := fio.(*fileio.Azure); !ok {
			t.Errorf("%s: %T", name, fio)
		}
	}
}
