package sparkinterop

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// sortedRewrite is what one rewrite of a table copy left, as Spark reads
// it: the rows, the order of the rows of each partition, and what the
// rewrite recorded.
// (Exported fields: Spark's is kept from run to run, reference_test.go.)
type sortedRewrite struct {
	Read readResult
	// Order holds, for each partition (Spark's JSON of _partition), the
	// ids of its rows in file order; Files counts the partition's files.
	Order map[string][]int64
	Files map[string]int
	// SortOrderIDs are the distinct sort_order_id of the live data files
	// ("null" for none); Operation and Summary are main's head's.
	SortOrderIDs []string
	Operation    string
	Summary      map[string]string
	// TableOrder is the table's sort order as Spark shows it (its
	// sort-order property), before and after.
	TableOrderBefore, TableOrderAfter string
}

// sql runs statements on the copy's catalog ("{cat}" names it) and
// returns the rows of the last one.
func (c tableCopy) sql(ch *chain, statements ...string) []map[string]any {
	ch.t.Helper()
	var res struct {
		Rows []map[string]any `json:"rows"`
	}
	spark.must(ch.ctx, ch.t, "sql", map[string]any{"catalog_uri": c.CatalogURI, "catalog_name": c.CatalogName,
		"statements": statements}, &res)
	return res.Rows
}

// tableOrder is the table's sort order as Spark's SHOW TBLPROPERTIES
// shows it ("does not have property" when unsorted).
func (ch *chain) tableOrder() string {
	ch.t.Helper()
	rows := ch.c.sql(ch, "SHOW TBLPROPERTIES {cat}."+ch.c.Table+" ('sort-order')")
	return fmt.Sprint(rows[0]["value"])
}

// rewritten collects what the rewrite left on the copy.
func (ch *chain) rewritten(tableOrderBefore string) sortedRewrite {
	ch.t.Helper()
	t := "{cat}." + ch.c.Table
	r := sortedRewrite{Read: ch.want, Order: map[string][]int64{}, Files: map[string]int{},
		TableOrderBefore: tableOrderBefore, TableOrderAfter: ch.tableOrder()}
	seen := map[string]bool{}
	for _, row := range ch.c.sql(ch, "SELECT to_json(_partition) AS p, _file AS f, id FROM "+t+" ORDER BY p, f, _pos") {
		p, f := fmt.Sprint(row["p"]), fmt.Sprint(row["f"])
		r.Order[p] = append(r.Order[p], int64(row["id"].(float64)))
		if !seen[f] {
			seen[f] = true
			r.Files[p]++
		}
	}
	for _, row := range ch.c.sql(ch, "SELECT DISTINCT CAST(sort_order_id AS STRING) AS id FROM "+t+".data_files") {
		r.SortOrderIDs = append(r.SortOrderIDs, fmt.Sprint(row["id"]))
	}
	slices.Sort(r.SortOrderIDs)
	head := ch.c.sql(ch, "SELECT operation, to_json(summary) AS summary FROM "+t+".snapshots "+
		"WHERE snapshot_id = (SELECT snapshot_id FROM "+t+".refs WHERE name = 'main')")
	r.Operation = fmt.Sprint(head[0]["operation"])
	if err := json.Unmarshal([]byte(fmt.Sprint(head[0]["summary"])), &r.Summary); err != nil {
		ch.t.Fatalf("summary of main's head: %v", err)
	}
	return r
}

// sparkOnlySummary are the summary keys that name Spark's run, not what
// the rewrite did.
var sparkOnlySummary = []string{"app-id", "engine-name", "engine-version", "iceberg-version"}

// icectlOnlySummary are keys icectl records and Spark's rewrite does not:
// the manifests the commit rewrote, which Java records for
// rewrite_manifests (docs/commands.md, "Sorted and z-ordered compaction").
var icectlOnlySummary = []string{"manifests-created", "manifests-kept", "manifests-replaced"}

// v2DeleteSummary are the counts of position-delete files, where icectl
// and Spark differ by design on v2: icectl drops a delete file once every
// data file it applies to is rewritten, Spark 1.10 only a file-scoped one
// and leaves the others, which apply to nothing any more.
var v2DeleteSummary = []string{"removed-delete-files", "removed-position-delete-files", "removed-position-deletes",
	"total-delete-files", "total-position-deletes"}

// TestSortRewriteBesideSpark compacts Spark-written v2 and v3 tables with
// deletes (position deletes, DVs), partitioned and not, with icectl's
// --sort='ORDER' and --zorder, and the same copies with Spark's
// rewrite_data_files sort strategy and the same order: Spark reads the
// same rows after either (Spark's rewrite kept from an earlier run on the
// same corpus and sources, reference_test.go; every column, deleted rows still deleted; on
// v3 the same _row_id and _last_updated_sequence_number), the rows of
// each partition come out in the same order from both, and icectl records
// what Spark records (operation, summary counts, files' sort_order_id,
// the table's own sort order untouched).
func TestSortRewriteBesideSpark(t *testing.T) {
	t.Parallel()
	idx := loadCorpus(t)
	orders := []struct{ name, icectl, spark string }{
		// Nulls among the notes, both directions, ties broken by id: one
		// order, whoever sorts.
		{"sort", "--sort=category ASC NULLS FIRST, note DESC NULLS LAST, id", "category ASC NULLS FIRST, note DESC NULLS LAST, id"},
		// A string (with nulls and empty strings) and a long.
		{"zorder", "--zorder=note,id", "zorder(note,id)"},
	}
	var tabs []corpusTable
	for _, name := range []string{"v2_unpartitioned_deletes", "v2_partitioned_deletes", "v3_unpartitioned_dvs", "v3_partitioned_dvs"} {
		i := slices.IndexFunc(idx.Tables, func(tab corpusTable) bool { return tab.Name == name })
		if i < 0 {
			t.Fatalf("no table %s in the corpus", name)
		}
		tabs = append(tabs, idx.Tables[i])
	}
	// Every table once before any twice: the parallel subtests that run
	// together then hold different tables' links, not wait for one.
	for _, o := range orders {
		for _, tab := range tabs {
			t.Run(tab.Name+"/"+o.name, func(t *testing.T) {
				t.Parallel()
				work(t, tab.Name) // for both copies
				// One copy at a time holds the table's link: each in a
				// subtest, whose end lets it go.
				var ice, sp sortedRewrite
				t.Run("icectl", func(t *testing.T) {
					ch := newChain(t, idx, tab)
					before := ch.tableOrder()
					ch.compact(1, "--rewrite-all", o.icectl)
					ice = ch.rewritten(before)
				})
				// Spark's rewrite of the pristine table, kept from an
				// earlier run on the same corpus and sources.
				sp = reference(t, idx, "sort-"+tab.Name+"-"+o.name, func() sortedRewrite {
					var sp sortedRewrite
					t.Run("spark", func(t *testing.T) {
						ch := newChain(t, idx, tab)
						before := ch.tableOrder()
						ch.c.sql(ch, fmt.Sprintf("CALL {cat}.system.rewrite_data_files(table => '%s', strategy => 'sort', "+
							"sort_order => '%s', options => map('rewrite-all', 'true'))", ch.c.Table, o.spark))
						ch.check("Spark's rewrite_data_files sort_order => '" + o.spark + "'")
						sp = ch.rewritten(before)
					})
					return sp
				})
				if t.Failed() {
					return
				}
				compareRewrites(t, ice, sp)
			})
		}
	}
}

// compareRewrites fails the test where icectl's rewrite left or recorded
// something else than Spark's.
func compareRewrites(t *testing.T, ice, sp sortedRewrite) {
	t.Helper()
	v2 := ice.Read.FormatVersion == 2
	if ice.Read.Rows != sp.Read.Rows || ice.Read.Checksum != sp.Read.Checksum || ice.Read.Lineage != sp.Read.Lineage {
		t.Errorf("Spark reads %d rows, checksum %s, lineage %q after icectl; %d, %s, %q after Spark",
			ice.Read.Rows, ice.Read.Checksum, ice.Read.Lineage, sp.Read.Rows, sp.Read.Checksum, sp.Read.Lineage)
	}
	if !maps.Equal(ice.Files, sp.Files) {
		t.Errorf("files per partition: icectl %v, Spark %v", ice.Files, sp.Files)
	}
	for p, ids := range sp.Order {
		got := ice.Order[p]
		if !slices.Equal(got, ids) {
			i := 0
			for i < min(len(got), len(ids)) && got[i] == ids[i] {
				i++
			}
			t.Errorf("partition %s: icectl's rows in another order than Spark's from row %d:\n icectl %v\n Spark  %v",
				p, i, window(got, i), window(ids, i))
		}
	}
	if !slices.Equal(ice.SortOrderIDs, sp.SortOrderIDs) {
		t.Errorf("data files' sort_order_id: icectl %v, Spark %v", ice.SortOrderIDs, sp.SortOrderIDs)
	}
	if ice.Operation != sp.Operation {
		t.Errorf("operation: icectl %q, Spark %q", ice.Operation, sp.Operation)
	}
	for k, want := range sp.Summary {
		if slices.Contains(sparkOnlySummary, k) || v2 && slices.Contains(v2DeleteSummary, k) {
			continue
		}
		// Sizes depend on the writer's encoding; every count must agree.
		if strings.HasSuffix(k, "-size") {
			if _, ok := ice.Summary[k]; !ok {
				t.Errorf("summary: icectl has no %s (Spark %s)", k, want)
			}
			continue
		}
		if got, ok := ice.Summary[k]; !ok || got != want {
			t.Errorf("summary %s: icectl %q, Spark %q", k, got, want)
		}
	}
	for k, v := range ice.Summary {
		_, ok := sp.Summary[k]
		if !ok && !strings.HasPrefix(k, "icectl.") && !slices.Contains(icectlOnlySummary, k) && !(v2 && slices.Contains(v2DeleteSummary, k)) {
			t.Errorf("summary: icectl records %s=%s, Spark does not", k, v)
		}
	}
	if v2 {
		// Every data file was rewritten: no position delete applies to
		// any file left.
		for _, k := range []string{"total-delete-files", "total-position-deletes"} {
			if ice.Summary[k] != "0" {
				t.Errorf("summary %s: icectl %q, want 0 after rewriting every data file", k, ice.Summary[k])
			}
		}
	}
	if ice.TableOrderAfter != ice.TableOrderBefore || sp.TableOrderAfter != sp.TableOrderBefore {
		t.Errorf("the table's sort order: icectl's rewrite %q -> %q, Spark's %q -> %q",
			ice.TableOrderBefore, ice.TableOrderAfter, sp.TableOrderBefore, sp.TableOrderAfter)
	}
}

// window is ids around index i.
func window(ids []int64, i int) []int64 {
	return ids[max(0, i-3):min(len(ids), i+5)]
}
