package cli

import (
	"path/filepath"
	"strings"
	"testing"
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
	forced := runCLI(t, env, "demo", "--dir", dir, "--force", "-o", "json").mustSucceed(t).decodeJSON(t)
	if at(t, forced, "checksum") != at(t, m, "checksum") {
		t.Errorf("same seed, checksum %v then %v", at(t, m, "checksum"), at(t, forced, "checksum"))
	}
	text := runCLI(t, env, "demo", "--dir", filepath.Join(t.TempDir(), "d2")).mustSucceed(t).stdout
	for _, want := range []string{"checksum", "findings"} {
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
}
