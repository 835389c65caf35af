package sparkinterop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// wapTable is a table Spark writes in a catalog icectl created.
type wapTable struct {
	ctx              context.Context
	t                *testing.T
	uri, name, table string
	cat              *sqlcat.Catalog // opened by load, for tests that read the table in Go
}

// newWapTable creates an empty catalog in dir (icectl catalog init: a
// catalog Spark opens without initializing, which would hold SQLite's
// lock) named name and the process id, unique in the Spark session.
func newWapTable(ctx context.Context, t *testing.T, dir, name string) *wapTable {
	t.Helper()
	work(t, "")
	w := &wapTable{ctx: ctx, t: t, uri: "sqlite:///" + filepath.Join(dir, "catalog.db"),
		name: fmt.Sprintf("%s_%d", name, os.Getpid()), table: "ns.t"}
	if _, stderr, code := w.icectl("catalog", "init", "--warehouse", "file://"+filepath.Join(dir, "wh")); code != 0 {
		t.Fatalf("catalog init: %s", stderr)
	}
	return w
}

// forVersions runs fn for format versions 2 and 3, each on a new
// catalog (newWapTable, in dir) with namespace ns, in parallel: they
// share nothing, and two Spark sessions serve them (sparkSessions).
func forVersions(t *testing.T, prefix string, fn func(t *testing.T, w *wapTable, dir string, v int)) {
	testenv.Need(t, testenv.Spark, "PySpark and Iceberg's Spark runtime (scripts/install-spark)")
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader")
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			t.Parallel()
			work(t, "") // before the test's deadline starts
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			dir := t.TempDir()
			w := newWapTable(ctx, t, dir, fmt.Sprintf("%s%d", prefix, v))
			w.mustSQL(nil, "CREATE NAMESPACE {cat}.ns")
			fn(t, w, dir, v)
		})
	}
}

// sql runs statements in Spark with the session options conf and returns
// the rows of the last one.
func (w *wapTable) sql(conf map[string]string, statements ...string) ([]map[string]any, error) {
	var res struct {
		Rows []map[string]any `json:"rows"`
	}
	err := spark.call(w.ctx, w.t, "sql", map[string]any{"catalog_uri": w.uri, "catalog_name": w.name, "statements": statements, "conf": conf}, &res)
	return res.Rows, err
}

func (w *wapTable) mustSQL(conf map[string]string, statements ...string) []map[string]any {
	w.t.Helper()
	rows, err := w.sql(conf, statements...)
	if err != nil {
		w.t.Fatalf("%v\n(Spark's log: %s)", err, spark.log())
	}
	return rows
}

// asOf is the time-travel clause reading ref (a branch, a tag or a
// snapshot id), "" for main.
func asOf(ref string) string {
	if ref == "" {
		return ""
	}
	return " VERSION AS OF '" + ref + "'"
}

// read is Spark's row count and checksum of the table at ref ("" for
// main), and on v3 its count of distinct row ids.
func (w *wapTable) read(ref string) string {
	w.t.Helper()
	at := asOf(ref)
	cols := "count(*) AS n, CAST(sum(CAST(xxhash64(to_json(struct(*))) AS DECIMAL(38,0))) AS STRING) AS h"
	rows := w.mustSQL(nil, "SELECT "+cols+" FROM {cat}."+w.table+at)
	return fmt.Sprint(rows[0]["n"], "/", rows[0]["h"])
}

// icectl runs the icectl binary on the table; it returns stdout, stderr
// and the exit code.
func (w *wapTable) icectl(args ...string) (string, string, int) {
	w.t.Helper()
	cmd := exec.CommandContext(w.ctx, testenv.Icectl(w.t), append(args, "--catalog-uri", w.uri, "--catalog-name", w.name)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func (w *wapTable) goRows() int {
	w.t.Helper()
	out := testenv.IcebergGo(w.ctx, w.t, "scan", "--catalog-uri", w.uri, "--catalog-name", w.name, "--table", w.table)
	var res struct {
		Rows []json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		w.t.Fatal(err)
	}
	return len(res.Rows)
}

// TestWriteAuditPublish runs write-audit-publish with Spark as the writer
// and reader: Spark writes to an audit branch (spark.wap.branch), icectl
// fast-forwards main to it; Spark stages a snapshot (spark.wap.id), main
// moves, icectl cherrypicks it. Spark and iceberg-go read main after
// each; Spark's own cherrypick_snapshot then refuses to publish the same
// wap.id again, which it decides from the summary icectl wrote.
func TestWriteAuditPublish(t *testing.T) {
	t.Parallel()
	forVersions(t, "wap", func(t *testing.T, w *wapTable, dir string, v int) {
		w.mustSQL(nil,
			fmt.Sprintf("CREATE TABLE {cat}.ns.t (id bigint, note string) USING iceberg TBLPROPERTIES ('format-version'='%d', 'write.wap.enabled'='true')", v),
			"INSERT INTO {cat}.ns.t SELECT id, concat('n', id) FROM range(0, 100, 1, 2)")
		w.mustSQL(map[string]string{"spark.wap.branch": "audit"}, "INSERT INTO {cat}.ns.t SELECT id, concat('a', id) FROM range(100, 150, 1, 2)")
		audit := w.read("audit")
		if got := w.read(""); !strings.HasPrefix(got, "100/") {
			t.Fatalf("main reads %s while the audit branch is unpublished", got)
		}
		if _, stderr, code := w.icectl("fast-forward", w.table, "--branch", "main", "--to", "audit"); code != 0 {
			t.Fatalf("fast-forward: exit %d: %s", code, stderr)
		}
		if got := w.read(""); got != audit || !strings.HasPrefix(got, "150/") {
			t.Errorf("Spark reads main as %s after the fast-forward, the audit branch as %s", got, audit)
		}
		if n := w.goRows(); n != 150 {
			t.Errorf("iceberg-go reads %d rows of main, want 150", n)
		}

		// A staged snapshot, then main moves: cherrypick.
		w.mustSQL(map[string]string{"spark.wap.id": "w1"}, "INSERT INTO {cat}.ns.t SELECT id, concat('w', id) FROM range(150, 160, 1, 2)")
		staged := w.mustSQL(nil, "SELECT CAST(snapshot_id AS STRING) AS id FROM {cat}.ns.t.snapshots WHERE summary['wap.id'] = 'w1'")
		if len(staged) != 1 || !strings.HasPrefix(w.read(""), "150/") {
			t.Fatalf("staged snapshots %v", staged)
		}
		id := staged[0]["id"].(string)
		w.mustSQL(nil, "INSERT INTO {cat}.ns.t SELECT id, concat('m', id) FROM range(160, 165, 1, 2)")
		out, stderr, code := w.icectl("cherrypick", w.table, "--snapshot", id, "--output", "json")
		if code != 0 || !strings.Contains(out, `"kind": "append"`) && !strings.Contains(out, `"kind":"append"`) {
			t.Fatalf("cherrypick: exit %d: %s%s", code, out, stderr)
		}
		if got := w.read(""); !strings.HasPrefix(got, "165/") {
			t.Errorf("Spark reads main as %s after the cherrypick, want 165 rows", got)
		}
		head := w.mustSQL(nil, "SELECT summary['published-wap-id'] AS wap, summary['source-snapshot-id'] AS src, operation FROM {cat}.ns.t.snapshots "+
			"WHERE snapshot_id = (SELECT snapshot_id FROM {cat}.ns.t.refs WHERE name = 'main')")
		if len(head) != 1 || head[0]["wap"] != "w1" || head[0]["src"] != id || head[0]["operation"] != "append" {
			t.Errorf("main's head as Spark sees it: %v", head)
		}
		if n := w.goRows(); n != 165 {
			t.Errorf("iceberg-go reads %d rows of main, want 165", n)
		}
		if v >= 3 {
			ids := w.mustSQL(nil, "SELECT count(_row_id) AS n, count(DISTINCT _row_id) AS d FROM {cat}.ns.t")
			if fmt.Sprint(ids[0]["n"]) != "165" || fmt.Sprint(ids[0]["d"]) != "165" {
				t.Errorf("row ids after the cherrypick: %v", ids)
			}
		}
		// Java's own check sees the publication icectl recorded.
		if _, err := w.sql(nil, "CALL {cat}.system.cherrypick_snapshot('ns.t', "+id+")"); err == nil || !strings.Contains(strings.ToLower(err.Error()), "w1") {
			t.Errorf("Spark's cherrypick of the published snapshot: %v, want a duplicate wap.id refusal", err)
		}
		if got := w.read(""); !strings.HasPrefix(got, "165/") {
			t.Errorf("main reads %s after Spark's refused cherrypick", got)
		}
		if _, stderr, code := w.icectl("cherrypick", w.table, "--snapshot", id); code != 1 || !strings.Contains(stderr, "already") {
			t.Errorf("icectl's second cherrypick: exit %d: %s", code, stderr)
		}
	})
}

// localPath is the file a file: URI (file:/p or file:///p) or path names.
func localPath(p string) string {
	p = strings.TrimPrefix(p, "file://")
	return strings.TrimPrefix(p, "file:")
}

// copyList copies every source,target pair of rewrite-table-path's file
// list (local paths).
func copyList(t *testing.T, fileList string) {
	t.Helper()
	list, err := os.ReadFile(fileList)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		src, to, _ := strings.Cut(line, ",")
		b, err := os.ReadFile(localPath(src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(localPath(to)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(localPath(to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMoveTableSpark moves a table Spark wrote, with merge-on-read deletes
// (position-delete files on v2, deletion vectors on v3), to another
// directory with rewrite-table-path, copies the file list, and has Spark
// register the newest metadata file (register_table) and read it: the
// same rows as the original, also after the original's files are gone;
// iceberg-go reads them too.
func TestMoveTableSpark(t *testing.T) {
	t.Parallel()
	forVersions(t, "move", func(t *testing.T, w *wapTable, dir string, v int) {
		w.mustSQL(nil,
			// Hadoop names local files file:/p: the location in that form
			// too, so that one prefix covers every path.
			fmt.Sprintf("CREATE TABLE {cat}.ns.t (id bigint, cat string, note string) USING iceberg PARTITIONED BY (cat) "+
				"LOCATION 'file:%s' TBLPROPERTIES ('format-version'='%d', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')",
				filepath.Join(dir, "wh", "ns", "t"), v),
			"INSERT INTO {cat}.ns.t SELECT id, concat('c', id % 3), concat('n', id) FROM range(0, 300, 1, 2)",
			"DELETE FROM {cat}.ns.t WHERE id % 7 = 0",
			"UPDATE {cat}.ns.t SET note = 'u' WHERE id % 11 = 1",
			"INSERT INTO {cat}.ns.t SELECT id, concat('c', id % 3), concat('n', id) FROM range(300, 350, 1, 2)")
		before := w.read("")
		out, stderr, code := w.icectl("table", "show", w.table, "--output", "json")
		if code != 0 {
			t.Fatalf("table show: %s", stderr)
		}
		var show struct {
			Location string `json:"location"`
		}
		if err := json.Unmarshal([]byte(out), &show); err != nil || show.Location == "" {
			t.Fatalf("table show: %s (%v)", out, err)
		}
		moved := t.TempDir()
		dst := strings.Replace(show.Location, dir, moved, 1)
		stage := filepath.Join(t.TempDir(), "stage")
		out, stderr, code = w.icectl("rewrite-table-path", w.table, "--from", show.Location, "--to", dst, "--stage", stage, "--output", "json")
		if code != 0 {
			t.Fatalf("rewrite-table-path: exit %d: %s", code, stderr)
		}
		var res struct {
			LatestVersion    string `json:"latest_version"`
			FileListLocation string `json:"file_list_location"`
			Deletes          int    `json:"rewritten_delete_file_paths_count"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || res.Deletes == 0 {
			t.Fatalf("rewrite-table-path: %s (%v)", out, err)
		}
		copyList(t, res.FileListLocation)
		if err := os.RemoveAll(localPath(show.Location)); err != nil {
			t.Fatal(err)
		}
		newest := dst + "/metadata/" + res.LatestVersion
		w.mustSQL(nil, "CALL {cat}.system.register_table(table => 'ns.moved', metadata_file => '"+newest+"')")
		m := &wapTable{ctx: w.ctx, t: t, uri: w.uri, name: w.name, table: "ns.moved"}
		if got := m.read(""); got != before {
			t.Errorf("Spark reads the moved table as %s, the original as %s", got, before)
		}
		if !strings.HasPrefix(before, fmt.Sprint(m.goRows(), "/")) {
			t.Errorf("iceberg-go reads %d rows of the moved table, Spark %s", m.goRows(), before)
		}
	})
}
