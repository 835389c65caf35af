package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/iceberg/spec"
	icefx "github.com/icectl/icectl/internal/testing/fixture"
)

// refusalTable builds a table that would give the verb under test work
// (six small files, each with a position delete, and six small
// position-delete files; upgraded when v3), made bad as the case asks.
type refusalTable func(t *testing.T) *icefx.Table

func refusalBase(t *testing.T, v int) *icefx.Table {
	c := icefx.NewSQLite(t, icefx.WithName("default"))
	files := [][]int64{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}}
	deletes := map[int][]int64{}
	for i := range files {
		deletes[i] = []int64{0}
	}
	if v == 1 {
		// icectl writes no v1 snapshot: an empty v1 table.
		return c.Table(t, icefx.TableOptions{FormatVersion: 1})
	}
	tb := c.Table(t, icefx.TableOptions{Files: files, Deletes: deletes})
	// Six more small position-delete files: work for
	// rewrite-position-deletes, and at v3 for dv merge.
	for k := range int64(6) {
		tb.AddDeletes(t, nil, tb.WritePositionDeletes(t, nil, fmt.Sprintf("pos%d", k), nil, map[string][]int64{tb.Data[0].FilePath: {k + 1}}, false))
	}
	if v >= 3 {
		tb.Update(t, spec.UpgradeFormatVersion{FormatVersion: v})
	}
	return tb
}

func plainTable(v int) refusalTable {
	return func(t *testing.T) *icefx.Table { return refusalBase(t, v) }
}

// dotDotTable lists a data file whose path is relative and climbs with
// "..": a crafted manifest, which every reader refuses.
func dotDotTable(v int) refusalTable {
	return func(t *testing.T) *icefx.Table {
		tb := refusalBase(t, v)
		tb.Append(t, nil, icefx.Listed("../../outside/evil.parquet", nil, 2, 500))
		return tb
	}
}

// noFieldIDsTable holds a data file written without field ids, and the
// table has no name mapping: no reader can tell its columns.
func noFieldIDsTable(t *testing.T) *icefx.Table {
	tb := refusalBase(t, 2)
	tb.Append(t, nil, tb.WriteIDsNoFieldIDs(t, nil, "hive", 20, 21))
	return tb
}

// heldTable is plainTable with its claim held by another run.
func heldTable(v int) refusalTable {
	return func(t *testing.T) *icefx.Table {
		tb := refusalBase(t, v)
		// An orphan for orphan to find (it claims only to remove one).
		if err := os.WriteFile(filepath.Join(tb.Cat.Dir, "wh", tb.ID.Namespace[0], tb.ID.Name, "data", "stray.parquet"), []byte("stray"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := claim.Take(context.Background(), tb.Cat, tb.ID, claim.Options{Owner: "other-host:42", Verb: "maintain"}); err != nil {
			t.Fatal(err)
		}
		return tb
	}
}

// gcOffTable is heldTable's orphan on a table with gc.enabled=false.
func gcOffTable(t *testing.T) *icefx.Table {
	tb := refusalBase(t, 2)
	if err := os.WriteFile(filepath.Join(tb.Cat.Dir, "wh", tb.ID.Namespace[0], tb.ID.Name, "data", "stray.parquet"), []byte("stray"), 0o644); err != nil {
		t.Fatal(err)
	}
	tb.Update(t, spec.SetProperties{Updates: map[string]string{"gc.enabled": "false"}})
	return tb
}

// TestRefusalsWriteNothing: every verb that changes a table, given input
// it refuses (bad flags, a format version it does not work on, a crafted
// path, a file no reader can read, a claim another run holds), exits with
// one line and the refusal's code, and the catalog database and the
// warehouse are byte-identical after it: a refusal is decided before the
// claim, whose commits would otherwise add two metadata versions.
func TestRefusalsWriteNothing(t *testing.T) {
	cases := []struct {
		name  string
		table refusalTable
		args  []string
		code  int
		says  string
	}{
		{"compact/where on no column", plainTable(2), []string{"compact", "--where", "nope = 1"}, ExitUsage, "nope"},
		{"compact/sort on no column", plainTable(2), []string{"compact", "--sort=nope"}, ExitUsage, "nope"},
		{"compact/v1", plainTable(1), []string{"compact"}, ExitFailure, "upgrade"},
		{"compact/dot-dot path", dotDotTable(2), []string{"compact"}, ExitFailure, `".."`},
		{"compact/no field ids", noFieldIDsTable, []string{"compact"}, ExitFailure, spec.PropNameMapping},
		{"compact/held", heldTable(2), []string{"compact"}, ExitConflict, "other-host:42"},
		{"dv merge/v2", plainTable(2), []string{"dv", "merge"}, ExitFailure, "--to 3"},
		{"dv merge/where on no column", plainTable(3), []string{"dv", "merge", "--where", "nope = 1"}, ExitUsage, "nope"},
		{"dv merge/dot-dot path", dotDotTable(3), []string{"dv", "merge"}, ExitFailure, `".."`},
		{"dv merge/held", heldTable(3), []string{"dv", "merge"}, ExitConflict, "other-host:42"},
		{"rewrite-manifests/no spec", plainTable(2), []string{"rewrite-manifests", "--spec-id", "7"}, ExitUsage, "partition spec 7"},
		{"rewrite-manifests/where on no column", plainTable(2), []string{"rewrite-manifests", "--where", "nope = 1"}, ExitUsage, "nope"},
		{"rewrite-manifests/dot-dot path", dotDotTable(2), []string{"rewrite-manifests"}, ExitFailure, `".."`},
		{"rewrite-manifests/held", heldTable(2), []string{"rewrite-manifests"}, ExitConflict, "other-host:42"},
		{"rewrite-position-deletes/v3", plainTable(3), []string{"rewrite-position-deletes"}, ExitUsage, "dv merge"},
		{"rewrite-position-deletes/dot-dot path", dotDotTable(2), []string{"rewrite-position-deletes"}, ExitFailure, `".."`},
		{"rewrite-position-deletes/held", heldTable(2), []string{"rewrite-position-deletes"}, ExitConflict, "other-host:42"},
		{"expire/bad age", plainTable(2), []string{"expire", "--older-than", "soon"}, ExitUsage, "soon"},
		{"expire/held", heldTable(2), []string{"expire", "--older-than", "0s", "--retain-last", "1"}, ExitConflict, "other-host:42"},
		{"orphan/too recent", plainTable(2), []string{"orphan", "--older-than", "1h"}, ExitUsage, "under 24h"},
		{"orphan/bad prefix mode", plainTable(2), []string{"orphan", "--prefix-mismatch", "maybe"}, ExitUsage, "prefix-mismatch"},
		{"orphan/location outside", plainTable(2), []string{"orphan", "--location", "/elsewhere/t", "--older-than", "0s", "--unsafe-allow-recent"}, ExitUsage, "outside"},
		{"orphan/gc disabled", gcOffTable, []string{"orphan", "--older-than", "0s", "--unsafe-allow-recent"}, ExitFailure, "gc.enabled"},
		{"orphan/held", heldTable(2), []string{"orphan", "--older-than", "0s", "--unsafe-allow-recent"}, ExitConflict, "other-host:42"},
		{"upgrade/down", plainTable(3), []string{"upgrade", "--to", "2"}, ExitUsage, "v2"},
		{"upgrade/blockers", plainTable(2), []string{"upgrade", "--to", "3"}, ExitFailure, "--merge-deletes"},
		{"upgrade/merge-deletes to v2", plainTable(2), []string{"upgrade", "--to", "2", "--merge-deletes"}, ExitUsage, "--to 3"},
		{"upgrade/held", heldTable(2), []string{"upgrade", "--to", "3", "--force"}, ExitConflict, "other-host:42"},
		{"stats columns/no column", plainTable(2), []string{"stats", "columns", "--columns", "nope"}, ExitUsage, "nope"},
		{"stats columns/no snapshot", plainTable(3), []string{"stats", "columns", "--snapshot", "42"}, ExitUsage, "no snapshot 42"},
		{"stats columns/dot-dot path", dotDotTable(2), []string{"stats", "columns"}, ExitFailure, `".."`},
		{"stats columns/held", heldTable(2), []string{"stats", "columns"}, ExitConflict, "other-host:42"},
		{"stats partitions/no snapshot", plainTable(2), []string{"stats", "partitions", "--snapshot", "42"}, ExitUsage, "no snapshot 42"},
		// maintain plans each table's due verbs, reading only, before it
		// claims the table; a table another run holds is not work left.
		{"maintain/no field ids", noFieldIDsTable, []string{"maintain", "--quiet"}, ExitPartial, "1 tables failed"},
		{"maintain/dot-dot path", dotDotTable(2), []string{"maintain", "--quiet"}, ExitFailure, "no table could be read"},
		{"maintain/held", heldTable(2), []string{"maintain", "--quiet"}, ExitOK, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb := c.table(t)
			before := snapshotDir(t, tb.Cat.Dir)
			args := append(append(append([]string{}, c.args[:1]...), c.args[1:]...), tb.CatalogFlags()...)
			// The table name goes after the verb (and the dv and stats
			// groups).
			at := 1
			if c.args[0] == "dv" || c.args[0] == "stats" {
				at = 2
			}
			args = append(args[:at], append([]string{tb.Name()}, args[at:]...)...)
			r := runCLI(t, map[string]string{"HOME": t.TempDir()}, args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.says) {
				t.Errorf("%v: exit %d, stderr %q; want exit %d saying %q", args, r.code, r.stderr, c.code, c.says)
			}
			if after := snapshotDir(t, tb.Cat.Dir); after != before {
				t.Errorf("%v changed the catalog or the warehouse:\n%s", args, dirDiff(before, after))
			}
		})
	}
}

// dirDiff names the lines of two snapshotDir listings that differ, by
// file (the content is left out).
func dirDiff(before, after string) string {
	name := func(line string) string { return strings.SplitN(line, " ", 2)[0] }
	in := map[string]string{}
	for _, l := range strings.Split(before, "\n") {
		in[name(l)] = l
	}
	var out []string
	for _, l := range strings.Split(after, "\n") {
		if old, ok := in[name(l)]; !ok {
			out = append(out, "+ "+name(l))
		} else if old != l {
			out = append(out, "~ "+name(l))
		}
		delete(in, name(l))
	}
	for n := range in {
		out = append(out, "- "+n)
	}
	return strings.Join(out, "\n")
}
