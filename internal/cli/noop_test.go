package cli

import (
	"regexp"
	"strings"
	"testing"
)

// TestNoOpSaysSo runs every verb, and its dry run, on the demo's
// walkthrough table, which the walkthrough left with nothing to do: each
// exits 0 and says so in one result line on stdout, "<table>: nothing to
// <verb>: <why>" (never a table of zeros), with no such note on stderr,
// and nothing changes on disk.
func TestNoOpSaysSo(t *testing.T) {
	d := newWalkthroughDemo(t)
	const name = "shop.walkthrough"
	run := func(args ...string) result { return d.run(t, args...) }
	snaps := run("snapshots", name, "-o", "json").mustSucceed(t).decodeJSON(t)
	current := num(t, snaps, "current_snapshot_id")
	tags := run("tag", "list", name, "-o", "json").mustSucceed(t).decodeJSON(t)
	tag, _ := at(t, tags, "refs", 0, "name").(string)
	run("table", "set-properties", name, "noop.test=1").mustSucceed(t)
	run("stats", "partitions", name).mustSucceed(t)
	before := tree(t, d.dir)

	noop := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `: nothing to [a-z]+( [a-z]+)?: \S`)
	for _, args := range [][]string{
		{"compact", name}, {"compact", name, "--dry-run"},
		{"dv", "merge", name}, {"dv", "merge", name, "--dry-run"},
		{"expire", name}, {"expire", name, "--dry-run"},
		{"orphan", name}, {"orphan", name, "--dry-run"},
		{"rewrite-manifests", name}, {"rewrite-manifests", name, "--dry-run"},
		{"stats", "partitions", name}, {"stats", "partitions", name, "--dry-run"},
		{"upgrade", name, "--to", "3"},
		{"rollback", name, "--to-snapshot", current},
		{"tag", "create", name, tag, "--if-not-exists"},
		{"table", "set-properties", name, "noop.test=1"},
		{"table", "set-properties", name, "noop.test=1", "--dry-run"},
		{"table", "remove-properties", name, "no.such.key", "--dry-run"},
		{"orphan", "trash", "purge", name, "--trash", ".icectl-trash", "--older-than", "1d"},
	} {
		r := run(args...)
		label := strings.Join(args, " ")
		if r.code != ExitOK || !noop.MatchString(r.stdout) || strings.Contains(r.stderr, "nothing to") {
			t.Errorf("%s: exit %d; want a line %q on stdout, none on stderr\nstdout:\n%s\nstderr:\n%s", label, r.code, noop, r.stdout, r.stderr)
		}
	}
	if diff := changed(before, tree(t, d.dir)); len(diff) != 0 {
		t.Errorf("a no-op changed %v", diff)
	}
}
