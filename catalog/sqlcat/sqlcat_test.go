package sqlcat

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogtest"
	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// openSQLite opens the existing catalog database at dbPath.
func openSQLite(t *testing.T, dbPath, warehouse string) *Catalog {
	t.Helper()
	c, err := Open(context.Background(), catalog.Config{Name: "test", URI: caturi.SQLiteURI(dbPath), Warehouse: warehouse})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// createSQLite creates the catalog database at dbPath.
func createSQLite(t *testing.T, dbPath, warehouse string) *Catalog {
	t.Helper()
	c, err := Create(context.Background(), catalog.Config{Name: "test", URI: caturi.SQLiteURI(dbPath), Warehouse: warehouse})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func newSQLite(t *testing.T) catalog.Catalog {
	dir := t.TempDir()
	return createSQLite(t, filepath.Join(dir, "catalog.db"), "file://"+dir+"/wh")
}

func TestConformanceSQLite(t *testing.T) {
	catalogtest.Run(t, newSQLite)
}

// newPostgres gives each test its own catalog name in the shared database,
// so tests never see each other's rows.
func newPostgres(t *testing.T) catalog.Catalog {
	url := testenv.Need(t, testenv.PostgresURL, "PostgreSQL database")
	name := fmt.Sprintf("t_%s_%d", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), len(t.Name()))
	dir := t.TempDir()
	c, err := Create(context.Background(), catalog.Config{Name: name, URI: url, Warehouse: "file://" + dir})
	if err != nil {
		t.Fatal(err)
	}
	clean := func() {
		c.exec(context.Background(), `DELETE FROM iceberg_tables WHERE catalog_name = ?`, name)
		c.exec(context.Background(), `DELETE FROM iceberg_namespace_properties WHERE catalog_name = ?`, name)
	}
	clean()
	t.Cleanup(func() { clean(); c.Close() })
	return c
}

func TestConformancePostgres(t *testing.T) {
	catalogtest.Run(t, newPostgres)
}

func TestUnreachablePostgres(t *testing.T) {
	_, err := Open(context.Background(), catalog.Config{Name: "x", URI: "postgres://icectl:s3cret@127.0.0.1:1/iceberg?connect_timeout=2&sslmode=disable"})
	if err == nil {
		t.Fatal("opened a catalog on a closed port")
	}
	if !strings.Contains(err.Error(), "connect to postgres catalog") {
		t.Errorf("error %q does not say what failed", err)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %q prints the password", err)
	}
}

func TestOpenURIs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	createSQLite(t, filepath.Join(dir, "c.db"), "").Close()
	for _, uri := range []string{"sqlite:///c.db", caturi.SQLiteURI(filepath.Join(dir, "c.db")), "file:c.db", "file:" + dir + "/c.db", "c.db"} {
		c, err := Open(context.Background(), catalog.Config{URI: uri})
		if err != nil {
			t.Errorf("%s: %v", uri, err)
			continue
		}
		c.Close()
	}
	for _, uri := range []string{"sqlite://host/x.db", "sqlite:", "mysql://x", "file:///wh"} {
		if _, err := Open(context.Background(), catalog.Config{URI: uri}); err == nil {
			t.Errorf("%s: opened", uri)
		}
	}
}

func TestPostgresPlaceholders(t *testing.T) {
	got := Postgres.bind(`SELECT a FROM t WHERE x = ? AND y LIKE ? ESCAPE '!'`)
	if want := `SELECT a FROM t WHERE x = $1 AND y LIKE $2 ESCAPE '!'`; got != want {
		t.Errorf("bind = %s, want %s", got, want)
	}
	if got := SQLite.bind("x = ?"); got != "x = ?" {
		t.Errorf("sqlite bind changed the query: %s", got)
	}
}

// TestJavaLayout checks the rows against what Java's JdbcCatalog, PyIceberg
// and iceberg-go read: dotted namespaces, iceberg_type, the hidden exists
// property, the default location and namespace existence by prefix.
func TestJavaLayout(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := createSQLite(t, filepath.Join(dir, "c.db"), "file://"+dir+"/wh")
	if err := c.CreateNamespace(ctx, []string{"a", "b"}, map[string]string{"owner": "ops"}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := c.queryRow(ctx, `SELECT COUNT(*) FROM iceberg_namespace_properties WHERE catalog_name = 'test' AND namespace = 'a.b' AND property_key = 'exists' AND property_value = 'true'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("exists property rows = %d, %v; want 1", n, err)
	}
	// "a" exists because "a.b" does (Java's prefix rule); "a.b.c" does not.
	if ok, _ := c.namespaceExists(ctx, "a"); !ok {
		t.Error("parent of an existing namespace does not exist")
	}
	if ok, _ := c.namespaceExists(ctx, "a_b"); ok {
		t.Error("LIKE wildcard leaked: a_b exists")
	}
	id := catalog.Ident{Namespace: []string{"a", "b"}, Name: "t"}
	tbl := catalogtest.NewTable(t, c, id, nil)
	if want := "file://" + dir + "/wh/a.b.db/t"; tbl.Metadata.Location != want {
		t.Errorf("default location %s, want %s (iceberg-go layout)", tbl.Metadata.Location, want)
	}
	if !strings.HasPrefix(tbl.MetadataLocation, tbl.Metadata.Location+"/metadata/00000-") {
		t.Errorf("first metadata file %s, want 00000-<uuid>.metadata.json", tbl.MetadataLocation)
	}
	var typ, prev sql.NullString
	if err := c.queryRow(ctx, `SELECT iceberg_type, previous_metadata_location FROM iceberg_tables WHERE table_namespace = 'a.b' AND table_name = 't'`).Scan(&typ, &prev); err != nil {
		t.Fatal(err)
	}
	if typ.String != "TABLE" || prev.Valid {
		t.Errorf("row iceberg_type=%v previous=%v, want TABLE and NULL", typ, prev)
	}
	reqs, ups := catalogtest.AppendSnapshot(tbl.Metadata, 1)
	next, err := c.CommitTable(ctx, tbl, reqs, ups)
	if err != nil {
		t.Fatal(err)
	}
	var cur string
	if err := c.queryRow(ctx, `SELECT metadata_location, previous_metadata_location FROM iceberg_tables WHERE table_namespace = 'a.b' AND table_name = 't'`).Scan(&cur, &prev); err != nil {
		t.Fatal(err)
	}
	if cur != next.MetadataLocation || prev.String != tbl.MetadataLocation {
		t.Errorf("row after commit = %s (prev %s), want %s (prev %s)", cur, prev.String, next.MetadataLocation, tbl.MetadataLocation)
	}
	// A namespace "location" property moves new tables.
	if err := c.CreateNamespace(ctx, []string{"custom"}, map[string]string{"location": "file://" + dir + "/elsewhere"}); err != nil {
		t.Fatal(err)
	}
	if loc, err := c.DefaultLocation(ctx, catalog.Ident{Namespace: []string{"custom"}, Name: "t"}); err != nil || loc != "file://"+dir+"/elsewhere/t" {
		t.Errorf("location under custom namespace = %s, %v", loc, err)
	}
}

// TestV0Schema uses a catalog database made by an older Java JDBC catalog,
// without the iceberg_type column.
func TestV0Schema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "v0.db"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`CREATE TABLE iceberg_tables(catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000), PRIMARY KEY (catalog_name, table_namespace, table_name))`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Opening changes nothing: the V0 database still has no namespace
	// properties table, and reading works without it.
	ro := openSQLite(t, filepath.Join(dir, "v0.db"), "file://"+dir+"/wh")
	if ro.v1 || ro.nsProps {
		t.Fatalf("V0 database read as v1=%v nsProps=%v", ro.v1, ro.nsProps)
	}
	if ns, err := ro.ListNamespaces(ctx, nil); err != nil || len(ns) != 0 {
		t.Errorf("namespaces of an empty V0 catalog: %v, %v", ns, err)
	}
	ro.Close()
	c := createSQLite(t, filepath.Join(dir, "v0.db"), "file://"+dir+"/wh")
	if c.v1 {
		t.Fatal("V0 table taken for V1")
	}
	id := catalog.Ident{Namespace: []string{"db"}, Name: "t"}
	tbl := catalogtest.NewTable(t, c, id, nil)
	reqs, ups := catalogtest.AppendSnapshot(tbl.Metadata, 1)
	if _, err := c.CommitTable(ctx, tbl, reqs, ups); err != nil {
		t.Fatal(err)
	}
	if tables, err := c.ListTables(ctx, []string{"db"}); err != nil || len(tables) != 1 {
		t.Errorf("tables = %v, %v", tables, err)
	}
	if err := c.DropTable(ctx, id); err != nil {
		t.Error(err)
	}
}

func TestCreateRaceAlreadyExists(t *testing.T) {
	ctx := context.Background()
	c := newSQLite(t).(*Catalog)
	id := catalog.Ident{Namespace: []string{"db"}, Name: "t"}
	tbl := catalogtest.NewTable(t, c, id, nil)
	// Another catalog process inserted the row after our existence check:
	// the insert's key violation must surface as ErrAlreadyExists.
	if _, err := c.exec(ctx, `DELETE FROM iceberg_tables`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTable(ctx, id, tbl.Metadata); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTable(ctx, id, tbl.Metadata); !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Errorf("second create: %v, want ErrAlreadyExists", err)
	}
	if !isUniqueViolation(insertDup(t, c)) {
		t.Error("duplicate key not recognised as a unique violation")
	}
}

func insertDup(t *testing.T, c *Catalog) error {
	_, err := c.exec(context.Background(), `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location) VALUES ('test', 'db', 't', 'x')`)
	if err == nil {
		t.Fatal("duplicate insert succeeded")
	}
	return err
}
