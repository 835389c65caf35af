package spec

import (
	"bytes"
	"github.com/icectl/icectl/internal/testing/crafted"
	"os"
	"path/filepath"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// FuzzParseMetadata: no input may panic, and whatever parses must write
// and re-parse to an equal value, and write the same bytes again.
func FuzzParseMetadata(f *testing.F) {
	for _, dir := range []string{"metadata/valid", "metadata/invalid"} {
		files, _ := filepath.Glob(filepath.Join(testenv.ConformanceFile(f, dir), "*.json"))
		if len(files) == 0 {
			f.Fatalf("no seeds under %s", dir)
		}
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	local, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, p := range local {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m1 *TableMetadata
		var err error
		crafted.CheckAlloc(t, len(data), 1<<20, 256, func() { m1, err = ParseMetadata(data) })
		if err != nil {
			return
		}
		b1, err := m1.Marshal(false)
		if err != nil {
			t.Fatalf("parsed metadata does not write: %v", err)
		}
		m2, err := ParseMetadata(b1)
		if err != nil {
			t.Fatalf("written metadata does not parse: %v\n%s", err, b1)
		}
		if !equalValues(m1, m2) {
			t.Fatalf("re-parsed value differs\nwritten: %s", b1)
		}
		b2, err := m2.Marshal(false)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("second write differs:\n%s\n%s", b1, b2)
		}
	})
}
