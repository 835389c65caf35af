package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	icetable "github.com/icectl/icectl/iceberg/table"
)

// appendEach commits n one-file appends to db.events, one manifest each.
func (fx *fixture) appendEach(t *testing.T, n int) {
	t.Helper()
	ctx := context.Background()
	cat, err := sqlcat.Open(ctx, catalog.Config{Name: "default", URI: fx.uri, Warehouse: "file://" + filepath.Join(fx.dir, "wh")})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, catalog.Ident{Namespace: []string{"db"}, Name: "events"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		df := manifest.DataFile{Content: manifest.ContentData, FilePath: fmt.Sprintf("%s/data/region=eu/more%d.parquet", tbl.Metadata.Location, i),
			FileFormat: "PARQUET", Partition: []any{"eu"}, RecordCount: 5, FileSizeInBytes: 500}
		if tbl, _, err = icetable.CommitChange(ctx, cat, tbl, icetable.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{df}}, commit.DefaultOptions()); err != nil {
			t.Fatal(err)
		}
	}
}

func fileTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRewriteManifestsBadInput(t *testing.T) {
	fx := newFixture(t)
	loc := fx.metadataLocation(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rewrite-manifests"}, "accepts 1 arg"},
		{[]string{"rewrite-manifests", "db.events", "--spec-id", "9"}, "no partition spec 9"},
		{[]string{"rewrite-manifests", "db.events", "--spec-id", "-1"}, "invalid --spec-id"},
		{[]string{"rewrite-manifests", "db.events", "--target-size", "lots"}, "invalid --target-size"},
		{[]string{"rewrite-manifests", "db.events", "--where", "nope = 1"}, "invalid --where"},
	} {
		r := fx.run(t, c.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if fx.metadataLocation(t) != loc {
		t.Error("refused commands changed the table")
	}
}

func TestRewriteManifestsDryRunThenRun(t *testing.T) {
	fx := newFixture(t)
	fx.appendEach(t, 4)
	before := fileTree(t, fx.dir)
	r := fx.run(t, "rewrite-manifests", "db.events", "--dry-run", "-o", "json")
	r.mustSucceed(t)
	m := r.decodeJSON(t)
	if at(t, m, "dry_run") != true || at(t, m, "committed") != false {
		t.Errorf("dry run: %s", r.stdout)
	}
	selected, planned := num(t, m, "manifests_selected"), num(t, m, "manifests_planned")
	if selected != "5" || planned != "1" {
		t.Errorf("plan: %s, want 5 manifests into 1", r.stdout)
	}
	if !reflect.DeepEqual(before, fileTree(t, fx.dir)) {
		t.Fatal("dry run changed files")
	}
	r = fx.run(t, "rewrite-manifests", "db.events", "-o", "json")
	r.mustSucceed(t)
	m = r.decodeJSON(t)
	if num(t, m, "manifests_selected") != selected || num(t, m, "manifests_planned") != planned {
		t.Errorf("run planned differently from the dry run: %s", r.stdout)
	}
	if at(t, m, "committed") != true {
		t.Errorf("run did not commit: %s", r.stdout)
	}
	// Now there is nothing left to gain.
	r = fx.run(t, "rewrite-manifests", "db.events")
	r.mustSucceed(t)
	if !strings.HasPrefix(r.stdout, "db.events: nothing to rewrite") {
		t.Errorf("second run: %s", r.stdout)
	}
}

func TestRewriteManifestsWhere(t *testing.T) {
	fx := newFixture(t)
	r := fx.run(t, "rewrite-manifests", "db.events", "--where", "region = 'nowhere'", "-o", "json")
	r.mustSucceed(t)
	m := r.decodeJSON(t)
	if num(t, m, "manifests_selected") != "0" || at(t, m, "committed") != false {
		t.Errorf("where matching nothing: %s", r.stdout)
	}
	// A column no partition field derives from: the files' metrics decide,
	// and files without metrics (as here) may match.
	r = fx.run(t, "rewrite-manifests", "db.events", "--where", "id = 1", "--dry-run", "-o", "json")
	r.mustSucceed(t)
	if m := r.decodeJSON(t); num(t, m, "manifests_selected") == "0" {
		t.Errorf("where on a non-partition column selected nothing: %s", r.stdout)
	}
}

// TestRewriteManifestsDryRunIsTheRun: on a table with many manifests of
// varied sizes, in two partitions, one of them left without live files,
// the dry run plans exactly what the run then does: the same manifests
// selected, dropped and written, as the new snapshot's summary records.
// (The run reported the manifests it dropped as selected: 41 where the dry
// run said 40.)
func TestRewriteManifestsDryRunIsTheRun(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	cat, err := sqlcat.Open(ctx, catalog.Config{Name: "default", URI: fx.uri, Warehouse: "file://" + filepath.Join(fx.dir, "wh")})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, catalog.Ident{Namespace: []string{"db"}, Name: "events"})
	if err != nil {
		t.Fatal(err)
	}
	var gone []icetable.FileKey
	for i := range 36 {
		region := []string{"eu", "us"}[i%2]
		var add []manifest.DataFile
		for j := range 1 + i%7 { // 1 to 7 files: manifests of varied sizes
			p := fmt.Sprintf("%s/data/region=%s/m%d-%d-%s.parquet", tbl.Metadata.Location, region, i, j, strings.Repeat("x", i*3))
			add = append(add, manifest.DataFile{Content: manifest.ContentData, FilePath: p, FileFormat: "PARQUET",
				Partition: []any{region}, RecordCount: int64(10 + j), FileSizeInBytes: int64(1000 * (j + 1))})
			if i == 5 {
				gone = append(gone, icetable.FileKey{Path: p, ContentOffset: -1})
			}
		}
		if tbl, _, err = icetable.CommitChange(ctx, cat, tbl, icetable.Change{Operation: spec.OperationAppend, AddData: add}, commit.DefaultOptions()); err != nil {
			t.Fatal(err)
		}
	}
	// Every file of one append removed: its manifest is left without live
	// files, which the rewrite drops.
	if _, _, err = icetable.CommitChange(ctx, cat, tbl, icetable.Change{Operation: spec.OperationDelete, Remove: gone}, commit.DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	cat.Close()

	args := []string{"rewrite-manifests", "db.events", "--target-size", "6KiB", "-o", "json"}
	dry := fx.run(t, append(args, "--dry-run")...).mustSucceed(t).decodeJSON(t)
	run := fx.run(t, args...).mustSucceed(t).decodeJSON(t)
	fields := []string{"snapshot_id", "target_size_bytes", "data_manifests", "manifests_selected", "entries", "manifests_planned", "manifests_without_live_files"}
	for _, k := range fields {
		if num(t, dry, k) != num(t, run, k) {
			t.Errorf("%s: dry run %s, run %s", k, num(t, dry, k), num(t, run, k))
		}
	}
	selected, planned, dropped := num(t, dry, "manifests_selected"), num(t, dry, "manifests_planned"), num(t, dry, "manifests_without_live_files")
	if selected != "36" || dropped == "0" || planned == "1" || planned == selected {
		t.Fatalf("the table does not have the shape the test needs: %v selected into %v, %v dropped", selected, planned, dropped)
	}
	// The snapshot the run committed did what the plan said.
	snaps := fx.run(t, "snapshots", "db.events", "-o", "json").mustSucceed(t).decodeJSON(t)
	list, _ := at(t, snaps, "snapshots").([]any)
	last := list[len(list)-1]
	if id := num(t, last, "snapshot_id"); id != num(t, run, "new_snapshot_id") {
		t.Fatalf("last snapshot %s, the run's %s", id, num(t, run, "new_snapshot_id"))
	}
	sel, _ := strconv.Atoi(selected)
	drop, _ := strconv.Atoi(dropped)
	summary := map[string]string{
		"manifests-replaced": strconv.Itoa(sel + drop), // Java counts the dropped ones as replaced
		"manifests-created":  planned,
		"entries-processed":  num(t, dry, "entries"),
	}
	for k, want := range summary {
		if got := at(t, last, "summary", k); got != want {
			t.Errorf("summary %s = %v, want %s", k, got, want)
		}
	}
}
