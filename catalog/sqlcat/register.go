package sqlcat

import (
	"context"
	"errors"
	"fmt"

	"github.com/icectl/icectl/catalog"
)

var _ catalog.Registrar = (*Catalog)(nil)

// RegisterTable adds a row for id whose metadata_location is loc, after
// reading loc as table metadata.
func (c *Catalog) RegisterTable(ctx context.Context, id catalog.Ident, loc string) (*catalog.Table, error) {
	if err := id.Validate(); err != nil {
		return nil, fmt.Errorf("register table: %w", err)
	}
	ns, err := c.requireNamespace(ctx, id.Namespace)
	if err != nil {
		return nil, fmt.Errorf("register table %s: %w", id, err)
	}
	if _, err := c.currentLocation(ctx, id); err == nil {
		return nil, fmt.Errorf("register table %s: %w", id, catalog.ErrAlreadyExists)
	} else if !errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, fmt.Errorf("register table %s: %w", id, err)
	}
	tbl, err := c.readTable(ctx, id, loc)
	if err != nil {
		return nil, fmt.Errorf("register table %s: %w", id, err)
	}
	cols, vals := `catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location`, `?, ?, ?, ?, NULL`
	if c.v1 {
		cols, vals = cols+`, iceberg_type`, vals+`, 'TABLE'`
	}
	if _, err := c.exec(ctx, `INSERT INTO iceberg_tables (`+cols+`) VALUES (`+vals+`)`, c.name, ns, id.Name, loc); err != nil {
		if isUniqueViolation(err) {
			return nil, fmt.Errorf("register table %s: %w", id, catalog.ErrAlreadyExists)
		}
		return nil, fmt.Errorf("register table %s as %s: %w: %w", id, loc, catalog.ErrCommitStateUnknown, err)
	}
	return tbl, nil
}
