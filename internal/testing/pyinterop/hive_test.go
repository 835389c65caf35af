package pyinterop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// column is a column of hive_tool.py's tables: how its values compare
// across readers (canonical), and its type in DuckDB's hive_types.
type column struct{ name, kind, duckType string }

// hiveColumns are the columns of the Hive tables.
var hiveColumns = []column{
	{"id", "int", ""}, {"v", "string", ""}, {"amount", "double", ""},
	{"p_int", "int", "INTEGER"}, {"p_long", "int", "BIGINT"}, {"p_str", "string", "VARCHAR"},
	{"p_date", "date", "DATE"}, {"p_dec", "decimal", "'DECIMAL(10,2)'"}, {"p_bool", "bool", "BOOLEAN"},
	{"p_ts", "timestamp", "TIMESTAMP"}, {"p_double", "double", "DOUBLE"},
}

// hiveRow is a row, each column's value in canonical form.
type hiveRow map[string]string

// TestPyIcebergHiveDirectories: Hive-style directories pyarrow wrote,
// registered by PyIceberg (hive_tool.py: one table whose files hold the
// partition columns, registered by add_files; one whose files do not,
// registered by add_files, which gives every file a NULL partition; one
// whose files do not, registered with the directories' values in the
// partition structs through PyIceberg's lower-level API), walked through
// every verb that reads rows: verify, delete-rows (v2 position deletes,
// predicates on partition columns), rewrite-position-deletes, a spec
// evolved by PyIceberg (bucket, truncate, year on columns the files lack)
// and one partition moved to it (compact --output-spec), a compaction
// selected by partition columns, upgrade to v3 with the position deletes
// left, dv merge, delete-rows (DVs), maintain (compaction), compact
// --rewrite-all, verify. PyIceberg reads the rows the model says after
// each (every column); before the walk DuckDB's hive-partitioned read of
// the source directories reads what PyIceberg reads, and after it DuckDB
// reads the rewritten files alone (hive_partitioning off) and every one of
// them stores each partition source column, every value giving its
// partition value.
// iceberg-go reads none of these tables: it percent-decodes file paths
// (docs/interop.md), and every path here holds an escape (%3A of a
// timestamp, %2F, %20). Beside them, a table PyIceberg appended to with
// two decimal(10,2) partition fields, whose manifests define the Avro type
// decimal_10_2 twice: icectl compacts it, DuckDB reads its files.
func TestPyIcebergHiveDirectories(t *testing.T) {
	e := newPyEnv(t)
	duckDir := testenv.Need(t, testenv.DuckDBNode, "DuckDB's node API")
	py := startHiveTool(t, e)
	var built struct {
		TwoDecimals string            `json:"two_decimals"`
		Tables      []string          `json:"tables"`
		Sources     map[string]string `json:"sources"`
	}
	py.call(t, &built, "build")
	if len(built.Tables) != 3 {
		t.Fatalf("hive_tool.py built %v", built.Tables)
	}
	policy := filepath.Join(e.home, "policy.yaml")
	if err := os.WriteFile(policy, []byte("defaults:\n  compact:\n    min-input-files: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	duck := func(t *testing.T, cols []column, from string) []hiveRow {
		t.Helper()
		var sel []string
		for _, c := range cols {
			switch c.kind {
			case "string", "bool":
				sel = append(sel, c.name)
			case "timestamp":
				sel = append(sel, fmt.Sprintf("epoch_us(%s) AS %[1]s", c.name))
			default:
				sel = append(sel, fmt.Sprintf("%s::VARCHAR AS %[1]s", c.name))
			}
		}
		cmd := exec.CommandContext(context.Background(), "node", "-e", duckDBQuery, "SELECT "+strings.Join(sel, ", ")+" FROM "+from)
		cmd.Dir = duckDir
		cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(duckDir, "node_modules"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("DuckDB: %v\n%s", err, stderr.Bytes())
		}
		return canonicalRows(t, "DuckDB", cols, out)
	}
	var hiveTypes []string
	for _, c := range hiveColumns {
		if c.duckType != "" {
			hiveTypes = append(hiveTypes, fmt.Sprintf("'%s': %s", c.name, c.duckType))
		}
	}

	for _, table := range built.Tables {
		t.Run(table, func(t *testing.T) {
			model, _ := py.read(t, table, hiveColumns)
			if len(model) != 300 {
				t.Fatalf("PyIceberg reads %d rows, want 300", len(model))
			}
			// DuckDB's hive-partitioned read of the directories pyarrow
			// wrote: the values the directories name.
			src := fmt.Sprintf("read_parquet('%s/**/*.parquet', hive_partitioning = true, hive_types = {%s})",
				built.Sources[table], strings.Join(hiveTypes, ", "))
			dirs := duck(t, hiveColumns, src)
			if table == "hive.add_files" {
				// PyIceberg's add_files took the partition values from
				// the files, which do not hold the columns: NULL in every
				// row, whatever the directory said.
				for _, r := range model {
					for _, c := range hiveColumns[3:] {
						if r[c.name] != "NULL" {
							t.Fatalf("PyIceberg's add_files of files without %s reads %s=%s: docs/interop.md says NULL", c.name, c.name, r[c.name])
						}
					}
				}
				if sameRows(dirs, model) {
					t.Fatal("DuckDB's hive-partitioned read equals PyIceberg's of the add_files table")
				}
			} else {
				assertRows(t, "PyIceberg (before icectl)", model, "DuckDB's hive-partitioned read of "+built.Sources[table], dirs)
			}

			// same checks PyIceberg's rows after step (the first step
			// that loses a row ends the walk) and returns the snapshot.
			same := func(step string) int64 {
				t.Helper()
				rows, snap := py.read(t, table, hiveColumns)
				assertRows(t, "PyIceberg after icectl "+step, rows, "the rows before it", model)
				if t.Failed() {
					t.FailNow()
				}
				return snap
			}
			snap := py.snapshot(t, table)
			// run runs a verb; commits says whether it must commit (a
			// verb with nothing to do would prove nothing).
			run := func(commits bool, args ...string) {
				t.Helper()
				e.icectl(t, args...)
				step := strings.Join(args[:min(len(args), 2)], " ")
				if next := same(step); (next != snap) != commits {
					t.Fatalf("icectl %s: committed %v, want %v", step, next != snap, commits)
				} else {
					snap = next
				}
			}
			deleteRows := func(where string, match func(hiveRow) bool) {
				t.Helper()
				e.icectl(t, "delete-rows", table, "--where", where)
				model = slices.DeleteFunc(model, match)
				snap = same("delete-rows --where " + where)
			}
			ids := func(ids ...int) func(hiveRow) bool {
				return func(r hiveRow) bool { return slices.Contains(ids, atoi(r["id"])) }
			}

			// The add_files table is one partition (NULL): the steps that
			// select partitions by value find nothing there.
			valued := table != "hive.add_files"
			run(false, "verify", "partitions", table)
			// v2: position deletes in every partition, then in two by
			// their partition columns (decided by the partition values
			// where the files lack the columns).
			deleteRows("id IN (5, 6, 7, 8, 155, 156, 157, 158)", ids(5, 6, 7, 8, 155, 156, 157, 158))
			deleteRows("p_int = -1 AND p_date = DATE '1969-12-31' AND id >= 200", func(r hiveRow) bool {
				return r["p_int"] == "-1" && r["p_date"] == "1969-12-31" && atoi(r["id"]) >= 200
			})
			deleteRows("p_str = 'a b=c' AND p_bool = false AND p_dec = 1.50 AND id < 40", func(r hiveRow) bool {
				return r["p_str"] == strconv.Quote("a b=c") && r["p_bool"] == "false" && r["p_dec"] == "1.50" && atoi(r["id"]) < 40
			})
			run(valued, "rewrite-position-deletes", table, "--min-input-files", "2")
			// An evolved spec: bucket, truncate and year fields on the
			// columns the files lack, computed from the old partition
			// values; the files of p_int = 1 move to it, the others stay.
			var evolved struct {
				Spec int `json:"spec"`
			}
			py.call(t, &evolved, "evolve", table)
			run(valued, "compact", table, "--output-spec", "current", "--where", "p_int = 1")
			run(valued, "compact", table, "--min-input-files", "1", "--where", "p_int = -1 AND p_ts = TIMESTAMP '1969-12-31 23:59:59.123456'")
			// v3 with the position deletes left for dv merge.
			run(true, "upgrade", table, "--to", "3", "--force")
			run(true, "dv", "merge", table)
			deleteRows("id IN (9, 10, 11, 12, 13)", ids(9, 10, 11, 12, 13))
			from := snap
			run(true, "maintain", table, "--policy", policy)
			run(true, "compact", table, "--rewrite-all")
			run(false, "verify", "deletes", table, "--check-files")
			run(false, "verify", "partitions", table)
			run(false, "verify", "lineage", table, "--from", strconv.FormatInt(from, 10), "--key", "id")

			// Every live file is one icectl wrote, holding each partition
			// column, every value its partition value; DuckDB reads them
			// alone (no directory values, no delete applied: none is
			// left) as PyIceberg reads the table.
			var files struct {
				Files []struct {
					Path     string   `json:"path"`
					Spec     int      `json:"spec"`
					Problems []string `json:"problems"`
				} `json:"files"`
			}
			py.call(t, &files, "files", table)
			var paths []string
			specs := map[int]bool{}
			for _, f := range files.Files {
				specs[f.Spec] = true
				if strings.HasPrefix(strings.TrimPrefix(f.Path, "file://"), built.Sources[table]) {
					t.Errorf("after compact --rewrite-all the table still reads %s", f.Path)
				}
				if len(f.Problems) > 0 {
					t.Errorf("icectl's %s: %s", f.Path, strings.Join(f.Problems, "; "))
				}
				paths = append(paths, "'"+strings.ReplaceAll(strings.TrimPrefix(f.Path, "file://"), "'", "''")+"'")
			}
			if len(paths) == 0 {
				t.Fatal("no live data file")
			}
			if valued && (!specs[0] || !specs[evolved.Spec]) {
				t.Errorf("the live files are of specs %v, want the first and the evolved one (%d)", specs, evolved.Spec)
			}
			assertRows(t, "DuckDB (icectl's files alone)", duck(t, hiveColumns, "read_parquet(["+strings.Join(paths, ", ")+"], hive_partitioning = false)"),
				"PyIceberg", model)
		})
	}

	// PyIceberg's manifests of a table with two decimal(10,2) partition
	// fields define the Avro type decimal_10_2 twice (icectl refused them:
	// "duplicate name"). icectl rewrites every file; DuckDB reads them as
	// PyIceberg read the table. (PyIceberg 0.12 cannot read the table
	// after: it does not resolve the reference icectl writes, as Java
	// does, the second time; docs/interop.md.)
	t.Run(built.TwoDecimals, func(t *testing.T) {
		table := built.TwoDecimals
		cols := []column{{"id", "int", ""}, {"p_dec", "decimal", ""}, {"q_dec", "decimal", ""}}
		want, _ := py.read(t, table, cols)
		if len(want) != 12 {
			t.Fatalf("PyIceberg reads %d rows, want 12", len(want))
		}
		e.icectl(t, "compact", table, "--rewrite-all")
		e.icectl(t, "verify", "partitions", table)
		var files struct {
			Files []struct {
				Path string `json:"path"`
			} `json:"files"`
		}
		if err := json.Unmarshal(e.icectl(t, "files", table, "--output", "json"), &files); err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, f := range files.Files {
			paths = append(paths, "'"+strings.TrimPrefix(f.Path, "file://")+"'")
		}
		assertRows(t, "DuckDB (icectl's files alone)", duck(t, cols, "read_parquet(["+strings.Join(paths, ", ")+"], hive_partitioning = false)"),
			"PyIceberg before the compaction", want)
	})
}

// duckDBQuery prints the rows of the query in its first argument as JSON.
const duckDBQuery = `const { DuckDBInstance } = require('@duckdb/node-api');
(async () => {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  const r = await con.runAndReadAll(process.argv[1]);
  process.stdout.write(JSON.stringify(r.getRowObjects(), (k, v) => typeof v === 'bigint' ? v.toString() : v));
})().catch((e) => { console.error(e); process.exit(1); });`

// hiveTool is hive_tool.py serving: one Python start for the test.
type hiveTool struct{ *servedTool }

func startHiveTool(t *testing.T, e *pyEnv) *hiveTool {
	t.Helper()
	return &hiveTool{startServed(t, e, "hive_tool.py", "serve", e.home)}
}

// call sends one command and decodes its answer into v.
func (h *hiveTool) call(t *testing.T, v any, args ...string) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(h.servedTool.call(t, args)))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		t.Fatalf("hive_tool.py %v: %v", args, err)
	}
}

// read is PyIceberg's rows of table, and its current snapshot.
func (h *hiveTool) read(t *testing.T, table string, cols []column) ([]hiveRow, int64) {
	t.Helper()
	var res struct {
		Rows     json.RawMessage `json:"rows"`
		Snapshot int64           `json:"snapshot"`
	}
	h.call(t, &res, "read", table)
	return canonicalRows(t, "PyIceberg", cols, res.Rows), res.Snapshot
}

func (h *hiveTool) snapshot(t *testing.T, table string) int64 {
	t.Helper()
	_, snap := h.read(t, table, hiveColumns)
	return snap
}

// canonicalRows decodes a reader's JSON rows into canonical form.
func canonicalRows(t *testing.T, reader string, cols []column, data []byte) []hiveRow {
	t.Helper()
	var rows []map[string]any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&rows); err != nil {
		t.Fatalf("%s's rows: %v", reader, err)
	}
	out := make([]hiveRow, 0, len(rows))
	for _, r := range rows {
		row := hiveRow{}
		for _, c := range cols {
			v, ok := r[c.name]
			if !ok {
				t.Fatalf("%s's row has no column %s: %v", reader, c.name, r)
			}
			s, err := canonical(c.kind, v)
			if err != nil {
				t.Fatalf("%s's row %v, column %s: %v", reader, r, c.name, err)
			}
			row[c.name] = s
		}
		out = append(out, row)
	}
	return out
}

func (r hiveRow) String() string {
	var b strings.Builder
	for i, name := range slices.Sorted(maps.Keys(r)) {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(name + "=" + r[name])
	}
	return b.String()
}

func rowStrings(rows []hiveRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	slices.Sort(out)
	return out
}

func sameRows(a, b []hiveRow) bool { return slices.Equal(rowStrings(a), rowStrings(b)) }

// assertRows fails the test unless got reads the rows of want, naming up
// to 3 rows only one of them reads.
func assertRows(t *testing.T, gotName string, got []hiveRow, wantName string, want []hiveRow) {
	t.Helper()
	g, w := rowStrings(got), rowStrings(want)
	if slices.Equal(g, w) {
		return
	}
	var diff []string
	for _, r := range g {
		if _, ok := slices.BinarySearch(w, r); !ok && len(diff) < 3 {
			diff = append(diff, "  only "+gotName+": "+r)
		}
	}
	n := len(diff)
	for _, r := range w {
		if _, ok := slices.BinarySearch(g, r); !ok && len(diff) < n+3 {
			diff = append(diff, "  only "+wantName+": "+r)
		}
	}
	t.Errorf("%s reads %d rows, %s %d:\n%s", gotName, len(g), wantName, len(w), strings.Join(diff, "\n"))
}

// canonical is value v of a column of kind in one form: integers in
// decimal, doubles in Go's shortest form, dates as YYYY-MM-DD, decimals
// with two digits, timestamps as microseconds since the epoch, strings
// quoted, NULL as NULL.
func canonical(kind string, v any) (string, error) {
	if v == nil {
		return "NULL", nil
	}
	s := fmt.Sprint(v)
	switch kind {
	case "string":
		if _, ok := v.(string); !ok {
			return "", fmt.Errorf("%v (%T) is not a string", v, v)
		}
		return strconv.Quote(s), nil
	case "bool":
		if b, ok := v.(bool); ok {
			return strconv.FormatBool(b), nil
		}
		return "", fmt.Errorf("%v (%T) is not a boolean", v, v)
	case "int":
		n, err := strconv.ParseInt(s, 10, 64)
		return strconv.FormatInt(n, 10), err
	case "double":
		f, err := strconv.ParseFloat(s, 64)
		return strconv.FormatFloat(f, 'g', -1, 64), err
	case "decimal":
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			return "", fmt.Errorf("%q is not a decimal", s)
		}
		return r.FloatString(2), nil
	case "date":
		d, err := time.Parse(time.DateOnly, s)
		return d.Format(time.DateOnly), err
	case "timestamp":
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return strconv.FormatInt(n, 10), nil
		}
		ts, err := time.Parse("2006-01-02 15:04:05.999999999", s)
		return strconv.FormatInt(ts.UnixMicro(), 10), err
	}
	return "", fmt.Errorf("unknown kind %s", kind)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
