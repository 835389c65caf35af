package cli

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The publish verbs: dry runs change no byte of the catalog or the
// warehouse, bad input is a usage error (2) or a refusal (1) that changes
// nothing, and the real runs move the refs they name.
func TestPublishVerbs(t *testing.T) {
	fx := newFixture(t)
	s1, s2 := fmt.Sprint(fx.snaps[0]), fmt.Sprint(fx.snaps[1])
	fx.run(t, "branch", "create", "db.events", "audit", "--snapshot", s1).mustSucceed(t)
	before := fileTree(t, fx.dir)
	r := fx.run(t, "fast-forward", "db.events", "--branch", "audit", "--to", "main", "--dry-run", "--output", "json").mustSucceed(t)
	if m := r.decodeJSON(t); num(t, m, "previous_ref") != s1 || num(t, m, "updated_ref") != s2 || m["dry_run"] != true || m["committed"] != false {
		t.Errorf("fast-forward --dry-run: %s", r.stdout)
	}
	fx.run(t, "rollback", "db.events", "--to-snapshot", s1, "--dry-run").mustSucceed(t)
	fx.run(t, "rollback", "db.events", "--branch", "audit", "--to-snapshot", s1, "--dry-run").mustSucceed(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"cherrypick", "db.events"}, ExitUsage, "snapshot"},
		{[]string{"cherrypick", "db.events", "--snapshot", "x1"}, ExitUsage, "invalid --snapshot"},
		{[]string{"fast-forward", "db.events", "--branch", "audit"}, ExitUsage, "--to"},
		{[]string{"fast-forward", "db.events", "--branch", "main", "--to", "main"}, ExitUsage, "both main"},
		{[]string{"cherrypick", "db.events", "--snapshot", s2, "--dry-run"}, ExitFailure, "already in main's history"},
		{[]string{"cherrypick", "db.events", "--snapshot", "42"}, ExitFailure, "no snapshot 42"},
		{[]string{"fast-forward", "db.events", "--branch", "audit", "--to", "nope"}, ExitFailure, "no branch or tag nope"},
		{[]string{"rollback", "db.events", "--branch", "nope", "--to-snapshot", s1}, ExitFailure, "no branch nope"},
		{[]string{"rollback", "db.events", "--branch", "audit", "--to-snapshot", s2}, ExitFailure, "not an ancestor of audit's head"},
	} {
		r := fx.run(t, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
	if after := fileTree(t, fx.dir); !reflect.DeepEqual(before, after) {
		t.Fatal("a dry run or a refused command changed the catalog or the warehouse")
	}

	fx.run(t, "fast-forward", "db.events", "--branch", "audit", "--to", "main").mustSucceed(t)
	r = fx.run(t, "fast-forward", "db.events", "--branch", "audit", "--to", "main").mustSucceed(t)
	if !strings.Contains(r.stderr, "already at") {
		t.Errorf("a second fast-forward: %q", r.stderr)
	}
	r = fx.run(t, "rollback", "db.events", "--branch", "audit", "--to-snapshot", s1, "--output", "json").mustSucceed(t)
	m := r.decodeJSON(t)
	for _, ref := range at(t, m, "refs").([]any) {
		ref := ref.(map[string]any)
		if want := map[string]string{"audit": s1, "main": s2}[ref["name"].(string)]; num(t, ref, "snapshot_id") != want {
			t.Errorf("after rollback --branch audit: %v at %v, want %s", ref["name"], ref["snapshot_id"], want)
		}
	}
	if r := fx.run(t, "fast-forward", "db.events", "--branch", "main", "--to", "audit"); r.code != ExitFailure || !strings.Contains(r.stderr, "not an ancestor") {
		t.Errorf("fast-forward main back to audit: exit %d %q", r.code, r.stderr)
	}
}
