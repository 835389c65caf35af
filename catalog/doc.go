// Package catalog defines how icectl finds tables and commits new table
// metadata: the Catalog interface every catalog implements (SQL, file, REST),
// table identifiers, the errors callers branch on, and the helpers shared by
// "metastore" catalogs that write metadata files themselves.
//
// A catalog commit is one attempt with REST semantics: requirements are
// checked against the catalog's current metadata and updates applied to it.
// Implementations must never delete a file they wrote when the outcome of a
// commit is unknown (ErrCommitStateUnknown): the file may be the table's
// current metadata.
package catalog
