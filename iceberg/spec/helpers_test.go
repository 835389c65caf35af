package spec

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

func readConformance(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(testenv.ConformanceFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func conformanceFiles(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.ConformanceFile(t, dir), "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no conformance files under %s", dir)
	}
	return files
}

func mustParse(t testing.TB, data []byte) *TableMetadata {
	t.Helper()
	m, err := ParseMetadata(data)
	if err != nil {
		t.Fatalf("ParseMetadata: %v", err)
	}
	return m
}

// decodeJSON decodes with json.Number so 64-bit ids compare exactly.
func decodeJSON(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode JSON: %v\n%s", err, b)
	}
	return v
}

// normalizeMetadataJSON maps a decoded metadata document to the form in
// which two documents that every Iceberg reader reads the same way are
// equal: a key whose value is null, [] or {} is the same as an absent key;
// current-snapshot-id -1 means none; and "refs" holding only the main
// branch at the current snapshot is what an absent "refs" implies.
func normalizeMetadataJSON(v any) any {
	top, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := dropEmpty(top).(map[string]any)
	if n, ok := out["current-snapshot-id"].(json.Number); ok && n.String() == "-1" {
		delete(out, "current-snapshot-id")
	}
	if refs, ok := out["refs"].(map[string]any); ok && len(refs) == 1 {
		main, _ := refs["main"].(map[string]any)
		implied := map[string]any{"snapshot-id": out["current-snapshot-id"], "type": "branch"}
		if out["current-snapshot-id"] != nil && reflect.DeepEqual(main, implied) {
			delete(out, "refs")
		}
	}
	return out
}

func dropEmpty(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			e = dropEmpty(e)
			switch ee := e.(type) {
			case nil:
				continue
			case []any:
				if len(ee) == 0 {
					continue
				}
			case map[string]any:
				if len(ee) == 0 {
					continue
				}
			}
			out[k] = e
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = dropEmpty(e)
		}
		return out
	}
	return v
}

// equalValues is reflect.DeepEqual except that a nil and an empty slice or
// map are equal, and json.RawMessage values compare as compacted JSON.
func equalValues(a, b any) bool {
	return equalReflect(reflect.ValueOf(a), reflect.ValueOf(b))
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

func equalReflect(a, b reflect.Value) bool {
	if !a.IsValid() || !b.IsValid() {
		return a.IsValid() == b.IsValid()
	}
	if a.Type() != b.Type() {
		return false
	}
	if a.Type() == rawMessageType {
		var ca, cb bytes.Buffer
		if json.Compact(&ca, a.Bytes()) != nil || json.Compact(&cb, b.Bytes()) != nil {
			return bytes.Equal(a.Bytes(), b.Bytes())
		}
		return bytes.Equal(ca.Bytes(), cb.Bytes())
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalReflect(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			if !equalReflect(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() || !equalReflect(a.MapIndex(k), bv) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !equalReflect(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := 0; i < a.Len(); i++ {
			if !equalReflect(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	}
	// Unexported fields cannot be Interface()d; compare by kind.
	switch a.Kind() {
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.String:
		return a.String() == b.String()
	}
	return false
}

func ptr[T any](v T) *T { return &v }
