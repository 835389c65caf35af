package cli

import (
	"fmt"
	"strings"
	"testing"
)

// posFixture is db.t, v2, partitioned by region, with data files in eu
// and us (manifest entries only: the rewrite reads delete files, not
// data), three small position-delete files in eu and one in us.
func posFixture(t *testing.T) *fixture {
	t.Helper()
	fx, tb, tbl, files := regionFixture(t)
	defer tb.Cat.Close()
	for i, d := range []struct {
		region string
		pos    map[string][]int64
	}{
		{"eu", map[string][]int64{files[0].FilePath: {1, 2}, files[1].FilePath: {3}}},
		{"eu", map[string][]int64{files[0].FilePath: {5}}},
		{"eu", map[string][]int64{files[1].FilePath: {7, 8}}},
		{"us", map[string][]int64{files[2].FilePath: {4}}},
	} {
		tbl = tb.AddDeletes(t, tbl, tb.WritePositionDeletes(t, tbl, fmt.Sprintf("region=%s/pos%d", d.region, i), []any{d.region}, d.pos, false))
	}
	return fx
}

func TestRewritePositionDeletesBadInput(t *testing.T) {
	fx := posFixture(t)
	before := hashTree(t, fx.dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rewrite-position-deletes"}, "accepts 1 arg"},
		{[]string{"rewrite-position-deletes", "db.t", "--target-size", "lots"}, "invalid --target-size"},
		{[]string{"rewrite-position-deletes", "db.t", "--min-input-files", "0"}, "invalid --min-input-files"},
	} {
		r := fx.run(t, c.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, r.code, r.stderr, c.want)
		}
	}
	checkSameTree(t, before, hashTree(t, fx.dir))
}

func TestRewritePositionDeletesRefusesV3(t *testing.T) {
	fx := dvFixture(t, true)
	before := hashTree(t, fx.dir)
	r := fx.run(t, "rewrite-position-deletes", "db.t")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "icectl dv merge db.t") {
		t.Errorf("exit %d, stderr %q; want exit 2 pointing to dv merge", r.code, r.stderr)
	}
	checkSameTree(t, before, hashTree(t, fx.dir))
}

func TestRewritePositionDeletesDryRunThenRun(t *testing.T) {
	fx := posFixture(t)
	before := hashTree(t, fx.dir)
	m := fx.run(t, "rewrite-position-deletes", "db.t", "--min-input-files", "2", "--dry-run", "-o", "json").mustSucceed(t).decodeJSON(t)
	if at(t, m, "dry_run") != true || at(t, m, "committed") != false || num(t, m, "delete_files_to_rewrite") != "3" ||
		num(t, m, "position_delete_files") != "4" || len(m["groups"].([]any)) != 1 {
		t.Errorf("dry run = %v", m)
	}
	checkSameTree(t, before, hashTree(t, fx.dir))

	m = fx.run(t, "rewrite-position-deletes", "db.t", "--min-input-files", "2", "-o", "json").mustSucceed(t).decodeJSON(t)
	if at(t, m, "committed") != true || num(t, m, "delete_files_added") != "1" || num(t, m, "delete_files_removed") != "3" ||
		num(t, m, "positions_written") != "6" {
		t.Errorf("run = %v", m)
	}
	// Nothing left to do: the run says so and writes nothing, not even a
	// claim.
	before = hashTree(t, fx.dir)
	r := fx.run(t, "rewrite-position-deletes", "db.t", "--min-input-files", "2").mustSucceed(t)
	if !strings.HasPrefix(r.stdout, "db.t: nothing to rewrite") {
		t.Errorf("second run: %s", r.stdout)
	}
	checkSameTree(t, before, hashTree(t, fx.dir))
}

func checkSameTree(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(after) != len(before) {
		t.Errorf("files before %d, after %d", len(before), len(after))
	}
	for p, h := range before {
		if after[p] != h {
			t.Errorf("%s changed", p)
		}
	}
}
