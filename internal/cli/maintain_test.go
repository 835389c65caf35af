package cli

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/maintain"
)

func TestMaintainFlags(t *testing.T) {
	var got *MaintainOptions
	cmd := NewCmdMaintain(NewFactory(), func(o *MaintainOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"db", "sales.orders", "--concurrency", "4", "--max-duration", "1d2h", "--max-rewrite-bytes", "50GiB",
		"--wait", "10m", "--enable", "orphan", "--disable", "expire", "--quiet", "--metrics-file", "m.prom"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Selectors, []string{"db", "sales.orders"}) || got.Run.Concurrency != 4 || got.Run.MaxDuration != 26*time.Hour ||
		got.Run.MaxRewriteBytes != 50<<30 || got.Wait != 10*time.Minute || !got.Quiet || got.MetricsFile != "m.prom" {
		t.Errorf("options %+v", got)
	}
	fl := got.Policy.Flags
	if fl.Orphan.Enabled == nil || !*fl.Orphan.Enabled || fl.Expire.Enabled == nil || *fl.Expire.Enabled || fl.Compact.Enabled != nil {
		t.Errorf("flag layer %+v", fl)
	}
}

func TestMaintainBadInput(t *testing.T) {
	fx := newFixture(t)
	loc := fx.metadataLocation(t)
	bad := filepath.Join(fx.dir, "policy.yaml")
	if err := os.WriteFile(bad, []byte("defaults:\n  expire:\n    max-snapshot-age: 5 days\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"maintain", "--policy", bad}, "policy.yaml:3: \"5 days\""},
		{[]string{"maintain", "--policy", filepath.Join(fx.dir, "missing.yaml")}, "read --policy"},
		{[]string{"maintain", "--concurrency", "0"}, "invalid --concurrency"},
		{[]string{"maintain", "--max-duration", "soon"}, "invalid --max-duration"},
		{[]string{"maintain", "--max-rewrite-bytes", "-1"}, "invalid --max-rewrite-bytes"},
		{[]string{"maintain", "--enable", "upgrade"}, "invalid --enable \"upgrade\""},
		{[]string{"maintain", "--enable", "expire", "--disable", "expire"}, "contradict"},
	} {
		r := fx.run(t, c.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line mentioning %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if r := fx.run(t, "maintain", "nosuch"); r.code != ExitFailure || !strings.Contains(r.stderr, "nosuch") {
		t.Errorf("unknown namespace: exit %d, stderr %q", r.code, r.stderr)
	}
	if fx.metadataLocation(t) != loc {
		t.Error("refused commands changed the table")
	}
}

// TestMaintainDryRun: the fixture's v2 table has a data file whose
// file-scoped position delete passes the delete ratio, which compaction
// applies, and an equality delete, which rewrite-equality-deletes
// converts first; the dry run plans both and changes no file.
func TestMaintainDryRun(t *testing.T) {
	fx := newFixture(t)
	before := fileTree(t, fx.dir)
	r := fx.run(t, "maintain", "--dry-run")
	r.mustSucceed(t)
	for _, want := range []string{"fleet plan: 1 of 1 tables due (dry run: nothing changed)", "db.events", "compact", "1 data files with 30% or more of their rows deleted (v2: compaction applies the deletes)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, r.stdout)
		}
	}
	r = fx.run(t, "maintain", "db", "--dry-run", "-o", "json")
	r.mustSucceed(t)
	m := r.decodeJSON(t)
	if at(t, m, "dry_run") != true || at(t, m, "due", 0, "table") != "db.events" || at(t, m, "due", 0, "due", 0, "verb") != maintain.VerbRewriteEqualityDeletes ||
		at(t, m, "due", 0, "due", 1, "verb") != maintain.VerbCompact {
		t.Errorf("JSON plan: %s", r.stdout)
	}
	// Under a streaming policy that counts the fixture's commits as a
	// stream, the plan says why the table is due.
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte("defaults:\n  stream: {commits-per-hour: 1, equality-delete-ratio: 0.01}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = fx.run(t, "maintain", "--dry-run", "--policy", policy).mustSucceed(t)
	if want := "db.events: streamed table ("; !strings.Contains(r.stdout, want) ||
		!strings.Contains(r.stdout, "writer commits in the last hour) is due: equality deletes 1.3% of the rows (stream.equality-delete-ratio: 1%)") {
		t.Errorf("streamed dry run lacks the reason:\n%s", r.stdout)
	}
	if !reflect.DeepEqual(before, fileTree(t, fx.dir)) {
		t.Fatal("the dry run changed files")
	}
}

// TestMaintainHeldTableIsNotWorkLeft: a table another live run holds is
// being maintained by it: maintain skips and reports it, changes nothing,
// and exits 0, so cron mails no one about work that is being done.
func TestMaintainHeldTableIsNotWorkLeft(t *testing.T) {
	d := newClaimDemo(t)
	held, err := claim.Take(context.Background(), d.cat, d.id, claim.Options{Owner: "other-host:42", Verb: "compact"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(context.Background())
	loc := d.location(t)
	r := d.run(t, "maintain")
	if r.code != ExitOK {
		t.Fatalf("exit %d, want 0: %s\n%s", r.code, r.stderr, r.stdout)
	}
	for _, want := range []string{"shop.orders: skipped", "skipped: claimed by other-host:42 (compact)",
		"maintain: 1 tables are being maintained by another run: shop.orders", "1 skipped"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, r.stdout)
		}
	}
	m := d.run(t, "maintain", "-o", "json").mustSucceed(t).decodeJSON(t)
	if got := at(t, m, "summary", "claimed_by_other_run", 0); got != "shop.orders" {
		t.Errorf("summary.claimed_by_other_run[0] = %v", got)
	}
	if left, _ := at(t, m, "summary", "left").([]any); len(left) != 0 {
		t.Errorf("summary.left = %v, want none", left)
	}
	if d.location(t) != loc {
		t.Error("maintain committed to a table another run holds")
	}
}
