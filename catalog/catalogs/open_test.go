package catalogs

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/catalog/filecat"
	"github.com/icectl/icectl/catalog/rest"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/internal/testing/testenv"
)

func TestOpenDispatch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, uri := range []string{caturi.SQLiteURI(dir + "/c.db"), "file://" + dir + "/wh"} {
		if _, err := Open(ctx, catalog.Config{Name: "a", URI: uri}); err == nil {
			t.Errorf("%s: opened a catalog that does not exist", uri)
		}
		if _, err := os.Stat(dir + "/wh"); !errors.Is(err, os.ErrNotExist) && !strings.HasPrefix(uri, "sqlite") {
			t.Errorf("%s: open created the warehouse", uri)
		}
		if _, err := os.Stat(dir + "/c.db"); !errors.Is(err, os.ErrNotExist) && strings.HasPrefix(uri, "sqlite") {
			t.Errorf("%s: open created the database", uri)
		}
		c, err := Create(ctx, catalog.Config{Name: "a", URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	c, err := Open(ctx, catalog.Config{Name: "a", URI: caturi.SQLiteURI(dir + "/c.db"), Warehouse: "file://" + dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(*sqlcat.Catalog); !ok {
		t.Errorf("sqlite URI opened %T", c)
	}
	c.Close()
	c, err = Open(ctx, catalog.Config{Name: "b", URI: "file://" + dir + "/wh"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(*filecat.Catalog); !ok {
		t.Errorf("file URI opened %T", c)
	}
	for _, uri := range []string{"thrift://hive:9083", "mysql://x", "sqlite:", ""} {
		if _, err := Open(ctx, catalog.Config{Name: "x", URI: uri}); err == nil {
			t.Errorf("%q: opened", uri)
		}
	}
	var e *caturi.Error
	if _, err := Open(ctx, catalog.Config{URI: "sqlite://host/x.db"}); !errors.As(err, &e) {
		t.Errorf("malformed URI: %v, want a *caturi.Error", err)
	}
}

func TestOpenPostgres(t *testing.T) {
	url := testenv.Need(t, testenv.PostgresURL, "PostgreSQL database")
	c, err := Create(context.Background(), catalog.Config{Name: "dispatch", URI: url})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*sqlcat.Catalog); !ok {
		t.Errorf("postgres URI opened %T", c)
	}
}

func TestOpenREST(t *testing.T) {
	uri := testenv.Need(t, testenv.RESTCatalog, "REST catalog server")
	c, err := Open(context.Background(), catalog.Config{Name: "rest", URI: uri, Warehouse: "s3://warehouse"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*rest.Catalog); !ok {
		t.Errorf("http URI opened %T", c)
	}
}
