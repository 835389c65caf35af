package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every command that changes a table refuses a table named by its metadata
// file (icectl opens those read-only): exit 1, one line saying so and what
// to type, nothing changed on disk.
func TestChangingVerbsRefuseMetadataFile(t *testing.T) {
	d := newDemo(t)
	files, err := filepath.Glob(filepath.Join(d.dir, "warehouse", "shop.db", "orders", "metadata", "*.metadata.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no metadata file of shop.orders: %v", err)
	}
	m := files[len(files)-1]
	before := tree(t, d.dir)
	for _, args := range [][]string{
		{"compact", m}, {"dv", "merge", m}, {"expire", m}, {"orphan", m},
		{"rewrite-manifests", m}, {"rewrite-position-deletes", m}, {"upgrade", m, "--to", "3"},
		{"tag", "create", m, "x"}, {"table", "set-properties", m, "k=v"},
		{"cherrypick", m, "--snapshot", "1"}, {"fast-forward", m, "--branch", "b", "--to", "main"},
		{"stats", "partitions", m},
	} {
		r := runCLI(t, d.env, args...)
		label := strings.Join(args[:len(args)-1], " ")
		if r.code != ExitFailure || !strings.Contains(r.stderr, "is a metadata file, which icectl opens read-only") ||
			!strings.Contains(r.stderr, "name the table in its catalog") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want 1 and one line refusing the metadata file", label, r.code, r.stderr)
		}
	}
	if diff := changed(before, tree(t, d.dir)); len(diff) != 0 {
		t.Errorf("a refused command changed %v", diff)
	}
}
