package sparkinterop

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// thetaBlob is a blob of a statistics file as Java reads it
// (iceberg_spark.py theta_blobs).
type thetaBlob struct {
	Type       string            `json:"type"`
	Fields     []int             `json:"fields"`
	SnapshotID int64             `json:"snapshot_id"`
	SeqNumber  int64             `json:"sequence_number"`
	Properties map[string]string `json:"properties"`
	Bytes      string            `json:"bytes"`
	Estimate   float64           `json:"estimate"`
	JavaBytes  string            `json:"java_bytes"`
}

// TestColumnStatsWithJava checks icectl's column sketches (stats
// columns) against Java on a v2 table of every primitive type Spark
// writes, with nulls in every column, NaN, -0.0 and 0.0, empty strings,
// a column past the sketch's 4096 exact entries, and merge-on-read
// deletes:
//
//   - Java reads icectl's file: Iceberg's Puffin reader, then DataSketches'
//     CompactSketch.wrap of each blob, which gives icectl's estimate and
//     writes back icectl's bytes;
//   - Spark's compute_table_stats on the same snapshot gives, for every
//     column in exact mode, the very bytes icectl wrote (but uuid, which
//     Spark hashes as its 36-character string, with the same count), and
//     past exact mode an estimate within three standard errors of
//     icectl's.
func TestColumnStatsWithJava(t *testing.T) {
	t.Parallel()
	testenv.Need(t, testenv.Spark, "PySpark and Iceberg's Spark runtime (scripts/install-spark)")
	work(t, "") // before the test's deadline starts
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	w := newWapTable(ctx, t, dir, "colstats")
	w.mustSQL(nil, "CREATE NAMESPACE {cat}.ns")

	// Spark's SQL has no uuid or fixed: the table is created here.
	fields := []spec.NestedField{
		{ID: 1, Name: "i", Type: spec.IntType{}},
		{ID: 2, Name: "l", Type: spec.LongType{}},
		{ID: 3, Name: "f", Type: spec.FloatType{}},
		{ID: 4, Name: "d", Type: spec.DoubleType{}},
		{ID: 5, Name: "dec", Type: spec.DecimalType{Precision: 10, Scale: 2}},
		{ID: 6, Name: "dt", Type: spec.DateType{}},
		{ID: 7, Name: "ts", Type: spec.TimestampType{}},
		{ID: 8, Name: "tstz", Type: spec.TimestampTzType{}},
		{ID: 9, Name: "s", Type: spec.StringType{}},
		{ID: 10, Name: "u", Type: spec.UUIDType{}},
		{ID: 11, Name: "b", Type: spec.BinaryType{}},
		{ID: 12, Name: "fx", Type: spec.FixedType{Length: 4}},
		{ID: 13, Name: "bo", Type: spec.BooleanType{}},
	}
	md, err := spec.NewTableMetadata(spec.Schema{Fields: fields}, spec.PartitionSpec{}, spec.SortOrder{},
		"file://"+filepath.Join(dir, "wh", "ns", "t"),
		map[string]string{"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := sqlcat.Open(ctx, catalog.Config{Name: w.name, URI: w.uri, Warehouse: "file://" + filepath.Join(dir, "wh")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	w.cat = cat
	if _, err := cat.CreateTable(ctx, catalog.Ident{Namespace: []string{"ns"}, Name: "t"}, md); err != nil {
		t.Fatal(err)
	}
	null := func(mod int, expr string) string {
		return "CASE WHEN id % " + strconv.Itoa(mod) + " = 0 THEN NULL ELSE " + expr + " END"
	}
	w.mustSQL(nil,
		"INSERT INTO {cat}.ns.t SELECT "+strings.Join([]string{
			null(7, "CAST(id % 1000 AS INT)"),
			null(11, "id * 7919"), // about 5450 distinct: past exact mode
			null(9, "CASE WHEN id % 9 = 1 THEN float('NaN') ELSE CAST(id % 300 AS FLOAT) / 4 END"),
			null(13, "CASE id % 13 WHEN 1 THEN double('NaN') WHEN 2 THEN CAST('-0.0' AS DOUBLE) WHEN 3 THEN 0.0D ELSE (id % 2000) / 8.0D END"),
			null(5, "CAST(((id % 500) - 250) / 4.0 AS DECIMAL(10,2))"),
			null(6, "date_add(DATE '2020-01-01', CAST(id % 400 AS INT))"),
			null(8, "CAST(timestamp_seconds(1577836800 + (id % 3000) * 61) AS TIMESTAMP_NTZ)"),
			null(10, "timestamp_seconds(1577836800 + (id % 1500) * 3600)"),
			null(17, "CASE WHEN id % 17 = 1 THEN '' ELSE concat('v', id % 2500) END"),
			null(12, "concat(lpad(hex(id % 1200), 8, '0'), '-0000-4000-8000-000000000000')"),
			null(14, "CASE WHEN id % 14 = 1 THEN X'' ELSE unhex(hex(id % 700)) END"),
			null(15, "unhex(lpad(hex(id % 900), 8, '0'))"),
			null(16, "id % 3 = 0"),
		}, ", ")+" FROM range(0, 6000, 1, 2)",
		"DELETE FROM {cat}.ns.t WHERE i % 10 = 3",
	)
	head := w.head()

	view := w.statsColumns("stats", "columns", w.table, "-o", "json")
	if view.SnapshotID != head || view.Mode != "full" || len(view.Columns) != len(fields) {
		t.Fatalf("stats columns: %+v, want the %d columns of snapshot %d", view, len(fields), head)
	}
	ours := w.thetaBlobs(head)
	seq := w.load().Metadata.LastSequenceNumber
	exactCols := 0
	for i, c := range view.Columns {
		b := ours[c.FieldID]
		if b.Type != "apache-datasketches-theta-v1" || b.SnapshotID != head || b.SeqNumber != seq ||
			b.Properties["ndv"] != strconv.FormatInt(c.NDV, 10) || b.Estimate != c.Estimate || b.JavaBytes != b.Bytes {
			t.Errorf("column %s: Java reads %+v; icectl says ndv %d, estimate %v", c.Name, b, c.NDV, c.Estimate)
		}
		if c.FieldID != fields[i].ID || c.NDV == 0 {
			t.Errorf("column %s: field %d, ndv %d", c.Name, c.FieldID, c.NDV)
		}
		if c.Exact {
			exactCols++
		}
	}
	if exactCols == len(fields) || exactCols == 0 {
		t.Errorf("%d of %d columns in exact mode: want both modes", exactCols, len(fields))
	}

	// Spark's own computation of the same snapshot, with icectl's file
	// unregistered first (Java would replace it anyway).
	tbl := w.load()
	if _, err := w.cat.CommitTable(w.ctx, tbl, nil, []spec.Update{spec.RemoveStatistics{SnapshotID: head}}); err != nil {
		t.Fatal(err)
	}
	w.mustSQL(nil, "CALL {cat}.system.compute_table_stats(table => 'ns.t', snapshot_id => "+strconv.FormatInt(head, 10)+")")
	java := w.thetaBlobs(head)
	for _, c := range view.Columns {
		o, j := ours[c.FieldID], java[c.FieldID]
		switch {
		case c.Exact && c.Name == "u":
			if j.Estimate != o.Estimate || j.Bytes == o.Bytes {
				t.Errorf("uuid column: Java's estimate %v, icectl's %v (same bytes: %v, want not: Spark hashes the string)", j.Estimate, o.Estimate, j.Bytes == o.Bytes)
			}
		case c.Exact:
			if j.Bytes != o.Bytes {
				t.Errorf("column %s: Spark's sketch (estimate %v)\n%.120s...\nicectl's (estimate %v)\n%.120s...", c.Name, j.Estimate, j.Bytes, o.Estimate, o.Bytes)
			}
		default:
			// Both estimate the same count with a relative standard error
			// of 1/sqrt(4095) each.
			rse := 1 / math.Sqrt(4095)
			if d := math.Abs(j.Estimate-o.Estimate) / o.Estimate; d > 3*math.Sqrt2*rse {
				t.Errorf("column %s: Spark's estimate %v, icectl's %v: %.2f%% apart", c.Name, j.Estimate, o.Estimate, 100*d)
			}
		}
		t.Logf("column %-4s exact %-5v icectl %10.2f  Spark %10.2f  same bytes %v", c.Name, c.Exact, o.Estimate, j.Estimate, o.Bytes == j.Bytes)
	}
	// Java's file has a sketch of every column: nothing to do.
	if out, stderr, code := w.icectl("stats", "columns", w.table, "--columns", "i,s"); code != 0 || !strings.Contains(out, "nothing to stats columns") {
		t.Errorf("stats columns over Java's file: exit %d, %s%s", code, out, stderr)
	}

	// Appends since a snapshot with sketches: icectl starts from them and
	// reads the appended files only, first from Java's file (the same
	// counts where exact, within the error past it), then from its own
	// (the very sketches of a full computation).
	insert := "INSERT INTO {cat}.ns.t SELECT CAST(id % 1500 AS INT), id * 31, CAST(NULL AS FLOAT), CAST(id AS DOUBLE), " +
		"CAST(NULL AS DECIMAL(10,2)), CAST(NULL AS DATE), CAST(NULL AS TIMESTAMP_NTZ), CAST(NULL AS TIMESTAMP), " +
		"concat('w', id % 3000), CAST(NULL AS STRING), CAST(NULL AS BINARY), CAST(NULL AS BINARY), CAST(NULL AS BOOLEAN) FROM range(%d, %d)"
	for n, from := range []int64{head, 0} {
		w.mustSQL(nil, strings.Replace(strings.Replace(insert, "%d", strconv.Itoa(6000+n*2000), 1), "%d", strconv.Itoa(8000+n*2000), 1))
		prev := w.head()
		if from == 0 {
			from = view.SnapshotID
		}
		full := w.statsColumns("stats", "columns", w.table, "--full", "--dry-run", "-o", "json")
		inc := w.statsColumns("stats", "columns", w.table, "-o", "json")
		if inc.SnapshotID != prev || inc.Mode != "incremental" || inc.BaseSnapshotID == nil || *inc.BaseSnapshotID != from || full.Mode != "full" {
			t.Fatalf("after an append: %+v, want snapshot %d incremental from %d's file", inc, prev, from)
		}
		ours := w.thetaBlobs(prev)
		for i, c := range inc.Columns {
			f := full.Columns[i]
			exact := c.Estimate == f.Estimate
			if !exact && (from != head || c.Exact || math.Abs(c.Estimate-f.Estimate)/f.Estimate > 3*math.Sqrt2/math.Sqrt(4095)) {
				t.Errorf("column %s: incremental from %d's file estimates %v, a full computation %v", c.Name, from, c.Estimate, f.Estimate)
			}
			if !c.Exact {
				t.Logf("column %s: incremental from %d's file %.2f, full %.2f", c.Name, from, c.Estimate, f.Estimate)
			}
			if b := ours[c.FieldID]; b.Estimate != c.Estimate || b.JavaBytes != b.Bytes {
				t.Errorf("column %s: Java reads %v, icectl wrote %v", c.Name, b.Estimate, c.Estimate)
			}
		}
		view.SnapshotID = prev
	}
}

type statsColumnsView struct {
	SnapshotID     int64  `json:"snapshot_id"`
	Mode           string `json:"mode"`
	BaseSnapshotID *int64 `json:"base_snapshot_id"`
	Columns        []struct {
		Name     string  `json:"name"`
		FieldID  int     `json:"field_id"`
		NDV      int64   `json:"ndv"`
		Estimate float64 `json:"estimate"`
		Exact    bool    `json:"exact"`
	} `json:"columns"`
}

// statsColumns runs icectl with args, which must succeed with stats
// columns' JSON.
func (w *wapTable) statsColumns(args ...string) statsColumnsView {
	w.t.Helper()
	out, stderr, code := w.icectl(args...)
	if code != 0 {
		w.t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	var v statsColumnsView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		w.t.Fatal(err)
	}
	return v
}

// thetaBlobs is the blobs of snapshot id's statistics file as Java reads
// them, by field id.
func (w *wapTable) thetaBlobs(id int64) map[int]thetaBlob {
	w.t.Helper()
	var res struct {
		Path  string      `json:"path"`
		Blobs []thetaBlob `json:"blobs"`
	}
	if err := spark.call(w.ctx, w.t, "theta_blobs", map[string]any{"catalog_uri": w.uri, "catalog_name": w.name,
		"table": w.table, "snapshot_id": strconv.FormatInt(id, 10)}, &res); err != nil {
		w.t.Fatal(err)
	}
	out := map[int]thetaBlob{}
	for _, b := range res.Blobs {
		if len(b.Fields) != 1 {
			w.t.Fatalf("%s: blob of fields %v", res.Path, b.Fields)
		}
		out[b.Fields[0]] = b
	}
	return out
}
