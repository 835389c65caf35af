package sparkinterop

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/partstats"
)

// TestPartitionStatsWithJava checks icectl's partition statistics against
// Java's (Iceberg 1.10's PartitionStatsHandler, through Spark's
// compute_partition_stats) on a table Spark wrote with merge-on-read
// deletes (position deletes at v2, DVs at v3), an equality delete file
// and four partition specs,
// each file computed by one side from the other's:
//
//   - Java computes a snapshot in full: icectl's full computation has the
//     same rows;
//   - icectl computes the next incrementally from Java's file (it reads
//     it), with the rows of its own full computation; Java reads icectl's
//     file (readPartitionStatsFile) and gets those rows;
//   - Java computes the next incrementally from icectl's file and gets the
//     rows of icectl's full computation;
//   - after cat is dropped from the spec and days(ts) added, icectl
//     computes the head from Java's file (written before days(ts)
//     existed), Java reads it, and, the files unregistered, Java's full
//     computation of the head has icectl's rows.
//
// Java's incremental computation is not checked after the spec lost its
// first field: Java 1.10 keys the rows it reads from a file by the
// row's spec, comparing the unified partition as if it were the spec's
// own tuple, so rows of a spec whose fields are not the unified type's
// first ones collide and are lost. icectl keys rows by spec id and
// unified partition.
func TestPartitionStatsWithJava(t *testing.T) {
	t.Parallel()
	forVersions(t, "pstats", func(t *testing.T, w *wapTable, dir string, v int) {
		w.mustSQL(nil,
			fmt.Sprintf("CREATE TABLE {cat}.ns.t (id bigint, cat string, ts timestamp) USING iceberg PARTITIONED BY (cat) "+
				"TBLPROPERTIES ('format-version'='%d', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')", v),
			"INSERT INTO {cat}.ns.t SELECT id, CASE WHEN id % 3 = 0 THEN 'x' ELSE 'y' END, TIMESTAMP '2026-01-01 00:00:00' + make_interval(0, 0, 0, CAST(id % 4 AS INT)) FROM range(0, 60, 1, 3)",
			"DELETE FROM {cat}.ns.t WHERE id % 7 = 1",
			"ALTER TABLE {cat}.ns.t ADD PARTITION FIELD bucket(4, id)",
			"INSERT INTO {cat}.ns.t SELECT id, CASE WHEN id % 2 = 0 THEN 'x' ELSE 'z' END, TIMESTAMP '2026-01-02 00:00:00' FROM range(60, 100, 1, 2)")
		// Spark writes no equality deletes: icectl's table layer commits one,
		// in the first spec.
		tbl := w.load()
		fx := (&fixture.Catalog{Catalog: w.cat, Ctx: w.ctx}).Existing(tbl.Ident)
		eq := fx.WriteEqualityDeletes(t, tbl, "eq-x", []any{"x"}, 3, 6)
		eq.SpecID = 0
		fx.AddDeletes(t, tbl, eq)
		first := w.head()
		w.javaCompute(first)
		tbl = w.load()
		if got := w.full(tbl, first); !slices.ContainsFunc(got, func(r partstats.Row) bool { return r.EqualityDeleteFileCount == 1 }) {
			t.Fatalf("no partition with the equality delete file:\n%s", dumpRows(got))
		}
		w.same("Java's full computation", w.readStats(tbl, first), "icectl's", w.full(tbl, first), tbl)

		w.mustSQL(nil, "DELETE FROM {cat}.ns.t WHERE id % 11 = 2", "UPDATE {cat}.ns.t SET ts = ts + INTERVAL 1 DAY WHERE id % 13 = 5")
		second := w.head()
		w.statsPartitions(second, first)
		tbl = w.load()
		ours := w.readStats(tbl, second)
		w.same("icectl's incremental computation from Java's file", ours, "its full one", w.full(tbl, second), tbl)
		w.javaReads(second, ours)

		w.mustSQL(nil, "INSERT INTO {cat}.ns.t VALUES (500, 'v', TIMESTAMP '2026-01-05 00:00:00')", "DELETE FROM {cat}.ns.t WHERE id % 17 = 3")
		third := w.head()
		w.javaCompute(third)
		tbl = w.load()
		w.same("Java's incremental computation from icectl's file", w.readStats(tbl, third), "icectl's full one", w.full(tbl, third), tbl)

		w.mustSQL(nil,
			"ALTER TABLE {cat}.ns.t DROP PARTITION FIELD cat",
			"ALTER TABLE {cat}.ns.t ADD PARTITION FIELD days(ts)",
			"INSERT INTO {cat}.ns.t SELECT id, 'w', TIMESTAMP '2026-01-05 00:00:00' + make_interval(0, 0, 0, CAST(id % 2 AS INT)) FROM range(100, 130, 1, 2)",
			"DELETE FROM {cat}.ns.t WHERE id % 5 = 3",
			"UPDATE {cat}.ns.t SET cat = 'u' WHERE id % 9 = 4")
		head := w.head()
		w.statsPartitions(head, third)
		tbl = w.load()
		ours = w.readStats(tbl, head)
		w.same("icectl's incremental computation from Java's file", ours, "its full one", w.full(tbl, head), tbl)
		w.javaReads(head, ours)

		ups := []spec.Update{}
		for _, f := range tbl.Metadata.PartitionStatistics {
			ups = append(ups, spec.RemovePartitionStatistics{SnapshotID: f.SnapshotID})
		}
		if _, err := w.cat.CommitTable(w.ctx, tbl, nil, ups); err != nil {
			t.Fatal(err)
		}
		w.javaCompute(head)
		tbl = w.load()
		w.same("Java's full computation", w.readStats(tbl, head), "icectl's", ours, tbl)
	})
}

// javaCompute runs Spark's compute_partition_stats for snapshot id.
func (w *wapTable) javaCompute(id int64) {
	w.t.Helper()
	w.mustSQL(nil, fmt.Sprintf("CALL {cat}.system.compute_partition_stats(table => 'ns.t', snapshot_id => %d)", id))
}

// statsPartitions runs icectl stats partitions, which must compute the
// head, id, incrementally from base's file.
func (w *wapTable) statsPartitions(id, base int64) {
	w.t.Helper()
	out, stderr, code := w.icectl("stats", "partitions", w.table, "-o", "json")
	if code != 0 {
		w.t.Fatalf("stats partitions: exit %d: %s", code, stderr)
	}
	var view struct {
		SnapshotID     int64  `json:"snapshot_id"`
		Mode           string `json:"mode"`
		BaseSnapshotID *int64 `json:"base_snapshot_id"`
	}
	if err := json.Unmarshal([]byte(out), &view); err != nil {
		w.t.Fatal(err)
	}
	if view.SnapshotID != id || view.Mode != "incremental" || view.BaseSnapshotID == nil || *view.BaseSnapshotID != base {
		w.t.Fatalf("stats partitions: %s, want snapshot %d incremental from the file of %d", out, id, base)
	}
}

// javaReads checks that Java reads the file of snapshot id as rows.
func (w *wapTable) javaReads(id int64, rows []partstats.Row) {
	w.t.Helper()
	var java struct {
		Path string            `json:"path"`
		Rows []json.RawMessage `json:"rows"`
	}
	if err := spark.call(w.ctx, w.t, "partition_stats", map[string]any{"catalog_uri": w.uri, "catalog_name": w.name,
		"table": w.table, "snapshot_id": strconv.FormatInt(id, 10)}, &java); err != nil {
		w.t.Fatal(err)
	}
	if len(java.Rows) != len(rows) {
		w.t.Fatalf("Java reads %d rows of %s, icectl wrote %d", len(java.Rows), java.Path, len(rows))
	}
	for i, r := range rows {
		if g, want := normalizedJSON(w.t, java.Rows[i]), normalized(w.t, javaView(r)); g != want {
			w.t.Errorf("row %d of %s: Java reads\n%s\nicectl wrote\n%s", i, java.Path, g, want)
		}
	}
}

// same fails the test unless a and b hold the same rows.
func (w *wapTable) same(what string, a []partstats.Row, than string, b []partstats.Row, tbl *catalog.Table) {
	w.t.Helper()
	if sa, sb := dumpRows(sortedRows(a, tbl)), dumpRows(sortedRows(b, tbl)); sa != sb {
		w.t.Errorf("%s\n%s\n%s\n%s", what, sa, than, sb)
	}
}

// head is main's snapshot id.
func (w *wapTable) head() int64 {
	w.t.Helper()
	rows := w.mustSQL(nil, "SELECT CAST(snapshot_id AS STRING) AS id FROM {cat}.ns.t.refs WHERE name = 'main'")
	id, err := strconv.ParseInt(fmt.Sprint(rows[0]["id"]), 10, 64)
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

// load loads the table through icectl's catalog code.
func (w *wapTable) load() *catalog.Table {
	w.t.Helper()
	if w.cat == nil {
		cat, err := sqlcat.Open(w.ctx, catalog.Config{Name: w.name, URI: w.uri, Warehouse: "file://" + filepath.Join(filepath.Dir(strings.TrimPrefix(w.uri, "sqlite://")), "wh")})
		if err != nil {
			w.t.Fatal(err)
		}
		w.t.Cleanup(func() { cat.Close() })
		w.cat = cat
	}
	tbl, err := w.cat.LoadTable(w.ctx, catalog.Ident{Namespace: []string{"ns"}, Name: "t"})
	if err != nil {
		w.t.Fatal(err)
	}
	return tbl
}

// readStats reads the file registered for snapshot id with icectl's
// reader.
func (w *wapTable) readStats(tbl *catalog.Table, id int64) []partstats.Row {
	w.t.Helper()
	f, ok := partstats.Registered(tbl.Metadata, id)
	if !ok {
		w.t.Fatalf("no partition statistics registered for snapshot %d: %v", id, tbl.Metadata.PartitionStatistics)
	}
	rows, err := partstats.Read(w.ctx, tbl.IO, tbl.Metadata, f)
	if err != nil {
		w.t.Fatal(err)
	}
	return rows
}

// full is icectl's full computation of snapshot id.
func (w *wapTable) full(tbl *catalog.Table, id int64) []partstats.Row {
	w.t.Helper()
	res, err := partstats.Compute(w.ctx, tbl.IO, tbl.Metadata, id, partstats.Options{Full: true})
	if err != nil {
		w.t.Fatal(err)
	}
	return res.Rows
}

// sortedRows orders rows as icectl does: Java orders rows of one
// partition in several specs in no fixed order.
func sortedRows(rows []partstats.Row, tbl *catalog.Table) []partstats.Row {
	ut, _ := partstats.PartitionType(tbl.Metadata)
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b partstats.Row) int {
		return cmp.Or(partstats.ComparePartitions(ut, a.Partition, b.Partition), cmp.Compare(a.SpecID, b.SpecID))
	})
	return out
}

func dumpRows(rows []partstats.Row) string {
	var b bytes.Buffer
	for _, r := range rows {
		j, _ := json.Marshal(javaView(r))
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// javaView is a row as the partition_stats request shows one.
func javaView(r partstats.Row) map[string]any {
	return map[string]any{"partition": r.Partition, "spec_id": r.SpecID, "data_record_count": r.DataRecordCount,
		"data_file_count": r.DataFileCount, "total_data_file_size_in_bytes": r.TotalDataFileSizeInBytes,
		"position_delete_record_count": r.PositionDeleteRecordCount, "position_delete_file_count": r.PositionDeleteFileCount,
		"equality_delete_record_count": r.EqualityDeleteRecordCount, "equality_delete_file_count": r.EqualityDeleteFileCount,
		"total_record_count": r.TotalRecordCount, "last_updated_at": r.LastUpdatedAt, "last_updated_snapshot_id": r.LastUpdatedSnapshotID,
		"dv_count": r.DVCount}
}

func normalized(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return normalizedJSON(t, b)
}

// normalizedJSON re-encodes a document with sorted keys, numbers exact.
func normalizedJSON(t testing.TB, b []byte) string {
	t.Helper()
	var x any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&x); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(x)
	return string(out)
}
