package sparkinterop

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestCompactOutputSpec moves a table written under five partition specs
// into its current one (bucket(8, id), days(ts)) with `icectl compact
// --output-spec current --rewrite-all`: Spark reads the same rows and
// lineage, every live data file is then in the current spec, and each
// row's partition is what Iceberg's own bucket and days functions give.
func TestCompactOutputSpec(t *testing.T) {
	t.Parallel()
	idx := loadCorpus(t)
	var tab corpusTable
	for _, x := range idx.Tables {
		if x.Name == "v3_spec_evolution" {
			tab = x
		}
	}
	if tab.Name == "" {
		t.Fatal("the corpus has no table v3_spec_evolution")
	}
	ch := newChain(t, idx, tab)
	tbl := "{cat}." + ch.c.Table
	specs := func() map[string]bool {
		out := map[string]bool{}
		for _, row := range ch.c.sql(ch, "SELECT DISTINCT CAST(spec_id AS STRING) AS s FROM "+tbl+".data_files") {
			out[fmt.Sprint(row["s"])] = true
		}
		return out
	}
	if before := specs(); len(before) < 2 {
		t.Fatalf("the table's data files are in specs %v: the test would prove nothing", before)
	}
	var h struct {
		DefaultSpecID int `json:"default_spec_id"`
	}
	if err := json.Unmarshal(ch.icectl([]string{"health"}), &h); err != nil {
		t.Fatal(err)
	}
	ch.compact(1, "--output-spec", "current", "--rewrite-all")
	if after := specs(); len(after) != 1 || !after[fmt.Sprint(h.DefaultSpecID)] {
		t.Errorf("after the rewrite the data files are in specs %v, want only the current spec %d", after, h.DefaultSpecID)
	}
	misplaced := ch.c.sql(ch, "SELECT count(*) AS n FROM "+tbl+" WHERE NOT (_partition.id_b8 <=> {cat}.system.bucket(8, id)) "+
		"OR NOT (_partition.ts_day <=> {cat}.system.days(ts))")
	if n := fmt.Sprint(misplaced[0]["n"]); n != "0" {
		t.Errorf("Spark finds %s rows outside the partition bucket(8, id), days(ts) gives them", n)
	}
	ch.icectl([]string{"verify", "deletes"}, "--check-files")
}
