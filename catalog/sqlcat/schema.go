package sqlcat

import (
	"context"
	"errors"
	"fmt"
)

// DDL of the Java JDBC catalog, schema V1 (iceberg_type included).
const (
	createTablesSQL = `CREATE TABLE IF NOT EXISTS iceberg_tables (
  catalog_name VARCHAR(255) NOT NULL,
  table_namespace VARCHAR(255) NOT NULL,
  table_name VARCHAR(255) NOT NULL,
  metadata_location VARCHAR(1000),
  previous_metadata_location VARCHAR(1000),
  iceberg_type VARCHAR(5),
  PRIMARY KEY (catalog_name, table_namespace, table_name))`
	createNamespacePropsSQL = `CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
  catalog_name VARCHAR(255) NOT NULL,
  namespace VARCHAR(255) NOT NULL,
  property_key VARCHAR(255),
  property_value VARCHAR(1000),
  PRIMARY KEY (catalog_name, namespace, property_key))`
)

// errNoCatalogTables: the database holds no iceberg_tables table.
var errNoCatalogTables = errors.New("the database holds no Iceberg catalog (no iceberg_tables table); `icectl catalog init` creates one")

// createSchema creates the catalog tables when missing. An existing V0
// iceberg_tables is used as it is, like Java does without
// jdbc.schema-version=V1.
func (c *Catalog) createSchema(ctx context.Context) error {
	for _, ddl := range []string{createTablesSQL, createNamespacePropsSQL} {
		if err := c.createIfMissing(ctx, ddl); err != nil {
			return err
		}
	}
	return nil
}

// detectSchema finds out, with queries only, which catalog tables exist and
// whether iceberg_tables has the V1 iceberg_type column.
func (c *Catalog) detectSchema(ctx context.Context) error {
	ok, err := c.probe(ctx, `SELECT 1 FROM iceberg_tables WHERE 1 = 0`)
	if err != nil {
		return err
	}
	if !ok {
		return errNoCatalogTables
	}
	// Probe the column itself: portable across both databases.
	if c.v1, err = c.probe(ctx, `SELECT iceberg_type FROM iceberg_tables WHERE 1 = 0`); err != nil {
		return err
	}
	// An older Java catalog may lack the namespace properties table: its
	// namespaces are then only those its tables name.
	c.nsProps, err = c.probe(ctx, `SELECT 1 FROM iceberg_namespace_properties WHERE 1 = 0`)
	return err
}

// probe reports whether a query runs; a missing table or column is false,
// any other failure an error.
func (c *Catalog) probe(ctx context.Context, q string) (bool, error) {
	rows, err := c.query(ctx, q)
	if err == nil {
		rows.Close()
		return true, nil
	}
	if isUndefined(err) {
		return false, nil
	}
	return false, fmt.Errorf("read catalog schema: %w", err)
}

// createIfMissing runs a CREATE TABLE IF NOT EXISTS. Two processes doing
// so at once on PostgreSQL can collide in its system catalog; the loser
// sees a unique violation although the table now exists, so that error is
// retried once.
func (c *Catalog) createIfMissing(ctx context.Context, ddl string) error {
	_, err := c.exec(ctx, ddl)
	if err != nil && isUniqueViolation(err) {
		_, err = c.exec(ctx, ddl)
	}
	if err != nil {
		return fmt.Errorf("create catalog tables: %w", err)
	}
	return nil
}
