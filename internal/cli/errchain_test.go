package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pathToken finds paths, URIs and ids (snapshot ids, six digits or more)
// in an error message.
var pathToken = regexp.MustCompile("[a-z][a-z0-9+.-]*://[^\\s\"'`,;()]+|/[^\\s\"'`,;()]+|\\b\\d{6,}\\b")

// repeats returns what an error message says twice: a path, or a whole
// ": "-separated part ("open X: open X: file not found").
func repeats(msg string) []string {
	msg = strings.TrimSpace(strings.TrimPrefix(msg, "icectl: "))
	var out []string
	seen := map[string]bool{}
	for _, p := range pathToken.FindAllString(msg, -1) {
		p = strings.TrimRight(p, ".:")
		if seen[p] {
			out = append(out, p)
		}
		seen[p] = true
	}
	parts := map[string]bool{}
	for _, p := range strings.Split(msg, ": ") {
		if parts[p] {
			out = append(out, p)
		}
		parts[p] = true
	}
	return out
}

func TestRepeats(t *testing.T) {
	for msg, want := range map[string]int{
		"icectl: open /x/y: open /x/y: file not found":                             2,
		"icectl: read table metadata: open /x/y: file not found":                   0,
		"icectl: open s3://b/k: s3: open s3://b/k: NoSuchKey":                      2,
		"icectl: open catalog sqlite:////d/c.db: database /d/c.db":                 0,
		"icectl: read manifest file:///w/m.avro: open /w/m.avro: EOF":              0,
		"icectl: table t snapshot 1234567: open list of snapshot 1234567: open /x": 1,
	} {
		if got := repeats(msg); len(got) != want {
			t.Errorf("repeats(%q) = %q, want %d", msg, got, want)
		}
	}
}

// TestErrorsNameEachPathOnce runs commands on a missing file, a missing
// table, a table whose metadata file is gone and one whose manifest list
// is gone: each fails with one line that names every path once.
func TestErrorsNameEachPathOnce(t *testing.T) {
	fx := newFixture(t)
	missing := filepath.Join(fx.dir, "nowhere", "metadata", "00001-x.metadata.json")
	check := func(what string, r result) {
		t.Helper()
		if r.code == ExitOK {
			t.Errorf("%s: exit 0", what)
			return
		}
		if rep := repeats(r.stderr); len(rep) > 0 {
			t.Errorf("%s: %q repeats %q", what, r.stderr, rep)
		}
	}
	for _, kind := range []string{"metadata", "manifest", "puffin", "dv", "parquet"} {
		check("inspect "+kind, runCLI(t, nil, "inspect", kind, missing))
		check("inspect "+kind+" file://", runCLI(t, nil, "inspect", kind, "file://"+missing))
		check("inspect "+kind+" on a directory", runCLI(t, nil, "inspect", kind, fx.dir))
	}
	readers := [][]string{
		{"files"}, {"files", "--deletes"}, {"health"}, {"snapshots"}, {"table", "show"},
		{"compact", "--dry-run"}, {"verify", "deletes"}, {"rewrite-manifests", "--dry-run"},
	}
	for _, args := range readers {
		name := strings.Join(args, " ")
		check(name+" on a missing metadata file", runCLI(t, fx.env, append(args[:len(args):len(args)], missing)...))
		check(name+" on a missing table", fx.run(t, append(args[:len(args):len(args)], "db.nosuch")...))
	}

	// The current snapshot's manifest list gone.
	list := strings.TrimPrefix(fx.table.Metadata.CurrentSnapshot().ManifestList, "file://")
	if err := os.Remove(list); err != nil {
		t.Fatal(err)
	}
	for _, args := range readers {
		if args[0] == "snapshots" || args[0] == "table" {
			continue // they read no manifest list
		}
		check(strings.Join(args, " ")+" without its manifest list", fx.run(t, append(args[:len(args):len(args)], "db.events")...))
	}
	// The current metadata file gone.
	if err := os.Remove(strings.TrimPrefix(fx.table.MetadataLocation, "file://")); err != nil {
		t.Fatal(err)
	}
	for _, args := range readers {
		check(strings.Join(args, " ")+" without its metadata file", fx.run(t, append(args[:len(args):len(args)], "db.events")...))
	}
}
