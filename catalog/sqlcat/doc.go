// Package sqlcat is the SQL catalog: table pointers kept in a SQLite or
// PostgreSQL database in the layout of the Java JDBC catalog, which
// PyIceberg's SqlCatalog and iceberg-go's sql catalog share, so a table
// committed by icectl opens in those and vice versa.
//
// Tables are rows of iceberg_tables(catalog_name, table_namespace,
// table_name, iceberg_type, metadata_location, previous_metadata_location);
// namespaces are dot-joined levels, and exist when a table or a row of
// iceberg_namespace_properties names them or a namespace below them (the
// Java rule). A commit writes the new metadata file, then swaps the pointer
// with an UPDATE guarded by the old location.
//
// Default table location, as iceberg-go computes it: the namespace's
// "location" property joined with the table name, else
// <warehouse>/<namespace dot-joined>.db/<table>. (Java's JdbcCatalog uses
// <warehouse>/<ns levels joined by />/<table>; tables created by icectl
// follow iceberg-go so both tools agree on new tables.)
//
// Open changes nothing in the database it opens: no file is created (SQLite
// is opened with mode=rw), no DDL runs, and no journal mode is set, so a
// database made by PyIceberg or iceberg-go (rollback journal) stays
// byte-identical under read-only commands and keeps its journal mode under
// writing ones. Create makes the database file and the catalog tables; only
// explicit creation (icectl catalog init, the demo, test fixtures) calls it.
//
// The package must never delete a file when a commit's outcome is unknown,
// never create a catalog from Open, and never print the connection URI's
// password (caturi.Redact).
package sqlcat
