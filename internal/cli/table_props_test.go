package cli

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/filecat"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// loadFixtureTable reloads the fixture's table from its catalog.
func loadFixtureTable(t *testing.T, fx *fixture) *catalog.Table {
	t.Helper()
	ctx := context.Background()
	cat, err := sqlcat.Open(ctx, catalog.Config{Name: "default", URI: fx.uri})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, fx.table.Ident)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func TestTableSetPropertiesCommits(t *testing.T) {
	fx := newFixture(t)
	before := fx.table.MetadataLocation
	r := fx.run(t, "table", "set-properties", "db.events", "write.target-file-size-bytes=134217728",
		"history.expire.max-snapshot-age-ms=3600000", "comment=a=b", "-o", "json").mustSucceed(t)
	v := r.decodeJSON(t)
	tbl := loadFixtureTable(t, fx)
	if v["committed"] != true || v["dry_run"] != false {
		t.Errorf("committed=%v dry_run=%v", v["committed"], v["dry_run"])
	}
	if v["metadata_location"] != tbl.MetadataLocation || tbl.MetadataLocation == before {
		t.Errorf("metadata_location %v, table now at %s (was %s)", v["metadata_location"], tbl.MetadataLocation, before)
	}
	if v["previous_metadata_location"] != before {
		t.Errorf("previous_metadata_location %v, want %s", v["previous_metadata_location"], before)
	}
	want := map[string]string{"write.target-file-size-bytes": "134217728", "history.expire.max-snapshot-age-ms": "3600000", "comment": "a=b", "owner": "tests"}
	for k, w := range want {
		if got := tbl.Metadata.Properties[k]; got != w {
			t.Errorf("property %s = %q, want %q", k, got, w)
		}
		if got := at(t, v, "properties", k); got != w {
			t.Errorf("printed property %s = %v, want %q", k, got, w)
		}
	}
	changes := at(t, v, "changes").([]any)
	if len(changes) != 3 {
		t.Fatalf("changes %v", changes)
	}
	// Sorted by key: comment, history..., write...
	if c := changes[2].(map[string]any); c["key"] != "write.target-file-size-bytes" || c["change"] != "set" || c["old"] != "4194304" || c["new"] != "134217728" {
		t.Errorf("change %v", c)
	}
	if c := changes[0].(map[string]any); c["key"] != "comment" || c["old"] != nil || c["new"] != "a=b" {
		t.Errorf("change %v", c)
	}
	// The snapshot history is untouched by a property change.
	if cur := tbl.Metadata.CurrentSnapshot(); cur == nil || cur.SnapshotID != fx.snaps[1] {
		t.Errorf("current snapshot changed: %v", cur)
	}
	if n := len(tbl.Metadata.MetadataLog); n == 0 || tbl.Metadata.MetadataLog[n-1].MetadataFile != before {
		t.Errorf("metadata-log does not end with the previous metadata %s: %v", before, tbl.Metadata.MetadataLog)
	}
}

func TestTableRemovePropertiesText(t *testing.T) {
	fx := newFixture(t)
	r := fx.run(t, "table", "remove-properties", "db.events", "owner", "not.there").mustSucceed(t)
	tbl := loadFixtureTable(t, fx)
	if _, ok := tbl.Metadata.Properties["owner"]; ok {
		t.Error("owner still set")
	}
	if tbl.Metadata.Properties["write.target-file-size-bytes"] != "4194304" {
		t.Error("an unrelated property changed")
	}
	for _, want := range []string{"db.events: committed " + tbl.MetadataLocation, "remove", "owner", "was tests", "unchanged", "not.there", "absent"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestTablePropertiesNoCommitWhenNothingChanges(t *testing.T) {
	fx := newFixture(t)
	before := snapshotDir(t, filepath.Join(fx.dir, "wh"))
	for _, args := range [][]string{
		{"table", "set-properties", "db.events", "owner=tests", "-o", "json"},
		{"table", "remove-properties", "db.events", "not.there", "-o", "json"},
		{"table", "set-properties", "db.events", "owner=someone", "--dry-run", "-o", "json"},
		{"table", "remove-properties", "db.events", "owner", "--dry-run", "-o", "json"},
	} {
		v := fx.run(t, args...).mustSucceed(t).decodeJSON(t)
		if v["committed"] != false || v["metadata_location"] != fx.table.MetadataLocation {
			t.Errorf("%v: committed=%v at %v", args, v["committed"], v["metadata_location"])
		}
	}
	if after := snapshotDir(t, filepath.Join(fx.dir, "wh")); after != before {
		t.Error("a run with nothing to commit wrote files")
	}
	if loc := loadFixtureTable(t, fx).MetadataLocation; loc != fx.table.MetadataLocation {
		t.Errorf("table moved to %s", loc)
	}
	r := fx.run(t, "table", "set-properties", "db.events", "owner=someone", "--dry-run").mustSucceed(t)
	if !strings.Contains(r.stdout, "dry run, nothing committed") || !strings.Contains(r.stdout, "would set") || !strings.Contains(r.stdout, "someone (was tests)") {
		t.Errorf("dry-run output:\n%s", r.stdout)
	}
}

func TestTablePropertiesUsageErrors(t *testing.T) {
	fx := newFixture(t)
	before := snapshotDir(t, filepath.Join(fx.dir, "wh"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"table", "set-properties", "db.events", "format-version=3"}, "reserved"},
		{[]string{"table", "set-properties", "db.events", "current-snapshot-id=1"}, "reserved"},
		{[]string{"table", "remove-properties", "db.events", "uuid"}, "reserved"},
		{[]string{"table", "set-properties", "db.events", "novalue"}, "want KEY=VALUE"},
		{[]string{"table", "set-properties", "db.events", "=v"}, "empty property key"},
		{[]string{"table", "set-properties", "db.events", "a=1", "a=2"}, "given twice"},
		{[]string{"table", "set-properties", "db.events"}, "requires at least 2 arg"},
		{[]string{"table", "set-properties", "events", "a=1"}, ""},
	} {
		r := fx.run(t, c.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d stderr %q, want exit %d mentioning %q", c.args, r.code, r.stderr, ExitUsage, c.want)
		}
	}
	if after := snapshotDir(t, filepath.Join(fx.dir, "wh")); after != before {
		t.Error("a refused command wrote files")
	}
}

// faultyCatalog answers every commit with err, after letting the real
// catalog commit when land is set.
type faultyCatalog struct {
	catalog.Catalog
	err     error
	land    bool
	commits atomic.Int32
}

func (c *faultyCatalog) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	c.commits.Add(1)
	if c.land {
		if _, err := c.Catalog.CommitTable(ctx, t, reqs, ups); err != nil {
			return nil, err
		}
	}
	return nil, c.err
}

// runWithCatalog runs set-properties through the command and the process
// exit mapping with cat in place of the catalog the flags select.
func runWithCatalog(t *testing.T, cat catalog.Catalog, args ...string) (code int, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &Factory{Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }, Output: outputText}
	cmd := NewCmdTableSetProperties(f, func(o *TablePropsOptions) error {
		o.Open = func(context.Context) (catalog.Catalog, error) { return cat, nil }
		return RunTableProps(context.Background(), o)
	})
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	if err == nil {
		return ExitOK, ""
	}
	return exitCode(context.Background(), err), err.Error()
}

func TestTablePropertiesCommitErrorsExitCodes(t *testing.T) {
	for _, c := range []struct {
		name    string
		err     error
		land    bool
		code    int
		commits int32
		want    []string
	}{
		{"conflict", fmt.Errorf("injected: %w", catalog.ErrCommitConflict), false, ExitConflict, 3, []string{"commit conflict", "did not change"}},
		{"requirement", fmt.Errorf("injected: %w", spec.ErrRequirementFailed), false, ExitConflict, 3, []string{"commit conflict"}},
		{"unknown", fmt.Errorf("injected 504: %w", catalog.ErrCommitStateUnknown), true, ExitCommitState, 1, []string{"commit state unknown", "nothing was deleted", "icectl table show db.events"}},
		{"other", errors.New("disk on fire"), false, ExitFailure, 1, []string{"disk on fire"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx := newFixture(t)
			ctx := context.Background()
			real, err := sqlcat.Open(ctx, catalog.Config{Name: "default", URI: fx.uri})
			if err != nil {
				t.Fatal(err)
			}
			// Few, short retries: a conflict must be retried, then reported.
			if _, err := real.CommitTable(ctx, fx.table, nil, []spec.Update{spec.SetProperties{Updates: map[string]string{
				"commit.retry.num-retries": "2", "commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "2"}}}); err != nil {
				t.Fatal(err)
			}
			before := loadFixtureTable(t, fx).MetadataLocation
			cat := &faultyCatalog{Catalog: real, err: c.err, land: c.land}
			code, msg := runWithCatalog(t, cat, "db.events", "k=v")
			if code != c.code {
				t.Errorf("exit %d, want %d (%s)", code, c.code, msg)
			}
			if n := cat.commits.Load(); n != c.commits {
				t.Errorf("%d commit attempts, want %d", n, c.commits)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			after := loadFixtureTable(t, fx)
			if c.land {
				// The commit landed behind the unknown answer: its metadata
				// file must still be there and current.
				if after.MetadataLocation == before || after.Metadata.Properties["k"] != "v" {
					t.Errorf("landed commit lost: table at %s, k=%q", after.MetadataLocation, after.Metadata.Properties["k"])
				}
			} else if after.MetadataLocation != before {
				t.Errorf("failed commit moved the table to %s", after.MetadataLocation)
			}
		})
	}
}

// A metadata log written by another (buggy or hostile) writer names a file
// outside the table and a live data file of the table. A property change with
// delete-after-commit on drops those entries from the log: icectl must not
// delete either file, and must say that it refused (issue 14, item 1).
func TestSetPropertiesNeverDeletesWhatTheMetadataLogNames(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	wh := "file://" + filepath.Join(dir, "wh")
	cat, err := filecat.Create(ctx, catalog.Config{Name: "default", URI: wh})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if err := cat.CreateNamespace(ctx, []string{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	id := catalog.Ident{Namespace: []string{"db"}, Name: "t"}
	loc, err := cat.DefaultLocation(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	schema := spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}}}
	md, err := spec.NewTableMetadata(schema, spec.PartitionSpec{}, spec.SortOrder{}, loc, map[string]string{
		spec.PropMetadataPreviousVersionsMax: "1",
		catalog.PropDeleteAfterCommit:        "true",
	}, 2)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, id, md)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(dir, "precious", "00001-x.metadata.json")
	dataFile := strings.TrimPrefix(loc, "file://") + "/data/part-0.parquet"
	for _, p := range []string{outside, dataFile} {
		if err := fileio.WriteFile(ctx, tbl.IO, p, []byte("keep me")); err != nil {
			t.Fatal(err)
		}
	}
	// The other writer's version: its log lists both files.
	hostile := *tbl.Metadata
	hostile.MetadataLog = []spec.MetadataLogEntry{
		{TimestampMS: 1, MetadataFile: "file://" + outside},
		{TimestampMS: 2, MetadataFile: dataFile},
		{TimestampMS: 3, MetadataFile: tbl.MetadataLocation},
	}
	next := strings.TrimSuffix(tbl.MetadataLocation, "v1.metadata.json") + "v2.metadata.json"
	if !strings.HasSuffix(tbl.MetadataLocation, "/v1.metadata.json") {
		t.Fatalf("unexpected first version %s", tbl.MetadataLocation)
	}
	if err := catalog.WriteMetadata(ctx, tbl.IO, next, &hostile); err != nil {
		t.Fatal(err)
	}

	r := runCLI(t, map[string]string{"HOME": dir}, "table", "set-properties", "db.t", "owner=ops", "--catalog-uri", wh)
	if r.code != 0 {
		t.Fatalf("set-properties: exit %d: %s", r.code, r.stderr)
	}
	for _, p := range []string{outside, dataFile} {
		if _, err := fileio.ReadFile(ctx, tbl.IO, p); err != nil {
			t.Errorf("%s, named by the metadata log, is gone: %v", p, err)
		}
	}
	if !strings.Contains(r.stderr, "warning") || !strings.Contains(r.stderr, dataFile) || !strings.Contains(r.stderr, outside) {
		t.Errorf("stderr does not report the refused deletions:\n%s", r.stderr)
	}
}

// TestTableSetPropertiesValidates: a value icectl would refuse when it
// reads the table later is refused before any commit, with exit 2 and one
// line naming the property; unknown keys stay free-form.
func TestTableSetPropertiesValidates(t *testing.T) {
	fx := newFixture(t)
	before := fx.table.MetadataLocation
	for _, kv := range []string{
		"write.target-file-size-bytes=1MiB", "write.target-file-size-bytes=abc",
		"history.expire.max-snapshot-age-ms=-5", "commit.retry.num-retries=many",
		"write.metadata.previous-versions-max=0", "gc.enabled=maybe", "write.parquet.compression-codec=lzo",
	} {
		r := fx.run(t, "table", "set-properties", "db.events", "comment=ok", kv)
		key, _, _ := strings.Cut(kv, "=")
		if r.code != ExitUsage || !strings.Contains(r.stderr, key) {
			t.Errorf("set-properties %s: exit %d, stderr %q; want exit 2 naming %s", kv, r.code, r.stderr, key)
		}
	}
	if got := loadFixtureTable(t, fx).MetadataLocation; got != before {
		t.Errorf("a refused set-properties committed: metadata moved from %s to %s", before, got)
	}
	fx.run(t, "table", "set-properties", "db.events", "my.own.key=1MiB", "write.target-file-size-bytes=1048576").mustSucceed(t)
}

// TestHealthBadPropertyIsUsageError: a table that already holds a bad
// value (set by another tool) makes health exit 2, naming the property.
func TestHealthBadPropertyIsUsageError(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	cat, err := sqlcat.Open(ctx, catalog.Config{Name: "default", URI: fx.uri})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl := loadFixtureTable(t, fx)
	if _, err := cat.CommitTable(ctx, tbl, nil, []spec.Update{spec.SetProperties{Updates: map[string]string{"write.target-file-size-bytes": "1MiB"}}}); err != nil {
		t.Fatal(err)
	}
	r := fx.run(t, "health", "db.events")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "write.target-file-size-bytes") {
		t.Errorf("health: exit %d, stderr %q; want exit 2 naming the property", r.code, r.stderr)
	}
}

// A SQLite catalog database SQLite can only read (a write-protected file)
// refuses the commit before the UPDATE runs: a definite failure (exit 1,
// not 5), and the metadata file the attempt wrote is removed.
func TestReadOnlySQLiteCommitFails(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(fx.dir, "catalog.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := sqlcat.New(ctx, db, sqlcat.SQLite, catalog.Config{Name: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	before := snapshotDir(t, filepath.Join(fx.dir, "wh"))
	code, msg := runWithCatalog(t, cat, "db.events", "k=v")
	if code != ExitFailure || !strings.Contains(msg, "read-only") || strings.Contains(msg, "state unknown") {
		t.Errorf("exit %d, %s; want exit 1 saying the database is read-only", code, msg)
	}
	if after := snapshotDir(t, filepath.Join(fx.dir, "wh")); after != before {
		t.Errorf("the refused commit left files:\n%s\nbefore:\n%s", after, before)
	}
}
