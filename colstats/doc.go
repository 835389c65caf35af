// Package colstats computes column statistics as Iceberg's Spark action
// compute_table_stats does: for each column, a Theta sketch of the
// distinct values the snapshot's live rows hold (deletes applied), stored
// as an apache-datasketches-theta-v1 blob of a Puffin file in the table's
// metadata directory with its ndv property, and registers the file with
// set-statistics on the snapshot.
//
// Values are hashed in Iceberg's single-value serialization (spec
// Appendix D), as Iceberg's ThetaSketchAgg does: nulls are skipped, and
// empty strings and binaries, which DataSketches ignores, count for
// nothing. Each sketch is what Spark's aggregate ends with, the union of
// the values' sketch (at most 4096 hashes): for the same values the blob
// is byte-identical to Spark's when a column has at most 4096 distinct
// values, and within the sketch's error of it past that.
//
// Over append-only history the computation starts from an ancestor's
// sketches and reads only the appended files (the union of bottom-k
// sketches is the bottom-k sketch of the whole).
//
// Blobs of the snapshot's previous statistics file that this run does not
// replace (other columns, other blob types) are carried into the new file:
// registering a file replaces the snapshot's previous one, and no
// statistics another engine computed are dropped.
package colstats
