package compact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// columnMappingDir holds duckdb-iceberg's column_mapping table: a Parquet
// file pyarrow wrote without field ids, added to a table by PyIceberg's
// add_files, so that readers find its columns through the table's name
// mapping (testdata/README.md).
func columnMappingDir(t *testing.T) string {
	return filepath.Join(testenv.RepoRoot(t), "testdata", "duckdb-iceberg", "column_mapping")
}

// mappedEntryMetrics returns the metrics PyIceberg's add_files gave the
// Parquet file, keyed by the field ids the name mapping gave its columns.
func mappedEntryMetrics(t *testing.T) manifest.DataFile {
	t.Helper()
	f, err := os.Open(filepath.Join(columnMappingDir(t), "104fb5ef-95f5-4b94-88c9-b546cb3d9493-m0.avro"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := manifest.OpenManifest(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if len(e.DataFile.ValueCounts) == 0 {
		t.Fatal("the manifest entry has no value counts")
	}
	return e.DataFile
}

// newMappedTable creates a table with the column_mapping table's schema and
// properties (its name mapping among them), name mapping removed when
// withMapping is false, and adds n copies of its Parquet file as they are:
// no field ids, the metrics its manifest gives.
func newMappedTable(t *testing.T, v, n int, withMapping bool) (*env, []manifest.DataFile) {
	t.Helper()
	return newMappedTableWith(t, v, n, withMapping, nil, spec.SortOrder{OrderID: 0})
}

// newMappedTableWith is newMappedTable with the name mapping edited by
// edit, when not nil, and the default sort order order.
func newMappedTableWith(t *testing.T, v, n int, withMapping bool, edit func(string) string, order spec.SortOrder) (*env, []manifest.DataFile) {
	t.Helper()
	dir := columnMappingDir(t)
	js, err := os.ReadFile(filepath.Join(dir, "00001-75643dae-a7a7-46ae-ab30-ea80d3793f3f.metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := spec.ParseMetadata(js)
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]string{}
	if withMapping {
		props["schema.name-mapping.default"] = src.Properties["schema.name-mapping.default"]
		if edit != nil {
			props["schema.name-mapping.default"] = edit(props["schema.name-mapping.default"])
		}
	}
	e := newEnvWith(t, fixture.TableOptions{FormatVersion: v, Schema: src.CurrentSchema(), SortOrder: order, Props: props})
	data, err := os.ReadFile(filepath.Join(dir, "mock_data.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	tbl := e.Load(t)
	var files []manifest.DataFile
	for i := range n {
		// Outside the table's data directory, as add_files leaves them.
		p := filepath.Join(e.Cat.Dir, "hive", "part-"+string(rune('a'+i))+".parquet")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		df := mappedEntryMetrics(t)
		df.FilePath, df.Partition, df.SpecID = "file://"+p, []any{}, 0
		files = append(files, df)
	}
	e.Append(t, tbl, files...)
	return e, files
}

// tableRows renders every live row of tbl (no deletes in these tables).
func tableRows(t *testing.T, tbl *catalog.Table) []string {
	t.Helper()
	fs := liveFiles(t, tbl)
	var rows []string
	for _, fe := range fs.Data {
		pos := make([]int64, fe.Entry.DataFile.RecordCount)
		for i := range pos {
			pos[i] = int64(i)
		}
		r, err := scan.RowsAt(t.Context(), tbl.IO, tbl.Metadata, fe, pos)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r...)
	}
	slices.Sort(rows)
	return rows
}

// goRows reads the table of e through iceberg-go, the independent reader
// (with the reader flags given, --lineage say): its rows as JSON, sorted.
func goRows(t *testing.T, e *env, flags ...string) []string {
	t.Helper()
	args := append([]string{"scan", "--catalog-uri", "sqlite:///" + filepath.Join(e.Cat.Dir, "catalog.db"),
		"--catalog-name", "test", "--table", "ns.t"}, flags...)
	out := testenv.IcebergGo(e.Ctx, t, args...)
	var res struct {
		Rows []json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("iceberg-read output: %v", err)
	}
	rows := make([]string, len(res.Rows))
	for i, r := range res.Rows {
		rows[i] = string(r)
	}
	slices.Sort(rows)
	return rows
}

// TestCompactNameMappedFiles compacts files without field ids, found
// through the table's name mapping, alone and beside a file with ids: every
// value of every column must come through, on both rewrite paths.
func TestCompactNameMappedFiles(t *testing.T) {
	for _, arrowOnly := range []bool{false, true} {
		for _, v := range []int{2, 3} {
			name := "transcode"
			if arrowOnly {
				name = "arrow"
			}
			t.Run(name+"/v"+string(rune('0'+v)), func(t *testing.T) {
				e, _ := newMappedTable(t, v, 2, true)
				before := tableRows(t, e.Load(t))
				if len(before) != 6 || !strings.Contains(strings.Join(before, "\n"), "Charlie") {
					t.Fatalf("rows before compaction, read through the name mapping:\n%s", strings.Join(before, "\n"))
				}
				sum := checksum(t, e.Load(t))
				goBefore := goRows(t, e)
				if len(goBefore) != 6 || !strings.Contains(strings.Join(goBefore, "\n"), "charlie@example.com") {
					t.Fatalf("iceberg-go read before compaction:\n%s", strings.Join(goBefore, "\n"))
				}
				opts := e.options()
				opts.ArrowOnly = arrowOnly
				rep, err := e.compact(t, opts)
				if err != nil {
					t.Fatal(err)
				}
				if rep.FilesIn != 2 {
					t.Fatalf("rewrote %d files, want 2", rep.FilesIn)
				}
				if want := map[bool]string{false: RewriteTranscode, true: RewriteArrow}[arrowOnly]; rep.Groups[0].Rewrite != want {
					t.Fatalf("group rewritten by %s (%s), want %s", rep.Groups[0].Rewrite, rep.Groups[0].RewriteNote, want)
				}
				after := tableRows(t, e.Load(t))
				if !slices.Equal(before, after) {
					t.Fatalf("rows changed by compaction:\nbefore:\n%s\nafter:\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
				}
				if got := checksum(t, e.Load(t)); got != sum {
					t.Fatalf("checksum %+v after compaction, want %+v", got, sum)
				}
				if goAfter := goRows(t, e); !slices.Equal(goBefore, goAfter) {
					t.Fatalf("iceberg-go reads other rows after compaction:\nbefore:\n%s\nafter:\n%s", strings.Join(goBefore, "\n"), strings.Join(goAfter, "\n"))
				}
			})
		}
	}
}

// TestCompactMixedFieldIDs compacts, in one group, files without field ids
// (read through the name mapping) and a file with them, written under the
// same schema by icectl's own writer.
func TestCompactMixedFieldIDs(t *testing.T) {
	for _, arrowOnly := range []bool{false, true} {
		e, _ := newMappedTable(t, 2, 1, true)
		tbl := e.Load(t)
		// A copy of the rows, with ids: read through the mapping, written back.
		mapped := liveFiles(t, tbl).Data[0]
		var recs []arrow.RecordBatch
		if err := scan.ReadFile(e.Ctx, tbl.IO, tbl.Metadata, mapped, table.Applicable{}, scan.Options{}, func(rec arrow.RecordBatch) error {
			rec.Retain()
			recs = append(recs, rec)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(recs) != 1 {
			t.Fatalf("%d batches, want 1", len(recs))
		}
		withIDs := e.WriteRecord(t, tbl, "with-ids", nil, tbl.Metadata.CurrentSchema(), recs[0])
		recs[0].Release()
		e.Append(t, tbl, withIDs)
		before := tableRows(t, e.Load(t))
		opts := e.options()
		opts.ArrowOnly = arrowOnly
		rep, err := e.compact(t, opts)
		if err != nil {
			t.Fatal(err)
		}
		if rep.FilesIn != 2 || rep.Committed() != 1 {
			t.Fatalf("arrowOnly=%v: %d files in, %d groups committed; want 2, 1", arrowOnly, rep.FilesIn, rep.Committed())
		}
		if after := tableRows(t, e.Load(t)); !slices.Equal(before, after) {
			t.Fatalf("arrowOnly=%v: rows changed by compaction:\nbefore:\n%s\nafter:\n%s", arrowOnly, strings.Join(before, "\n"), strings.Join(after, "\n"))
		}
	}
}

// TestCompactNoFieldIDsNoMapping: a file without field ids in a table
// without a name mapping cannot be read; the group fails naming the file,
// and nothing is committed.
func TestCompactNoFieldIDsNoMapping(t *testing.T) {
	for _, arrowOnly := range []bool{false, true} {
		e, files := newMappedTable(t, 2, 2, false)
		snap := *e.Load(t).Metadata.CurrentSnapshotID
		opts := e.options()
		opts.ArrowOnly = arrowOnly
		rep, err := e.compact(t, opts)
		if err == nil && rep.Failed() == 0 {
			t.Fatalf("arrowOnly=%v: compaction of files without field ids and no name mapping succeeded", arrowOnly)
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		for _, g := range rep.Groups {
			msg += " " + g.Reason
		}
		if !strings.Contains(msg, "schema.name-mapping.default") || !strings.Contains(msg, files[0].FilePath[len("file://"):]) && !strings.Contains(msg, files[1].FilePath[len("file://"):]) {
			t.Fatalf("arrowOnly=%v: error %q does not name the file and the missing name mapping", arrowOnly, msg)
		}
		if got := *e.Load(t).Metadata.CurrentSnapshotID; got != snap {
			t.Fatalf("arrowOnly=%v: snapshot %v after a failed compaction, want %v", arrowOnly, got, snap)
		}
	}
}

// TestCompactUnmatchedColumnRefused: a column the file's metrics say it
// stores, which the name mapping does not find (here "name" renamed in the
// mapping without its old name as an alias), fails the group on both
// paths instead of being written as nulls; so does a mapping that names
// none of the file's columns.
func TestCompactUnmatchedColumnRefused(t *testing.T) {
	cases := map[string]struct {
		edit func(string) string
		want string
	}{
		"one column": {
			edit: func(m string) string { return strings.Replace(m, `"names":["name"]`, `"names":["full_name"]`, 1) },
			want: "column name (field id 2) is in the file's metrics",
		},
		"no column": {
			edit: func(m string) string {
				for _, n := range []string{"id", "name", "age", "attributes", "scores", "profile"} {
					m = strings.Replace(m, `"names":["`+n+`"]`, `"names":["x_`+n+`"]`, 1)
				}
				return m
			},
			want: "names none of the file's columns",
		},
	}
	for name, c := range cases {
		for _, arrowOnly := range []bool{false, true} {
			e, _ := newMappedTableWith(t, 2, 2, true, c.edit, spec.SortOrder{OrderID: 0})
			snap := *e.Load(t).Metadata.CurrentSnapshotID
			opts := e.options()
			opts.ArrowOnly = arrowOnly
			rep, err := e.compact(t, opts)
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if rep != nil {
				for _, g := range rep.Groups {
					msg += " " + g.Reason
				}
			}
			if !strings.Contains(msg, c.want) || !strings.Contains(msg, "part-") {
				t.Errorf("%s, arrowOnly=%v: got %q, want an error naming the file with %q", name, arrowOnly, msg, c.want)
			}
			if got := *e.Load(t).Metadata.CurrentSnapshotID; got != snap {
				t.Errorf("%s, arrowOnly=%v: a snapshot was committed", name, arrowOnly)
			}
		}
	}
}

// TestCompactNameMappedDeletesSorted compacts name-mapped files with an
// equality delete (matched on a column found through the mapping) and a
// position delete, sorted by age descending and not: the rows the deletes
// leave, every value intact, on both paths.
func TestCompactNameMappedDeletesSorted(t *testing.T) {
	byAge := spec.SortOrder{OrderID: 1, Fields: []spec.SortField{{SourceID: 3, Transform: spec.ParseTransform("identity"), Direction: "desc", NullOrder: "nulls-last"}}}
	for _, sorted := range []bool{false, true} {
		for _, arrowOnly := range []bool{false, true} {
			if sorted && !arrowOnly {
				continue // a sorted rewrite always takes the Arrow path
			}
			e, files := newMappedTableWith(t, 2, 2, true, nil, byAge)
			tbl := e.Load(t)
			eq := e.WriteEqualityDeletes(t, tbl, "eq", nil, 2) // Bob, in both files
			tbl = e.AddDeletes(t, tbl, eq)
			pos := e.WritePositionDeletes(t, tbl, "pos", nil, map[string][]int64{files[0].FilePath: {0}}, true) // one Alice
			e.AddDeletes(t, tbl, pos)
			before := tableRows(t, e.Load(t))
			sum := checksum(t, e.Load(t))
			if sum.RowCount != 3 {
				t.Fatalf("%d rows before compaction, want 3", sum.RowCount)
			}
			opts := e.options()
			opts.ArrowOnly, opts.Sort = arrowOnly, sorted
			rep, err := e.compact(t, opts)
			if err != nil || rep.Committed() != 1 {
				t.Fatalf("sorted=%v arrowOnly=%v: %v, %d groups committed", sorted, arrowOnly, err, rep.Committed())
			}
			after := tableRows(t, e.Load(t))
			if len(after) != 3 || strings.Contains(strings.Join(after, "\n"), "Bob") || strings.Count(strings.Join(after, "\n"), "Alice") != 1 {
				t.Fatalf("sorted=%v arrowOnly=%v: rows after compaction:\n%s", sorted, arrowOnly, strings.Join(after, "\n"))
			}
			if got := checksum(t, e.Load(t)); got != sum {
				t.Fatalf("sorted=%v arrowOnly=%v: checksum %+v after compaction, want %+v (before: %q)", sorted, arrowOnly, got, sum, before)
			}
		}
	}
}
