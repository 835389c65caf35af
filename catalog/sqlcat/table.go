package sqlcat

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
)

// ListTables returns the tables of ns, sorted by name.
func (c *Catalog) ListTables(ctx context.Context, ns []string) ([]catalog.Ident, error) {
	key, err := c.requireNamespace(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	rows, err := c.query(ctx, `SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ?`+c.tableFilter()+` ORDER BY table_name`, c.name, key)
	if err != nil {
		return nil, fmt.Errorf("list tables of %s: %w", key, err)
	}
	defer rows.Close()
	var out []catalog.Ident
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("list tables of %s: %w", key, err)
		}
		out = append(out, catalog.Ident{Namespace: strings.Split(key, "."), Name: name})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tables of %s: %w", key, err)
	}
	return out, nil
}

// currentLocation reads the table's metadata_location.
func (c *Catalog) currentLocation(ctx context.Context, id catalog.Ident) (string, error) {
	var loc sql.NullString
	err := c.queryRow(ctx, `SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?`+c.tableFilter(),
		c.name, strings.Join(id.Namespace, "."), id.Name).Scan(&loc)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("table %s: %w", id, catalog.ErrNoSuchTable)
	}
	if err != nil {
		return "", fmt.Errorf("look up table %s: %w", id, err)
	}
	if !loc.Valid || loc.String == "" {
		return "", fmt.Errorf("table %s: catalog row has no metadata location", id)
	}
	return loc.String, nil
}

// LoadTable reads the table's current metadata.
func (c *Catalog) LoadTable(ctx context.Context, id catalog.Ident) (*catalog.Table, error) {
	if err := id.Validate(); err != nil {
		return nil, fmt.Errorf("load table: %w", err)
	}
	loc, err := c.currentLocation(ctx, id)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		if others := c.OtherCatalogs(ctx); len(others) > 0 {
			return nil, &catalog.OtherCatalogsError{Table: id, Catalog: c.name, Others: others}
		}
	}
	if err != nil {
		return nil, err
	}
	return c.readTable(ctx, id, loc)
}

// maxOtherCatalogs bounds the names a not-found error lists: a shared
// database may hold many catalogs, and then none is the obvious one.
const maxOtherCatalogs = 5

// OtherCatalogs returns the catalog names of the database when it holds
// none of c's name and at most maxOtherCatalogs others; else nil. It only
// explains a failure or an empty list, so its own errors are dropped.
func (c *Catalog) OtherCatalogs(ctx context.Context) []string {
	q := `SELECT DISTINCT catalog_name FROM iceberg_tables`
	if c.nsProps {
		q += ` UNION SELECT DISTINCT catalog_name FROM iceberg_namespace_properties`
	}
	rows, err := c.query(ctx, q)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if rows.Scan(&n) != nil || n == c.name {
			return nil
		}
		if names = append(names, n); len(names) > maxOtherCatalogs {
			return nil
		}
	}
	if rows.Err() != nil {
		return nil
	}
	sort.Strings(names)
	return names
}

func (c *Catalog) readTable(ctx context.Context, id catalog.Ident, loc string) (*catalog.Table, error) {
	fio, err := c.ios.For(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", id, err)
	}
	md, err := catalog.ReadMetadata(ctx, fio, loc)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", id, err)
	}
	return &catalog.Table{Ident: id, MetadataLocation: loc, Metadata: md, IO: fio}, nil
}

// DefaultLocation is where a new table goes (see the package comment).
func (c *Catalog) DefaultLocation(ctx context.Context, id catalog.Ident) (string, error) {
	ns := strings.Join(id.Namespace, ".")
	nsLoc, err := c.namespaceProperty(ctx, ns, "location")
	if err != nil {
		return "", err
	}
	if nsLoc != "" {
		return joinLocation(nsLoc, id.Name)
	}
	if c.warehouse == "" {
		return "", fmt.Errorf("table %s has no location and the catalog has no warehouse", id)
	}
	return joinLocation(c.warehouse, ns+".db", id.Name)
}

func joinLocation(base string, elems ...string) (string, error) {
	if !strings.Contains(base, "://") {
		return strings.TrimSuffix(base, "/") + "/" + strings.Join(elems, "/"), nil
	}
	return url.JoinPath(base, elems...)
}

// CreateTable writes md as metadata version 0 and registers the table.
func (c *Catalog) CreateTable(ctx context.Context, id catalog.Ident, md *spec.TableMetadata) (*catalog.Table, error) {
	if err := id.Validate(); err != nil {
		return nil, fmt.Errorf("create table: %w", err)
	}
	ns, err := c.requireNamespace(ctx, id.Namespace)
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", id, err)
	}
	if _, err := c.currentLocation(ctx, id); err == nil {
		return nil, fmt.Errorf("create table %s: %w", id, catalog.ErrAlreadyExists)
	} else if !errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, fmt.Errorf("create table %s: %w", id, err)
	}
	first := *md
	if first.Location == "" {
		if first.Location, err = c.DefaultLocation(ctx, id); err != nil {
			return nil, fmt.Errorf("create table %s: %w", id, err)
		}
	}
	first.Location = strings.TrimSuffix(first.Location, "/")
	loc := catalog.NewMetadataLocation(&first, 0)
	fio, err := c.ios.For(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", id, err)
	}
	if err := catalog.WriteMetadata(ctx, fio, loc, &first); err != nil {
		return nil, fmt.Errorf("create table %s: %w", id, err)
	}
	cols, vals := `catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location`, `?, ?, ?, ?, NULL`
	if c.v1 {
		cols, vals = cols+`, iceberg_type`, vals+`, 'TABLE'`
	}
	if _, err := c.exec(ctx, `INSERT INTO iceberg_tables (`+cols+`) VALUES (`+vals+`)`, c.name, ns, id.Name, loc); err != nil {
		if isUniqueViolation(err) {
			// Definitely not inserted: the file is referenced by nothing.
			rmErr := reclaim.DeleteWritten(ctx, fio, &first, []string{loc})
			return nil, errors.Join(fmt.Errorf("create table %s: %w", id, catalog.ErrAlreadyExists), rmErr)
		}
		return nil, fmt.Errorf("create table %s: register %s: %w: %w", id, loc, catalog.ErrCommitStateUnknown, err)
	}
	return &catalog.Table{Ident: id, MetadataLocation: loc, Metadata: &first, IO: fio}, nil
}

// DropTable removes the table's row. Its files are left alone: icectl never
// deletes table data as a side effect of forgetting a table.
func (c *Catalog) DropTable(ctx context.Context, id catalog.Ident) error {
	if err := id.Validate(); err != nil {
		return fmt.Errorf("drop table: %w", err)
	}
	res, err := c.exec(ctx, `DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?`+c.tableFilter(),
		c.name, strings.Join(id.Namespace, "."), id.Name)
	if err != nil {
		return fmt.Errorf("drop table %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("drop table %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("drop table %s: %w", id, catalog.ErrNoSuchTable)
	}
	return nil
}
