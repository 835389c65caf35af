package sparkinterop

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The toolbox verbs on the tables Spark wrote: rewrite-position-deletes,
// cherrypick, fast-forward, rollback --branch, rewrite-table-path and
// table register, each judged by Spark's read after it (and iceberg-go's
// row count), and the publish verbs against Spark's own procedures run on
// another checkout of the same table.

// posRewrite is the part of rewrite-position-deletes' JSON a test checks.
type posRewrite struct {
	PositionDeleteFiles int      `json:"position_delete_files"`
	Committed           bool     `json:"committed"`
	Removed             int      `json:"delete_files_removed"`
	Added               int      `json:"delete_files_added"`
	Dangling            []string `json:"dangling_delete_files"`
}

func (ch *chain) rewritePositionDeletes(flags ...string) posRewrite {
	ch.t.Helper()
	before := ch.want.SnapshotID
	out := ch.run([]string{"rewrite-position-deletes"}, flags...)
	var r posRewrite
	if err := json.Unmarshal(out, &r); err != nil {
		ch.t.Fatalf("icectl rewrite-position-deletes --output json: %v\n%s", err, out)
	}
	if r.Committed {
		ch.committed("icectl rewrite-position-deletes", before)
	}
	return r
}

// sparkSQL runs statements on the copy's catalog.
func (ch *chain) sparkSQL(statements ...string) []map[string]any {
	ch.t.Helper()
	return ch.wap().mustSQL(nil, statements...)
}

// wap is the copy as a wapTable: SQL and icectl with any arguments.
func (ch *chain) wap() *wapTable {
	return &wapTable{ctx: ch.ctx, t: ch.t, uri: ch.c.CatalogURI, name: ch.c.CatalogName, table: ch.c.Table}
}

// TestRewritePositionDeletes runs rewrite-position-deletes on every v2
// table of the corpus (position deletes of merge-on-read DELETE, UPDATE
// and MERGE, under evolved schemas and specs): Spark reads the same rows
// after it; then Spark's writes (whose rewrite_data_files leaves the
// deletes of the files it rewrote dangling) and a second run, which
// drops them; then Spark's own rewrite_position_delete_files reads and
// rewrites the files icectl wrote, and still reads the same rows.
func TestRewritePositionDeletes(t *testing.T) {
	t.Parallel()
	idx := loadCorpus(t)
	var mu sync.Mutex
	var rewrote, dropped []string
	t.Cleanup(func() {
		if !t.Failed() && (len(rewrote) == 0 || len(dropped) == 0) {
			t.Errorf("rewrite-position-deletes merged files of %v and dropped dangling ones of %v: want some of each", rewrote, dropped)
		}
	})
	for _, tab := range idx.Tables {
		if tab.FormatVersion != 2 {
			continue
		}
		t.Run(tab.Name, func(t *testing.T) {
			t.Parallel()
			ch := newChain(t, idx, tab)
			r := ch.rewritePositionDeletes("--min-input-files", "2")
			if r.PositionDeleteFiles == 0 {
				t.Fatalf("Spark's v2 table %s has no position-delete files", tab.Name)
			}
			ch.icectl([]string{"verify", "deletes"}, "--check-files")
			ch.write(tab)
			r2 := ch.rewritePositionDeletes("--min-input-files", "2")
			ch.icectl([]string{"verify", "deletes"}, "--check-files")
			mu.Lock()
			if r.Committed && r.Removed > r.Added {
				rewrote = append(rewrote, tab.Name)
			}
			if len(r2.Dangling) > 0 {
				dropped = append(dropped, tab.Name)
			}
			mu.Unlock()
			ch.sparkSQL(fmt.Sprintf("CALL {cat}.system.rewrite_position_delete_files(table => '%s', options => map('rewrite-all', 'true'))", tab.Table))
			ch.check("Spark's rewrite_position_delete_files after icectl's")
		})
	}
}

// refReads is Spark's count and checksum of the table at each ref (a
// branch, tag or snapshot id; "" for main), with each row's _row_id and
// _last_updated_sequence_number on v3, in one Spark query.
func (w *wapTable) refReads(refs []string, lineage bool) []string {
	w.t.Helper()
	cols := "count(*) AS n, CAST(coalesce(sum(CAST(xxhash64(to_json(struct(*))) AS DECIMAL(38,0))), 0) AS STRING) AS h"
	if lineage {
		cols += ", CAST(coalesce(sum(CAST(xxhash64(to_json(struct(*)), _row_id, _last_updated_sequence_number) AS DECIMAL(38,0))), 0) AS STRING) AS l, " +
			"count(DISTINCT _row_id) AS ids"
	}
	var q []string
	for i, ref := range refs {
		q = append(q, fmt.Sprintf("SELECT %d AS k, %s FROM {cat}.%s%s", i, cols, w.table, asOf(ref)))
	}
	out := make([]string, len(refs))
	for _, r := range w.mustSQL(nil, strings.Join(q, " UNION ALL ")) {
		out[int(r["k"].(float64))] = fmt.Sprint(r["n"], " rows, checksum ", r["h"], ", lineage ", r["l"], ", ", r["ids"], " row ids")
	}
	return out
}

// pubQuery is the query of pubRead: one scan of the table at ref (a
// branch, tag or snapshot id; "" for main). On v3 it groups the rows by
// _last_updated_sequence_number, with a total row (GROUPING SETS), so
// that one scan answers what four did (a read without and with lineage,
// and commitRead's three).
func pubQuery(table, ref string, v3 bool) string {
	from := " FROM {cat}." + table + asOf(ref)
	if !v3 {
		return "SELECT count(*) AS n, CAST(coalesce(sum(CAST(xxhash64(to_json(struct(*))) AS DECIMAL(38,0))), 0) AS STRING) AS h" + from
	}
	return "SELECT CAST(grouping_id() AS INT) AS g, s, count(*) AS n, count(DISTINCT rid) AS ids, " +
		"CAST(coalesce(sum(h), 0) AS STRING) AS h, CAST(coalesce(sum(hs), 0) AS STRING) AS hs, CAST(coalesce(sum(hl), 0) AS STRING) AS hl " +
		"FROM (SELECT CAST(xxhash64(to_json(struct(*))) AS DECIMAL(38,0)) AS h, " +
		"CAST(xxhash64(to_json(struct(*)), _last_updated_sequence_number) AS DECIMAL(38,0)) AS hs, " +
		"CAST(xxhash64(to_json(struct(*)), _row_id, _last_updated_sequence_number) AS DECIMAL(38,0)) AS hl, " +
		"_row_id AS rid, _last_updated_sequence_number AS s" + from + ") GROUP BY GROUPING SETS ((s), ())"
}

// pubRead is Spark's read of a table at a ref, from the rows of pubQuery:
// rows, its row count; across, what two checkouts with the same history
// of commits share, though Spark wrote their files in another order (the
// rows' checksum, and on v3 the checksum with each row's
// _last_updated_sequence_number and, per sequence number, the count of
// rows and of distinct row ids); within, what two refs of one checkout
// share when they are one snapshot (on v3 with every row's _row_id too).
// (Within one commit, which row gets which id follows the order of the
// files in the manifest, which Spark's tasks decide; so, once a delete
// removed some of a commit's rows, even the lowest and highest id left
// differ between two checkouts: a CI run saw [762,830] beside [762,831].)
type pubRead struct {
	rows           int64
	across, within string
}

func parsePubRead(t *testing.T, rows []map[string]any, v3 bool) pubRead {
	t.Helper()
	if !v3 {
		if len(rows) != 1 {
			t.Fatalf("Spark's read: %v", rows)
		}
		r := fmt.Sprint(rows[0]["n"], " rows, checksum ", rows[0]["h"])
		n, _ := rows[0]["n"].(float64)
		return pubRead{rows: int64(n), across: r, within: r}
	}
	num := func(v any) float64 { f, _ := v.(float64); return f }
	var total map[string]any
	var groups []map[string]any
	for _, r := range rows {
		if num(r["g"]) != 0 {
			total = r
		} else {
			groups = append(groups, r)
		}
	}
	if total == nil { // no row at all: grouping sets give no total then
		total = map[string]any{"n": 0.0, "ids": 0.0, "h": "0", "hs": "0", "hl": "0"}
	}
	slices.SortFunc(groups, func(a, b map[string]any) int { return cmp.Compare(num(a["s"]), num(b["s"])) })
	var b strings.Builder
	// Row ids unique across the table: an id given twice (a picked commit
	// numbered over ids the table had) shows here.
	fmt.Fprintf(&b, "%v rows, checksum %v, with sequence numbers %v; %v distinct row ids; by sequence number:",
		total["n"], total["h"], total["hs"], total["ids"])
	for _, g := range groups {
		fmt.Fprintf(&b, " %v:%v rows, %v ids", g["s"], g["n"], g["ids"])
	}
	return pubRead{rows: int64(num(total["n"])), across: b.String(),
		within: fmt.Sprint(total["n"], " rows, checksum ", total["h"], ", lineage ", total["hl"], ", ", total["ids"], " row ids")}
}

// publisher publishes with Spark's procedures or with icectl.
type publisher interface {
	fastForward(w *wapTable, branch, to string)
	cherrypick(w *wapTable, id string)
	rollbackBranch(w *wapTable, branch, id string)
}

type sparkPublisher struct{}

func (sparkPublisher) fastForward(w *wapTable, branch, to string) {
	w.mustSQL(nil, fmt.Sprintf("CALL {cat}.system.fast_forward('%s', '%s', '%s')", w.table, branch, to))
}

func (sparkPublisher) cherrypick(w *wapTable, id string) {
	w.mustSQL(nil, fmt.Sprintf("CALL {cat}.system.cherrypick_snapshot('%s', %s)", w.table, id))
}

func (sparkPublisher) rollbackBranch(w *wapTable, branch, id string) {
	w.mustSQL(nil, fmt.Sprintf("ALTER TABLE {cat}.%s REPLACE BRANCH %s AS OF VERSION %s", w.table, branch, id))
}

type icectlPublisher struct{}

func (icectlPublisher) run(w *wapTable, args ...string) {
	w.t.Helper()
	if out, stderr, code := w.icectl(args...); code != 0 {
		w.t.Fatalf("icectl %s: exit %d: %s%s", strings.Join(args, " "), code, out, stderr)
	}
}

func (p icectlPublisher) fastForward(w *wapTable, branch, to string) {
	p.run(w, "fast-forward", w.table, "--branch", branch, "--to", to)
}

func (p icectlPublisher) cherrypick(w *wapTable, id string) {
	p.run(w, "cherrypick", w.table, "--snapshot", id)
}

func (p icectlPublisher) rollbackBranch(w *wapTable, branch, id string) {
	p.run(w, "rollback", w.table, "--branch", branch, "--to-snapshot", id)
}

// publishTables are the corpus tables the publish verbs are tried on, and
// whether a dynamic overwrite (INSERT OVERWRITE of partitions) is picked
// too. Schema evolution on v3 only (its lineage is the harder case): each
// table costs Spark some 40 s of the suite, and the v2 evolved table is
// moved and has its deletes rewritten by the other tests here.
var publishTables = map[string]bool{
	"v2_partitioned_deletes": true,
	"v3_partitioned_dvs":     true,
	"v3_schema_evolution":    false,
}

// publishSteps is write-audit-publish on a Spark table, publishing with p:
// Spark writes an append and a merge-on-read delete to branch audit, main
// is fast-forwarded to it; Spark stages an append (spark.wap.id) and main
// moves (a delete), the staged snapshot is cherrypicked; on a partitioned
// table Spark stages a dynamic overwrite of one category and main moves in
// another, the overwrite is cherrypicked; audit is rolled back to where it
// began; Spark appends to main. It returns Spark's reads after each step
// (pubRead's across: with lineage on v3); iceberg-go must read main's rows
// after each. Spark's reads go in the requests of the statements before
// them where the test sends those (a request answers its last
// statement's rows): a request costs Spark about as much as a scan.
func publishSteps(t *testing.T, ch *chain, p publisher, overwrite bool) []string {
	w := ch.wap()
	v3 := ch.lineage
	t.Helper()
	var reads []string
	// record notes Spark's read of ref after step, from rows (pubQuery's).
	record := func(step, ref string, rows []map[string]any) pubRead {
		t.Helper()
		r := parsePubRead(t, rows, v3)
		reads = append(reads, step+": "+r.across)
		if ref == "" {
			ch.checkGo(step, r.rows)
		}
		return r
	}
	query := func(ref string) string { return pubQuery(w.table, ref, v3) }
	read := func(step, ref string) pubRead {
		t.Helper()
		return record(step, ref, w.mustSQL(nil, query(ref)))
	}
	start := ch.want.SnapshotID
	tbl := "{cat}." + w.table
	atStart := parsePubRead(t, w.mustSQL(nil, "ALTER TABLE "+tbl+" SET TBLPROPERTIES ('write.wap.enabled'='true')",
		"ALTER TABLE "+tbl+" CREATE BRANCH audit", query(start)), v3)
	audit := parsePubRead(t, w.mustSQL(map[string]string{"spark.wap.branch": "audit"},
		"INSERT INTO "+tbl+" SELECT * FROM "+tbl+" WHERE id % 10 = 3",
		"DELETE FROM "+tbl+" WHERE id % 13 = 4", query("audit")), v3)
	p.fastForward(w, "main", "audit")
	if got := read("fast-forward main to audit", ""); got.within != audit.within {
		t.Errorf("main reads %s after the fast-forward, audit %s", got.within, audit.within)
	}

	staged := func(wapID string, conf map[string]string, statement string) string {
		t.Helper()
		conf["spark.wap.id"] = wapID
		rows := w.mustSQL(conf, statement,
			"SELECT CAST(snapshot_id AS STRING) AS id FROM "+tbl+".snapshots WHERE summary['wap.id'] = '"+wapID+"'")
		if len(rows) != 1 {
			t.Fatalf("snapshots staged with wap.id %s: %v", wapID, rows)
		}
		return rows[0]["id"].(string)
	}
	id := staged("w1", map[string]string{}, "INSERT INTO "+tbl+" SELECT * FROM "+tbl+" WHERE id % 10 = 7")
	w.mustSQL(nil, "DELETE FROM "+tbl+" WHERE id % 17 = 5")
	p.cherrypick(w, id)
	read("cherrypick of a staged append", "")

	if overwrite {
		id := staged("w2", map[string]string{"spark.sql.sources.partitionOverwriteMode": "dynamic"},
			"INSERT OVERWRITE "+tbl+" SELECT id, category, ts, amount, concat('ow-', coalesce(note, '')) FROM "+tbl+" WHERE category = 'c1'")
		w.mustSQL(nil, "INSERT INTO "+tbl+" SELECT * FROM "+tbl+" WHERE category = 'c0' AND id % 10 = 1")
		p.cherrypick(w, id)
		read("cherrypick of a staged dynamic overwrite", "")
	}

	p.rollbackBranch(w, "audit", start)
	if got := read("rollback --branch audit", "audit"); got.within != atStart.within {
		t.Errorf("audit reads %s after the rollback to %s, which reads %s", got.within, start, atStart.within)
	}
	record("Spark's append after", "", w.mustSQL(nil, "INSERT INTO "+tbl+" SELECT * FROM "+tbl+" WHERE id % 10 = 5", query("")))
	return reads
}

// TestPublishVersusSpark runs write-audit-publish on Spark's v2 and v3
// tables twice, on two checkouts of the same table: once publishing with
// Spark's own procedures (fast_forward, cherrypick_snapshot, REPLACE
// BRANCH; Spark's reads after each step kept from an earlier run on the
// same corpus and sources, reference_test.go), once with icectl. Spark must read the same rows after each
// step of both, on v3 with the same _last_updated_sequence_number on every
// row, as many distinct row ids for each commit and no id twice
// (commitRead): icectl gives picked rows the sequence number Java gives
// them and ids of their own, and Spark's writes after it go on from there
// as after Java's. Within one
// checkout, main after a fast-forward reads exactly as the branch did
// (row ids included), and a branch rolled back as the snapshot it was
// rolled back to.
func TestPublishVersusSpark(t *testing.T) {
	t.Parallel()
	idx := loadCorpus(t)
	for _, tab := range idx.Tables {
		overwrite, ok := publishTables[tab.Name]
		if !ok {
			continue
		}
		t.Run(tab.Name, func(t *testing.T) {
			t.Parallel()
			work(t, tab.Name) // for both checkouts
			// One checkout at a time: each holds the table's link.
			want := reference(t, idx, "publish-"+tab.Name, func() []string {
				var want []string
				t.Run("spark", func(t *testing.T) {
					want = publishSteps(t, newChain(t, idx, tab), sparkPublisher{}, overwrite)
				})
				return want
			})
			t.Run("icectl", func(t *testing.T) {
				got := publishSteps(t, newChain(t, idx, tab), icectlPublisher{}, overwrite)
				for i := range want {
					if i >= len(got) || got[i] != want[i] {
						t.Errorf("after publishing with icectl, %s\nwith Spark: %s", got[min(i, len(got)-1)], want[i])
					}
				}
			})
		})
	}
}

// TestMoveCorpusTable moves Spark's tables (deletes, DVs, evolved schemas
// and specs, imported files) with rewrite-table-path, copies the file
// list, registers the newest metadata file with icectl table register
// under another name, and moves the original's files away: Spark reads
// the moved table as it read the original at every snapshot (its reads
// of the original kept from an earlier run on the same corpus and
// sources, reference_test.go), on v3 with the same lineage, and
// iceberg-go reads its rows.
func TestMoveCorpusTable(t *testing.T) {
	t.Parallel()
	idx := loadCorpus(t)
	for _, tab := range idx.Tables {
		if tab.FormatVersion < 2 {
			continue // rewrite-table-path refuses v1 tables
		}
		t.Run(tab.Name, func(t *testing.T) {
			t.Parallel()
			ch := newChain(t, idx, tab)
			w := ch.wap()
			v3 := ch.lineage
			out, stderr, code := w.icectl("table", "show", w.table, "--output", "json")
			if code != 0 {
				t.Fatalf("table show: %s", stderr)
			}
			var show struct {
				Location string `json:"location"`
			}
			if err := json.Unmarshal([]byte(out), &show); err != nil {
				t.Fatal(err)
			}
			// Main and every snapshot, as icectl lists them: as many as
			// Spark counted (newChain's read), main's head the one Spark
			// reads.
			out, stderr, code = w.icectl("snapshots", w.table, "--output", "json")
			if code != 0 {
				t.Fatalf("snapshots: %s", stderr)
			}
			var snaps struct {
				Current   *int64 `json:"current_snapshot_id"`
				Snapshots []struct {
					ID int64 `json:"snapshot_id"`
				} `json:"snapshots"`
			}
			if err := json.Unmarshal([]byte(out), &snaps); err != nil {
				t.Fatal(err)
			}
			if int64(len(snaps.Snapshots)) != ch.want.Snapshots || snaps.Current == nil || fmt.Sprint(*snaps.Current) != ch.want.SnapshotID {
				t.Fatalf("icectl snapshots lists %d snapshots, main at %v; Spark reads %d, main at %s", len(snaps.Snapshots), snaps.Current, ch.want.Snapshots, ch.want.SnapshotID)
			}
			refs := []string{""}
			for _, s := range snaps.Snapshots {
				refs = append(refs, fmt.Sprint(s.ID))
			}
			slices.Sort(refs)
			type reads struct{ Refs, Reads []string }
			pristine := reference(t, idx, "move-"+tab.Name, func() reads { return reads{refs, w.refReads(refs, v3)} })
			if !slices.Equal(pristine.Refs, refs) {
				t.Fatalf("Spark's reads of the corpus table at %v, the copy's snapshots %v", pristine.Refs, refs)
			}
			before := pristine.Reads

			dst := "file://" + filepath.Join(t.TempDir(), "moved", tab.Name)
			stage := filepath.Join(t.TempDir(), "stage")
			out, stderr, code = w.icectl("rewrite-table-path", w.table, "--from", show.Location, "--to", dst, "--stage", stage, "--output", "json")
			if code != 0 {
				t.Fatalf("rewrite-table-path: exit %d: %s", code, stderr)
			}
			var res struct {
				LatestVersion    string `json:"latest_version"`
				FileListLocation string `json:"file_list_location"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			copyList(t, res.FileListLocation)
			orig := localPath(show.Location)
			if err := os.Rename(orig, orig+".gone"); err != nil {
				t.Fatal(err)
			}
			moved := w.table + "_moved"
			if _, stderr, code := w.icectl("table", "register", moved, dst+"/metadata/"+res.LatestVersion); code != 0 {
				t.Fatalf("table register: exit %d: %s", code, stderr)
			}
			m := &wapTable{ctx: w.ctx, t: t, uri: w.uri, name: w.name, table: moved}
			for i, got := range m.refReads(refs, v3) {
				if got != before[i] {
					t.Errorf("Spark reads the moved table at %q (\"\" for main) as %s, the original as %s", refs[i], got, before[i])
				}
			}
			if ch.noGo == "" {
				if n := m.goRows(); !strings.HasPrefix(before[0], fmt.Sprint(n, " rows")) {
					t.Errorf("iceberg-go reads %d rows of the moved table, Spark %s", n, before[0])
				}
			}
		})
	}
}
