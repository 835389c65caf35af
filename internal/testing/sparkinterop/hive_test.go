package sparkinterop

import (
	"bytes"
	"encoding/json"
	"errors"
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

// The Hive-format tables Spark brought into Iceberg (iceberg_spark.py
// build_hive: add_files and snapshot, v2 and v3, with deletes): their
// imported data files do not hold the identity partition columns, whose
// values live only in each manifest entry's partition struct. Every verb
// that reads or rewrites rows must keep those values (issue 36).

// hiveColumn is a column of the Hive tables: its Spark SQL type, and how
// its values compare across readers (canonical).
type hiveColumn struct{ name, typ, kind string }

// hivePartitions are the identity partition columns of the Hive tables
// (iceberg_spark.py HIVE_PARTITIONS).
var hivePartitions = []hiveColumn{
	{"p_int", "int", "int"}, {"p_bigint", "bigint", "int"}, {"p_string", "string", "string"},
	{"p_date", "date", "date"}, {"p_decimal", "decimal(10,2)", "decimal"}, {"p_bool", "boolean", "bool"},
}

// hiveTS is the timestamp partition column of the tables with feature
// p_ts.
var hiveTS = hiveColumn{"p_ts", "timestamp", "timestamp"}

// hiveData are the data columns of the Hive tables (HIVE_COLUMNS).
var hiveData = []hiveColumn{
	{"id", "bigint", "int"}, {"v", "string", "string"}, {"n", "int", "int"},
	{"ts", "timestamp", "timestamp"}, {"amount", "decimal(10,2)", "decimal"},
}

// hiveChain is a chain on a Hive table's copy that also holds Spark's
// filtered count of every partition value and the live data files, as
// they were before the step.
type hiveChain struct {
	*chain
	parts   []hiveColumn     // the identity partition columns
	cols    []hiveColumn     // every column
	filters []string         // "p_int = CAST('-1' AS int)", "p_int IS NULL", ...
	counts  map[string]int64 // Spark's count of the rows each filter selects
	files   map[string]bool  // the live data files
}

func newHiveChain(t *testing.T, idx corpusIndex, tab corpusTable) *hiveChain {
	t.Helper()
	h := &hiveChain{chain: newChain(t, idx, tab), parts: hivePartitions}
	if has(tab, "p_ts") {
		h.parts = append(slices.Clone(hivePartitions), hiveTS)
	}
	h.cols = slices.Concat(hiveData, h.parts)
	// The partition values, their counts and the data files of the
	// corpus table, which the copy is byte for byte: Spark's reads of
	// them kept from an earlier run (reference_test.go).
	type pristine struct {
		Filters []string
		Values  map[string]int
		Counts  map[string]int64
		Files   []string
	}
	p := reference(t, idx, "hive-"+tab.Name, func() pristine {
		tbl := "{cat}." + h.c.Table
		var q []string
		for _, p := range h.parts {
			q = append(q, fmt.Sprintf("SELECT DISTINCT '%s' AS c, CAST(%s AS STRING) AS v FROM %s", p.name, p.name, tbl))
		}
		values := map[string]int{}
		for _, r := range h.c.sql(h.chain, strings.Join(q, " UNION ALL ")) {
			c := r["c"].(string)
			for _, p := range h.parts {
				if p.name != c {
					continue
				}
				if v, ok := r["v"].(string); ok {
					h.filters = append(h.filters, fmt.Sprintf("%s = CAST('%s' AS %s)", c, strings.ReplaceAll(v, "'", `\'`), p.typ))
					values[c]++
				} else {
					h.filters = append(h.filters, c+" IS NULL")
				}
			}
		}
		slices.Sort(h.filters)
		return pristine{Filters: h.filters, Values: values, Counts: h.filteredCounts("Spark's import"), Files: slices.Sorted(maps.Keys(h.dataFiles()))}
	})
	h.filters, h.counts, h.files = p.Filters, p.Counts, map[string]bool{}
	for _, f := range p.Files {
		h.files[f] = true
	}
	// Values in several partitions, and NULL (Hive's default partition):
	// else a count that stayed the same would prove little.
	for _, c := range h.parts {
		if least := map[bool]int{true: 2, false: 3}[c.typ == "boolean"]; p.Values[c.name] < least ||
			!slices.Contains(h.filters, c.name+" IS NULL") {
			t.Fatalf("Spark's Hive table %s: column %s has %d distinct values (want %d) and NULL: %v",
				tab.Name, c.name, p.Values[c.name], least, h.filters)
		}
	}
	return h
}

// filteredCounts is Spark's count of the rows of each filter, each its
// own scan, which Iceberg prunes on the partition values and on each
// data file's column metrics: a file whose metrics say the column is all
// NULL is skipped for "col = v". Each column's counts must add up to the
// table's rows.
func (h *hiveChain) filteredCounts(step string) map[string]int64 {
	h.t.Helper()
	var q []string
	for i, f := range h.filters {
		q = append(q, fmt.Sprintf("SELECT %d AS k, count(*) AS n FROM {cat}.%s WHERE %s", i, h.c.Table, f))
	}
	counts := map[string]int64{}
	for _, r := range h.c.sql(h.chain, strings.Join(q, " UNION ALL ")) {
		counts[h.filters[int(r["k"].(float64))]] = int64(r["n"].(float64))
	}
	var short []string
	for _, p := range h.parts {
		var sum int64
		for f, n := range counts {
			if strings.HasPrefix(f, p.name+" ") {
				sum += n
			}
		}
		if sum != h.want.Rows {
			short = append(short, fmt.Sprintf("%s %d", p.name, sum))
		}
	}
	if short != nil {
		h.t.Errorf("after %s Spark's counts of the rows of each value of a partition column (WHERE p = v, and p IS NULL) do not add up to the table's %d rows: %s",
			step, h.want.Rows, strings.Join(short, ", "))
	}
	return counts
}

// dataFiles are the table's live data files, as Spark lists them.
func (h *hiveChain) dataFiles() map[string]bool {
	h.t.Helper()
	files := map[string]bool{}
	for _, r := range h.c.sql(h.chain, "SELECT file_path AS f FROM {cat}."+h.c.Table+".data_files") {
		files[r["f"].(string)] = true
	}
	return files
}

// partitions checks the table after step: Spark counts as many rows for
// every partition value as before it, and every data file the step
// added holds each partition column, as its manifest entry's metrics
// (read by Java: the data_files table's readable_metrics) say: lower and
// upper bound the partition value, no NULL (all NULL in the NULL
// partition). It returns how many files it checked.
func (h *hiveChain) partitions(step string) int {
	t := h.t
	t.Helper()
	counts := h.filteredCounts(step)
	for _, f := range h.filters {
		if counts[f] != h.counts[f] {
			t.Errorf("after %s Spark counts %d rows WHERE %s, before it %d", step, counts[f], f, h.counts[f])
		}
	}
	h.counts = counts

	type metrics struct {
		ValueCount     *int64          `json:"value_count"`
		NullValueCount *int64          `json:"null_value_count"`
		Lower          json.RawMessage `json:"lower_bound"`
		Upper          json.RawMessage `json:"upper_bound"`
	}
	files := map[string]bool{}
	checked := 0
	for _, r := range h.c.sql(h.chain, "SELECT file_path AS f, to_json(partition) AS p, record_count AS n, "+
		"to_json(readable_metrics) AS m FROM {cat}."+h.c.Table+".data_files") {
		path := r["f"].(string)
		files[path] = true
		if h.files[path] {
			continue
		}
		checked++
		records := int64(r["n"].(float64))
		var part map[string]json.RawMessage
		var m map[string]metrics
		if err := errors.Join(json.Unmarshal([]byte(r["p"].(string)), &part), json.Unmarshal([]byte(r["m"].(string)), &m)); err != nil {
			t.Fatalf("data_files of %s: %v", path, err)
		}
		var bad []string
		for _, p := range h.parts {
			v, got := part[p.name], m[p.name]
			if v == nil {
				v = json.RawMessage("null") // encoding/json leaves a RawMessage nil for null
			}
			nulls := int64(0)
			if string(v) == "null" {
				nulls = records
			}
			if deref(got.ValueCount) != records || deref(got.NullValueCount) != nulls ||
				!sameJSON(got.Lower, v, nulls) || !sameJSON(got.Upper, v, nulls) {
				bad = append(bad, fmt.Sprintf("%s=%s: %d values, %d NULL, bounds %s..%s (want %d NULL)",
					p.name, v, deref(got.ValueCount), deref(got.NullValueCount), orNull(got.Lower), orNull(got.Upper), nulls))
			}
		}
		if bad != nil {
			t.Errorf("after %s the metrics of the file %s (%d rows) say it does not hold its partition's values: %s",
				step, filepath.Base(path), records, strings.Join(bad, "; "))
		}
	}
	h.files = files
	return checked
}

// sameJSON says whether a bound is the partition value v (no bound when
// every value is NULL).
func sameJSON(bound, v json.RawMessage, nulls int64) bool {
	if nulls > 0 {
		return bound == nil || string(bound) == "null"
	}
	return bytes.Equal(bound, v)
}

func orNull(b json.RawMessage) string {
	if b == nil {
		return "null"
	}
	return string(b)
}

func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// readers checks that Spark, iceberg-go, PyIceberg and DuckDB (which reads
// the data files themselves, with no manifest) read the same rows and
// values after step. Only after a step that rewrote every data file: the
// files Spark imported lack the partition columns, which iceberg-go reads
// as NULL (its bug, not icectl's).
func (h *hiveChain) readers(step string) {
	t := h.t
	t.Helper()
	tbl := "{cat}." + h.c.Table
	var sparkCols, duckCols []string
	for _, c := range h.cols {
		switch c.kind {
		case "string", "bool":
			sparkCols, duckCols = append(sparkCols, c.name), append(duckCols, c.name)
		case "timestamp":
			sparkCols = append(sparkCols, fmt.Sprintf("CAST(unix_micros(%s) AS STRING) AS %[1]s", c.name))
			duckCols = append(duckCols, fmt.Sprintf("epoch_us(%s) AS %[1]s", c.name))
		default:
			sparkCols = append(sparkCols, fmt.Sprintf("CAST(%s AS STRING) AS %[1]s", c.name))
			duckCols = append(duckCols, fmt.Sprintf("%s::VARCHAR AS %[1]s", c.name))
		}
	}
	sparkRows := h.c.sql(h.chain, "SELECT "+strings.Join(sparkCols, ", ")+" FROM "+tbl)
	want := canonicalRows(t, "Spark", h.cols, sparkRows)
	if int64(len(want)) != h.want.Rows {
		t.Fatalf("Spark reads %d rows, counted %d", len(want), h.want.Rows)
	}

	// iceberg-go 0.7 percent-decodes file paths before it opens them, so
	// it reads no file under a Java partition path that holds an escape
	// (a timestamp partition's p_ts=2024-06-03T02%3A02%3A02%2B00%3A00):
	// not the files Spark wrote (the chain's noGo), nor icectl's, which
	// lie where Java puts them. PyIceberg and DuckDB read those tables.
	if h.noGo == "" {
		var goRes struct {
			Rows []map[string]any `json:"rows"`
		}
		out := testenv.IcebergGo(h.ctx, t, "scan", "--catalog-uri", h.c.CatalogURI, "--catalog-name", h.c.CatalogName, "--table", h.c.Table)
		if err := decodeNumbers(out, &goRes); err != nil {
			t.Fatalf("iceberg-go's rows: %v", err)
		}
		sameRows(t, step, "iceberg-go", canonicalRows(t, "iceberg-go", h.cols, goRes.Rows), want)
	}

	python := testenv.Need(t, testenv.PyIceberg, "a python with pyiceberg[sql-sqlite,pyarrow] (scripts/install-pyiceberg)")
	cmd := exec.CommandContext(h.ctx, python, "pyiceberg_rows.py", h.c.CatalogURI, h.c.CatalogName, h.c.Table)
	var pyRows []map[string]any
	if err := decodeNumbers(output(t, cmd), &pyRows); err != nil {
		t.Fatalf("PyIceberg's rows: %v", err)
	}
	sameRows(t, step, "PyIceberg", canonicalRows(t, "PyIceberg", h.cols, pyRows), want)

	// DuckDB reads the live data files as they are: with no delete file
	// left (every data file rewritten, the deletes applied) they are the
	// table's rows.
	if n := h.c.sql(h.chain, "SELECT count(*) AS n FROM "+tbl+".delete_files")[0]["n"].(float64); n != 0 {
		t.Errorf("after %s %v delete files are live; DuckDB reads the data files without them", step, n)
		return
	}
	var paths []string
	for f := range h.files {
		paths = append(paths, localPath(f))
	}
	slices.Sort(paths)
	list, err := json.Marshal(paths)
	if err != nil {
		t.Fatal(err)
	}
	dir := testenv.Need(t, testenv.DuckDBNode, "DuckDB's node API")
	cmd = exec.CommandContext(h.ctx, "node", "-e", duckDBRows, string(list), strings.Join(duckCols, ", "))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	var duckRows []map[string]any
	if err := decodeNumbers(output(t, cmd), &duckRows); err != nil {
		t.Fatalf("DuckDB's rows: %v", err)
	}
	sameRows(t, step, "DuckDB (the data files)", canonicalRows(t, "DuckDB", h.cols, duckRows), want)
}

// duckDBRows prints the columns of its second argument (a select list)
// of the rows of the Parquet files of its first (a JSON list of paths),
// never a value from a directory name (DuckDB reads key=value
// directories as columns by default).
const duckDBRows = `const { DuckDBInstance } = require('@duckdb/node-api');
(async () => {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  const files = JSON.parse(process.argv[1]).map((f) => "'" + f.replaceAll("'", "''") + "'");
  const r = await con.runAndReadAll("SELECT " + process.argv[2] + " FROM read_parquet([" + files.join(", ") +
    "], hive_partitioning = false)");
  process.stdout.write(JSON.stringify(r.getRowObjects(), (k, v) => typeof v === 'bigint' ? v.toString() : v));
})().catch((e) => { console.error(e); process.exit(1); });`

func output(t *testing.T, cmd *exec.Cmd) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args[:min(len(cmd.Args), 3)], " "), err, stderr.Bytes())
	}
	return out
}

func decodeNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// sameRows fails the test unless reader read the rows Spark read.
func sameRows(t *testing.T, step, reader string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	var only, onlySpark []string
	differ := 0
	for _, r := range got {
		if _, ok := slices.BinarySearch(want, r); !ok {
			differ++
			if len(only) < 3 {
				only = append(only, "  "+reader+": "+r)
			}
		}
	}
	for _, r := range want {
		if _, ok := slices.BinarySearch(got, r); !ok && len(onlySpark) < 3 {
			onlySpark = append(onlySpark, "  Spark:  "+r)
		}
	}
	t.Errorf("after %s %s reads %d rows, Spark %d; %d of its rows Spark does not read; rows only one reads (up to 3 each):\n%s",
		step, reader, len(got), len(want), differ, strings.Join(append(only, onlySpark...), "\n"))
}

// canonicalRows renders each row, its columns in the order of cols and
// each value in one form whatever the reader's (canonical), and sorts
// them.
func canonicalRows(t *testing.T, reader string, cols []hiveColumn, rows []map[string]any) []string {
	t.Helper()
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		var b strings.Builder
		for i, c := range cols {
			v, ok := r[c.name]
			if !ok {
				t.Fatalf("%s's row has no column %s: %v", reader, c.name, r)
			}
			s, err := canonical(c.kind, v)
			if err != nil {
				t.Fatalf("%s's row %v, column %s: %v", reader, r, c.name, err)
			}
			if i > 0 {
				b.WriteString(" ")
			}
			b.WriteString(c.name + "=" + s)
		}
		out = append(out, b.String())
	}
	slices.Sort(out)
	return out
}

// canonical is value v of a column of kind in one form: integers in
// decimal, dates as YYYY-MM-DD, decimals with two digits, timestamps as
// microseconds since the epoch, NULL as NULL.
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
	case "decimal":
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			return "", fmt.Errorf("%q is not a decimal", s)
		}
		return r.FloatString(2), nil
	case "date":
		if _, ok := v.(json.Number); ok {
			days, err := strconv.ParseInt(s, 10, 64)
			return time.Unix(days*86400, 0).UTC().Format(time.DateOnly), err
		}
		d, err := time.Parse(time.DateOnly, s)
		return d.Format(time.DateOnly), err
	case "timestamp":
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return strconv.FormatInt(n, 10), nil
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z0700",
			"2006-01-02 15:04:05.999999999"} {
			if ts, err := time.Parse(layout, s); err == nil {
				return strconv.FormatInt(ts.UnixMicro(), 10), nil
			}
		}
		return "", fmt.Errorf("%q is not a timestamp", s)
	}
	return "", fmt.Errorf("unknown kind %s", kind)
}

// hiveOrder is the ordered compaction of a Hive table: sorted on the
// tables add_files built, z-ordered on the snapshots.
func hiveOrder(tab corpusTable) string {
	if strings.Contains(tab.Name, "snapshot") {
		return "--zorder=n,id"
	}
	return "--sort=v DESC NULLS LAST, id"
}

// TestHiveMigratedPartitions walks Spark's Hive-format partitioned tables
// brought into Iceberg (add_files and snapshot, v2 with position deletes
// and v3 with deletion vectors, and migrate, v2; identity partitions on
// int, bigint, string, date, decimal and boolean columns, with a NULL
// partition; one table's files with INT96 timestamps and legacy decimals;
// one with a timestamp partition too, imported with Iceberg's Java API as
// add_files would, which refuses timestamp partitions)
// through every verb that reads or rewrites rows, one copy of each table:
// on v3 (and the v2 tables add_files and migrate built) dv merge (v3), a
// bin-pack compaction and one that rewrites every file, sorted or
// z-ordered on v3; on the v2
// table snapshot built rewrite-position-deletes, upgrade --to 3
// --merge-deletes and a z-ordered compaction of every file; then verify
// deletes and on v3 verify lineage. After each verb, Spark reads the same
// rows (every column, on v3 with lineage) and counts as many rows for
// every value of every partition column (a file whose metrics say the
// column is NULL is pruned), and each file the verb wrote has metrics
// saying it holds the partition value; after the compaction that
// rewrote every file, iceberg-go, PyIceberg and DuckDB (the files alone)
// read the values Spark reads.
// longEnv, set to anything, runs the long forms of this package's tests:
// here every Hive table, where every run walks hiveShort.
const longEnv = "ICECTL_TEST_LONG"

// hiveShort are the Hive tables every run walks, within the suite's time:
// add_files (v3, INT96 timestamps and legacy decimals, dv merge, sort),
// snapshot (v2, rewrite-position-deletes, upgrade to v3, z-order) and the
// timestamp partition (v3). ICECTL_TEST_LONG adds add_files v2 and v3,
// snapshot v3 and migrate v2.
var hiveShort = map[string]bool{"hive_legacy_add_files_v3": true, "hive_snapshot_v2": true, "hive_java_timestamp_v3": true}

func TestHiveMigratedPartitions(t *testing.T) {
	t.Parallel()
	idx := loadCorpus(t)
	if len(idx.HiveTables) == 0 {
		t.Fatalf("the corpus in %s has no Hive tables", idx.Dir)
	}
	testenv.Need(t, testenv.IcebergGoReader, "the iceberg-go reader")
	testenv.Need(t, testenv.PyIceberg, "a python with pyiceberg[sql-sqlite,pyarrow] (scripts/install-pyiceberg)")
	testenv.Need(t, testenv.DuckDBNode, "DuckDB's node API")
	var upgraded bool
	long := os.Getenv(longEnv) != ""
	walked := 0
	for _, tab := range idx.HiveTables {
		if !long && !hiveShort[tab.Name] {
			continue
		}
		walked++
		upgrade := tab.FormatVersion == 2 && strings.Contains(tab.Name, "snapshot")
		upgraded = upgraded || upgrade
		t.Run(tab.Name, func(t *testing.T) {
			t.Parallel()
			h := newHiveChain(t, idx, tab)
			from := h.want.SnapshotID
			switch {
			case tab.FormatVersion >= 3:
				h.run([]string{"dv", "merge"})
				h.partitions("icectl dv merge")
				h.compactAll(true, hiveOrder(tab))
			case !upgrade:
				h.compactAll(true, "")
			default:
				r := h.rewritePositionDeletes("--min-input-files", "2")
				if !r.Committed || r.Removed <= r.Added {
					t.Errorf("rewrite-position-deletes merged no delete files: %+v", r)
				}
				h.partitions("icectl rewrite-position-deletes")
				h.icectl([]string{"verify", "deletes"}, "--check-files")
				h.upgrade(3, "--merge-deletes")
				h.partitions("icectl upgrade --to 3 --merge-deletes")
				up := h.want
				if up.RowIDs != up.Rows || up.DistinctRowIDs != up.Rows {
					t.Fatalf("after icectl upgrade --to 3 Spark reads %d rows, %d with a _row_id (%d distinct)", up.Rows, up.RowIDs, up.DistinctRowIDs)
				}
				h.lineage = true
				from = up.SnapshotID
				h.compactAll(false, hiveOrder(tab))
			}
			h.icectl([]string{"verify", "deletes"}, "--check-files")
			if h.lineage {
				h.icectl([]string{"verify", "lineage"}, "--from", from, "--key", "id")
			}
		})
	}
	if !upgraded {
		t.Errorf("no v2 Hive table built by snapshot: nothing was upgraded")
	}
	if !long && walked != len(hiveShort) {
		t.Errorf("walked %d Hive tables, want the %d of hiveShort: a table was renamed in iceberg_spark.py", walked, len(hiveShort))
	}
}

// compactAll compacts the table: a bin-pack first when binpack, then
// every file rewritten (in order, with --sort=... or --zorder=..., unless
// ""), after which the other readers must read what Spark reads.
func (h *hiveChain) compactAll(binpack bool, order string) {
	h.t.Helper()
	if binpack {
		h.compact(1)
		if h.partitions("icectl compact") == 0 {
			h.t.Errorf("icectl compact wrote no data file")
		}
	}
	flags := []string{"--rewrite-all"}
	if order != "" {
		flags = append(flags, order)
	}
	step := "icectl compact " + strings.Join(flags, " ")
	h.compact(1, flags...)
	if h.partitions(step) == 0 {
		h.t.Errorf("%s wrote no data file", step)
	}
	h.readers(step)
}
