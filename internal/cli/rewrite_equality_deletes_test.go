package cli

import (
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	icefx "github.com/icectl/icectl/internal/testing/fixture"
)

// withEqDeletes adds to a refusal table an equality delete over ids 1 and
// 2 (unpartitioned: global), so that rewrite-equality-deletes has work.
func withEqDeletes(base refusalTable) refusalTable {
	return func(t *testing.T) *icefx.Table {
		tb := base(t)
		if tb.Load(t).Metadata.FormatVersion >= 2 {
			tb.AddDeletes(t, nil, tb.WriteEqualityDeletes(t, nil, "eq", nil, 1, 2))
		}
		return tb
	}
}

// Refusals of rewrite-equality-deletes exit with one line and change no
// byte of the catalog or the warehouse (as TestRefusalsWriteNothing).
func TestRewriteEqualityDeletesRefusals(t *testing.T) {
	cases := []struct {
		name  string
		table refusalTable
		args  []string
		code  int
		says  string
	}{
		{"v3", withEqDeletes(plainTable(3)), nil, ExitUsage, "dv merge --equality"},
		{"v1", plainTable(1), nil, ExitUsage, "no delete files"},
		{"where on no column", withEqDeletes(plainTable(2)), []string{"--where", "nope = 1"}, ExitUsage, "nope"},
		{"bad max-commits", withEqDeletes(plainTable(2)), []string{"--max-commits", "0"}, ExitUsage, "--max-commits"},
		{"dot-dot path", func(t *testing.T) *icefx.Table {
			tb := withEqDeletes(plainTable(2))(t)
			tb.Append(t, nil, icefx.Listed("../../outside/evil.parquet", nil, 2, 500))
			return tb
		}, nil, ExitFailure, `".."`},
		{"held", withEqDeletes(heldTable(2)), nil, ExitConflict, "other-host:42"},
		{"dry run", withEqDeletes(plainTable(2)), []string{"--dry-run"}, ExitOK, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb := c.table(t)
			before := snapshotDir(t, tb.Cat.Dir)
			args := append(append([]string{"rewrite-equality-deletes", tb.Name()}, c.args...), tb.CatalogFlags()...)
			r := runCLI(t, map[string]string{"HOME": t.TempDir()}, args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.says) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("%v: exit %d, stderr %q; want exit %d saying %q on one line", args, r.code, r.stderr, c.code, c.says)
			}
			if after := snapshotDir(t, tb.Cat.Dir); after != before {
				t.Errorf("%v changed the catalog or the warehouse:\n%s", args, dirDiff(before, after))
			}
		})
	}
}

// The command converts the table's equality delete into a position-delete
// file: the same rows, no equality delete left, and a second run says
// there is nothing to do.
func TestRewriteEqualityDeletesRuns(t *testing.T) {
	tb := withEqDeletes(plainTable(2))(t)
	before := tb.Checksum(t, nil)
	env := map[string]string{"HOME": t.TempDir()}
	args := append([]string{"rewrite-equality-deletes", tb.Name(), "--output", "json"}, tb.CatalogFlags()...)
	m := runCLI(t, env, args...).mustSucceed(t).decodeJSON(t)
	if num(t, m, "equality_delete_files_retired") != "1" || num(t, m, "position_delete_files_written") != "1" ||
		num(t, m, "positions_written") != "2" || num(t, m, "commits") != "1" {
		t.Errorf("report = %v", m)
	}
	// A conversion writes and reads no deletion vector: dv merge's DV
	// fields are not in its report.
	for _, k := range []string{"dvs_written", "puffin_files", "dvs_removed", "kept_delete_files", "multiple_dvs"} {
		if _, ok := m[k]; ok {
			t.Errorf("report has dv merge's %s: %v", k, m)
		}
	}
	if got := tb.Checksum(t, nil); got != before {
		t.Errorf("rows after = %+v, want %+v", got, before)
	}
	for _, d := range tb.LiveFiles(t, nil).Deletes {
		if d.Entry.DataFile.Content == manifest.ContentEqualityDeletes {
			t.Errorf("equality delete %s is still live", d.Entry.DataFile.FilePath)
		}
	}
	noop := runCLI(t, env, append([]string{"rewrite-equality-deletes", tb.Name()}, tb.CatalogFlags()...)...).mustSucceed(t)
	if want := tb.Name() + ": " + eqNothing + "\n"; noop.stdout != want {
		t.Errorf("second run says %q, want %q", noop.stdout, want)
	}
}
