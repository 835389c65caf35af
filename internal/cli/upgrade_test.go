package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/upgrade"
)

func (fx *fixture) metadataLocation(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	cat, err := sqlcat.Open(ctx, catalog.Config{Name: "default", URI: fx.uri, Warehouse: "file://" + filepath.Join(fx.dir, "wh")})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, catalog.Ident{Namespace: []string{"db"}, Name: "events"})
	if err != nil {
		t.Fatal(err)
	}
	return tbl.MetadataLocation
}

func TestUpgradeBadInput(t *testing.T) {
	fx := newFixture(t)
	loc := fx.metadataLocation(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"upgrade", "db.events"}, "--to is required"},
		{[]string{"upgrade", "db.events", "--to", "4"}, "invalid --to 4"},
		{[]string{"upgrade", "db.events", "--to", "1"}, "invalid --to 1"},
		{[]string{"upgrade", "db.events", "--to", "x"}, "invalid argument"},
		{[]string{"upgrade", "db.events", "--to", "2", "--assign-row-ids"}, "--assign-row-ids needs --to 3"},
		{[]string{"upgrade", "db..events", "--to", "3"}, ""},
		{[]string{"upgrade", "db.events", "--check", "--force"}, "use one of them"},
	} {
		r := fx.run(t, c.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, r.code, r.stderr, c.want)
		}
	}
	fx.run(t, "upgrade", "db.events", "--to", "3", "--assign-row-ids=false", "--force").mustSucceed(t)
	loc = fx.metadataLocation(t)
	r := fx.run(t, "upgrade", "db.events", "--to", "2")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "cannot be downgraded to v2") {
		t.Errorf("downgrade: exit %d, stderr %q", r.code, r.stderr)
	}
	if fx.metadataLocation(t) != loc {
		t.Error("refused commands changed the table")
	}
}

func TestUpgradeCheck(t *testing.T) {
	fx := newFixture(t)
	loc := fx.metadataLocation(t)
	db := filepath.Join(fx.dir, "catalog.db")
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	r := fx.run(t, "upgrade", "db.events", "--to", "3", "--check", "-o", "json")
	if r.code != ExitFailure || !strings.Contains(r.stderr, "not ready for format v3: 1 blocker(s)") {
		t.Fatalf("check: exit %d, stderr %q", r.code, r.stderr)
	}
	m := r.decodeJSON(t)
	if at(t, m, "ready") != false || num(t, m, "position_delete_files") != "1" || num(t, m, "equality_delete_files") != "1" ||
		num(t, m, "rows_to_assign") != "160" {
		t.Errorf("report: %s", r.stdout)
	}
	kinds := map[string]string{}
	for _, f := range at(t, m, "findings").([]any) {
		f := f.(map[string]any)
		kinds[f["kind"].(string)] = f["severity"].(string)
	}
	for kind, sev := range map[string]string{"position-delete-debt": "blocker", "equality-deletes": "warning", "first-v3-commit": "info", "engines": "info"} {
		if kinds[kind] != sev {
			t.Errorf("finding %s: severity %q, want %q (%v)", kind, kinds[kind], sev, kinds)
		}
	}
	text := fx.run(t, "upgrade", "db.events", "--to", "3", "--check")
	// Each command to run names the catalog as this run did, to paste.
	if !strings.Contains(text.stdout, "[blocker] position-delete-debt") || !strings.Contains(text.stdout, "run: icectl upgrade db.events --to 3 --merge-deletes --catalog-uri "+fx.uri+"\n") {
		t.Errorf("text report:\n%s", text.stdout)
	}
	// Without --to, the next version: v3 for this v2 table.
	next := fx.run(t, "upgrade", "db.events", "--check", "-o", "json")
	if next.code != ExitFailure || num(t, next.decodeJSON(t), "target_version") != "3" || !strings.Contains(next.stderr, "not ready for format v3") {
		t.Errorf("check without --to: exit %d, %s%s", next.code, next.stdout, next.stderr)
	}
	// v2 has no blocker here.
	fx.run(t, "upgrade", "db.events", "--to", "2", "--check").mustSucceed(t)
	after, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if fx.metadataLocation(t) != loc || string(before) != string(after) {
		t.Error("--check changed the catalog")
	}
}

// An upgrade whose readiness check finds a blocker it does not settle is
// refused, naming the options that would let it run; --force runs it.
func TestUpgradeRefusesBlocker(t *testing.T) {
	fx := newFixture(t)
	loc := fx.metadataLocation(t)
	r := fx.run(t, "upgrade", "db.events", "--to", "3")
	if r.code != ExitFailure || r.stdout != "" || !strings.Contains(r.stderr, "refusing to upgrade db.events to format v3") ||
		!strings.Contains(r.stderr, "--merge-deletes") || !strings.Contains(r.stderr, "--force") || !strings.Contains(r.stderr, "brings deleted rows back") {
		t.Errorf("upgrade with a blocker: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if fx.metadataLocation(t) != loc {
		t.Error("the refused upgrade committed")
	}
	// v2 has no blocker: no refusal.
	fx.run(t, "upgrade", "db.events", "--to", "2").mustSucceed(t)
}

func TestUpgradeCommits(t *testing.T) {
	fx := newFixture(t)
	r := fx.run(t, "upgrade", "db.events", "--to", "3", "--force", "-o", "json").mustSucceed(t)
	m := r.decodeJSON(t)
	if at(t, m, "committed") != true || at(t, m, "upgraded") != true || num(t, m, "from_version") != "2" ||
		num(t, m, "next_row_id") != "160" || num(t, m, "added_rows") != "160" || num(t, m, "first_row_id") != "0" || num(t, m, "manifests_assigned") != "1" {
		t.Errorf("upgrade output: %s", r.stdout)
	}
	loc := fx.metadataLocation(t)
	again := fx.run(t, "upgrade", "db.events", "--to", "3").mustSucceed(t)
	if !strings.Contains(again.stdout, "nothing to upgrade: already at format v3") || fx.metadataLocation(t) != loc {
		t.Errorf("second upgrade: %q", again.stdout)
	}
	show := fx.run(t, "table", "show", "db.events", "-o", "json").mustSucceed(t).decodeJSON(t)
	if num(t, show, "format_version") != "3" {
		t.Errorf("table show: %s", show)
	}
}

func TestUpgradeRefusesMetadataFile(t *testing.T) {
	fx := newFixture(t)
	loc := strings.TrimPrefix(fx.metadataLocation(t), "file://")
	r := runCLI(t, fx.env, "upgrade", loc, "--to", "3")
	if r.code != ExitFailure || !strings.Contains(r.stderr, "read-only") {
		t.Errorf("upgrade of a metadata file: exit %d, %q", r.code, r.stderr)
	}
	r = runCLI(t, fx.env, "upgrade", loc, "--to", "3", "--check")
	if r.code != ExitFailure || !strings.Contains(r.stdout, "position-delete-debt") {
		t.Errorf("check of a metadata file: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestUpgradeErrorCodes(t *testing.T) {
	id := catalog.Ident{Namespace: []string{"db"}, Name: "events"}
	for _, c := range []struct {
		err  error
		code int
	}{
		{fmt.Errorf("x: %w", catalog.ErrCommitStateUnknown), ExitCommitState},
		{fmt.Errorf("x: %w", catalog.ErrCommitConflict), ExitConflict},
		{fmt.Errorf("x: %w", upgrade.ErrBadTarget), ExitUsage},
		{errors.New("disk on fire"), ExitFailure},
	} {
		if got := exitCode(context.Background(), upgradeError(nil, id, c.err)); got != c.code {
			t.Errorf("%v: exit %d, want %d", c.err, got, c.code)
		}
	}
}

// upgrade --merge-deletes takes a v2 table with partition-scoped position
// deletes to v3 with one DV per data file in one command and one report;
// run again, it upgrades nothing and has nothing left to merge.
func TestUpgradeMergeDeletes(t *testing.T) {
	fx := dvFixture(t, false)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"upgrade", "db.t", "--to", "2", "--merge-deletes"}, "--merge-deletes needs --to 3"},
		{[]string{"upgrade", "db.t", "--to", "3", "--merge-deletes", "--check"}, "use one of them"},
	} {
		if r := fx.run(t, c.args...); r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, r.code, r.stderr, c.want)
		}
	}
	m := fx.run(t, "upgrade", "db.t", "--to", "3", "--merge-deletes", "-o", "json").mustSucceed(t).decodeJSON(t)
	if at(t, m, "upgraded") != true || num(t, m, "to_version") != "3" || num(t, m, "manifests_assigned") != "1" ||
		num(t, m, "dv_merge", "dvs_written") != "3" || num(t, m, "dv_merge", "position_delete_files_retired") != "2" ||
		num(t, m, "dv_merge", "commits") != "1" || at(t, m, "dv_merge", "table") != "db.t" {
		t.Errorf("report = %v", m)
	}
	health := fx.run(t, "health", "db.t", "--output", "json").mustSucceed(t).decodeJSON(t)
	if num(t, health, "delete_files", "position_deletes", "count") != "0" || num(t, health, "delete_files", "deletion_vectors", "count") != "3" {
		t.Errorf("health after upgrade --merge-deletes: %v", health["delete_files"])
	}
	fx.run(t, "verify", "deletes", "db.t").mustSucceed(t)
	again := fx.run(t, "upgrade", "db.t", "--to", "3", "--merge-deletes").mustSucceed(t)
	if !strings.Contains(again.stdout, "nothing to upgrade: already at format v3 (table at") || !strings.Contains(again.stdout, "merged deletes (icectl dv merge)") ||
		!strings.Contains(again.stdout, "db.t: nothing to merge") {
		t.Errorf("second run:\n%s", again.stdout)
	}
}
