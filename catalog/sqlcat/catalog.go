package sqlcat

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/icectl/icectl/catalog"
)

// Catalog is a SQL catalog. It is safe for concurrent use.
type Catalog struct {
	db        *sql.DB
	dialect   Dialect
	name      string
	warehouse string
	ios       *catalog.FileIOs
	// v1 is true when iceberg_tables has the iceberg_type column.
	v1 bool
	// nsProps is true when the iceberg_namespace_properties table exists.
	nsProps bool
	// beforeSwap, when set (by tests only), runs between writing a new
	// metadata file and the compare-and-swap UPDATE.
	beforeSwap func()
}

var _ catalog.Catalog = (*Catalog)(nil)

// New makes a catalog on an open database that holds the catalog tables,
// changing nothing in it. The catalog owns db and closes it in Close.
func New(ctx context.Context, db *sql.DB, dialect Dialect, cfg catalog.Config) (*Catalog, error) {
	c, err := newCatalog(ctx, db, dialect, cfg)
	if err != nil {
		return nil, err
	}
	if err := c.detectSchema(ctx); err != nil {
		return nil, fmt.Errorf("%s catalog %q: %w", dialect, c.name, err)
	}
	return c, nil
}

// newCatalog connects to db.
func newCatalog(ctx context.Context, db *sql.DB, dialect Dialect, cfg catalog.Config) (*Catalog, error) {
	name := cfg.Name
	if name == "" {
		name = "default"
	}
	c := &Catalog{
		db:        db,
		dialect:   dialect,
		name:      name,
		warehouse: strings.TrimSuffix(cfg.Warehouse, "/"),
		ios:       catalog.NewFileIOs(cfg.Props),
	}
	if err := db.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("connect to %s catalog %q: %w", dialect, name, err)
	}
	return c, nil
}

// Name returns the catalog name (the catalog_name column).
func (c *Catalog) Name() string { return c.name }

// OwnsMetadataFiles reports that this catalog writes the table's metadata
// files, so the committer deletes those that fall off the metadata log
// (write.metadata.delete-after-commit.enabled) through iceberg/reclaim.
func (c *Catalog) OwnsMetadataFiles() bool { return true }

// Close closes the database.
func (c *Catalog) Close() error { return c.db.Close() }

func (c *Catalog) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return c.db.ExecContext(ctx, c.dialect.bind(q), args...)
}

func (c *Catalog) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return c.db.QueryContext(ctx, c.dialect.bind(q), args...)
}

func (c *Catalog) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return c.db.QueryRowContext(ctx, c.dialect.bind(q), args...)
}

// tableFilter restricts V1 queries to tables (views share iceberg_tables).
func (c *Catalog) tableFilter() string {
	if c.v1 {
		return " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)"
	}
	return ""
}
