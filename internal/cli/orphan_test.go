package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/scan"
	icetable "github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/orphan"
)

func TestOrphanFlags(t *testing.T) {
	f := &Factory{Out: &strings.Builder{}, ErrOut: &strings.Builder{}, Getenv: func(string) string { return "" }, Output: outputText}
	parse := func(args ...string) (*OrphanOptions, error) {
		var got *OrphanOptions
		cmd := NewCmdOrphan(f, func(o *OrphanOptions) error { got = o; return nil }, nil)
		cmd.SetArgs(args)
		cmd.SetOut(&strings.Builder{})
		cmd.SetErr(&strings.Builder{})
		err := cmd.Execute()
		return got, err
	}
	o, err := parse("ns.t")
	if err != nil {
		t.Fatal(err)
	}
	if o.Orphan.OlderThan != 72*time.Hour || o.Orphan.PrefixMismatch != orphan.PrefixError || o.Orphan.DryRun || o.Orphan.Trash != "" {
		t.Errorf("defaults %+v", o.Orphan)
	}
	o, err = parse("ns.t", "--older-than", "7d", "--equal-schemes", "gs=s3", "--equal-authorities", "a,b=c",
		"--prefix-mismatch", "delete", "--trash", ".trash", "--dry-run", "--max-concurrent-deletes", "3", "--location", "s3://b/t/data")
	if err != nil {
		t.Fatal(err)
	}
	oo := o.Orphan
	if oo.OlderThan != 7*24*time.Hour || oo.EqualSchemes["gs"] != "s3" || oo.EqualAuthorities["b"] != "c" ||
		oo.PrefixMismatch != orphan.PrefixDelete || oo.Trash != ".trash" || !oo.DryRun || oo.MaxConcurrentDeletes != 3 || oo.Location != "s3://b/t/data" {
		t.Errorf("parsed %+v", oo)
	}
	ts := time.Now().Add(-5 * 24 * time.Hour).UTC().Format(time.RFC3339)
	if o, err = parse("ns.t", "--older-than", ts); err != nil || o.Orphan.OlderThan < 5*24*time.Hour-time.Minute {
		t.Errorf("--older-than %s: %+v %v", ts, o, err)
	}
	if o, err = parse("ns.t", "--older-than", "1h", "--unsafe-allow-recent"); err != nil || o.Orphan.OlderThan != time.Hour {
		t.Errorf("--unsafe-allow-recent: %v", err)
	}
	for _, bad := range [][]string{
		{"--older-than", "1h"},
		{"--older-than", "soon"},
		{"--older-than", "0s"},
		{"--prefix-mismatch", "maybe"},
		{"--equal-schemes", "s3a"},
		{"--max-concurrent-deletes", "-1"},
	} {
		if _, err := parse(append([]string{"ns.t"}, bad...)...); exitCode(context.Background(), err) != ExitUsage {
			t.Errorf("%v: %v, want a usage error", bad, err)
		}
	}
	// Through the whole CLI: a usage error exits 2 and changes nothing.
	if r := runCLI(t, nil, "orphan", "ns.t", "--older-than", "2h"); r.code != ExitUsage || !strings.Contains(r.stderr, "--unsafe-allow-recent") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runCLI(t, nil, "orphan", "restore", "ns.t"); r.code != ExitUsage || !strings.Contains(r.stderr, "--trash") {
		t.Errorf("restore without --trash: exit %d, stderr %q", r.code, r.stderr)
	}
}

// tree hashes every file under dir.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		sum := sha256.Sum256(data)
		out[p] = hex.EncodeToString(sum[:])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withoutClaimCommits drops from a change list the two metadata files a
// deleting run adds by taking and releasing the table's claim (and fails
// the test when their number is not even: a claim left behind).
func withoutClaimCommits(t *testing.T, d []string) []string {
	t.Helper()
	var out []string
	n := 0
	for _, c := range d {
		if strings.HasPrefix(c, "+ ") && strings.HasSuffix(c, ".metadata.json") && strings.Contains(c, "/metadata/") {
			n++
			continue
		}
		out = append(out, c)
	}
	if n%2 != 0 {
		t.Errorf("%d new metadata files: a claim taken and not released?", n)
	}
	return out
}

func changed(a, b map[string]string) []string {
	var out []string
	for p, h := range a {
		if b[p] != h {
			out = append(out, "- "+p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			out = append(out, "+ "+p)
		}
	}
	return out
}

func demoChecksum(t *testing.T, dir string) string {
	t.Helper()
	ctx := context.Background()
	cat, err := sqlcat.Open(ctx, catalog.Config{Name: "demo", URI: caturi.SQLiteURI(filepath.Join(dir, "catalog.db"))})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, catalog.Ident{Namespace: []string{"shop"}, Name: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := tbl.Metadata.SnapshotByID(*tbl.Metadata.CurrentSnapshotID)
	sum, err := scan.Checksum(ctx, tbl.IO, tbl.Metadata, snap, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sum.Checksum
}

// TestOrphanOnDemo runs the verb on the demo table, whose failed job left
// four files: a dry run changes nothing, --trash moves exactly them,
// restore puts them back byte for byte, and a plain run deletes them; the
// table reads the same rows throughout.
func TestOrphanOnDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	env := map[string]string{"HOME": t.TempDir()}
	m := runCLI(t, env, "demo", "--dir", dir, "-o", "json", "--walkthrough=false").mustSucceed(t).decodeJSON(t)
	uri, _ := at(t, m, "catalog_uri").(string)
	checksum, _ := at(t, m, "checksum").(string)
	wh := filepath.Join(dir, "warehouse")
	before := tree(t, wh)

	dry := runCLI(t, env, "orphan", "shop.orders", "--catalog-uri", uri, "--catalog-name", "demo", "--dry-run", "-o", "json").mustSucceed(t).decodeJSON(t)
	orphans, _ := at(t, dry, "orphans").([]any)
	if len(orphans) != 4 || num(t, dry, "summary", "orphans") != "4" || at(t, dry, "dry_run") != true {
		t.Fatalf("dry run found %d orphans: %v", len(orphans), dry)
	}
	var leftovers []string
	for i := range orphans {
		p, _ := at(t, orphans, i, "path").(string)
		leftovers = append(leftovers, p)
		if at(t, orphans, i, "status") != "would_delete" || at(t, orphans, i, "reason") == "" || num(t, orphans, i, "size") == "0" {
			t.Errorf("orphan %v", orphans[i])
		}
		if age, _ := at(t, orphans, i, "age_ms").(interface{ Int64() (int64, error) }); age == nil {
			t.Errorf("orphan %v has no age", orphans[i])
		}
	}
	if d := changed(before, tree(t, wh)); len(d) != 0 {
		t.Fatalf("dry run changed %v", d)
	}
	text := runCLI(t, env, "orphan", "shop.orders", "--catalog-uri", uri, "--catalog-name", "demo", "--dry-run").mustSucceed(t).stdout
	for _, want := range []string{"would delete  ", "mode      dry run", "orphans  4,"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "would_delete") {
		t.Errorf("text output shows the JSON label would_delete:\n%s", text)
	}

	tr := runCLI(t, env, "orphan", "shop.orders", "--catalog-uri", uri, "--catalog-name", "demo", "--trash", ".icectl-trash", "-o", "json").mustSucceed(t).decodeJSON(t)
	if num(t, tr, "summary", "trashed") != "4" || num(t, tr, "summary", "failed") != "0" {
		t.Fatalf("trash run: %v", tr["summary"])
	}
	moved := withoutClaimCommits(t, changed(before, tree(t, wh)))
	if len(moved) != 4+4+1 { // 4 gone, 4 copies and run.json in the trash
		t.Errorf("trash run changed %v", moved)
	}
	if got := demoChecksum(t, dir); got != checksum {
		t.Errorf("checksum after trashing %s, want %s", got, checksum)
	}

	rs := runCLI(t, env, "orphan", "restore", "shop.orders", "--catalog-uri", uri, "--catalog-name", "demo", "--trash", ".icectl-trash", "-o", "json").mustSucceed(t).decodeJSON(t)
	if num(t, rs, "restored") != "4" || len(at(t, rs, "files").([]any)) != 4 {
		t.Errorf("restore: %v", rs)
	}
	if d := withoutClaimCommits(t, changed(before, tree(t, wh))); len(d) != 0 {
		t.Errorf("after restore the warehouse differs: %v", d)
	}

	// Restored files are new to the store (their mtime is the restore's),
	// so a plain run keeps them until they age past the cutoff again.
	young := runCLI(t, env, "orphan", "shop.orders", "--catalog-uri", uri, "--catalog-name", "demo", "-o", "json").mustSucceed(t).decodeJSON(t)
	if num(t, young, "summary", "orphans") != "0" || num(t, young, "summary", "young") != "4" {
		t.Errorf("run right after restore: %v", young["summary"])
	}
	for _, p := range leftovers {
		old := time.Now().Add(-4 * 24 * time.Hour)
		if err := os.Chtimes(strings.TrimPrefix(p, "file://"), old, old); err != nil {
			t.Fatal(err)
		}
	}
	before = tree(t, wh)
	del := runCLI(t, env, "orphan", "shop.orders", "--catalog-uri", uri, "--catalog-name", "demo").mustSucceed(t).stdout
	if strings.Count(del, "deleted ") < 4 {
		t.Errorf("delete run output:\n%s", del)
	}
	after := tree(t, wh)
	d := withoutClaimCommits(t, changed(before, after))
	if len(d) != 4 {
		t.Errorf("delete run changed %v", d)
	}
	for _, p := range leftovers {
		if _, ok := after[strings.TrimPrefix(p, "file://")]; ok {
			t.Errorf("leftover %s is still there", p)
		}
	}
	if got := demoChecksum(t, dir); got != checksum {
		t.Errorf("checksum after deleting %s, want %s", got, checksum)
	}
	// The independent reader reads the same rows, and every file of every
	// snapshot (the tag's and the branch's too) is there.
	if os.Getenv(testenv.IcebergGoReader) != "" {
		out := testenv.IcebergGo(context.Background(), t, "scan", "--catalog-uri", uri, "--catalog-name", "demo", "--table", "shop.orders")
		var g struct {
			Checksum string `json:"checksum"`
		}
		if err := json.Unmarshal(out, &g); err != nil || g.Checksum != checksum {
			t.Errorf("iceberg-go reads checksum %s (%v), want %s", g.Checksum, err, checksum)
		}
	}
	checkAllSnapshotsRead(t, dir)
}

// checkAllSnapshotsRead checks that every file reachable from every
// snapshot of the demo table (tag and branch included) is still there.
func checkAllSnapshotsRead(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	cat, err := sqlcat.Open(ctx, catalog.Config{Name: "demo", URI: caturi.SQLiteURI(filepath.Join(dir, "catalog.db"))})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, catalog.Ident{Namespace: []string{"shop"}, Name: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, s := range tbl.Metadata.Snapshots {
		ids = append(ids, s.SnapshotID)
	}
	err = icetable.WalkReachable(ctx, tbl.IO, tbl.Metadata, ids, func(f icetable.ReachableFile) error {
		if _, err := os.Stat(strings.TrimPrefix(f.Path, "file://")); err != nil {
			t.Errorf("%s file of snapshot %d: %v", f.Kind, f.SnapshotID, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOrphanJSONDocument: the streamed document is one JSON object with
// both arrays, whichever events came.
func TestOrphanJSONDocument(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	sum := orphan.Summary{Table: "ns.t", Root: "s3://b/t/", Cutoff: now, Conflicts: 2}
	for _, c := range []struct {
		name      string
		conflicts int
		orphans   int
	}{{"empty", 0, 0}, {"conflicts", 2, 0}, {"orphans", 0, 3}} {
		t.Run(c.name, func(t *testing.T) {
			var out strings.Builder
			f := &Factory{Out: &out, Output: outputJSON}
			w := newOrphanWriter(f)
			if err := w.Begin(sum); err != nil {
				t.Fatal(err)
			}
			for i := range c.conflicts {
				w.Conflict(orphan.ConflictFile{Path: fmt.Sprintf("s3://b/t/%d", i), ReferencedAs: "s3://c/t/x", Mismatch: "authority"})
			}
			for i := range c.orphans {
				w.Orphan(orphan.Result{Path: fmt.Sprintf("s3://b/t/o%d", i), Size: 5, ModTime: now, Status: orphan.StatusDeleted, Reason: "r"})
			}
			if err := w.end(sum); err != nil {
				t.Fatal(err)
			}
			m := result{stdout: out.String()}.decodeJSON(t)
			if n := len(at(t, m, "conflicts").([]any)); n != c.conflicts {
				t.Errorf("%d conflicts, want %d", n, c.conflicts)
			}
			if n := len(at(t, m, "orphans").([]any)); n != c.orphans {
				t.Errorf("%d orphans, want %d", n, c.orphans)
			}
			if at(t, m, "table") != "ns.t" || num(t, m, "summary", "conflicts") != "2" {
				t.Errorf("document %v", m)
			}
		})
	}
}

// TestOrphanTrashPurge: a trash run younger than --older-than is kept
// (the run says there is nothing to purge, on stdout, as its result); a
// dry run of --older-than 0s lists it and changes nothing; the purge
// deletes its copies and run.json, and the table reads as before.
func TestOrphanTrashPurge(t *testing.T) {
	d := newDemo(t)
	dir, checksum, wh := d.dir, d.checksum, filepath.Join(d.dir, "warehouse")
	run := func(args ...string) result { return d.run(t, args...) }
	if r := run("orphan", "trash", "purge", "shop.orders", "--trash", ".icectl-trash"); r.code != ExitUsage || !strings.Contains(r.stderr, "--older-than") {
		t.Errorf("without --older-than: exit %d, %q", r.code, r.stderr)
	}
	if r := run("orphan", "trash", "purge", "shop.orders", "--older-than", "1d"); r.code != ExitUsage || !strings.Contains(r.stderr, "--trash") {
		t.Errorf("without --trash: exit %d, %q", r.code, r.stderr)
	}
	run("orphan", "shop.orders", "--trash", ".icectl-trash").mustSucceed(t)
	trashed := tree(t, wh)

	keep := run("orphan", "trash", "purge", "shop.orders", "--trash", ".icectl-trash", "--older-than", "1d").mustSucceed(t)
	if !strings.HasPrefix(keep.stdout, "shop.orders: nothing to purge") || !strings.Contains(keep.stdout, "kept  ") || keep.stderr != "" {
		t.Errorf("purge of a young run: stdout %q, stderr %q", keep.stdout, keep.stderr)
	}
	dry := run("orphan", "trash", "purge", "shop.orders", "--trash", ".icectl-trash", "--older-than", "0s", "--dry-run", "-o", "json").mustSucceed(t).decodeJSON(t)
	if at(t, dry, "table") != "shop.orders" || num(t, dry, "summary", "purged") != "1" || at(t, dry, "runs", 0, "status") != "would_purge" ||
		num(t, dry, "runs", 0, "files") != "5" { // 4 copies and run.json
		t.Errorf("dry run: %v", dry)
	}
	if d := changed(trashed, tree(t, wh)); len(d) != 0 {
		t.Fatalf("a dry run and a purge keeping every run changed %v", d)
	}
	done := run("orphan", "trash", "purge", "shop.orders", "--trash", ".icectl-trash", "--older-than", "0s", "-o", "json").mustSucceed(t).decodeJSON(t)
	if num(t, done, "summary", "purged") != "1" || num(t, done, "summary", "purged_files") != "5" || at(t, done, "runs", 0, "status") != "purged" {
		t.Errorf("purge: %v", done)
	}
	gone := changed(trashed, tree(t, wh))
	for _, p := range gone {
		if !strings.Contains(p, "/.icectl-trash/") {
			t.Errorf("purge changed %s, outside the trash", p)
		}
	}
	if len(gone) != 5 {
		t.Errorf("purge changed %v, want the 5 files of the run", gone)
	}
	if got := demoChecksum(t, dir); got != checksum {
		t.Errorf("checksum after the purge %s, want %s", got, checksum)
	}
}
