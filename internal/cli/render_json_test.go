package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The streamed documents print exactly as writeJSON prints the same value,
// however the stream is cut into writes.
func TestJSONIndenterMatchesWriteJSON(t *testing.T) {
	docs := []string{
		`{"a":1,"b":[],"c":{},"d":[1,2,{"e":"x, y: {z}"}],"f":"q\"uo\\te\\","g":null,"h":[[]],"i":{"j":{}}}`,
		`[]`,
		`{}`,
		`{"s": "a\u00e9 \n b", "n": -1.5e3, "t": true}`,
		"{\n\"orphans\": [\n  {\"path\":\"p\"},\n  {\"path\":\"q\"}\n],\n\"summary\": {\"n\":2}\n}\n",
	}
	for _, doc := range docs {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(strings.TrimSpace(compactJSON(t, doc))), "", "  "); err != nil {
			t.Fatal(err)
		}
		want.WriteString("\n")
		for _, size := range []int{1, 2, 3, 7, len(doc)} {
			var got bytes.Buffer
			ind := newJSONIndenter(&got)
			for s := doc; len(s) > 0; {
				n := min(size, len(s))
				if _, err := ind.Write([]byte(s[:n])); err != nil {
					t.Fatal(err)
				}
				s = s[n:]
			}
			if got.String() != want.String() {
				t.Errorf("writes of %d bytes of %s:\ngot  %q\nwant %q", size, doc, got.String(), want.String())
			}
		}
	}
	// And writeJSON gives that same layout.
	var got bytes.Buffer
	if err := writeJSON(&got, map[string]any{"a": []int{}, "b": map[string]int{"c": 1}}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"a\": [],\n  \"b\": {\n    \"c\": 1\n  }\n}\n"; got.String() != want {
		t.Errorf("writeJSON: %q, want %q", got.String(), want)
	}
}

func compactJSON(t *testing.T, doc string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(doc)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkIndented fails unless out is one JSON document laid out as
// writeJSON lays it out.
func checkIndented(t *testing.T, name, out string) {
	t.Helper()
	var want bytes.Buffer
	if err := json.Indent(&want, []byte(compactJSON(t, out)), "", "  "); err != nil {
		t.Fatal(err)
	}
	want.WriteString("\n")
	if out != want.String() {
		t.Errorf("%s: the JSON is not indented by two spaces with a trailing newline:\n%.600s", name, out)
	}
}
