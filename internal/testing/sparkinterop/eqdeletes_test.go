package sparkinterop

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// goRowSet is every row iceberg-go reads of w's table, as JSON, sorted.
func (w *wapTable) goRowSet() []string {
	w.t.Helper()
	out := testenv.IcebergGo(w.ctx, w.t, "scan", "--catalog-uri", w.uri, "--catalog-name", w.name, "--table", w.table)
	var res struct {
		Rows []json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		w.t.Fatal(err)
	}
	rows := make([]string, len(res.Rows))
	for i, r := range res.Rows {
		rows[i] = string(r)
	}
	slices.Sort(rows)
	return rows
}

// TestRewriteEqualityDeletesSpark: on a v2 table Spark wrote (with its own
// merge-on-read position deletes), icectl's table layer commits equality
// deletes the way a Flink upsert stream does (Spark writes none), one of
// them before Spark appends more rows that it must not touch. icectl
// rewrite-equality-deletes converts them into position-delete files:
// Spark, iceberg-go and icectl read the same rows, every column, as
// before; no equality delete is left; Spark's own compaction then keeps
// the rows too.
func TestRewriteEqualityDeletesSpark(t *testing.T) {
	t.Parallel()
	testenv.Need(t, testenv.Spark, "PySpark and Iceberg's Spark runtime (scripts/install-spark)")
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader")
	work(t, "") // before the test's deadline starts
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	w := newWapTable(ctx, t, dir, "eqconv")
	w.mustSQL(nil, "CREATE NAMESPACE {cat}.ns",
		"CREATE TABLE {cat}.ns.t (id bigint, cat string, v double, s string) USING iceberg PARTITIONED BY (cat) "+
			"TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')",
		"INSERT INTO {cat}.ns.t SELECT id, CASE WHEN id % 3 = 0 THEN 'x' ELSE 'y' END, id * 1.5, concat('s', id) FROM range(0, 300, 1, 3)",
		"INSERT INTO {cat}.ns.t SELECT id, CASE WHEN id % 2 = 0 THEN 'x' ELSE 'y' END, id / 7.0, NULL FROM range(300, 400, 1, 2)",
		"DELETE FROM {cat}.ns.t WHERE id % 17 = 4")
	tbl := w.load()
	fx := (&fixture.Catalog{Catalog: w.cat, Ctx: w.ctx}).Existing(tbl.Ident)
	var eqs []manifest.DataFile
	for _, d := range []struct {
		part string
		ids  []int64
	}{{"x", []int64{0, 3, 6, 9, 302, 304, 1000}}, {"y", []int64{1, 2, 4, 301, 21}}} {
		eq := fx.WriteEqualityDeletes(t, tbl, "eq-"+d.part, []any{d.part}, d.ids...)
		eq.SpecID = 0
		eqs = append(eqs, eq)
	}
	fx.AddDeletes(t, tbl, eqs...)
	// Rows appended after the equality deletes, some with their ids: the
	// deletes do not apply to them.
	w.mustSQL(nil, "INSERT INTO {cat}.ns.t VALUES (3, 'x', 0.5, 'late'), (4, 'y', 0.25, 'late'), (500, 'x', NULL, 'late')")
	tbl = w.load()
	eq := fx.WriteEqualityDeletes(t, tbl, "eq-x2", []any{"x"}, 12, 15, 500)
	eq.SpecID = 0
	fx.AddDeletes(t, tbl, eq)

	spark, goRows, ours := w.read(""), w.goRowSet(), fx.Checksum(t, nil)
	if got := w.mustSQL(nil, "SELECT count(*) AS n FROM {cat}.ns.t WHERE id IN (0, 3, 6, 12, 500) AND s IS DISTINCT FROM 'late'"); fmt.Sprint(got[0]["n"]) != "0" {
		t.Fatalf("Spark reads deleted rows before the conversion: %v", got)
	}
	out, stderr, code := w.icectl("rewrite-equality-deletes", w.table, "-o", "json")
	if code != 0 {
		t.Fatalf("rewrite-equality-deletes: exit %d: %s", code, stderr)
	}
	var rep struct {
		Retired int `json:"equality_delete_files_retired"`
		Written int `json:"position_delete_files_written"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Retired != 3 || rep.Written != 2 {
		t.Errorf("report (%v): %s", err, out)
	}
	if got := w.mustSQL(nil, "SELECT count(*) AS n FROM {cat}.ns.t.delete_files WHERE content = 2"); fmt.Sprint(got[0]["n"]) != "0" {
		t.Errorf("Spark lists %v equality-delete files after the conversion", got[0]["n"])
	}
	if got := w.read(""); got != spark {
		t.Errorf("Spark reads %s after, %s before", got, spark)
	}
	if got := w.goRowSet(); !slices.Equal(got, goRows) {
		t.Errorf("iceberg-go reads %d rows after, %d before (or different values)", len(got), len(goRows))
	}
	if got := fx.Checksum(t, nil); got != ours {
		t.Errorf("icectl reads %+v after, %+v before", got, ours)
	}
	// Spark's compaction applies the new position deletes as Java reads
	// them, and keeps the rows.
	w.mustSQL(nil, "CALL {cat}.system.rewrite_data_files(table => 'ns.t', options => map('rewrite-all', 'true'))")
	if got := w.read(""); got != spark {
		t.Errorf("Spark reads %s after its compaction, %s before", got, spark)
	}
}
