package catalog

import (
	"context"

	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/spec"
)

// Table is one loaded version of a table.
type Table = metastore.Table

// Catalog finds tables and commits new versions of them.
type Catalog interface {
	metastore.Committer
	Name() string
	// ListNamespaces returns the direct children of parent, or the
	// top-level namespaces when parent is empty.
	ListNamespaces(ctx context.Context, parent []string) ([][]string, error)
	CreateNamespace(ctx context.Context, ns []string, props map[string]string) error
	// DropNamespace removes an empty namespace: one without tables,
	// views or child namespaces (ErrNamespaceNotEmpty otherwise, with
	// nothing changed).
	DropNamespace(ctx context.Context, ns []string) error
	ListTables(ctx context.Context, ns []string) ([]Ident, error)
	// CreateTable registers a new table with md as its first version. An
	// empty md.Location gets the catalog's default location.
	CreateTable(ctx context.Context, id Ident, md *spec.TableMetadata) (*Table, error)
	// DropTable removes the table from the catalog; its files stay.
	DropTable(ctx context.Context, id Ident) error
	Close() error
}

// Config says which catalog to open. Props carries FileIO settings (s3.*)
// and catalog options; it may hold secrets and must never be printed.
type Config struct {
	Name      string
	URI       string
	Warehouse string
	Props     map[string]string
}

// OtherCatalogsLister is implemented by catalogs that share a database
// with other catalog names (SQL catalogs). OtherCatalogs returns those
// names, sorted, when the database holds nothing under this catalog's name
// and at most a few others; else nil. It only explains an empty or failed
// lookup, so it reports no error.
type OtherCatalogsLister interface {
	OtherCatalogs(ctx context.Context) []string
}

// LocationProvider is implemented by catalogs that choose where a new
// table goes. spec.NewTableMetadata needs a location, so callers ask the
// catalog first.
type LocationProvider interface {
	DefaultLocation(ctx context.Context, id Ident) (string, error)
}
