package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/internal/config"
)

// splitShell splits a command line as a POSIX shell would, for the
// quoting shellJoin produces (single quotes).
func splitShell(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(c)
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
	if quoted {
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
	recs := health.Recommendations("db.events", health.Thresholds{MaxSnapshotAge: 5 * 24 * time.Hour})
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
	want := "recommended: icectl compact db.events --catalog-uri " + fx.uri
	if !strings.Contains(r.stdout, want) {
		t.Errorf("health output lacks %q:\n%s", want, r.stdout)
	}
}
