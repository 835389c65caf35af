package sqlcat

import (
	"context"
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

// initSchema creates the catalog tables when missing and detects whether
// iceberg_tables has the V1 iceberg_type column. An existing V0 table is
// used as it is, like Java does without jdbc.schema-version=V1.
func (c *Catalog) initSchema(ctx context.Context) error {
	for _, ddl := range []string{createTablesSQL, createNamespacePropsSQL} {
		if err := c.createIfMissing(ctx, ddl); err != nil {
			return err
		}
	}
	// Probe the column itself: portable across both databases.
	rows, err := c.query(ctx, `SELECT iceberg_type FROM iceberg_tables WHERE 1 = 0`)
	if err == nil {
		rows.Close()
	}
	c.v1 = err == nil
	return nil
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
