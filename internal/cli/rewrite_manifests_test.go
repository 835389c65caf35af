package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
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
	if !strings.Contains(r.stdout, "nothing to do") {
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
