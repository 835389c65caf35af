package hive

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogtest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// The tests run against the real Hive Metastore scripts/test starts
// (scripts/install-hms), shared with other packages: every test works in
// databases of its own, named with a unique prefix.

// openHMS opens the test metastore with a fresh local warehouse.
func openHMS(t *testing.T, props map[string]string) *Catalog {
	t.Helper()
	uri := testenv.Need(t, testenv.HiveMetastore, "a Hive Metastore (scripts/install-hms)")
	c, err := Open(context.Background(), catalog.Config{Name: "hms", URI: uri, Warehouse: "file://" + t.TempDir(), Props: props})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var dbSeq atomic.Int64

// prefix returns a database-name prefix no other test or run uses.
func prefix(t *testing.T) string {
	return fmt.Sprintf("t%d_%d_", os.Getpid(), dbSeq.Add(1))
}

// prefixed is the catalog seen through a renaming of its databases: the
// suite's namespace "db" is database <prefix>db, and only the databases
// with the prefix are listed. It lets the suite, which wants an empty
// catalog, share one metastore; every call is the real catalog's.
type prefixed struct {
	*Catalog
	p string
}

func (c *prefixed) in(ns []string) []string {
	if len(ns) == 0 {
		return ns
	}
	return append([]string{c.p + ns[0]}, ns[1:]...)
}

func (c *prefixed) out(ns []string) []string {
	if len(ns) == 0 {
		return ns
	}
	return append([]string{strings.TrimPrefix(ns[0], c.p)}, ns[1:]...)
}

func (c *prefixed) inID(id catalog.Ident) catalog.Ident {
	return catalog.Ident{Namespace: c.in(id.Namespace), Name: id.Name}
}

func (c *prefixed) outTable(t *catalog.Table, err error) (*catalog.Table, error) {
	if t != nil {
		cp := *t
		cp.Ident = catalog.Ident{Namespace: c.out(t.Ident.Namespace), Name: t.Ident.Name}
		t = &cp
	}
	return t, err
}

func (c *prefixed) ListNamespaces(ctx context.Context, parent []string) ([][]string, error) {
	all, err := c.Catalog.ListNamespaces(ctx, c.in(parent))
	var out [][]string
	for _, ns := range all {
		if strings.HasPrefix(ns[0], c.p) {
			out = append(out, c.out(ns))
		}
	}
	return out, err
}

func (c *prefixed) CreateNamespace(ctx context.Context, ns []string, props map[string]string) error {
	return c.Catalog.CreateNamespace(ctx, c.in(ns), props)
}

func (c *prefixed) DropNamespace(ctx context.Context, ns []string) error {
	return c.Catalog.DropNamespace(ctx, c.in(ns))
}

func (c *prefixed) ListTables(ctx context.Context, ns []string) ([]catalog.Ident, error) {
	ids, err := c.Catalog.ListTables(ctx, c.in(ns))
	for i := range ids {
		ids[i].Namespace = c.out(ids[i].Namespace)
	}
	return ids, err
}

func (c *prefixed) LoadTable(ctx context.Context, id catalog.Ident) (*catalog.Table, error) {
	return c.outTable(c.Catalog.LoadTable(ctx, c.inID(id)))
}

func (c *prefixed) CreateTable(ctx context.Context, id catalog.Ident, md *spec.TableMetadata) (*catalog.Table, error) {
	return c.outTable(c.Catalog.CreateTable(ctx, c.inID(id), md))
}

func (c *prefixed) DropTable(ctx context.Context, id catalog.Ident) error {
	return c.Catalog.DropTable(ctx, c.inID(id))
}

func (c *prefixed) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	cp := *t
	cp.Ident = c.inID(t.Ident)
	return c.outTable(c.Catalog.CommitTable(ctx, &cp, reqs, ups))
}

func (c *prefixed) DefaultLocation(ctx context.Context, id catalog.Ident) (string, error) {
	return c.Catalog.DefaultLocation(ctx, c.inID(id))
}

// TestContract runs the shared catalog suite against the metastore, with
// the metastore lock (Java's default) and lock-free (the conditional
// alter alone).
func TestContract(t *testing.T) {
	for _, mode := range []struct {
		name  string
		props map[string]string
	}{
		{"Locked", nil},
	} {
		t.Run(mode.name, func(t *testing.T) {
			catalogtest.RunWith(t, catalogtest.Options{FlatNamespaces: true}, func(t *testing.T) catalog.Catalog {
				return &prefixed{Catalog: openHMS(t, mode.props), p: prefix(t)}
			})
		})
	}
}
