package cli

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		7 * 24 * time.Hour:            "7d",
		36 * time.Hour:                "1d12h",
		90 * time.Second:              "1m30s",
		12 * time.Hour:                "12h",
		1500 * time.Millisecond:       "1.5s",
		24*time.Hour + 30*time.Minute: "1d30m",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
		if d%time.Second == 0 {
			back, err := parseDuration(want)
			if err != nil || back != d {
				t.Errorf("parseDuration(%q) = %v, %v; want %v", want, back, err, d)
			}
		}
	}
	for typ, want := range map[string]string{"tag": "tags", "branch": "branches"} {
		if got := plural(typ); got != want {
			t.Errorf("plural(%q) = %q, want %q", typ, got, want)
		}
	}
}

// TestRefCreateRerun: a runbook that creates a tag twice: a second plain
// create is refused naming both ways out, --if-not-exists exits 0 and
// changes nothing, --replace moves it, and the two flags together are a
// usage error.
func TestRefCreateRerun(t *testing.T) {
	fx := newFixture(t)
	cat := []string{"--catalog-uri", fx.uri, "--catalog-name", "default"}
	first, second := strconv.FormatInt(fx.snaps[0], 10), strconv.FormatInt(fx.snaps[1], 10)
	run := func(args ...string) result { return runCLI(t, fx.env, append(args, cat...)...) }
	run("tag", "create", "db.events", "release", "--snapshot", first).mustSucceed(t)
	r := run("tag", "create", "db.events", "release", "--snapshot", second)
	if r.code == ExitOK || !strings.Contains(r.stderr, "--replace") || !strings.Contains(r.stderr, "--if-not-exists") {
		t.Fatalf("second create: exit %d, %q", r.code, r.stderr)
	}
	r = run("tag", "create", "db.events", "release", "--snapshot", second, "--if-not-exists").mustSucceed(t)
	if !strings.HasPrefix(r.stdout, "db.events: nothing to create: ") || !strings.Contains(r.stdout, first) || r.stderr != "" {
		t.Fatalf("--if-not-exists: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	r = run("tag", "create", "db.events", "release", "--snapshot", second, "--replace").mustSucceed(t)
	if !strings.Contains(r.stdout, "committed") || !strings.Contains(r.stdout, second) {
		t.Fatalf("--replace: stdout %q", r.stdout)
	}
	if r := run("tag", "create", "db.events", "release", "--replace", "--if-not-exists"); r.code != ExitUsage {
		t.Fatalf("both flags: exit %d, want %d", r.code, ExitUsage)
	}
}

// TestSetPropertiesWarnsOnNearMiss: a key one slip away from a property
// Iceberg reads is set as given, with a warning naming the property.
func TestSetPropertiesWarnsOnNearMiss(t *testing.T) {
	fx := newFixture(t)
	r := runCLI(t, fx.env, "table", "set-properties", "db.events", "history.expire.max-snapshot-age=604800000", "owner=ops",
		"--catalog-uri", fx.uri, "--catalog-name", "default").mustSucceed(t)
	if !strings.Contains(r.stderr, "did you mean history.expire.max-snapshot-age-ms?") || strings.Contains(r.stderr, "owner") {
		t.Fatalf("stderr %q", r.stderr)
	}
	if strings.Contains(r.stdout, "warning") {
		t.Errorf("the warning is on stdout: %q", r.stdout)
	}
}

// TestCatalogTimeout: --catalog-timeout bounds a request to a REST catalog
// that never answers (without it the default of minutes applies), and a
// value that is not a duration is a usage error.
func TestCatalogTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers: only the client's timeout ends the request
	}))
	defer srv.Close()
	r := runCLI(t, map[string]string{"HOME": t.TempDir()}, "table", "list", "--catalog-uri", srv.URL, "--catalog-timeout", "300ms")
	if r.code == ExitOK || !strings.Contains(strings.ToLower(r.stderr), "timeout") && !strings.Contains(r.stderr, "deadline") {
		t.Fatalf("exit %d, stderr %q; want a timeout", r.code, r.stderr)
	}
	if r := runCLI(t, map[string]string{"HOME": t.TempDir()}, "table", "list", "--catalog-uri", srv.URL, "--catalog-timeout", "soon"); r.code != ExitUsage {
		t.Fatalf("--catalog-timeout soon: exit %d, want %d", r.code, ExitUsage)
	}
}

// TestHelpSaysBranches: no command's help says "branchs" (branch list's
// did), wherever the text is built from a ref type.
func TestHelpSaysBranches(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		text := c.Use + "\n" + c.Short + "\n" + c.Long + "\n" + c.Flags().FlagUsages()
		if strings.Contains(text, "branchs") {
			t.Errorf("icectl %s: help says branchs:\n%s", c.CommandPath(), text)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewCmdRoot(&Factory{Out: &discard{}, ErrOut: &discard{}, Getenv: func(string) string { return "" }}))
	r := runCLI(t, nil, "branch", "list", "--help").mustSucceed(t)
	if !strings.Contains(r.stdout, "List the branches of a table") {
		t.Errorf("branch list --help:\n%s", r.stdout)
	}
}

// TestRetentionShownAsTyped: --retain 7d lists as 7d, not 168h0m0s.
func TestRetentionShownAsTyped(t *testing.T) {
	fx := newFixture(t)
	cat := []string{"--catalog-uri", fx.uri, "--catalog-name", "default"}
	runCLI(t, fx.env, append([]string{"branch", "create", "db.events", "audit", "--retain", "7d", "--max-ref-age", "36h"}, cat...)...).mustSucceed(t)
	out := runCLI(t, fx.env, append([]string{"branch", "list", "db.events"}, cat...)...).mustSucceed(t).stdout
	if !strings.Contains(out, "max-snapshot-age=7d") || !strings.Contains(out, "max-ref-age=1d12h") || strings.Contains(out, "168h") {
		t.Errorf("branch list:\n%s", out)
	}
}
