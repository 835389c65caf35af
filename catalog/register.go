package catalog

import "context"

// Registrar is implemented by catalogs that take an existing metadata file
// as a new table (Java's Catalog.registerTable, Spark's register_table):
// the table's first version is that file, nothing is written beside it.
// It fails with ErrAlreadyExists when id names a table, and reads the file
// first, so a file that is not table metadata registers nothing.
type Registrar interface {
	RegisterTable(ctx context.Context, id Ident, metadataLocation string) (*Table, error)
}
