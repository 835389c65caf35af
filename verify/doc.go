// Package verify proves invariants of a table after the fact, whoever
// wrote it: that row lineage survived between two snapshots (Lineage),
// that the deletes of a snapshot are consistent (Deletes), and that data
// files store their identity partition values (Partitions).
//
// It only reads: it never writes, commits or deletes anything. Every
// violation is reported with enough detail to find the rows or files
// involved; a file it cannot read is an error or a violation, never
// skipped silently.
package verify
