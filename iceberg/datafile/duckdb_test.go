package datafile

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/testenv"
)

type duckdbResult struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	Schema  []struct {
		Name    string `json:"name"`
		FieldID any    `json:"field_id"`
	} `json:"schema"`
}

// TestDuckDBReadsOurFiles checks our Writer's output with DuckDB, an
// independent Parquet reader: values and field ids, lineage columns
// included.
func TestDuckDBReadsOurFiles(t *testing.T) {
	dir := testenv.Need(t, testenv.DuckDBNode, "DuckDB node api")
	s := SchemaWithLineage(&spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "name", Type: spec.StringType{}},
		{ID: 3, Name: "score", Type: spec.DoubleType{}},
		{ID: 4, Name: "n", Type: spec.IntType{}},
		{ID: 5, Name: "amount", Type: spec.DecimalType{Precision: 10, Scale: 2}},
		{ID: 6, Name: "tags", Type: &spec.ListType{ElementID: 7, Element: spec.IntType{}}},
	}})
	sc, err := ArrowSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i) * 1_000_000_007)
		if i%7 == 3 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append("name-" + strconv.Itoa(i))
		}
		b.Field(2).(*array.Float64Builder).Append(float64(i) / 4)
		b.Field(3).(*array.Int32Builder).Append(int32(-i))
		b.Field(4).(*array.Decimal128Builder).Append(decimalOf(int64(i)*101 - 5000))
		lb := b.Field(5).(*array.ListBuilder)
		lb.Append(true)
		for k := range i % 3 {
			lb.ValueBuilder().(*array.Int32Builder).Append(int32(i + k))
		}
		if i%5 == 0 {
			b.Field(6).AppendNull()
			b.Field(7).AppendNull()
		} else {
			b.Field(6).(*array.Int64Builder).Append(int64(10_000 + i))
			b.Field(7).(*array.Int64Builder).Append(int64(i % 9))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	data, _ := writeParquet(t, s, map[string]string{PropRowGroupSizeBytes: "16384"}, rec)
	path := filepath.Join(t.TempDir(), "f.parquet")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	res := duckdbRead(t, dir, path)

	ids := map[string]string{}
	for _, f := range res.Schema {
		if f.FieldID != nil {
			ids[f.Name] = jsonString(f.FieldID)
		}
	}
	for _, f := range s.Fields {
		if ids[f.Name] != strconv.Itoa(f.ID) {
			t.Errorf("duckdb sees field id %q for %s, want %d", ids[f.Name], f.Name, f.ID)
		}
	}
	if ids["element"] != "7" {
		t.Errorf("list element field id %q, want 7", ids["element"])
	}
	if len(res.Rows) != n {
		t.Fatalf("duckdb read %d rows, want %d", len(res.Rows), n)
	}
	want := rowsJSON(t, rec)
	for i, row := range res.Rows {
		var w []any
		if err := json.Unmarshal([]byte(want[i]), &w); err != nil {
			t.Fatal(err)
		}
		for c := range w {
			if got, exp := normalize(row[c]), normalize(w[c]); got != exp {
				t.Fatalf("row %d column %s: duckdb %s, ours %s", i, res.Columns[c], got, exp)
			}
		}
	}
}

// duckdbRead reads a Parquet file with DuckDB (testdata/duckdb_read.mjs):
// columns, rows and the schema with field ids.
func duckdbRead(t *testing.T, dir, path string) duckdbResult {
	t.Helper()
	script, err := filepath.Abs("testdata/duckdb_read.mjs")
	if err != nil {
		t.Fatal(err)
	}
	// ESM resolves packages from the script's directory upwards, not
	// NODE_PATH, so run a copy placed next to the node_modules.
	local := filepath.Join(dir, "icectl_duckdb_read.mjs")
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local, src, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("node", local, path).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("duckdb: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var res duckdbResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("duckdb output: %v\n%.500s", err, out)
	}
	return res
}

// TestDuckDBReadsTranscodedFiles: a file the Transcoder wrote (deleted
// rows dropped, lineage materialized, several sources) reads in DuckDB
// with its field ids and the same values arrow-go reads.
func TestDuckDBReadsTranscodedFiles(t *testing.T) {
	dir := testenv.Need(t, testenv.DuckDBNode, "DuckDB node api")
	s := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "name", Type: spec.StringType{}},
		{ID: 3, Name: "score", Type: spec.DoubleType{}},
		{ID: 4, Name: "day", Type: spec.DateType{}},
	}}
	var srcs []tcSource
	for k := range 3 {
		b := genBatch(t, s, 5000, 13*k)
		data, _ := writeParquet(t, s, map[string]string{PropPageSizeBytes: "4096"}, b)
		b.Release()
		del := roaring64.New()
		for p := uint64(k); p < 5000; p += 7 {
			del.Add(p)
		}
		srcs = append(srcs, tcSource{data: data, deleted: del, dataSeq: int64(k + 1), firstRowID: ptr(int64(k * 5000))})
	}
	ws := SchemaWithLineage(s)
	got, _ := transcodePath(t, ws, nil, srcs, 2)
	path := filepath.Join(t.TempDir(), "t.parquet")
	if err := os.WriteFile(path, got, 0o644); err != nil {
		t.Fatal(err)
	}
	res := duckdbRead(t, dir, path)
	ids := map[string]string{}
	for _, f := range res.Schema {
		if f.FieldID != nil {
			ids[f.Name] = jsonString(f.FieldID)
		}
	}
	for _, f := range ws.Fields {
		if ids[f.Name] != strconv.Itoa(f.ID) {
			t.Errorf("duckdb sees field id %q for %s, want %d", ids[f.Name], f.Name, f.ID)
		}
	}
	want := storedRows(t, got)
	kept := 0
	for _, src := range srcs {
		kept += 5000 - int(src.deleted.GetCardinality())
	}
	if len(res.Rows) != len(want) || len(want) != kept {
		t.Fatalf("duckdb read %d rows, arrow-go %d, want %d", len(res.Rows), len(want), kept)
	}
	for i, row := range res.Rows {
		var w []any
		if err := json.Unmarshal([]byte(want[i]), &w); err != nil {
			t.Fatal(err)
		}
		for c := range w {
			if g, e := normalize(row[c]), normalize(w[c]); g != e {
				t.Fatalf("row %d column %s: duckdb %s, arrow-go %s", i, res.Columns[c], g, e)
			}
		}
	}
}

// normalize renders a JSON value so that DuckDB's and arrow's spellings of
// the same value compare equal (numbers as strings, lists as JSON).
func normalize(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return v
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case []any:
		s := "["
		for i, x := range v {
			if i > 0 {
				s += ","
			}
			s += normalize(x)
		}
		return s + "]"
	}
	return jsonString(v)
}

func jsonString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
