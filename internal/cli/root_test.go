package cli

import (
	"context"
	"strings"
	"testing"
)

func TestUsageErrorsExit2(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--output", "yaml", "version"}, `invalid --output "yaml"`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"inspect", "bogus", "x"}, `unknown command "bogus"`},
		{[]string{"inspect", "dv"}, "accepts 1 arg(s), received 0"},
		{[]string{"inspect", "dv", "a", "b"}, "accepts 1 arg(s), received 2"},
		{[]string{"inspect", "dv", "--no-such-flag", "x"}, "unknown flag: --no-such-flag"},
		{[]string{"inspect", "dv", "--length", "4", "x"}, "--length needs --offset"},
		{[]string{"inspect", "dv", "--offset", "4", "--length", "0", "x"}, "invalid --length 0"},
		{[]string{"inspect", "dv", "--offset", "-1", "--length", "3", "x"}, "invalid --offset -1"},
		{[]string{"version", "extra"}, `unknown command "extra"`},
	}
	for _, c := range cases {
		r := runCLI(t, nil, c.args...)
		if r.code != ExitUsage {
			t.Errorf("icectl %v: exit %d, want %d (stderr %q)", c.args, r.code, ExitUsage, r.stderr)
		}
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("icectl %v: stderr %q does not contain %q", c.args, r.stderr, c.want)
		}
		if r.stdout != "" {
			t.Errorf("icectl %v: usage error printed to stdout: %q", c.args, r.stdout)
		}
	}
}

func TestRootHelpDocumentsExitCodesAndOutput(t *testing.T) {
	r := runCLI(t, nil, "--help").mustSucceed(t)
	for _, want := range []string{"Exit codes:", "0    done, or nothing to do", "2    usage error", "3    partial",
		"4    commit conflict", "5    commit state unknown", "130  interrupted", "--output", "snake_case"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("root help lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestInspectWithoutKindPrintsHelp(t *testing.T) {
	r := runCLI(t, nil, "inspect").mustSucceed(t)
	for _, kind := range []string{"metadata", "manifest", "puffin", "dv", "parquet"} {
		if !strings.Contains(r.stdout, kind) {
			t.Errorf("inspect help does not list %q:\n%s", kind, r.stdout)
		}
	}
}

func TestVersion(t *testing.T) {
	r := runCLI(t, nil, "version").mustSucceed(t)
	if !strings.HasPrefix(r.stdout, "icectl ") {
		t.Errorf("version text = %q", r.stdout)
	}
	m := runCLI(t, nil, "version", "--output", "json").mustSucceed(t).decodeJSON(t)
	if v, ok := m["go_version"].(string); !ok || !strings.HasPrefix(v, "go") {
		t.Errorf("version JSON go_version = %v", m["go_version"])
	}
}

func TestInterruptedExit130(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := runCLIContext(t, ctx, nil, "inspect", "manifest", vector(t, "avro/manifest-list-v2-1.avro"))
	if r.code != ExitInterrupted {
		t.Fatalf("exit %d, want %d (stderr %q)", r.code, ExitInterrupted, r.stderr)
	}
	if r.stderr != "icectl: interrupted\n" {
		t.Errorf("stderr = %q", r.stderr)
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("a\nb\n"); got != "a; b" {
		t.Errorf("oneLine = %q", got)
	}
}
