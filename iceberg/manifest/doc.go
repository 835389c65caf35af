// Package manifest reads and writes Iceberg manifest lists and manifests, the
// Avro object container files that list a snapshot's data and delete files.
//
// Readers accept format v1 to v3 as written by Java, Spark, PyIceberg, DuckDB
// and iceberg-go: fields are resolved by their Avro "field-id" property, never
// by name, and entries are decoded one at a time so a manifest is never held
// in memory as a whole. Writers produce v2 and v3 files with the schema, record
// names, field order and key/value metadata Java Iceberg writes.
//
// This package must never guess a value it cannot read: a field it does not
// understand is skipped only when nothing depends on it, and a malformed file
// is an error naming the problem, never a panic or a silently shortened list.
package manifest
