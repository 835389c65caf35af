// Package scan reads the rows of an Iceberg table snapshot with every
// applicable delete applied: deletion vectors, v2 position deletes (file-
// and partition-scoped) and equality deletes.
//
// Which delete applies to which data file is decided by table.DeleteIndex
// alone; this package only applies what the index returns. Rows of a
// snapshot are produced in a fixed order (the order of its manifests and
// their entries, then file order), whatever the read concurrency.
//
// The package must never return a row that a live delete applicable to it
// removes, never drop a row no delete removes, and never guess: a delete
// file it cannot read or that contradicts its manifest (a DV whose
// cardinality is not the manifest's record count) is an error, not a
// partial result.
package scan
