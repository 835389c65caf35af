// Package partstats computes Iceberg's partition statistics (the spec's
// "Partition Statistics": one row per partition and spec of a snapshot,
// with its data and delete file counts, record counts and sizes, and the
// last snapshot that changed it), reads and writes their Parquet file, and
// registers it as the table's partition-statistics entry of the snapshot.
//
// The computation follows Java's PartitionStatsHandler (Iceberg 1.10):
// in full, from every entry of the snapshot's manifests; incrementally,
// from the file of the newest ancestor that has one plus the manifests
// each snapshot since added (added entries counted, deleted ones taken
// off). Builder, the fold over manifest entries, is pure; Compute and
// Write do the reading and writing.
//
// It must never register a file for a snapshot the table does not have,
// never register a file it did not finish writing, and never compute on
// from a previous file it could not read whole: that is an error, not a
// silent full computation, so the operator chooses (--full).
package partstats
