package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/cli"
	"github.com/icectl/icectl/refs"
)

// Bad input to the toolbox verbs (rewrite-position-deletes, cherrypick,
// fast-forward, rollback --branch, table register, rewrite-table-path):
// each is refused with one line on stderr and the exit code its kind has
// (2 usage, 1 error), and none changes a byte of the catalog, the
// warehouse or the staging directory it was given.

func TestToolboxBadInputSQLite(t *testing.T) {
	t.Parallel()
	toolboxBadInput(t, sqliteBackend(t), sqliteDB)
}

func TestToolboxBadInputREST(t *testing.T) {
	t.Parallel()
	toolboxBadInput(t, restBackend(t), nil)
}

func TestToolboxBadInputPostgres(t *testing.T) {
	t.Parallel()
	// runICECTLOn names the catalog in environment variables, whose
	// underscores stand for dashes: a name without any.
	b := postgresBackend(t)
	name := strings.ReplaceAll(b.cfg.Name, "_", "")
	for i, a := range b.goArgs {
		if a == b.cfg.Name {
			b.goArgs[i] = name
		}
	}
	b.cfg.Name = name
	toolboxBadInput(t, b, postgresRows)
}

// badTables is the fixture: a v2 table with branches, tags, staged and
// picked snapshots in every state a publish verb can meet, a v3 table and
// a v1 table.
type badTables struct {
	v2, v3, v1 string // NS.NAME
	v2Table    *catalog.Table
	// Snapshots of v2 by what they are.
	first, head, auditHead, deleteOnBranch, overwriteOnBranch, pickedStaged, pickedBranch, duplicateWap, tagged int64
}

func buildBadTables(t *testing.T, b backend, cat catalog.Catalog) *badTables {
	t.Helper()
	bt := &badTables{v2: b.ns + ".bad_v2", v3: b.ns + ".bad_v3", v1: b.ns + ".bad_v1"}
	w := newWriter(t, b, cat, "bad_v2", 2)
	d1, d2 := w.data(t, mkRows("eu", span(0, 10)...)), w.data(t, mkRows("us", span(10, 20)...))
	w.commit(t, []manifest.DataFile{d1, d2})
	bt.first = *w.tbl.Metadata.CurrentSnapshotID
	for i := range 3 {
		w.commit(t, nil, w.positionDeletes(t, []any{"eu"}, map[string][]int64{d1.FilePath: {int64(i)}}))
	}
	mustRef := func(ch refs.Change) {
		t.Helper()
		tbl, err := refs.Commit(w.ctx, w.cat, w.reload(t), ch, w.opts)
		if err != nil {
			t.Fatal(err)
		}
		w.tbl = tbl
	}
	mustRef(refs.Create(spec.RefTypeTag, "t1", &bt.first, refs.Retention{}))
	bt.tagged = bt.first
	// audit diverges from main: each gets an append.
	mustRef(refs.Create(spec.RefTypeBranch, "audit", nil, refs.Retention{}))
	bt.auditHead = w.commitTo(t, "audit", nil, w.data(t, mkRows("us", span(20, 25)...)))
	w.commit(t, []manifest.DataFile{w.data(t, mkRows("eu", span(25, 30)...))})
	// A delete and a dynamic overwrite on branches of main's head, then
	// main moves: neither is a fast-forward any more.
	mustRef(refs.Create(spec.RefTypeBranch, "dels", nil, refs.Retention{}))
	mustRef(refs.Create(spec.RefTypeBranch, "ovr", nil, refs.Retention{}))
	bt.deleteOnBranch = w.commitChange(t, table.Change{Operation: spec.OperationDelete, Branch: "dels",
		AddDeletes: []manifest.DataFile{w.positionDeletes(t, []any{"us"}, map[string][]int64{d2.FilePath: {4}})}})
	bt.overwriteOnBranch = w.commitChange(t, table.Change{Operation: spec.OperationOverwrite, Branch: "ovr",
		AddData: []manifest.DataFile{w.data(t, mkRows("eu", span(40, 45)...))}, Remove: []table.FileKey{table.KeyOf(&d1)},
		Summary: map[string]string{"replace-partitions": "true"}})
	w.commit(t, []manifest.DataFile{w.data(t, mkRows("eu", span(50, 55)...))})
	// A staged snapshot published by cherrypick, and another staged with
	// the same wap.id.
	bt.pickedStaged = w.stage(t, "w1", w.data(t, mkRows("us", span(60, 65)...)))
	w.commit(t, []manifest.DataFile{w.data(t, mkRows("eu", span(65, 70)...))})
	if _, stderr, code := runICECTLOn(t, b, "cherrypick", bt.v2, "--snapshot", strconv.FormatInt(bt.pickedStaged, 10)); code != 0 {
		t.Fatalf("cherrypick: exit %d: %s", code, stderr)
	}
	// A branch's append picked onto main.
	mustRef(refs.Create(spec.RefTypeBranch, "pick", nil, refs.Retention{}))
	bt.pickedBranch = w.commitTo(t, "pick", nil, w.data(t, mkRows("us", span(80, 85)...)))
	w.commit(t, []manifest.DataFile{w.data(t, mkRows("eu", span(85, 90)...))})
	if _, stderr, code := runICECTLOn(t, b, "cherrypick", bt.v2, "--snapshot", strconv.FormatInt(bt.pickedBranch, 10)); code != 0 {
		t.Fatalf("cherrypick: exit %d: %s", code, stderr)
	}
	bt.duplicateWap = w.stage(t, "w1", w.data(t, mkRows("us", span(70, 75)...)))
	bt.v2Table = w.reload(t)
	bt.head = *bt.v2Table.Metadata.CurrentSnapshotID

	w3 := newWriterIn(t, b, cat, "bad_v3", 3)
	w3.commit(t, []manifest.DataFile{w3.data(t, mkRows("eu", span(0, 10)...))})
	// icectl writes no v1 snapshot: an empty v1 table.
	newWriterIn(t, b, cat, "bad_v1", 1)
	return bt
}

// newWriterIn is newWriter for a second table of the namespace.
func newWriterIn(t *testing.T, b backend, cat catalog.Catalog, name string, v int) *writer {
	t.Helper()
	b.ns = b.ns + "_" + name
	return newWriter(t, b, cat, name, v)
}

// commitChange commits ch on the table as it is and returns the new
// snapshot's id.
func (w *writer) commitChange(t *testing.T, ch table.Change) int64 {
	t.Helper()
	tbl, snap, err := table.CommitChange(w.ctx, w.cat, w.reload(t), ch, w.opts)
	if err != nil {
		t.Fatalf("commit %s to %q: %v", ch.Operation, ch.Branch, err)
	}
	w.tbl = tbl
	return snap.SnapshotID
}

// localTree is every file under dir with its content hash ("" when dir
// does not exist).
func localTree(t *testing.T, dir string) string {
	t.Helper()
	var out strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&out, "%s", p)
		if !d.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&out, " %x", sha256.Sum256(data))
		}
		out.WriteString("\n")
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out.String()
}

func toolboxBadInput(t *testing.T, b backend, extra state) {
	readerBin(t)
	ctx := context.Background()
	cat := b.open(t)
	bt := buildBadTables(t, b, cat)
	md := bt.v2Table.Metadata
	loc := md.Location
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	v3Name := b.ns + "_bad_v3.bad_v3"
	v1Name := b.ns + "_bad_v1.bad_v1"

	// What register and rewrite-table-path are given besides the table.
	scratch := t.TempDir()
	notEmpty := filepath.Join(scratch, "not-empty")
	if err := os.MkdirAll(notEmpty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notEmpty, "keep.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	aFile := filepath.Join(scratch, "a-file")
	if err := os.WriteFile(aFile, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(scratch, "corrupt", "metadata", "00001-0b7e4c5e-0000-4000-8000-000000000000.metadata.json")
	if err := os.MkdirAll(filepath.Dir(corrupt), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(corrupt, []byte(`{"format-version": 2, "table-uuid": `), 0o644); err != nil {
		t.Fatal(err)
	}
	missingMD := filepath.Join(scratch, "gone", "metadata", "00003-0b7e4c5e-0000-4000-8000-000000000000.metadata.json")
	older := md.MetadataLog[len(md.MetadataLog)-1].MetadataFile
	newest := bt.v2Table.MetadataLocation
	newStage := filepath.Join(scratch, "new-stage")
	firstVersion := md.MetadataLog[0].MetadataFile[strings.LastIndex(md.MetadataLog[0].MetadataFile, "/")+1:]
	lastLogVersion := older[strings.LastIndex(older, "/")+1:]

	v2 := bt.v2
	cases := []struct {
		args []string
		code int
		want string
	}{
		// rewrite-position-deletes
		{[]string{"rewrite-position-deletes"}, cli.ExitUsage, "accepts 1 arg"},
		{[]string{"rewrite-position-deletes", b.ns + ".missing"}, cli.ExitFailure, "missing"},
		{[]string{"rewrite-position-deletes", v3Name}, cli.ExitUsage, "dv merge"},
		{[]string{"rewrite-position-deletes", v2, "--target-size", "-1"}, cli.ExitUsage, "--target-size"},
		{[]string{"rewrite-position-deletes", v2, "--min-input-files", "0"}, cli.ExitUsage, "--min-input-files"},
		{[]string{"rewrite-position-deletes", newest}, cli.ExitFailure, "read-only"},

		// cherrypick
		{[]string{"cherrypick", v2}, cli.ExitUsage, "snapshot"},
		{[]string{"cherrypick", v2, "--snapshot", "latest"}, cli.ExitUsage, "--snapshot"},
		{[]string{"cherrypick", v2, "--snapshot", "42"}, cli.ExitFailure, "no snapshot 42"},
		{[]string{"cherrypick", v2, "--snapshot", id(bt.first)}, cli.ExitFailure, "already in main's history"},
		{[]string{"cherrypick", v2, "--snapshot", id(bt.deleteOnBranch)}, cli.ExitFailure, "not an append or a dynamic overwrite"},
		{[]string{"cherrypick", v2, "--snapshot", id(bt.overwriteOnBranch)}, cli.ExitFailure, "replaces"},
		{[]string{"cherrypick", v2, "--snapshot", id(bt.pickedStaged)}, cli.ExitFailure, `wap.id "w1" was already published`},
		{[]string{"cherrypick", v2, "--snapshot", id(bt.pickedBranch)}, cli.ExitFailure, "already cherrypicked"},
		{[]string{"cherrypick", v2, "--snapshot", id(bt.duplicateWap)}, cli.ExitFailure, `wap.id "w1" was already published`},
		{[]string{"cherrypick", v2, "--snapshot", id(bt.auditHead), "--dry-run"}, cli.ExitOK, ""},
		{[]string{"cherrypick", newest, "--snapshot", id(bt.auditHead)}, cli.ExitFailure, "read-only"},

		// fast-forward
		{[]string{"fast-forward", v2, "--branch", "main"}, cli.ExitUsage, "--to"},
		{[]string{"fast-forward", v2, "--branch", "audit", "--to", "audit"}, cli.ExitUsage, "both audit"},
		{[]string{"fast-forward", v2, "--branch", "main", "--to", "nope"}, cli.ExitFailure, "no branch or tag nope"},
		{[]string{"fast-forward", v2, "--branch", "main", "--to", "audit"}, cli.ExitFailure, "not an ancestor"},
		{[]string{"fast-forward", v2, "--branch", "audit", "--to", "main"}, cli.ExitFailure, "not an ancestor"},
		{[]string{"fast-forward", v2, "--branch", "main", "--to", "t1"}, cli.ExitFailure, "not an ancestor"},
		{[]string{"fast-forward", v2, "--branch", "t1", "--to", "main"}, cli.ExitFailure, "t1 is a tag, not a branch"},
		{[]string{"fast-forward", v2, "--branch", "main", "--to", "dels", "--dry-run"}, cli.ExitFailure, "not an ancestor"},

		// rollback --branch
		{[]string{"rollback", v2, "--branch", "nope", "--to-snapshot", id(bt.first)}, cli.ExitFailure, "no branch nope"},
		{[]string{"rollback", v2, "--branch", "audit", "--to-snapshot", id(bt.head)}, cli.ExitFailure, "not an ancestor of audit's head"},
		{[]string{"rollback", v2, "--branch", "audit", "--to-snapshot", "42"}, cli.ExitFailure, "no snapshot 42"},
		{[]string{"rollback", v2, "--branch", "t1", "--to-snapshot", id(bt.first)}, cli.ExitFailure, "t1 is a tag, not a branch"},
		{[]string{"rollback", v2, "--branch", "audit", "--to-timestamp", "1000"}, cli.ExitFailure, "at or before"},
		{[]string{"rollback", v2, "--branch", "nope", "--to-timestamp", "2030-01-01T00:00:00Z"}, cli.ExitFailure, "no branch nope"},
		{[]string{"rollback", v2, "--branch", "audit"}, cli.ExitUsage, "--to-snapshot"},
		{[]string{"rollback", v2, "--branch", "audit", "--to-snapshot", id(bt.first), "--to-timestamp", "1000"}, cli.ExitUsage, ""},
		{[]string{"rollback", v2, "--branch", "dels", "--to-snapshot", id(bt.auditHead), "--dry-run"}, cli.ExitFailure, "not an ancestor of dels's head"},

		// table register
		{[]string{"table", "register", "nodots", newest}, cli.ExitUsage, ""},
		{[]string{"table", "register", b.ns + ".copy", filepath.Join(scratch, "table.json")}, cli.ExitUsage, "not a metadata file"},
		{[]string{"table", "register", b.ns + ".copy", missingMD}, cli.ExitFailure, "not found"},
		{[]string{"table", "register", b.ns + ".copy", corrupt}, cli.ExitFailure, "metadata"},
		{[]string{"table", "register", b.ns + ".copy", older}, cli.ExitFailure, "not the newest"},
		{[]string{"table", "register", b.ns + ".copy", older, "--dry-run"}, cli.ExitFailure, "not the newest"},
		{[]string{"table", "register", v2, newest}, cli.ExitFailure, "exists"},
		{[]string{"table", "register", v2, newest, "--dry-run"}, cli.ExitFailure, "exists"},
		{[]string{"table", "register", "nons_" + b.ns + ".copy", newest}, cli.ExitFailure, "namespace"},
		{[]string{"table", "register", "nons_" + b.ns + ".copy", newest, "--dry-run"}, cli.ExitFailure, "namespace"},

		// rewrite-table-path
		{[]string{"rewrite-table-path", v2, "--to", "/x", "--stage", newStage}, cli.ExitUsage, "--from and --to"},
		{[]string{"rewrite-table-path", v2, "--from", loc, "--to", loc + "/", "--stage", newStage}, cli.ExitUsage, "the same"},
		{[]string{"rewrite-table-path", v2, "--from", loc, "--to", "/x"}, cli.ExitUsage, "--stage"},
		{[]string{"rewrite-table-path", v2, "--from", "/nowhere", "--to", "/x", "--stage", newStage}, cli.ExitFailure, "does not start with"},
		{[]string{"rewrite-table-path", v2, "--from", loc + "/data", "--to", "/x", "--stage", newStage}, cli.ExitFailure, "does not start with"},
		{[]string{"rewrite-table-path", v2, "--from", loc + "-other", "--to", "/x", "--stage", newStage}, cli.ExitFailure, "does not start with"},
		{[]string{"rewrite-table-path", v2, "--from", loc, "--to", "/x", "--stage", notEmpty}, cli.ExitFailure, "not empty"},
		{[]string{"rewrite-table-path", v2, "--from", loc, "--to", "/x", "--stage", filepath.Join(aFile, "stage")}, cli.ExitFailure, ""},
		{[]string{"rewrite-table-path", v2, "--from", loc, "--to", "/x", "--stage", newStage, "--end-version", "00999-nope.metadata.json"}, cli.ExitFailure, "neither the current metadata file"},
		{[]string{"rewrite-table-path", v2, "--from", loc, "--to", "/x", "--stage", newStage, "--start-version", "nope.metadata.json"}, cli.ExitFailure, "neither the current metadata file"},
		{[]string{"rewrite-table-path", v2, "--from", loc, "--to", "/x", "--stage", newStage, "--start-version", lastLogVersion, "--end-version", firstVersion}, cli.ExitFailure, "is not before end version"},
		{[]string{"rewrite-table-path", v1Name, "--from", "/", "--to", "/x", "--stage", newStage}, cli.ExitFailure, "format v1"},
		// Dry runs that succeed change nothing either.
		{[]string{"rewrite-position-deletes", v2, "--min-input-files", "2", "--dry-run"}, cli.ExitOK, ""},
		{[]string{"fast-forward", v2, "--branch", "fresh", "--to", "main", "--dry-run"}, cli.ExitOK, ""},
		{[]string{"rollback", v2, "--branch", "audit", "--to-snapshot", id(bt.first), "--dry-run"}, cli.ExitOK, ""},
		{[]string{"table", "register", b.ns + ".copy", newest, "--dry-run"}, cli.ExitOK, ""},
		{[]string{"table", "register", b.ns + ".copy", older, "--force", "--dry-run"}, cli.ExitOK, ""},
		{[]string{"rewrite-table-path", v2, "--from", loc, "--to", "/x", "--stage", newStage, "--dry-run"}, cli.ExitOK, ""},
		{[]string{"rewrite-table-path", b.ns + ".missing", "--from", loc, "--to", "/x", "--stage", newStage}, cli.ExitFailure, "missing"},
	}

	uri, err := caturi.Parse(b.cfg.URI)
	if err != nil {
		t.Fatal(err)
	}
	whDir := strings.TrimPrefix(b.cfg.Warehouse, "file://")
	world := func() string {
		var s strings.Builder
		s.WriteString(localTree(t, whDir))
		s.WriteString(localTree(t, scratch))
		if extra != nil {
			s.WriteString(extra(t, b))
		}
		if uri.Kind == caturi.SQLite {
			s.WriteString(localTree(t, filepath.Dir(uri.Path)))
		}
		// Every table of the namespaces (a registered copy would be one
		// more), the metadata file the catalog points at and the table's
		// files, wherever the warehouse is.
		c := b.open(t)
		defer c.Close()
		for _, ns := range [][]string{{b.ns}, {b.ns + "_bad_v3"}, {b.ns + "_bad_v1"}} {
			ids, err := c.ListTables(ctx, ns)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				s.WriteString(tableFiles(t, c, id))
			}
		}
		return s.String()
	}
	before := world()
	for _, c := range cases {
		t.Run(strings.Join(c.args[:min(len(c.args), 5)], " "), func(t *testing.T) {
			stdout, stderr, code := runICECTLOn(t, b, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q, want it to mention %q", stderr, c.want)
			}
			if c.code != cli.ExitOK {
				if strings.Count(strings.TrimSuffix(stderr, "\n"), "\n") != 0 || strings.TrimSpace(stderr) == "" {
					t.Errorf("stderr is not one line:\n%s", stderr)
				}
				if stdout != "" {
					t.Errorf("a refusal printed a result: %q", stdout)
				}
			}
			if bytes.Contains([]byte(stderr), []byte("panic")) {
				t.Errorf("panic: %s", stderr)
			}
		})
	}
	if after := world(); after != before {
		t.Errorf("bad input changed the catalog, the warehouse or a staging directory:\n%s", diffLines(before, after))
	}

	// Another run holds the table's claim: a conflict (4), nothing
	// written, not even a wait.
	held, err := claim.Take(ctx, cat, catalog.Ident{Namespace: []string{b.ns}, Name: "bad_v2"}, claim.Options{Owner: "other-host:42", Verb: "compact"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	before = world()
	if stdout, stderr, code := runICECTLOn(t, b, "rewrite-position-deletes", bt.v2, "--min-input-files", "2", "--wait", "0s"); code != cli.ExitConflict ||
		!strings.Contains(stderr, "other-host:42") || strings.Count(strings.TrimSuffix(stderr, "\n"), "\n") != 0 || stdout != "" {
		t.Errorf("rewrite-position-deletes of a claimed table: exit %d, stdout %q, stderr %q; want exit 4 naming the holder in one line", code, stdout, stderr)
	}
	if after := world(); after != before {
		t.Errorf("rewrite-position-deletes of a claimed table changed something:\n%s", diffLines(before, after))
	}
}
