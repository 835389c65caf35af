package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogs"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// backend is one catalog that icectl and iceberg-go both open.
type backend struct {
	cfg    catalog.Config // for catalogs.Create
	goArgs []string       // iceberg-read's flags naming the same catalog
	ns     string         // a namespace no other test uses
	// scheme is how every table location of the backend starts: file://
	// for the SQL catalogs' temp warehouses, s3:// for the REST server.
	scheme string
	// tables, when set, is where iceberg-read write-fixture puts tables
	// (tables/NAME) instead of the catalog's default location.
	tables string
}

// uniqueName returns prefix followed by random hex, so that tests sharing
// a PostgreSQL database or a REST server never meet.
func uniqueName(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

// sqliteBackend is a fresh SQLite catalog file in a temp dir, with the
// warehouse beside it.
func sqliteBackend(t *testing.T) backend {
	dir := t.TempDir()
	uri := "sqlite:///" + filepath.Join(dir, "catalog.db")
	wh := "file://" + filepath.Join(dir, "warehouse")
	return backend{
		cfg:    catalog.Config{Name: "e2e", URI: uri, Warehouse: wh},
		goArgs: []string{"--catalog-uri", uri, "--catalog-name", "e2e", "--warehouse", wh},
		ns:     "e2e",
		scheme: "file://",
	}
}

// postgresBackend is a catalog with a name of its own in the shared
// PostgreSQL database, its warehouse in a temp dir.
func postgresBackend(t *testing.T) backend {
	url := testenv.Need(t, testenv.PostgresURL, "PostgreSQL database")
	name := uniqueName(t, "e2e_")
	wh := "file://" + t.TempDir()
	return backend{
		cfg:    catalog.Config{Name: name, URI: url, Warehouse: wh},
		goArgs: []string{"--catalog-uri", url, "--catalog-name", name, "--warehouse", wh},
		ns:     "e2e",
		scheme: "file://",
	}
}

// restBackend is the REST catalog server (testenv.RESTCatalog: Iceberg's
// REST fixture, or weed mini in scripts/test's second run) with its data on
// the server's S3; the namespace is unique because the server is shared.
func restBackend(t *testing.T) backend {
	r := testenv.NeedREST(t)
	uri, wh, props := r.URI, r.Warehouse, r.Props
	args := []string{"--rest-uri", uri, "--warehouse", wh, "--catalog-name", "rest"}
	// iceberg-go names the region s3.region; the other keys are shared.
	goProps := map[string]string{"s3.region": "us-east-1"}
	for k, v := range props {
		goProps[k] = v
	}
	for k, v := range goProps {
		args = append(args, "--prop", k+"="+v)
	}
	return backend{
		cfg:    catalog.Config{Name: "rest", URI: uri, Warehouse: wh, Props: props},
		goArgs: args,
		ns:     uniqueName(t, "e2e_"),
		scheme: "s3://",
	}
}

// open opens the backend's catalog with icectl, creating it when missing.
func (b backend) open(t *testing.T) catalog.Catalog {
	t.Helper()
	cat, err := catalogs.Create(context.Background(), b.cfg)
	if err != nil {
		t.Fatalf("open catalog %s: %v", b.cfg.URI, err)
	}
	t.Cleanup(func() { cat.Close() })
	return cat
}
