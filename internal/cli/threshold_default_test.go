package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/icectl/icectl/plan"
)

// TestDeleteFileThresholdHasOneDefault: --delete-file-threshold shows the
// same default wherever it is shown: "off" in compact's help, nothing else
// in the README, the docs/ pages or any command's help (health and upgrade recommend
// explicit values only), and off is what the planner resolves it to.
func TestDeleteFileThresholdHasOneDefault(t *testing.T) {
	var got *CompactOptions
	f := &Factory{Out: &discard{}, ErrOut: &discard{}, Getenv: func(string) string { return "" }}
	cmd := NewCmdCompact(f, func(o *CompactOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"db.t"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	r, err := got.Compact.Plan.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Compact.Plan.DeleteFileThreshold != nil || r.DeleteFileThreshold != plan.DeleteFileThresholdOff {
		t.Errorf("default resolves to %d, want off (%d)", r.DeleteFileThreshold, plan.DeleteFileThresholdOff)
	}
	help := runCLI(t, nil, "compact", "--help").mustSucceed(t).stdout
	line := regexp.MustCompile(`(?m)^.*--delete-file-threshold.*$`).FindAllString(help, -1)
	if len(line) != 1 || !strings.HasSuffix(line[0], `(default "off")`) {
		t.Errorf("compact --help shows --delete-file-threshold as %q", line)
	}
	// Elsewhere a default would be a second one: the README, the pages it
	// moved its detail to (docs/*.md) and the other commands' help may name
	// the flag only with an explicit value.
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("docs pages: %v (%d found)", err, len(pages))
	}
	texts := map[string]string{}
	for _, p := range append([]string{"../../README.md"}, pages...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[filepath.Base(p)] = string(b)
	}
	for _, c := range [][]string{{"health", "--help"}, {"upgrade", "--help"}, {"demo", "--help"}, {"help", "catalogs"}} {
		texts[strings.Join(c, " ")] = runCLI(t, nil, c...).mustSucceed(t).stdout
	}
	mention := regexp.MustCompile(`delete-file-threshold[^\n]*`)
	withValue := regexp.MustCompile(`^delete-file-threshold[ =](\d+|off)\b`)
	for name, text := range texts {
		for _, m := range mention.FindAllString(text, -1) {
			if !withValue.MatchString(m) || strings.Contains(m, "default") {
				t.Errorf("%s: %q names --delete-file-threshold without an explicit value (a second default?)", name, m)
			}
		}
	}
}
