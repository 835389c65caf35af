package sparkinterop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// goWhere is the predicate TestIcebergGoTable deletes, read alike by
// icectl's --where and by Spark's SQL (Spark's session time zone is UTC,
// as icectl reads a literal). On the fixture (row i at 2024-03-01 + 7i
// hours, every 5th name null, dt only on the rows written after the
// evolution), once compaction moved the first spec's rows into bucket
// files, some small files match whole (their metrics prove it) and
// others in part, among them files iceberg-go wrote in the current spec
// with deletes of its own; dt is missing from the files written before
// it was added, where it reads as null and matches nothing.
const goWhere = "ts < TIMESTAMP '2024-03-05 00:00:00' OR dt = DATE '2024-03-10' OR (name IS NULL AND id > 50)"

// goDigest is one Spark read of the table, in one scan: its rows, a
// digest of every column with the row lineage, the rows goWhere
// matches and the digest of the others, the specs of the files the rows
// are in, and the rows whose partition is not the bucket(4, id) Iceberg's
// own function gives them (all rows of spec 0, which has no such field).
type goDigest struct {
	Rows      int64  `json:"n"`
	Hash      string `json:"h"`
	RowIDs    int64  `json:"ids"`
	Matching  int64  `json:"matching"`
	KeptHash  string `json:"kept_h"`
	Specs     string `json:"specs"`
	Misplaced int64  `json:"misplaced"`
}

// TestIcebergGoTable: issue 33's four features on tables iceberg-go
// wrote, v2 and v3 (iceberg-read write-fixture --evolve: appends under
// day(ts), iceberg-go's own schema and spec update to a date column dt
// and bucket(4, id) alone, more appends, merge-on-read deletes of its own
// in both specs: position-delete files on v2, deletion vectors on v3),
// each verb read back by Spark after it runs, rows and every column's
// values (with the row lineage on v3) against the table before:
//
//   - stats columns: Java's Puffin reader and DataSketches read icectl's
//     sketches (icectl's estimates, icectl's bytes written back), and
//     Spark's compute_table_stats on the same snapshot writes the very
//     bytes icectl wrote, column by column;
//   - compact --output-spec current: the same rows, every row in a file
//     of the current spec and in the bucket Iceberg's function gives it;
//   - delete-rows (merge-on-read): exactly the rows Spark's own predicate
//     keeps of the table before;
//   - expire --clean-expired-metadata: the first spec and schema are
//     removed, the current ones kept, one snapshot left, and Spark reads
//     the same rows; iceberg-go then reads exactly the rows of the table
//     it wrote less the deleted ones.
//
// In this order: stats columns reads the files as iceberg-go wrote them;
// compaction comes before delete-rows because a compaction's snapshot
// still lists the old spec's manifests (their entries deleted), and a
// spec a retained snapshot's manifests name is kept, in Java as in
// icectl, until a later commit drops them.
func TestIcebergGoTable(t *testing.T) {
	t.Parallel()
	testenv.Need(t, testenv.Spark, "PySpark and Iceberg's Spark runtime (scripts/install-spark)")
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			t.Parallel()
			icebergGoTable(t, v)
		})
	}
}

func icebergGoTable(t *testing.T, v int) {
	work(t, "") // before the test's deadline starts
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	w := &wapTable{ctx: ctx, t: t, uri: "sqlite:///" + filepath.Join(dir, "catalog.db"),
		name: fmt.Sprintf("gotable%d_%d", v, os.Getpid()), table: "ns.t"}
	read := func(statements ...string) goDigest { return goRead(w, v, statements...) }
	var fx struct {
		RowCount int64             `json:"row_count"`
		Rows     []json.RawMessage `json:"rows"`
	}
	out := testenv.IcebergGo(ctx, t, "write-fixture", "--catalog-uri", w.uri, "--warehouse", "file://"+filepath.Join(dir, "wh"),
		"--catalog-name", w.name, "--table", w.table, "--format-version", strconv.Itoa(v), "--partitioned",
		"--rows", "60", "--evolve", "40", "--delete-every", "7")
	if err := json.Unmarshal(out, &fx); err != nil {
		t.Fatal(err)
	}
	md := w.load().Metadata
	if len(md.Schemas) != 2 || len(md.PartitionSpecs) != 2 || md.CurrentSchemaID == 0 || md.DefaultSpecID == 0 {
		t.Fatalf("iceberg-go wrote %d schemas (current %d) and %d specs (default %d), want two of each", len(md.Schemas), md.CurrentSchemaID, len(md.PartitionSpecs), md.DefaultSpecID)
	}
	cur := strconv.Itoa(md.DefaultSpecID)

	before := read()
	if before.Rows != fx.RowCount || before.RowIDs != before.Rows || before.Specs != "0,"+cur || before.Misplaced == 0 || before.Matching == 0 || before.Matching == before.Rows {
		t.Fatalf("Spark reads %+v of the table iceberg-go wrote (%d rows): want its rows, each with a row id, in specs 0 and %s, and some rows matching %s", before, fx.RowCount, cur, goWhere)
	}

	// stats columns: Java reads icectl's file, then computes its own.
	if md.CurrentSnapshotID == nil {
		t.Fatal("iceberg-go's table has no current snapshot")
	}
	head := *md.CurrentSnapshotID
	view := w.statsColumns("stats", "columns", w.table, "-o", "json")
	if view.SnapshotID != head || view.Mode != "full" || len(view.Columns) != 5 {
		t.Fatalf("stats columns: %+v, want the 5 columns of snapshot %d", view, head)
	}
	ours := w.thetaBlobs(head)
	for _, c := range view.Columns {
		b := ours[c.FieldID]
		if b.Type != "apache-datasketches-theta-v1" || b.SnapshotID != head || b.Properties["ndv"] != strconv.FormatInt(c.NDV, 10) ||
			b.Estimate != c.Estimate || b.JavaBytes != b.Bytes || !c.Exact || c.NDV == 0 {
			t.Errorf("column %s: Java reads %+v; icectl says ndv %d, estimate %v, exact %v", c.Name, b, c.NDV, c.Estimate, c.Exact)
		}
	}
	if got := read("CALL {cat}.system.compute_table_stats(table => 'ns.t', snapshot_id => " + strconv.FormatInt(head, 10) + ")"); got.Rows != before.Rows || got.Hash != before.Hash {
		t.Errorf("Spark reads %+v after stats columns, %+v before", got, before)
	}
	java := w.thetaBlobs(head)
	for _, c := range view.Columns {
		if o, j := ours[c.FieldID], java[c.FieldID]; j.Bytes != o.Bytes {
			t.Errorf("column %s: Spark's sketch (estimate %v)\n%.120s...\nicectl's (estimate %v)\n%.120s...", c.Name, j.Estimate, j.Bytes, o.Estimate, o.Bytes)
		}
	}

	// compact --output-spec current: spec 0's files move, iceberg-go's
	// deletes applied.
	var comp struct {
		FilesIn int `json:"files_in"`
	}
	mustJSON(t, w, &comp, "compact", w.table, "--output-spec", "current", "-o", "json")
	moved := read()
	want := before
	want.Specs, want.Misplaced = cur, 0
	if comp.FilesIn == 0 || moved != want {
		t.Errorf("after compact --output-spec current (%d files in) Spark reads %+v, want %+v: the same rows, every file in spec %s and every row in its bucket", comp.FilesIn, moved, want, cur)
	}

	// delete-rows, merge-on-read (the fixture's write.delete.mode): on the
	// files iceberg-go wrote in the current spec its deletes join
	// iceberg-go's (v3: one DV per file, merged). Its commit also drops
	// the manifests of spec 0 that compaction left with only deleted
	// entries (iceberg/table/producer.go hasLiveFiles): a retained
	// snapshot listing them would keep spec 0 below, as in Java.
	var rep struct {
		RowsBefore int64 `json:"rows_before"`
		RowsAfter  int64 `json:"rows_after"`
		Deleted    int64 `json:"deleted_rows"`
		Added      int   `json:"delete_files_added"`
		Rewritten  int   `json:"files_rewritten"`
	}
	mustJSON(t, w, &rep, "delete-rows", w.table, "--where", goWhere, "-o", "json")
	kept := before.Rows - before.Matching
	if rep.RowsBefore != before.Rows || rep.Deleted != before.Matching || rep.RowsAfter != kept || rep.Added == 0 || rep.Rewritten != 0 {
		t.Errorf("delete-rows reports %+v; Spark: %d rows before, %d matching", rep, before.Rows, before.Matching)
	}
	deleted := read()
	if deleted.Rows != kept || deleted.Hash != before.KeptHash || deleted.Matching != 0 || deleted.RowIDs != kept || deleted.Specs != cur || deleted.Misplaced != 0 {
		t.Errorf("Spark reads %+v after delete-rows, want the %d rows (digest %s) its predicate keeps of the table before", deleted, kept, before.KeptHash)
	}

	// expire --clean-expired-metadata: spec 0 and schema 0 go.
	var exp struct {
		Specs   []int `json:"removed_spec_ids"`
		Schemas []int `json:"removed_schema_ids"`
	}
	now := strconv.FormatInt(time.Now().UnixMilli()+1, 10)
	mustJSON(t, w, &exp, "expire", w.table, "--older-than", now, "--retain-last", "1", "--clean-expired-metadata", "-o", "json")
	after := w.load().Metadata
	if !slices.Equal(exp.Specs, []int{0}) || !slices.Equal(exp.Schemas, []int{0}) || len(after.PartitionSpecs) != 1 || after.PartitionSpecs[0].ID != md.DefaultSpecID ||
		len(after.Schemas) != 1 || after.Schemas[0].ID != md.CurrentSchemaID || after.DefaultSpecID != md.DefaultSpecID || after.CurrentSchemaID != md.CurrentSchemaID || len(after.Snapshots) != 1 || len(after.Statistics) != 0 {
		t.Errorf("expire --clean-expired-metadata removed specs %v and schemas %v, leaving specs %v (default %d), schemas %v (current %d), %d snapshots, %d statistics files; want spec 0 and schema 0 removed, spec %d and schema %d kept, one snapshot and no statistics (those of an expired one)",
			exp.Specs, exp.Schemas, ids(after.PartitionSpecs, func(s spec.PartitionSpec) int { return s.ID }), after.DefaultSpecID,
			ids(after.Schemas, func(s spec.Schema) int { return s.ID }), after.CurrentSchemaID, len(after.Snapshots), len(after.Statistics), md.DefaultSpecID, md.CurrentSchemaID)
	}
	if got := read(); got != deleted {
		t.Errorf("after expire Spark reads %+v, before it %+v", got, deleted)
	}
	checkGoRows(t, w, fx.Rows)
}

// goRead is Spark's read of the table (goDigest), after statements run
// first in the same request; on v2, where rows have no lineage, ids
// counts distinct ids.
func goRead(w *wapTable, v int, statements ...string) goDigest {
	w.t.Helper()
	rid, lineage := "id", ""
	if v >= 3 {
		rid, lineage = "_row_id", ", _row_id, _last_updated_sequence_number"
	}
	q := "SELECT count(*) AS n, CAST(coalesce(sum(h), 0) AS STRING) AS h, count(DISTINCT rid) AS ids, count_if(m) AS matching, " +
		"CAST(coalesce(sum(IF(m, 0, h)), 0) AS STRING) AS kept_h, concat_ws(',', sort_array(collect_set(CAST(sid AS STRING)))) AS specs, " +
		"count_if(NOT (b <=> {cat}.system.bucket(4, id))) AS misplaced " +
		"FROM (SELECT id, " + rid + " AS rid, _spec_id AS sid, _partition.id_bucket AS b, coalesce(" + goWhere + ", false) AS m, " +
		"CAST(xxhash64(to_json(struct(id, name, amount, ts, dt))" + lineage + ") AS DECIMAL(38,0)) AS h FROM {cat}.ns.t)"
	rows := w.mustSQL(map[string]string{"spark.sql.shuffle.partitions": "1"}, append(statements, q)...)
	b, err := json.Marshal(rows[0])
	if err != nil {
		w.t.Fatal(err)
	}
	var d goDigest
	if err := json.Unmarshal(b, &d); err != nil {
		w.t.Fatalf("%s: %v", b, err)
	}
	return d
}

func ids[T any](xs []T, id func(T) int) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = id(x)
	}
	return out
}

// mustJSON runs icectl, which must succeed, and decodes its JSON.
func mustJSON(t *testing.T, w *wapTable, v any, args ...string) {
	t.Helper()
	out, stderr, code := w.icectl(args...)
	if code != 0 {
		t.Fatalf("icectl %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("icectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// checkGoRows fails unless iceberg-go reads exactly the rows of written
// (iceberg-go's scan of the table it wrote) that goWhere keeps.
func checkGoRows(t *testing.T, w *wapTable, written []json.RawMessage) {
	t.Helper()
	cut := time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)
	var want []string
	for _, raw := range written {
		var r struct {
			ID   int64   `json:"id"`
			Name *string `json:"name"`
			TS   string  `json:"ts"`
			DT   *string `json:"dt"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		ts, err := time.Parse(time.RFC3339Nano, strings.Replace(r.TS, " ", "T", 1))
		if err != nil {
			t.Fatalf("row %s: %v", raw, err)
		}
		if ts.Before(cut) || r.DT != nil && *r.DT == "2024-03-10" || r.Name == nil && r.ID > 50 {
			continue
		}
		want = append(want, string(raw))
	}
	var got struct {
		Rows []json.RawMessage `json:"rows"`
	}
	out := testenv.IcebergGo(w.ctx, t, "scan", "--catalog-uri", w.uri, "--catalog-name", w.name, "--table", w.table)
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	have := make([]string, len(got.Rows))
	for i, r := range got.Rows {
		have[i] = string(r)
	}
	slices.Sort(want)
	slices.Sort(have)
	if !slices.Equal(have, want) {
		t.Errorf("iceberg-go reads %d rows after the four verbs, want the %d rows it wrote less those matching %s", len(have), len(want), goWhere)
	}
}
