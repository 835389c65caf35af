package cli

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/cli/config"
)

// splitShell splits a command line as a POSIX shell would, for the
// quoting shellJoin and the help examples use.
func splitShell(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	inWord, quoted, dquoted := false, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case dquoted && c == '"':
			dquoted = false
		case dquoted:
			cur.WriteByte(c)
		case c == '"':
			dquoted, inWord = true, true
		case c == '\'':
			quoted, inWord = true, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quoted || dquoted {
		t.Fatalf("unterminated quote in %q", s)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// TestHealthRecommendationsAreRunnable renders every command health can
// recommend, with each way of choosing a catalog, and parses it as this
// build's command line: a command the build lacks is not recommended, and
// the rest parse with their catalog flags.
func TestHealthRecommendationsAreRunnable(t *testing.T) {
	f := &Factory{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Getenv: func(string) string { return "" }, Output: outputText}
	root := NewCmdRoot(f)
	// Every kind's command at v2, and the ones that differ at v3.
	recs := health.Recommendations("db.events", health.Thresholds{MaxSnapshotAge: 5 * 24 * time.Hour}, 2)
	for kind, c := range health.Recommendations("db.events", health.Thresholds{MaxSnapshotAge: 5 * 24 * time.Hour}, 3) {
		if c.String() != recs[kind].String() {
			recs[kind+" (v3)"] = c
		}
	}
	flagSets := []config.Flags{
		{URI: "sqlite:////var/lake/my catalog.db", CatalogName: "demo"},
		{Catalog: "prod"},
		{URI: "postgres://icectl:pg-secret@db:5432/iceberg", Warehouse: "s3://bucket/wh"},
	}
	recommended := 0
	for kind, c := range recs {
		for _, fl := range flagSets {
			line := recommend(root, c, fl, false)
			if !hasVerb(root, c.Verb) {
				if line != "" {
					t.Errorf("%s: %q recommended, but this build has no %v", kind, line, c.Verb)
				}
				continue
			}
			recommended++
			if strings.Contains(line, "pg-secret") {
				t.Errorf("%s: recommendation shows a secret: %q", kind, line)
			}
			args := splitShell(t, line)
			if len(args) == 0 || args[0] != "icectl" {
				t.Fatalf("%s: %q does not start with icectl", kind, line)
			}
			fresh := NewCmdRoot(f)
			cmd, rest, err := fresh.Find(args[1:])
			if err != nil || cmd == fresh {
				t.Errorf("%s: %q: no such command (%v)", kind, line, err)
				continue
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%s: %q: %v", kind, line, err)
				continue
			}
			if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
				t.Errorf("%s: %q: %v", kind, line, err)
			}
			for name, want := range map[string]string{"catalog-uri": fl.URI, "catalog": fl.Catalog, "catalog-name": fl.CatalogName, "warehouse": fl.Warehouse} {
				got, err := cmd.Flags().GetString(name)
				if err != nil || (want != "" && got != want && got != hideURISecret(want)) {
					t.Errorf("%s: %q: --%s = %q, want %q", kind, line, name, got, want)
				}
			}
		}
		if line := recommend(root, c, config.Flags{}, true); line != "" && !strings.Contains(line, "against the table in its catalog") {
			t.Errorf("%s: for a metadata file: %q does not say to run it against the catalog", kind, line)
		}
	}
	if recommended == 0 {
		t.Error("no recommendation exists in this build")
	}
}

// TestHealthPrintsCatalogFlags: the recommendation health prints for the
// fixture's equality delete carries the catalog flag it was run with.
func TestHealthPrintsCatalogFlags(t *testing.T) {
	fx := newFixture(t)
	r := fx.run(t, "health", "db.events").mustSucceed(t)
	want := "recommended: icectl rewrite-equality-deletes db.events --catalog-uri " + fx.uri
	if !strings.Contains(r.stdout, want) {
		t.Errorf("health output lacks %q:\n%s", want, r.stdout)
	}
}

// parseCommandLine parses line (starting with icectl) with this build's
// command tree without running it.
func parseCommandLine(t *testing.T, line string) error {
	t.Helper()
	args := splitShell(t, line)
	if len(args) == 0 || args[0] != "icectl" {
		return fmt.Errorf("does not start with icectl")
	}
	f := &Factory{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Getenv: func(string) string { return "" }, Output: outputText}
	root := NewCmdRoot(f)
	cmd, rest, err := root.Find(args[1:])
	if err != nil {
		return err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	return cmd.ValidateArgs(cmd.Flags().Args())
}

// TestEveryCommandHasRunnableExamples: every command a user runs shows
// examples in its help, and each one parses as a command line.
func TestEveryCommandHasRunnableExamples(t *testing.T) {
	root := NewCmdRoot(&Factory{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Getenv: func(string) string { return "" }})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			if sub.Runnable() {
				if strings.TrimSpace(sub.Example) == "" {
					t.Errorf("%s has no examples in its help", sub.CommandPath())
				}
				for _, l := range strings.Split(sub.Example, "\n") {
					if l = strings.TrimSpace(l); l == "" {
						continue
					}
					if l == "icectl --version" {
						continue
					}
					if err := parseCommandLine(t, l); err != nil {
						t.Errorf("%s: example %q: %v", sub.CommandPath(), l, err)
					}
				}
			}
			walk(sub)
		}
	}
	walk(root)
}

func TestVersionFlag(t *testing.T) {
	env := map[string]string{}
	flag := runCLI(t, env, "--version").mustSucceed(t).stdout
	cmd := runCLI(t, env, "version").mustSucceed(t).stdout
	if !strings.HasPrefix(flag, "icectl ") || flag != cmd {
		t.Errorf("--version printed %q, version %q", flag, cmd)
	}
}

// TestEmptyListsSaySo: a list with nothing in it says so on stderr and
// prints nothing on stdout (so `for t in $(icectl table list)` runs
// nothing), and a compaction with nothing to do says that rather than a
// table of zeros.
func TestEmptyListsSaySo(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	cat, err := sqlcat.Open(ctx, catalog.Config{Name: "default", URI: fx.uri})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(ctx, []string{"empty"}, nil); err != nil {
		t.Fatal(err)
	}
	md, err := spec.NewTableMetadata(spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}}},
		spec.PartitionSpec{}, spec.SortOrder{}, "file://"+filepath.Join(fx.dir, "wh", "db", "new"), nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(ctx, catalog.Ident{Namespace: []string{"db"}, Name: "new"}, md); err != nil {
		t.Fatal(err)
	}
	cat.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"table", "list", "empty"}, "no tables in namespace empty"},
		{[]string{"table", "list", "--catalog-name", "other"}, `no tables in catalog "other"; this database holds catalog "default": add --catalog-name default`},
		{[]string{"tag", "list", "db.events"}, "db.events has no tags"},
		{[]string{"snapshots", "db.new"}, "db.new has no snapshots"},
		{[]string{"files", "db.new"}, "no data files"},
		{[]string{"files", "db.new", "--deletes"}, "no delete files"},
	} {
		r := fx.run(t, c.args...)
		if r.code != ExitOK || r.stdout != "" || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 0, nothing on stdout, %q on stderr", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
	r := fx.run(t, "compact", "db.events", "--min-input-files", "100", "--delete-ratio-threshold", "1")
	if !strings.Contains(r.stdout, "nothing to compact") {
		t.Errorf("compact: exit %d, stdout %q (stderr %q)", r.code, r.stdout, r.stderr)
	}
	// A namespace the catalog lacks, where the database holds another.
	r = fx.run(t, "table", "list", "db", "--catalog-name", "other")
	if r.code != ExitFailure || !strings.Contains(r.stderr, "add --catalog-name default") {
		t.Errorf("table list db in the wrong catalog: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestCompactNamesTheTable: the dry-run plan names the table by name and
// renders partitions as every command does; the run's JSON report gives
// the name as table and the location apart.
func TestCompactNamesTheTable(t *testing.T) {
	fx := newFixture(t)
	r := fx.run(t, "compact", "db.events", "--dry-run", "--rewrite-all").mustSucceed(t)
	if !strings.Contains(r.stdout, "Compaction plan for table db.events,") || !strings.Contains(r.stdout, " region=eu ") {
		t.Errorf("dry run:\n%s", r.stdout)
	}
	files := fx.run(t, "files", "db.events").mustSucceed(t).stdout
	if !strings.Contains(files, "region=eu") {
		t.Errorf("files renders partitions otherwise:\n%s", files)
	}
	j := fx.run(t, "compact", "db.events", "--min-input-files", "100", "--delete-ratio-threshold", "1", "-o", "json").mustSucceed(t).decodeJSON(t)
	if j["table"] != "db.events" || !strings.HasSuffix(fmt.Sprint(j["location"]), "/wh/db/events") {
		t.Errorf("compact json: table %v location %v", j["table"], j["location"])
	}
}
