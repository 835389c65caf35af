package sparkinterop

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestDeleteRowsWithSpark: icectl delete-rows on the v3 corpus table of
// five partition specs with DVs: files proven to match go whole; with
// merge-on-read others get DVs merged with Spark's, with copy-on-write
// they are replaced by copies without the deleted rows. Spark then reads
// exactly the rows its own predicate keeps of the table before, with
// their values and row lineage, and no row that matches; iceberg-go reads
// as many. (Spark's session time zone is UTC, as icectl reads a literal.)
func TestDeleteRowsWithSpark(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"merge-on-read", "copy-on-write"} {
		t.Run(mode, func(t *testing.T) { deleteRowsWithSpark(t, mode) })
	}
}

func deleteRowsWithSpark(t *testing.T, mode string) {
	idx := loadCorpus(t)
	var tab corpusTable
	for _, c := range idx.Tables {
		if c.Name == "v3_spec_evolution" {
			tab = c
		}
	}
	if tab.Name == "" {
		t.Fatal("the corpus has no v3_spec_evolution table")
	}
	ch := newChain(t, idx, tab)
	const where = "ts < '2024-06-03' OR (category = 'c1' AND id > 400)"
	const sparkWhere = "ts < TIMESTAMP '2024-06-03 00:00:00' OR (category = 'c1' AND id > 400)"
	tbl := "{cat}." + ch.c.Table
	ch.c.sql(ch, fmt.Sprintf("ALTER TABLE %s SET TBLPROPERTIES ('write.delete.mode' = '%s')", tbl, mode))
	digest := func(from, filter string) (int64, string) {
		rows := ch.c.sql(ch, fmt.Sprintf("SELECT count(*) AS n, CAST(sum(CAST(hash(id, category, ts, amount, note, _row_id, _last_updated_sequence_number) AS BIGINT)) AS STRING) AS h FROM %s %s", from, filter))
		return int64(rows[0]["n"].(float64)), fmt.Sprint(rows[0]["h"])
	}
	keepN, keepH := digest(tbl, "WHERE NOT coalesce("+sparkWhere+", false)")
	before := ch.want.Rows
	if keepN == before || keepN == 0 {
		t.Fatalf("the predicate keeps %d of %d rows: the test deletes nothing or everything", keepN, before)
	}
	var rep struct {
		RowsBefore int64 `json:"rows_before"`
		RowsAfter  int64 `json:"rows_after"`
		Deleted    int64 `json:"deleted_rows"`
		Files      int   `json:"files_removed"`
		Added      int   `json:"delete_files_added"`
		Rewritten  int   `json:"files_rewritten"`
	}
	if err := json.Unmarshal(ch.icectl([]string{"delete-rows"}, "--where", where), &rep); err != nil {
		t.Fatal(err)
	}
	partial := rep.Added > 0 && rep.Rewritten == 0
	if mode == "copy-on-write" {
		partial = rep.Added == 0 && rep.Rewritten > 0
	}
	if rep.RowsBefore != before || rep.Deleted != before-keepN || rep.RowsAfter != keepN || rep.Files == 0 || !partial {
		t.Errorf("icectl reports %+v; Spark: %d rows before, %d kept", rep, before, keepN)
	}
	got := ch.c.read(ch.ctx, t)
	if got.Rows != keepN {
		t.Errorf("Spark reads %d rows after delete-rows, want %d", got.Rows, keepN)
	}
	if n, h := digest(tbl, ""); n != keepN || h != keepH {
		t.Errorf("Spark reads %d rows with digest %s after delete-rows, want the %d rows (digest %s) its predicate keeps", n, h, keepN, keepH)
	}
	if n, _ := digest(tbl, "WHERE "+sparkWhere); n != 0 {
		t.Errorf("Spark reads %d matching rows after delete-rows", n)
	}
	ch.checkGo("delete-rows", keepN)
}
