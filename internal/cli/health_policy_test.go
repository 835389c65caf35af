package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/spec"
	icefx "github.com/icectl/icectl/internal/testing/fixture"
)

// TestHealthPolicy: health --policy judges the table's retention as
// maintain resolves it (a table pattern above the defaults) and
// recommends maintain's delete-rows; it writes nothing. A policy file that
// cannot be read or parsed, or --from-stats beside it, is a usage error
// before the table is read; a policy without retention for the table is a
// note, and the report has no retention.
func TestHealthPolicy(t *testing.T) {
	s := spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "ts", Type: spec.TimestampType{}},
	}}
	c := icefx.NewSQLite(t, icefx.WithName("default"))
	tb := c.Table(t, icefx.TableOptions{Schema: &s, FormatVersion: 2})
	micros := func(days int) any { return time.Now().AddDate(0, 0, -days).UnixMicro() }
	tb.Append(t, nil, tb.WriteRows(t, nil, "old", []any{}, &s, [][]any{{int64(1), micros(200)}, {int64(2), micros(150)}}))
	tb.Append(t, nil, tb.WriteRows(t, nil, "mixed", []any{}, &s, [][]any{{int64(3), micros(100)}, {int64(4), micros(1)}, {int64(5), nil}}))
	tb.Append(t, nil, tb.WriteRows(t, nil, "new", []any{}, &s, [][]any{{int64(6), micros(2)}}))
	policy := writeTemp(t, "policy.yaml", []byte("defaults:\n  retention: {column: id, keep: 1d}\ntables:\n  "+tb.Name()+":\n    retention: {column: ts, keep: 90d}\n"))
	env := map[string]string{"HOME": t.TempDir()}
	health := func(args ...string) result {
		return runCLI(t, env, append(append([]string{"health", tb.Name()}, tb.CatalogFlags()...), args...)...)
	}
	before := snapshotDir(t, tb.Cat.Dir)

	var r struct {
		Retention struct {
			Column       string `json:"column"`
			Where        string `json:"where"`
			WholeFiles   int    `json:"whole_files"`
			WholeRows    int64  `json:"whole_rows"`
			PartialFiles int    `json:"partial_files"`
			PartialMax   int64  `json:"partial_rows_at_most"`
		} `json:"retention"`
		Findings []struct {
			Kind, Recommendation string
		} `json:"findings"`
	}
	out := health("--policy", policy, "-o", "json").mustSucceed(t)
	if err := json.Unmarshal([]byte(out.stdout), &r); err != nil {
		t.Fatal(err)
	}
	rt := r.Retention
	if rt.Column != "ts" || !strings.HasPrefix(rt.Where, `"ts" < TIMESTAMP '`) || rt.WholeFiles != 1 || rt.WholeRows != 2 || rt.PartialFiles != 1 || rt.PartialMax != 2 {
		t.Errorf("retention: %+v", rt)
	}
	var rec string
	for _, f := range r.Findings {
		if f.Kind == "rows-past-retention" {
			rec = f.Recommendation
		}
	}
	// Shell-quoted as every recommendation is: ' becomes '\''.
	quoted := "'" + strings.ReplaceAll(rt.Where, "'", `'\''`) + "'"
	if !strings.HasPrefix(rec, "icectl delete-rows "+tb.Name()+" --where "+quoted+" --catalog-uri ") {
		t.Errorf("recommendation %q, want delete-rows with %s", rec, rt.Where)
	}
	text := health("--policy", policy).mustSucceed(t)
	if !strings.Contains(text.stdout, "retention: 1 data file (2 live rows) wholly past retention (ts before ") {
		t.Errorf("text lacks the retention line:\n%s", text.stdout)
	}

	// maintain's dry run counts the same, and has retention due with them.
	var plan struct {
		Due []struct {
			Due       []struct{ Verb, Reason string } `json:"due"`
			Retention json.RawMessage                 `json:"retention"`
		} `json:"due"`
	}
	dry := runCLI(t, env, append([]string{"maintain", "--dry-run", "--policy", policy, "-o", "json"}, tb.CatalogFlags()...)...).mustSucceed(t)
	if err := json.Unmarshal([]byte(dry.stdout), &plan); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if len(plan.Due) == 1 {
		_ = json.Compact(&compact, plan.Due[0].Retention)
	}
	if len(plan.Due) != 1 || len(plan.Due[0].Due) == 0 || plan.Due[0].Due[0].Verb != "retention" ||
		!strings.HasPrefix(plan.Due[0].Due[0].Reason, "1 data file (2 live rows) wholly past retention (ts before ") ||
		!strings.Contains(compact.String(), `"whole_files":1,"whole_rows":2,"partial_files":1,"partial_rows_at_most":2`) {
		t.Errorf("maintain --dry-run: %s", dry.stdout)
	}

	// A policy that leaves this table without retention: a note.
	none := writeTemp(t, "none.yaml", []byte("tables:\n  other.t:\n    retention: {column: ts, keep: 1d}\n"))
	if out := health("--policy", none, "-o", "json").mustSucceed(t); strings.Contains(out.stdout, `"retention"`) || !strings.Contains(out.stderr, "sets no retention") {
		t.Errorf("no retention: stdout has retention or stderr %q", out.stderr)
	}

	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--policy", writeTemp(t, "bad.yaml", []byte("defaults:\n  retention: {column: ts, keep: soon}\n"))}, "bad.yaml:2"},
		{[]string{"--policy", writeTemp(t, "bad2.yaml", []byte("defaults:\n  retain: {}\n"))}, `unknown key "retain"`},
		{[]string{"--policy", "/nonexistent/policy.yaml"}, "read --policy"},
		{[]string{"--policy", policy, "--from-stats"}, "--from-stats"},
	} {
		if r := health(c.args...); r.code != ExitUsage || !strings.Contains(r.stderr, c.says) {
			t.Errorf("%v: exit %d, stderr %q; want a usage error saying %q", c.args, r.code, r.stderr, c.says)
		}
	}
	if after := snapshotDir(t, tb.Cat.Dir); after != before {
		t.Errorf("health changed the catalog or the warehouse:\n%s", dirDiff(before, after))
	}
}
