package sqlcat

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogtest"
	"github.com/icectl/icectl/catalog/caturi"
)

// dirBytes reads every file of dir (the database and its side files).
func dirBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func sameBytes(t *testing.T, what string, before, after map[string][]byte) {
	t.Helper()
	for name, b := range after {
		if a, ok := before[name]; !ok {
			t.Errorf("%s: %s appeared", what, name)
		} else if !bytes.Equal(a, b) {
			t.Errorf("%s: %s changed", what, name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			t.Errorf("%s: %s vanished", what, name)
		}
	}
}

// journalBytes are bytes 18 and 19 of the SQLite header: 1,1 for the
// rollback journal, 2,2 for WAL.
func journalBytes(t *testing.T, path string) [2]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 20 {
		t.Fatalf("read %s: %v", path, err)
	}
	return [2]byte{b[18], b[19]}
}

// rollbackCatalog makes a catalog database the way PyIceberg and
// iceberg-go do (the driver's defaults: rollback journal) holding one
// table, and returns its path.
func rollbackCatalog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "catalog.db")
	db, err := sql.Open("sqlite", "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	for _, ddl := range []string{createTablesSQL, createNamespacePropsSQL} {
		if _, err := db.Exec(ddl); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	c := openSQLite(t, p, "file://"+dir+"/wh")
	catalogtest.NewTable(t, c, catalog.Ident{Namespace: []string{"db"}, Name: "t"}, nil)
	c.Close()
	return p
}

// TestOpenChangesNothing reads a catalog in rollback-journal mode and one
// in WAL mode: the database and its side files stay byte-identical, and
// the journal mode stays what it was, also after a commit.
func TestOpenChangesNothing(t *testing.T) {
	ctx := context.Background()
	walDir := t.TempDir()
	walPath := filepath.Join(walDir, "catalog.db")
	wc, err := Create(ctx, catalog.Config{Name: "test", URI: caturi.SQLiteURI(walPath), Warehouse: "file://" + walDir + "/wh"}, WAL())
	if err != nil {
		t.Fatal(err)
	}
	catalogtest.NewTable(t, wc, catalog.Ident{Namespace: []string{"db"}, Name: "t"}, nil)
	wc.Close()

	for _, tc := range []struct {
		name, path string
		mode       [2]byte
	}{{"rollback", rollbackCatalog(t), [2]byte{1, 1}}, {"wal", walPath, [2]byte{2, 2}}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Dir(tc.path)
			if got := journalBytes(t, tc.path); got != tc.mode {
				t.Fatalf("fixture journal bytes %v, want %v", got, tc.mode)
			}
			before := dirBytes(t, dir)
			c := openSQLite(t, tc.path, "file://"+dir+"/wh")
			id := catalog.Ident{Namespace: []string{"db"}, Name: "t"}
			if _, err := c.ListNamespaces(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := c.ListTables(ctx, []string{"db"}); err != nil {
				t.Fatal(err)
			}
			tbl, err := c.LoadTable(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.LoadTable(ctx, catalog.Ident{Namespace: []string{"db"}, Name: "missing"}); !errors.Is(err, catalog.ErrNoSuchTable) {
				t.Errorf("missing table: %v", err)
			}
			c.Close()
			sameBytes(t, "read", before, dirBytes(t, dir))

			// A commit changes the rows, never the journal mode.
			c = openSQLite(t, tc.path, "file://"+dir+"/wh")
			reqs, ups := catalogtest.AppendSnapshot(tbl.Metadata, 7)
			if _, err := c.CommitTable(ctx, tbl, reqs, ups); err != nil {
				t.Fatal(err)
			}
			c.Close()
			if got := journalBytes(t, tc.path); got != tc.mode {
				t.Errorf("journal bytes after a commit %v, want %v", got, tc.mode)
			}
		})
	}
}

func TestOpenMissingCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	cwd := t.TempDir()
	t.Chdir(cwd)
	missing := filepath.Join(dir, "nope.db")
	_, err := Open(context.Background(), catalog.Config{URI: caturi.SQLiteURI(missing)})
	if err == nil || !strings.Contains(err.Error(), missing+" does not exist") || strings.Contains(err.Error(), "exists:") {
		t.Errorf("missing database: %v", err)
	}
	// sqlite:///<abs without its slash> is relative: the error names the
	// path it resolved and the absolute file the other reading finds.
	real := createSQLite(t, filepath.Join(dir, "real.db"), "")
	real.Close()
	uri := "sqlite://" + filepath.Join(dir, "real.db")
	_, err = Open(context.Background(), catalog.Config{URI: uri})
	want := filepath.Join(cwd, dir, "real.db") + " does not exist"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "write "+caturi.SQLiteURI(filepath.Join(dir, "real.db"))) {
		t.Errorf("%s: %v, want %q and the absolute reading", uri, err, want)
	}
	for _, d := range []string{dir, cwd} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if e.Name() != "real.db" {
				t.Errorf("created %s in %s", e.Name(), d)
			}
		}
	}
}

func TestOpenWithoutCatalogTables(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (x TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before := dirBytes(t, dir)
	_, err = Open(context.Background(), catalog.Config{URI: caturi.SQLiteURI(p)})
	if err == nil || !strings.Contains(err.Error(), "no iceberg_tables") {
		t.Errorf("open a database without catalog tables: %v", err)
	}
	sameBytes(t, "open", before, dirBytes(t, dir))
}

func TestLoadTableNamesOtherCatalog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := filepath.Join(dir, "c.db")
	c := createSQLite(t, p, "file://"+dir+"/wh") // catalog name "test"
	catalogtest.NewTable(t, c, catalog.Ident{Namespace: []string{"shop"}, Name: "orders"}, nil)
	c.Close()
	other, err := Open(ctx, catalog.Config{Name: "default", URI: caturi.SQLiteURI(p)})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.LoadTable(ctx, catalog.Ident{Namespace: []string{"shop"}, Name: "orders"})
	var oc *catalog.OtherCatalogsError
	if !errors.As(err, &oc) || !errors.Is(err, catalog.ErrNoSuchTable) || len(oc.Others) != 1 || oc.Others[0] != "test" {
		t.Fatalf("load under the wrong catalog name: %v", err)
	}
	if want := `no table shop.orders in catalog "default"; this database holds catalog "test"`; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	// Under its own name a missing table is a plain not-found.
	c = openSQLite(t, p, "")
	if _, err := c.LoadTable(ctx, catalog.Ident{Namespace: []string{"shop"}, Name: "x"}); errors.As(err, &oc) || !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Errorf("missing table in the right catalog: %v", err)
	}
}
