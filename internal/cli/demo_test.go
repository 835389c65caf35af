package cli

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/scan"
)

func TestDemoEndToEnd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	env := map[string]string{"HOME": t.TempDir()}
	r := runCLI(t, env, "demo", "--dir", dir, "-o", "json").mustSucceed(t)
	m := r.decodeJSON(t)
	if at(t, m, "table") != "shop.orders" || at(t, m, "catalog_uri") != "sqlite:///"+filepath.Join(dir, "catalog.db") {
		t.Errorf("demo result %v %v", at(t, m, "table"), at(t, m, "catalog_uri"))
	}
	if num(t, m, "rows") == "0" || at(t, m, "checksum") == "" {
		t.Errorf("rows %v checksum %v", at(t, m, "rows"), at(t, m, "checksum"))
	}
	if r.stderr == "" {
		t.Error("no progress on stderr")
	}
	checkWalkthrough(t, dir, m)
	if got := num(t, m, "health", "data_files", "files"); got != num(t, m, "data_files") {
		t.Errorf("health counts %s data files, demo %s", got, num(t, m, "data_files"))
	}

	// The printed next command runs as printed.
	next, _ := at(t, m, "next_command").(string)
	args := strings.Fields(next)
	if len(args) < 2 || args[0] != "icectl" {
		t.Fatalf("next command %q", next)
	}
	h := runCLI(t, env, args[1:]...).mustSucceed(t)
	if !strings.Contains(h.stdout, "table           shop.orders") && !strings.Contains(h.stdout, "shop.orders") {
		t.Errorf("health output %s", h.stdout)
	}
	if !strings.Contains(h.stdout, "recommended: icectl") {
		t.Errorf("the demo table needs no maintenance?\n%s", h.stdout)
	}

	// A second run refuses the non-empty directory, then --force rebuilds it
	// with the same rows.
	again := runCLI(t, env, "demo", "--dir", dir)
	if again.code != ExitFailure || !strings.Contains(again.stderr, "--force") {
		t.Errorf("second run: exit %d stderr %q", again.code, again.stderr)
	}
	forced := runCLI(t, env, "demo", "--dir", dir, "--force", "--walkthrough=false", "-o", "json").mustSucceed(t).decodeJSON(t)
	if at(t, forced, "checksum") != at(t, m, "checksum") {
		t.Errorf("same seed, checksum %v then %v", at(t, m, "checksum"), at(t, forced, "checksum"))
	}
	text := runCLI(t, env, "demo", "--dir", filepath.Join(t.TempDir(), "d2")).mustSucceed(t).stdout
	for _, want := range []string{"checksum", "findings", "\n$ icectl upgrade shop.walkthrough --to 3 --merge-deletes --catalog-uri sqlite://",
		"\n$ icectl verify lineage shop.walkthrough --from ", "shop.orders is left as built"} {
		if !strings.Contains(text, want) {
			t.Errorf("demo text lacks %q:\n%s", want, text)
		}
	}
	// What to try next ends the output, and the table has work left.
	i := strings.LastIndex(text, "\ntry next")
	if i < 0 || strings.Contains(text[i:], "findings") {
		t.Fatalf("the demo does not end with what to try next:\n%s", text)
	}
	tail := strings.Split(strings.TrimSpace(text[i:]), "\n")[1:]
	if len(tail) == 0 || !strings.Contains(tail[0], "icectl health shop.orders --catalog-uri sqlite://") {
		t.Errorf("try next: %q", tail)
	}
	var dry string
	for _, l := range tail {
		if strings.Contains(l, "compact") && strings.Contains(l, "--dry-run") {
			dry = strings.TrimSpace(l)
		}
	}
	if dry == "" {
		t.Fatalf("no compaction dry run to try: %q", tail)
	}
	plan := runCLI(t, env, append(strings.Fields(dry)[1:], "-o", "json")...).mustSucceed(t).decodeJSON(t)
	if groups, _ := at(t, plan, "groups").([]any); len(groups) == 0 {
		t.Errorf("%s: the demo left no work for compact", dry)
	}
	// The last line is the crontab line for icectl maintain; its command
	// plans the demo catalog's maintenance.
	cron := tail[len(tail)-1]
	fields := strings.Fields(cron)
	if len(fields) < 7 || strings.Join(fields[:6], " ") != "17 * * * * icectl" || fields[6] != "maintain" || !strings.Contains(cron, "--catalog-uri sqlite://") {
		t.Fatalf("the demo does not end with the maintain crontab line: %q", tail)
	}
	fleet := runCLI(t, env, append(fields[6:], "--dry-run", "-o", "json")...).mustSucceed(t).decodeJSON(t)
	if due, _ := at(t, fleet, "due").([]any); len(due) == 0 {
		t.Errorf("%s --dry-run: nothing due on the demo catalog", cron)
	}
}

// checkWalkthrough checks what the walkthrough of a JSON demo run did:
// every step ran and succeeded, shop.walkthrough ends at v3 with no delete
// file, fewer data files and the failed job's leftovers gone, and reads
// the rows shop.orders (built the same way, left alone) reads.
func checkWalkthrough(t *testing.T, dir string, m map[string]any) {
	t.Helper()
	steps, _ := at(t, m, "walkthrough", "steps").([]any)
	want := []string{"health", "upgrade", "compact", "rewrite-manifests", "verify lineage", "verify deletes", "expire", "orphan", "health"}
	if len(steps) != len(want) {
		t.Fatalf("walkthrough ran %d steps, want %d: %v", len(steps), len(want), steps)
	}
	out := func(i int, path ...any) any { return at(t, steps, append([]any{i, "output"}, path...)...) }
	for i, verb := range want {
		cmd, _ := at(t, steps, i, "command").(string)
		if !strings.HasPrefix(cmd, "icectl "+verb+" shop.walkthrough") || num(t, steps, i, "exit_code") != "0" {
			t.Errorf("step %d: %s exited %s, want icectl %s", i+1, cmd, num(t, steps, i, "exit_code"), verb)
		}
	}
	if num(t, out(0), "format_version") != "2" || num(t, out(0), "delete_files", "position_deletes", "count") == "0" ||
		num(t, out(0), "delete_files", "equality_deletes", "count") == "0" {
		t.Errorf("health before: %v", out(0))
	}
	if num(t, out(1), "to_version") != "3" || num(t, out(1), "first_row_id") != "0" {
		t.Errorf("upgrade: %v", out(1))
	}
	if num(t, out(1), "dv_merge", "position_delete_files_retired") == "0" {
		t.Errorf("upgrade --merge-deletes: %v", out(1))
	}
	if out(4, "ok") != true || out(5, "ok") != true || num(t, out(4), "matched") == "0" {
		t.Errorf("verify lineage %v, verify deletes %v", out(4), out(5))
	}
	if num(t, out(7), "summary", "deleted") != "4" {
		t.Errorf("orphan: %v", out(7, "summary"))
	}
	after := out(8)
	if fs, ok := at(t, after, "findings").([]any); !ok || len(fs) != 0 {
		t.Errorf("health after the walkthrough still finds %v", at(t, after, "findings"))
	}
	if num(t, after, "format_version") != "3" {
		t.Errorf("health after: format v%s", num(t, after, "format_version"))
	}
	for _, kind := range []string{"position_deletes", "equality_deletes", "deletion_vectors"} {
		if n := num(t, after, "delete_files", kind, "count"); n != "0" {
			t.Errorf("health after: %s %s delete files", n, kind)
		}
	}
	before, _ := strconv.Atoi(num(t, out(0), "data_files", "files"))
	files, _ := strconv.Atoi(num(t, after, "data_files", "files"))
	if files == 0 || files*4 > before {
		t.Errorf("data files: %d before, %d after the compaction", before, files)
	}
	if got, want := tableChecksum(t, dir, "walkthrough"), at(t, m, "checksum"); got != want {
		t.Errorf("shop.walkthrough reads checksum %s, shop.orders %v", got, want)
	}
}

// tableChecksum is the scan checksum of shop.NAME in the demo catalog.
func tableChecksum(t *testing.T, dir, name string) string {
	t.Helper()
	ctx := context.Background()
	cat, err := sqlcat.Open(ctx, catalog.Config{Name: "demo", URI: caturi.SQLiteURI(filepath.Join(dir, "catalog.db"))})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, catalog.Ident{Namespace: []string{"shop"}, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := scan.Checksum(ctx, tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sum.Checksum
}
