package cli

import (
	"fmt"
	"strings"
	"testing"
)

func TestVerifyBadInput(t *testing.T) {
	fx := newFixture(t)
	from := fmt.Sprint(fx.snaps[0])
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "lineage", "db.events", "--key", "id"}, "needs --from SNAPSHOT, the snapshot before the rewrite whose rows are compared with --to: a snapshot id from `icectl snapshots db.events`"},
		{[]string{"verify", "lineage", "db.events", "--from", from}, "needs --key COLUMN"},
		{[]string{"verify", "lineage", "db.events", "--from", "x", "--key", "id"}, "invalid --from"},
		{[]string{"verify", "lineage", "db.events", "--from", from, "--to", "1", "--key", "id"}, "has no snapshot 1"},
		{[]string{"verify", "lineage", "db.events", "--from", from, "--key", "nope"}, `invalid --key "nope"`},
		{[]string{"verify", "lineage", "db.events", "--from", from, "--key", "id", "--max-violations", "0"}, "invalid --max-violations"},
		{[]string{"verify", "deletes", "db.events", "--snapshot", "12"}, "has no snapshot 12"},
		{[]string{"verify", "nothing", "db.events"}, ""},
	} {
		r := fx.run(t, c.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

func TestVerifyDeletesFixture(t *testing.T) {
	fx := newFixture(t)
	// The fixture's deletes are consistent (no DVs to check)...
	m := fx.run(t, "verify", "deletes", "db.events", "-o", "json").mustSucceed(t).decodeJSON(t)
	if at(t, m, "ok") != true || num(t, m, "data_files") != "3" || num(t, m, "position_delete_files") != "1" {
		t.Errorf("verify deletes: %v", m)
	}
	// ...but its files were never written.
	r := fx.run(t, "verify", "deletes", "db.events", "--check-files")
	if r.code != ExitFailure || !strings.Contains(r.stdout, "missing-file") || !strings.Contains(r.stderr, "inconsistent: 5 violation(s)") {
		t.Errorf("--check-files: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
