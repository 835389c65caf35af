package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/iceberg/spec"
)

// demo is `icectl demo` (table shop.orders: small files, deletes, old
// snapshots) in a temp dir.
type demoTable struct {
	dir   string
	env   map[string]string
	flags []string
	cat   catalog.Catalog
	id    catalog.Ident
}

func newClaimDemo(t *testing.T) *demoTable {
	t.Helper()
	d := &demoTable{dir: filepath.Join(t.TempDir(), "demo"), env: map[string]string{"HOME": t.TempDir()},
		id: catalog.Ident{Namespace: []string{"shop"}, Name: "orders"}}
	runCLI(t, d.env, "demo", "--dir", d.dir, "--walkthrough=false").mustSucceed(t)
	uri := caturi.SQLiteURI(filepath.Join(d.dir, "catalog.db"))
	d.flags = []string{"--catalog-uri", uri, "--catalog-name", "demo"}
	cat, err := sqlcat.Open(context.Background(), catalog.Config{Name: "demo", URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	d.cat = cat
	return d
}

func (d *demoTable) run(t *testing.T, args ...string) result {
	t.Helper()
	return runCLI(t, d.env, append(args, d.flags...)...)
}

func (d *demoTable) location(t *testing.T) string {
	t.Helper()
	tbl, err := d.cat.LoadTable(context.Background(), d.id)
	if err != nil {
		t.Fatal(err)
	}
	return tbl.MetadataLocation
}

// The verbs that change a table refuse while another run holds its claim:
// exit 4, one line naming the holder and what to type, nothing changed.
// Their dry runs take no claim, so they run and change nothing.
func TestVerbsRefuseHeldClaim(t *testing.T) {
	d := newClaimDemo(t)
	ctx := context.Background()
	held, err := claim.Take(ctx, d.cat, d.id, claim.Options{Owner: "cron-host:42", Verb: "maintain"})
	if err != nil {
		t.Fatal(err)
	}
	loc, files := d.location(t), tree(t, d.dir)
	for _, args := range [][]string{
		{"compact", "shop.orders"},
		{"expire", "shop.orders", "--older-than", "0s"},
		{"orphan", "shop.orders"},
		{"orphan", "shop.orders", "--trash", ".trash"},
		{"rewrite-manifests", "shop.orders"},
		{"upgrade", "shop.orders", "--to", "3", "--force"},
	} {
		r := d.run(t, args...)
		if r.code != ExitConflict {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, r.code, ExitConflict, r.stderr)
		}
		for _, want := range []string{"shop.orders is being maintained by cron-host:42 (maintain) since ", "claim until ",
			"add --wait 10m", "icectl claim show shop.orders"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%v: stderr %q lacks %q", args, r.stderr, want)
			}
		}
	}
	// A refusal comes before the claim: dv merge refuses the demo's v2
	// table whoever holds it.
	if r := d.run(t, "dv", "merge", "shop.orders"); r.code != ExitFailure || !strings.Contains(r.stderr, "format v3") {
		t.Errorf("dv merge of a v2 table: exit %d, stderr %q; want the v3 refusal", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"compact", "shop.orders", "--dry-run"},
		{"expire", "shop.orders", "--older-than", "0s", "--dry-run"},
		{"orphan", "shop.orders", "--dry-run"},
		{"rewrite-manifests", "shop.orders", "--dry-run"},
		{"upgrade", "shop.orders", "--to", "2"},
		{"health", "shop.orders"},
		{"claim", "show", "shop.orders"},
	} {
		d.run(t, args...).mustSucceed(t)
	}
	if d.location(t) != loc {
		t.Error("the table changed while another run held its claim")
	}
	if got := changed(files, tree(t, d.dir)); len(got) != 0 {
		t.Errorf("files changed while another run held the claim: %v", got)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// --wait waits for the holder to release, then works on the table as the
// holder left it.
func TestCompactWaitsForClaim(t *testing.T) {
	d := newClaimDemo(t)
	ctx := context.Background()
	held, err := claim.Take(ctx, d.cat, d.id, claim.Options{Owner: "other"})
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		released <- held.Release(ctx)
	}()
	r := d.run(t, "compact", "shop.orders", "--wait", "1m", "-o", "json").mustSucceed(t)
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	if groups, _ := r.decodeJSON(t)["groups"].([]any); len(groups) == 0 {
		t.Errorf("compaction after waiting did nothing:\n%s", r.stdout)
	}
	if info, err := claim.Show(ctx, d.cat, d.id); err != nil || info != nil {
		t.Errorf("claim after the run: %+v, %v; want released", info, err)
	}
	if r := d.run(t, "compact", "shop.orders", "--wait", "soon"); r.code != ExitUsage {
		t.Errorf("--wait soon: exit %d, want %d", r.code, ExitUsage)
	}
	bad := runCLI(t, map[string]string{"HOME": d.env["HOME"], claimLeaseEnv: "500ms"}, append([]string{"compact", "shop.orders"}, d.flags...)...)
	if bad.code != ExitUsage || !strings.Contains(bad.stderr, claimLeaseEnv) {
		t.Errorf("%s=500ms: exit %d, %q", claimLeaseEnv, bad.code, bad.stderr)
	}
}

func TestClaimShowAndForceRelease(t *testing.T) {
	d := newClaimDemo(t)
	ctx := context.Background()
	if out := d.run(t, "claim", "show", "shop.orders").mustSucceed(t).stdout; out != "shop.orders: not claimed\n" {
		t.Errorf("show without a claim: %q", out)
	}
	held, err := claim.Take(ctx, d.cat, d.id, claim.Options{Owner: "stuck-host:7", Verb: "compact"})
	if err != nil {
		t.Fatal(err)
	}
	m := d.run(t, "claim", "show", "shop.orders", "-o", "json").mustSucceed(t).decodeJSON(t)
	if m["claimed"] != true || m["owner"] != "stuck-host:7" || m["verb"] != "compact" || m["expired"] != false || m["token"] != held.Info().Token {
		t.Errorf("show: %v", m)
	}
	// The claim's tags are marked in listings and cannot be dropped by hand.
	tags := d.run(t, "tag", "list", "shop.orders").mustSucceed(t).stdout
	if !strings.Contains(tags, claim.RefName+" ") || !strings.Contains(tags, "(icectl claim: see `icectl claim show`)") {
		t.Errorf("tag list does not mark the claim:\n%s", tags)
	}
	if r := d.run(t, "tag", "drop", "shop.orders", claim.RefName); r.code == ExitOK || !strings.Contains(r.stderr, "icectl claim release --force") {
		t.Errorf("tag drop of the claim: exit %d, %q", r.code, r.stderr)
	}
	if r := d.run(t, "claim", "release", "shop.orders"); r.code != ExitUsage || !strings.Contains(r.stderr, "--force") {
		t.Errorf("release without --force: exit %d, %q", r.code, r.stderr)
	}
	out := d.run(t, "claim", "release", "shop.orders", "--force").mustSucceed(t).stdout
	if !strings.Contains(out, "released") || !strings.Contains(out, "stuck-host:7") {
		t.Errorf("release output:\n%s", out)
	}
	if err := held.Renew(ctx); err == nil {
		t.Error("the released holder could still renew")
	}
	if out := d.run(t, "claim", "release", "shop.orders", "--force").mustSucceed(t).stdout; !strings.Contains(out, "no claim to release") {
		t.Errorf("second release: %q", out)
	}
	d.run(t, "compact", "shop.orders").mustSucceed(t)
}

// A verb stopped by --max-duration with work left exits 3 and says what
// is left and that a rerun continues; the rerun does the rest.
func TestMaxDurationLeavesWorkExitsPartial(t *testing.T) {
	d := newClaimDemo(t)
	r := d.run(t, "compact", "shop.orders", "--max-duration", "1ns")
	if r.code != ExitPartial || !strings.Contains(r.stderr, "compaction stopped by its budget (--max-duration 1ns) with 15 group(s) left") ||
		!strings.Contains(r.stderr, "running it again continues") {
		t.Fatalf("compact --max-duration 1ns: exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "left for next run     15 group(s)") {
		t.Errorf("report:\n%s", r.stdout)
	}
	d.run(t, "compact", "shop.orders").mustSucceed(t)
	if out := d.run(t, "compact", "shop.orders").mustSucceed(t).stdout; !strings.Contains(out, "nothing to compact") {
		t.Errorf("third run: %s", out)
	}

	// dv merge, on the demo upgraded to v3 with its position deletes kept.
	d = newClaimDemo(t)
	d.run(t, "upgrade", "shop.orders", "--to", "3", "--force").mustSucceed(t)
	r = d.run(t, "dv", "merge", "shop.orders", "--max-duration", "1ns")
	if r.code != ExitPartial || !strings.Contains(r.stderr, "dv merge stopped by its budget (--max-duration 1ns) with ") ||
		!strings.Contains(r.stderr, "partition(s) left") {
		t.Fatalf("dv merge --max-duration 1ns: exit %d, stderr %q", r.code, r.stderr)
	}
	d.run(t, "dv", "merge", "shop.orders").mustSucceed(t)
}

func TestHealthFailOnFindings(t *testing.T) {
	d := newClaimDemo(t)
	files := tree(t, d.dir)
	plain := d.run(t, "health", "shop.orders").mustSucceed(t)
	r := d.run(t, "health", "shop.orders", "--fail-on-findings")
	if r.code != ExitFindings || !strings.Contains(r.stderr, "shop.orders has 3 finding(s): small-files, equality-deletes, small-manifests") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if r.stdout != plain.stdout {
		t.Errorf("the report differs with --fail-on-findings:\n%s\nwant\n%s", r.stdout, plain.stdout)
	}
	if got := changed(files, tree(t, d.dir)); len(got) != 0 {
		t.Errorf("health changed files: %v", got)
	}
	// A table without debt passes.
	fx := newFixture(t)
	cat, err := sqlcat.Open(context.Background(), catalog.Config{Name: "default", URI: fx.uri})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	schema := spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}}}
	md, err := spec.NewTableMetadata(schema, spec.PartitionSpec{}, spec.SortOrder{}, "file://"+filepath.Join(fx.dir, "wh", "db", "empty"), nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(context.Background(), catalog.Ident{Namespace: []string{"db"}, Name: "empty"}, md); err != nil {
		t.Fatal(err)
	}
	fx.run(t, "health", "db.empty", "--fail-on-findings").mustSucceed(t)
}
