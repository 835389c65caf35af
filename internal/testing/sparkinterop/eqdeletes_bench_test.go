package sparkinterop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// Shape of BenchmarkSparkReadEqualityDeletes's table, overridable by
// ICECTL_BENCH_EQ_ROWS, _COMMITS and _KEYS.
const (
	eqBenchRows    = 2_000_000 // rows Spark inserts first
	eqBenchCommits = 200       // upsert commits after them
	eqBenchKeys    = 2_000     // keys each commit updates
)

func benchInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchmarkSparkReadEqualityDeletes measures what Spark's reads cost with
// a Flink upsert stream's equality deletes and after `icectl
// rewrite-equality-deletes` has converted them into position deletes
// (docs/benchmarks.md). The table (id bigint, v string; format v2,
// unpartitioned) gets eqBenchRows rows from Spark, then eqBenchCommits
// commits the way Flink's upsert sink makes them: each adds a data file
// with new values for eqBenchKeys keys and, in the same snapshot, an
// equality-delete file on id for those keys. Spark (one session,
// local[2], started and warmed apart) runs count(*) and a full scan
// (sum of a hash of every column) three times each before and after;
// the figures are the median wall times. The rows before and after must
// be the same. Run:
//
//	go test -run '^$' -bench SparkReadEqualityDeletes -benchtime 1x ./internal/testing/sparkinterop/
func BenchmarkSparkReadEqualityDeletes(b *testing.B) {
	dir := testenv.Need(b, testenv.Spark, "PySpark and Iceberg's Spark runtime (scripts/install-spark)")
	_ = dir
	rows, commits, keys := benchInt("ICECTL_BENCH_EQ_ROWS", eqBenchRows), benchInt("ICECTL_BENCH_EQ_COMMITS", eqBenchCommits), benchInt("ICECTL_BENCH_EQ_KEYS", eqBenchKeys)
	ctx := context.Background()
	tmp := b.TempDir()
	uri := "sqlite:///" + filepath.Join(tmp, "catalog.db")
	name := fmt.Sprintf("eqbench_%d", os.Getpid())
	icectl := func(args ...string) (string, time.Duration) {
		cmd := exec.CommandContext(ctx, testenv.Icectl(b), append(args, "--catalog-uri", uri, "--catalog-name", name)...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("icectl %v: %v: %s", args, err, errOut.String())
		}
		return out.String(), time.Since(start)
	}
	sql := func(statements ...string) ([]map[string]any, time.Duration) {
		var res struct {
			Rows []map[string]any `json:"rows"`
		}
		start := time.Now()
		if err := spark.call(ctx, b, "sql", map[string]any{"catalog_uri": uri, "catalog_name": name, "statements": statements}, &res); err != nil {
			b.Fatalf("%v\n(Spark's log: %s)", err, spark.log())
		}
		return res.Rows, time.Since(start)
	}
	icectl("catalog", "init", "--warehouse", "file://"+filepath.Join(tmp, "wh"))
	sql("CREATE NAMESPACE {cat}.ns",
		"CREATE TABLE {cat}.ns.t (id bigint, v string) USING iceberg TBLPROPERTIES ('format-version'='2')",
		fmt.Sprintf("INSERT INTO {cat}.ns.t SELECT id, concat('v0-', id) FROM range(0, %d, 1, 8)", rows))

	cat, err := sqlcat.Open(ctx, catalog.Config{Name: name, URI: uri, Warehouse: "file://" + filepath.Join(tmp, "wh")})
	if err != nil {
		b.Fatal(err)
	}
	defer cat.Close()
	id := catalog.Ident{Namespace: []string{"ns"}, Name: "t"}
	fx := (&fixture.Catalog{Catalog: cat, Ctx: ctx}).Existing(id)
	tbl := fx.Load(b)
	schema := tbl.Metadata.CurrentSchema()
	start := time.Now()
	for c := range commits {
		ids := make([]int64, keys)
		vals := make([][]any, keys)
		for k := range ids {
			// Keys spread over the whole range, a different slice each commit.
			ids[k] = int64((k*rows/keys + c*7919) % rows)
			vals[k] = []any{ids[k], fmt.Sprintf("v%d-%d", c+1, ids[k])}
		}
		data := fx.WriteRows(b, tbl, fmt.Sprintf("up-%04d", c), []any{}, schema, vals)
		eq := fx.WriteEqualityDeletes(b, tbl, fmt.Sprintf("up-%04d-eq", c), []any{}, ids...)
		tbl = fx.Commit(b, tbl, table.Change{Operation: spec.OperationOverwrite, AddData: []manifest.DataFile{data}, AddDeletes: []manifest.DataFile{eq}})
	}
	b.Logf("table: %d rows, then %d upsert commits of %d keys (%d equality-delete files), written in %s",
		rows, commits, keys, commits, time.Since(start).Round(time.Millisecond))

	hashAll := "SELECT count(*) AS n, CAST(sum(CAST(xxhash64(id, v) AS DECIMAL(38,0))) AS STRING) AS h FROM {cat}.ns.t"
	measure := func(label string) string {
		sql("SELECT count(*) FROM {cat}.ns.t") // warm-up: the JVM's code and the table's metadata
		median := func(q string) (time.Duration, []map[string]any) {
			var ds []time.Duration
			var got []map[string]any
			for range 3 {
				r, d := sql(q)
				ds, got = append(ds, d), r
			}
			if ds[0] > ds[1] {
				ds[0], ds[1] = ds[1], ds[0]
			}
			if ds[1] > ds[2] {
				ds[1], ds[2] = ds[2], ds[1]
			}
			if ds[0] > ds[1] {
				ds[0], ds[1] = ds[1], ds[0]
			}
			return ds[1], got
		}
		dc, rc := median("SELECT count(*) AS n FROM {cat}.ns.t")
		ds, rs := median(hashAll)
		b.Logf("%s: count(*) %s (%v rows), full scan %s", label, dc.Round(time.Millisecond), rc[0]["n"], ds.Round(time.Millisecond))
		b.ReportMetric(dc.Seconds(), label+"-count-s")
		b.ReportMetric(ds.Seconds(), label+"-scan-s")
		return fmt.Sprint(rs[0]["n"], "/", rs[0]["h"])
	}
	before := measure("before")
	out, d := icectl("rewrite-equality-deletes", "ns.t")
	b.Logf("icectl rewrite-equality-deletes: %s\n%s", d.Round(time.Millisecond), out)
	b.ReportMetric(d.Seconds(), "icectl-s")
	after := measure("after")
	if after != before {
		b.Fatalf("Spark reads %s after, %s before", after, before)
	}
}
