package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/plan"
)

func TestCompactFlagsParse(t *testing.T) {
	var got *CompactOptions
	f := &Factory{Out: &discard{}, ErrOut: &discard{}, Getenv: func(string) string { return "" }}
	cmd := NewCmdCompact(f, func(o *CompactOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"db.t", "--target-file-size", "128MiB", "--min-file-size", "0", "--max-file-size", "1GiB",
		"--min-input-files", "3", "--delete-file-threshold", "0", "--delete-ratio-threshold", "0.5", "--rewrite-all",
		"--max-file-group-size", "10GiB", "--max-files-to-rewrite", "7", "--job-order", "bytes-desc", "--where", "id > 3",
		"--branch", "dev", "--dry-run", "--plan-out", "p.json", "--max-concurrent-groups", "3", "--partial-progress",
		"--max-commits", "4", "--max-failed-commits", "2", "--max-duration", "1d2h", "--sort", "--remove-dangling-deletes=false"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	c, p := got.Compact, got.Compact.Plan
	if got.Table != "db.t" || p.TargetFileSize != 128<<20 || p.MinFileSize == nil || *p.MinFileSize != 0 || p.MaxFileSize != 1<<30 ||
		p.MinInputFiles != 3 || p.DeleteFileThreshold == nil || *p.DeleteFileThreshold != 0 || p.DeleteRatioThreshold != 0.5 ||
		!p.RewriteAll || p.MaxFileGroupSize != 10<<30 || p.MaxFilesToRewrite == nil || *p.MaxFilesToRewrite != 7 ||
		p.JobOrder != "bytes-desc" || p.Where != "id > 3" || p.RemoveDanglingDeletes == nil || *p.RemoveDanglingDeletes {
		t.Errorf("plan options: %+v", p)
	}
	if c.Branch != "dev" || !got.DryRun || got.PlanOut != "p.json" || c.MaxConcurrentGroups != 3 || !c.PartialProgress ||
		c.MaxCommits != 4 || c.MaxFailedCommits != 2 || c.MaxDuration != 26*time.Hour || !c.Sort {
		t.Errorf("options: %+v", c)
	}
	// Spark's option defaults to false; icectl's to true.
	cmd = NewCmdCompact(f, func(o *CompactOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"db.t"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if r := got.Compact.Plan.RemoveDanglingDeletes; r == nil || !*r {
		t.Errorf("--remove-dangling-deletes defaults to %v, want true", r)
	}

	for _, bad := range [][]string{
		{"db.t", "--target-file-size", "big"},
		{"db.t", "--max-files-to-rewrite", "0"},
		{"db.t", "--job-order", "random"},
		{"db.t", "--max-duration", "soon"},
		{"db.t", "--max-commits", "0"},
		{"db.t", "--delete-file-threshold", "-2"},
	} {
		cmd := NewCmdCompact(f, func(*CompactOptions) error { t.Fatalf("%v ran", bad); return nil })
		cmd.SetArgs(bad)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		err := cmd.Execute()
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != ExitUsage {
			t.Errorf("%v: error %v, want a usage error", bad, err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// hashTree hashes every file under dir.
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := sha256.Sum256(b)
		out[p] = hex.EncodeToString(s[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCompactDryRunWritesNothing(t *testing.T) {
	fx := newFixture(t)
	before := hashTree(t, fx.dir)
	r := fx.run(t, "compact", "db.events", "--dry-run", "--rewrite-all", "--min-input-files", "1", "--output", "json").mustSucceed(t)
	m := r.decodeJSON(t)
	if m["format"] != "icectl-compaction-plan" {
		t.Fatalf("not a plan: %v", m["format"])
	}
	// The plan names its table as the user does, not by UUID (issue 12),
	// in "table" as every command does (issue 25), its UUID beside it.
	if m["table"] != "db.events" || m["table_uuid"] == "" || m["table_uuid"] == nil {
		t.Errorf("plan table = %v (uuid %v), want db.events and a uuid", m["table"], m["table_uuid"])
	}
	groups, _ := m["groups"].([]any)
	if len(groups) == 0 {
		t.Fatalf("no groups in %s", r.stdout)
	}
	after := hashTree(t, fx.dir)
	if len(after) != len(before) {
		t.Fatalf("files before %d, after %d", len(before), len(after))
	}
	for p, h := range before {
		if after[p] != h {
			t.Errorf("%s changed", p)
		}
	}
	text := fx.run(t, "compact", "db.events", "--dry-run", "--rewrite-all", "--min-input-files", "1").mustSucceed(t)
	if text.stdout == "" {
		t.Error("no text plan")
	}
	planOut := filepath.Join(t.TempDir(), "plan.json")
	fx.run(t, "compact", "db.events", "--dry-run", "--plan-out", planOut).mustSucceed(t)
	if _, err := os.Stat(planOut); err != nil {
		t.Errorf("--plan-out: %v", err)
	}
}

// The dry run streams its JSON from the planner's records; it must be the
// plan Execute gets (compact.PlanTable), byte for byte but for created_at,
// and --plan-out must hold the same document.
func TestCompactDryRunJSONIsThePlan(t *testing.T) {
	fx := newFixture(t)
	planOut := filepath.Join(t.TempDir(), "plan.json")
	args := []string{"compact", "db.events", "--dry-run", "--rewrite-all", "--min-input-files", "1", "--output", "json"}
	r := fx.run(t, append(args, "--plan-out", planOut)...).mustSucceed(t)
	saved, err := os.ReadFile(planOut)
	if err != nil {
		t.Fatal(err)
	}
	if string(saved) != r.stdout {
		t.Errorf("--plan-out differs from stdout:\n%s\n%s", saved, r.stdout)
	}
	opts := compact.Options{Plan: plan.Options{RewriteAll: true, MinInputFiles: 1}}
	p, err := compact.PlanTable(context.Background(), fx.table, opts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	checkIndented(t, "compact --dry-run", r.stdout)
	created := regexp.MustCompile(`"created_at":"[^"]*"`)
	got := created.ReplaceAllString(compactJSON(t, r.stdout), "") + "\n"
	if w := created.ReplaceAllString(string(want), "") + "\n"; got != w {
		t.Errorf("dry-run JSON differs from the plan:\n%s\n%s", got, w)
	}
	if len(p.Groups) == 0 || p.Totals.DeleteFilesApplied == 0 {
		t.Errorf("fixture plan has no groups or no deletes: %+v", p.Totals)
	}
	parsed, err := plan.ParsePlan([]byte(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	if len(parsed.Groups) != len(p.Groups) {
		t.Errorf("parsed %d groups, want %d", len(parsed.Groups), len(p.Groups))
	}
}

// The JSON report names each group's rewrite path: transcoded by default,
// Arrow (with the reason) for a sorted rewrite. The demo table has real
// data files with position and equality deletes.
func TestCompactReportNamesRewritePath(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		path, note string
	}{
		{nil, "parquet-transcode", ""},
		{[]string{"--sort"}, "arrow", "sorted rewrite"},
	} {
		dir := filepath.Join(t.TempDir(), "demo")
		env := map[string]string{"HOME": t.TempDir()}
		runCLI(t, env, "demo", "--dir", dir, "--walkthrough=false").mustSucceed(t)
		args := append([]string{"compact", "shop.orders", "--catalog-uri", "sqlite:///" + filepath.Join(dir, "catalog.db"), "--catalog-name", "demo",
			"--rewrite-all", "--min-input-files", "1", "--output", "json"}, tc.args...)
		m := runCLI(t, env, args...).mustSucceed(t).decodeJSON(t)
		groups, _ := m["groups"].([]any)
		if len(groups) == 0 {
			t.Fatalf("%v: no groups in the report", tc.args)
		}
		for _, g := range groups {
			g := g.(map[string]any)
			note, _ := g["rewrite_note"].(string)
			if g["status"] != "committed" || g["rewrite"] != tc.path || note != tc.note {
				t.Errorf("%v: group %v", tc.args, g)
			}
		}
	}
}

// TestCompactSortSpelling: --sort with its order after '=' or after a
// space, before or after the table, and --sort alone (the table's order)
// before or after the table; an order that cannot be told from the table
// is a usage error.
func TestCompactSortSpelling(t *testing.T) {
	f := &Factory{Out: &discard{}, ErrOut: &discard{}, Getenv: func(string) string { return "" }}
	for _, c := range []struct {
		args         []string
		table, order string // order "" with sort: the table's order
		err          string
	}{
		{args: []string{"db.t", "--sort=id DESC"}, table: "db.t", order: "id DESC"},
		{args: []string{"--sort", "id DESC, name", "db.t"}, table: "db.t", order: "id DESC, name"},
		{args: []string{"db.t", "--sort", "id DESC"}, table: "db.t", order: "id DESC"},
		{args: []string{"db.t", "--sort", "id"}, table: "db.t", order: "id"},
		{args: []string{"--sort", "id", "db.t"}, table: "db.t", order: "id"},
		{args: []string{"--sort", "db.t"}, table: "db.t"},
		{args: []string{"db.t", "--sort"}, table: "db.t"},
		{args: []string{"--sort", "a.b", "db.t"}, err: "cannot tell the table from the sort order"},
		{args: []string{"--sort", "id", "t"}, err: "cannot tell the table from the sort order"},
		{args: []string{"db.t", "--sort", "id DESC NULLS SOMEWHERE"}, err: "cannot tell the table from the sort order"},
	} {
		var got *CompactOptions
		cmd := NewCmdCompact(f, func(o *CompactOptions) error { got = o; return nil })
		cmd.SetArgs(c.args)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		err := cmd.Execute()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if got.Table != c.table || !got.Compact.Sort || got.Compact.SortOrder != c.order {
			t.Errorf("%q: table %q, sort %v, order %q; want %q, %q", c.args, got.Table, got.Compact.Sort, got.Compact.SortOrder, c.table, c.order)
		}
	}
}
