package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runForced runs icectl as runCLI does, with progress bars forced onto
// the stderr buffer as on a terminal.
func runForced(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &Factory{Out: &out, ErrOut: &errOut, Getenv: func(k string) string { return env[k] }, Output: outputText, ForceProgress: true}
	code := Run(context.Background(), f, args)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// TestJSONOutputOfEveryCommand runs each command on the demo table with
// --output json: every document is indented by two spaces with a trailing
// newline, as writeJSON writes it (streamed ones included), and names the
// table as namespace.table in "table" (a string in every document, dry runs
// and plans included), the location (where given) apart.
func TestJSONOutputOfEveryCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	env := map[string]string{"HOME": t.TempDir()}
	demo := runCLI(t, env, "demo", "--dir", dir, "-o", "json").mustSucceed(t)
	checkIndented(t, "demo", demo.stdout)
	m := demo.decodeJSON(t)
	if m["table"] != "shop.orders" {
		t.Errorf("demo: table %v", m["table"])
	}
	uri, _ := at(t, m, "catalog_uri").(string)
	cat := []string{"--catalog-uri", uri, "--catalog-name", "demo", "-o", "json"}
	const name = "shop.orders"
	md, err := filepath.Glob(filepath.Join(dir, "warehouse", "shop.db", "orders", "metadata", "*.metadata.json"))
	if err != nil || len(md) == 0 {
		t.Fatalf("no metadata file: %v", err)
	}
	manifests, err := filepath.Glob(filepath.Join(dir, "warehouse", "shop.db", "orders", "metadata", "*-m0.avro"))
	if err != nil || len(manifests) == 0 {
		t.Fatalf("no manifest: %v", err)
	}

	// run runs a command with its bar forced on: a command that works
	// through steps draws a bar of them (bar names the unit), and leaves
	// no frame behind.
	run := func(bar, logPrefix string, args ...string) map[string]any {
		t.Helper()
		label := strings.Join(args, " ")
		if args[0] != "inspect" && args[0] != "version" {
			args = append(args, cat...)
		} else {
			args = append(args, "-o", "json")
		}
		r := runForced(t, env, args...)
		if r.code != ExitOK {
			t.Fatalf("%s: exit %d: %s", label, r.code, r.stderr)
		}
		if bar != "" {
			checkProgressLines(t, r.stderr, bar, logPrefix)
		} else if strings.ContainsAny(r.stderr, "\r⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏") {
			t.Errorf("%s drew a bar: %q", label, r.stderr)
		}
		checkIndented(t, label, r.stdout)
		doc := r.decodeJSON(t)
		switch tbl := doc["table"].(type) {
		case string:
			if tbl != name {
				t.Errorf("%s: table %q, want %q", label, tbl, name)
			}
		case nil:
			if !strings.HasPrefix(label, "table list") && !strings.HasPrefix(label, "inspect") && label != "version" {
				t.Errorf("%s: no table field", label)
			}
		default: // one shape everywhere: never an object (the compaction plan's was)
			t.Errorf("%s: table is %T, want the string %q", label, tbl, name)
		}
		if loc, ok := doc["location"].(string); ok && (loc == name || !strings.Contains(loc, "/shop.db/orders")) {
			t.Errorf("%s: location %q", label, loc)
		}
		return doc
	}
	check := func(args ...string) map[string]any {
		t.Helper()
		return run("", "", args...)
	}
	check("version")
	check("table", "list")
	check("table", "show", name)
	check("health", name)
	check("snapshots", name)
	check("files", name)
	check("branch", "list", name)
	check("tag", "list", name)
	check("inspect", "metadata", md[0])
	check("inspect", "manifest", manifests[0])
	data, err := filepath.Glob(filepath.Join(dir, "warehouse", "shop.db", "orders", "data", "*", "*", "*.parquet"))
	if err != nil || len(data) == 0 {
		t.Fatalf("no data file: %v", err)
	}
	check("inspect", "parquet", data[0])
	check("table", "remove-properties", name, "owner", "--dry-run")
	check("compact", name, "--dry-run")
	check("expire", name, "--dry-run")
	check("orphan", name, "--dry-run")
	check("rewrite-manifests", name, "--dry-run")
	check("verify", "deletes", name)
	check("table", "set-properties", name, "owner=ui", "--dry-run")

	// The verbs that change the table, each with its bar.
	run("manifests ", "", "rewrite-manifests", name)
	run("groups ", "group ", "compact", name)
	run("orphans ", "", "orphan", name, "--trash", ".icectl-trash")
	check("orphan", "restore", name, "--trash", ".icectl-trash")
	check("orphan", "trash", "purge", name, "--trash", ".icectl-trash", "--older-than", "0s", "--dry-run")
	check("orphan", "trash", "purge", name, "--trash", ".icectl-trash", "--older-than", "0s")
	run("", "", "orphan", name) // the restored files are young again: no orphans, no bar
	run("files ", "", "expire", name, "--older-than", "0s", "--retain-last", "1")
	check("upgrade", name, "--to", "3", "--check") // ready once compaction applied the position deletes
	run("commits ", "", "upgrade", name, "--to", "3")
	check("dv", "merge", name, "--dry-run")
	run("", "", "dv", "merge", name) // compaction left no deletes to merge: no bar
	check("branch", "create", name, "ui-json")
	check("tag", "create", name, "ui-json-tag")
	cur := num(t, check("snapshots", name), "current_snapshot_id")
	check("verify", "lineage", name, "--from", cur, "--key", "order_id")
	check("rollback", name, "--to-snapshot", cur)
	check("tag", "drop", name, "ui-json-tag")
	check("branch", "drop", name, "ui-json")
	check("table", "set-properties", name, "owner=ui")
	check("table", "remove-properties", name, "owner")
	// The plans --plan-out saves are the dry runs' documents.
	for _, verb := range [][]string{{"compact"}, {"dv", "merge"}} {
		out := filepath.Join(t.TempDir(), "plan.json")
		check(append(verb, name, "--dry-run", "--plan-out", out)...)
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil || doc["table"] != name {
			t.Errorf("%v --plan-out: table %v (%v)", verb, doc["table"], err)
		}
	}
}

// checkProgressLines reads stderr as a terminal shows it ('\r' returns to
// column 0): the bar was drawn (a frame holds barText), and every finished
// row is one whole log line starting at column 0 (logPrefix), not a bar
// frame or a line run into one.
func checkProgressLines(t *testing.T, stderr, barText, logPrefix string) {
	t.Helper()
	if !strings.Contains(stderr, barText) {
		t.Errorf("no bar frame (%q) on stderr:\n%q", barText, stderr)
	}
	frame := regexp.MustCompile(regexp.QuoteMeta(barText) + `\d+/\d+`)
	rows := strings.Split(stderr, "\n")
	if last := rows[len(rows)-1]; strings.TrimSpace(last[strings.LastIndex(last, "\r")+1:]) != "" {
		t.Errorf("the bar is left on screen: %q", last)
	}
	logged := 0
	for _, row := range rows[:len(rows)-1] {
		// What remains visible of the row: the text after its last '\r',
		// over what was there before.
		parts := strings.Split(row, "\r")
		shown := []rune(parts[0])
		for _, p := range parts[1:] {
			for i, c := range []rune(p) {
				if i < len(shown) {
					shown[i] = c
				} else {
					shown = append(shown, c)
				}
			}
		}
		visible := strings.TrimRight(string(shown), " ")
		if frame.MatchString(visible) || strings.ContainsAny(visible, "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏") {
			t.Errorf("a bar frame stays in the scrollback: %q", visible)
		}
		final := parts[len(parts)-1]
		if logPrefix != "" && strings.HasPrefix(final, logPrefix) {
			logged++
		}
	}
	if logPrefix != "" && logged == 0 {
		t.Errorf("no %q line on stderr:\n%q", logPrefix, stderr)
	}
}
