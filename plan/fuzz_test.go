package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParsePlan checks that any input either fails cleanly or parses to a
// plan that writes back and parses to the same bytes.
func FuzzParsePlan(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.golden"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if i := bytes.Index(b, []byte("\n\nCompaction plan")); i > 0 {
			b = b[:i]
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePlan(data)
		if err != nil {
			return
		}
		out, err := p.MarshalJSON()
		if err != nil {
			return // e.g. a NaN in an option cannot be written
		}
		q, err := ParsePlan(out)
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, out)
		}
		again, err := q.MarshalJSON()
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("not stable: %v\n%s\n%s", err, out, again)
		}
		var buf bytes.Buffer
		_ = p.WriteText(&buf)
	})
}
