package manifest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/icectl/icectl/internal/testing/testenv"
)

type pyDump struct {
	Schema  map[string]any    `json:"schema"`
	Meta    map[string]string `json:"meta"`
	Records []map[string]any  `json:"records"`
}

// pythonDump reads files with python3-avro, an independent implementation.
func pythonDump(t *testing.T, files ...string) []pyDump {
	t.Helper()
	py := testenv.Need(t, testenv.PythonAvro, "python3 with avro")
	cmd := exec.Command(py, append([]string{"testdata/avro_dump.py"}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3-avro: %v\n%s", err, stderr.String())
	}
	var d []pyDump
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sameRecords compares by field id; a field only one side has must be null.
func sameRecords(t *testing.T, what string, got, want map[string]any) {
	t.Helper()
	for k, wv := range want {
		if gv, ok := got[k]; !ok && wv != nil || ok && !reflect.DeepEqual(gv, wv) {
			t.Errorf("%s field %s = %v, want %v", what, k, gv, wv)
		}
	}
	for k, gv := range got {
		if _, ok := want[k]; !ok && gv != nil {
			t.Errorf("%s field %s = %v, absent in the original", what, k, gv)
		}
	}
}

func TestRewriteJavaManifestsCheckedByPythonAvro(t *testing.T) {
	for _, name := range []string{
		"179b4fb1-0366-4f7d-ad35-99ee8da0abf5-m0.avro",
		"179b4fb1-0366-4f7d-ad35-99ee8da0abf5-m1.avro",
		"787a5996-87e9-4d93-b258-066d524e82cc-m0.avro",
	} {
		orig := testenv.ConformanceFile(t, "avro/"+name)
		meta, es := readEntries(t, openConformance(t, name), nil)
		var buf bytes.Buffer
		w, err := NewWriter(&buf, WriterOptions{Version: 2, Content: meta.Content, Schema: meta.Schema, Spec: meta.Spec})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if err := w.Add(e); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		d := pythonDump(t, orig, writeTemp(t, name, buf.Bytes()))
		if len(d[0].Records) != len(d[1].Records) {
			t.Fatalf("%s: %d records, original has %d", name, len(d[1].Records), len(d[0].Records))
		}
		for i := range d[0].Records {
			o, g := d[0].Records[i], d[1].Records[i]
			sameRecords(t, name+" data_file", g["2"].(map[string]any), o["2"].(map[string]any))
			delete(o, "2")
			delete(g, "2")
			sameRecords(t, name+" entry", g, o)
		}
		for _, k := range []string{"schema", "partition-spec", "partition-spec-id", "format-version", "content"} {
			if d[1].Meta[k] == "" {
				t.Errorf("%s: metadata key %s missing", name, k)
			}
		}
		for _, k := range []string{"partition-spec", "partition-spec-id", "format-version", "content"} {
			if d[1].Meta[k] != d[0].Meta[k] {
				t.Errorf("%s: metadata %s = %q, Java wrote %q", name, k, d[1].Meta[k], d[0].Meta[k])
			}
		}
	}
}

func TestRewriteJavaManifestListsCheckedByPythonAvro(t *testing.T) {
	for _, name := range []string{
		"manifest-list-v2-1.avro",
		"snap-2354745328521181395-1-179b4fb1-0366-4f7d-ad35-99ee8da0abf5.avro",
		"snap-7817332053627255703-1-787a5996-87e9-4d93-b258-066d524e82cc.avro",
	} {
		h, mfs := readList(t, openConformance(t, name))
		var buf bytes.Buffer
		lw, err := NewListWriter(&buf, 2, *h.SnapshotID, h.ParentSnapshotID, *h.SequenceNumber, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if err := lw.Add(mf); err != nil {
				t.Fatal(err)
			}
		}
		if err := lw.Close(); err != nil {
			t.Fatal(err)
		}
		d := pythonDump(t, testenv.ConformanceFile(t, "avro/"+name), writeTemp(t, name, buf.Bytes()))
		if len(d[0].Records) != len(d[1].Records) {
			t.Fatalf("%s: %d records, original has %d", name, len(d[1].Records), len(d[0].Records))
		}
		for i := range d[0].Records {
			sameRecords(t, name, d[1].Records[i], d[0].Records[i])
		}
		for _, k := range []string{"snapshot-id", "parent-snapshot-id", "sequence-number", "format-version"} {
			if d[1].Meta[k] != d[0].Meta[k] {
				t.Errorf("%s: metadata %s = %q, Java wrote %q", name, k, d[1].Meta[k], d[0].Meta[k])
			}
		}
	}
}

type avroField struct {
	Name    string
	FieldID float64
	Type    any
}

func fieldsOf(t *testing.T, rec map[string]any) []avroField {
	t.Helper()
	var out []avroField
	for _, f := range rec["fields"].([]any) {
		m := f.(map[string]any)
		id, _ := m["field-id"].(float64)
		out = append(out, avroField{Name: m["name"].(string), FieldID: id, Type: m["type"]})
	}
	return out
}

func nonNull(t any) any {
	if u, ok := t.([]any); ok && len(u) == 2 && u[0] == "null" {
		return u[1]
	}
	return t
}

func TestWrittenSchemaMatchesJavaCheckedByPythonAvro(t *testing.T) {
	schema, ps := allTypesTable()
	for _, version := range []int{2, 3} {
		data, _ := writeManifest(t, WriterOptions{Version: version, Schema: schema, Spec: ps, SnapshotID: 1}, sampleEntries(version, ManifestContentData))
		var lb bytes.Buffer
		lw, err := NewListWriter(&lb, version, 1, nil, 1, ptr(int64(0)))
		if err != nil {
			t.Fatal(err)
		}
		lw.Close()
		d := pythonDump(t, writeTemp(t, "m.avro", data), writeTemp(t, "l.avro", lb.Bytes()))
		root := d[0].Schema
		if root["name"] != "manifest_entry" {
			t.Errorf("root record %v, want manifest_entry", root["name"])
		}
		ids := func(fs []avroField) (out []float64) {
			for _, f := range fs {
				out = append(out, f.FieldID)
			}
			return out
		}
		ef := fieldsOf(t, root)
		if got := ids(ef); !reflect.DeepEqual(got, []float64{0, 1, 3, 4, 2}) {
			t.Errorf("entry field ids %v", got)
		}
		df := ef[4].Type.(map[string]any)
		wantDF := []float64{134, 100, 101, 102, 103, 104, 108, 109, 110, 137, 125, 128, 131, 132, 135, 140, 143}
		if version == 3 {
			wantDF = []float64{134, 100, 101, 102, 103, 104, 108, 109, 110, 137, 125, 128, 131, 132, 135, 140, 142, 143, 144, 145}
		}
		dff := fieldsOf(t, df)
		if df["name"] != "r2" || !reflect.DeepEqual(ids(dff), wantDF) {
			t.Errorf("v%d data_file %v ids %v, want r2 %v", version, df["name"], ids(dff), wantDF)
		}
		part := dff[3].Type.(map[string]any)
		if part["name"] != "r102" || len(fieldsOf(t, part)) != len(ps.Fields) {
			t.Errorf("partition record %v", part["name"])
		}
		for i, f := range fieldsOf(t, part) {
			if int(f.FieldID) != ps.Fields[i].FieldID {
				t.Errorf("partition field %d id %v, want %d", i, f.FieldID, ps.Fields[i].FieldID)
			}
		}
		cs := nonNull(dff[6].Type).(map[string]any)
		if cs["logicalType"] != "map" || cs["items"].(map[string]any)["name"] != "k117_v118" {
			t.Errorf("column_sizes = %v", cs)
		}
		so := nonNull(dff[13].Type).(map[string]any)
		if so["element-id"] != float64(133) {
			t.Errorf("split_offsets = %v", so)
		}
		for k, v := range map[string]string{"partition-spec-id": "7", "format-version": string(rune('0' + version)), "content": "data"} {
			if d[0].Meta[k] != v {
				t.Errorf("manifest metadata %s = %q, want %q", k, d[0].Meta[k], v)
			}
		}
		lroot := d[1].Schema
		wantL := []float64{500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514, 507, 519}
		if version == 3 {
			wantL = append(wantL, 520)
		}
		lf := fieldsOf(t, lroot)
		if lroot["name"] != "manifest_file" || !reflect.DeepEqual(ids(lf), wantL) {
			t.Errorf("v%d manifest_file ids %v", version, ids(lf))
		}
		parts := nonNull(lf[13].Type).(map[string]any)
		if parts["element-id"] != float64(508) || parts["items"].(map[string]any)["name"] != "r508" {
			t.Errorf("partitions = %v", parts)
		}
		if d[1].Meta["parent-snapshot-id"] != "null" || d[1].Meta["snapshot-id"] != "1" || d[1].Meta["sequence-number"] != "1" {
			t.Errorf("list metadata = %v", d[1].Meta)
		}
		if version == 3 && d[1].Meta["first-row-id"] != "0" {
			t.Errorf("first-row-id = %q", d[1].Meta["first-row-id"])
		}
	}
}
