// Package deleterows deletes the rows of a table that match a --where
// expression (plan/where, the grammar compaction takes): `icectl
// delete-rows`, and the retention policy of maintain.
//
// A plan reads the table's live files, never writing. Each data file is
// one of three kinds:
//
//   - proven: its partition or its column metrics prove that every row
//     matches (where.Filter.AllMatchIn, a strict evaluation: truncated
//     string bounds, missing metrics or nulls prove nothing). It is
//     removed whole, with its deletion vector;
//   - ruled out: its partition or metrics prove no row matches. It is
//     not read and not touched;
//   - partial: anything else. It is read with its deletes applied, and
//     the positions of its live matching rows are deleted: by one
//     deletion vector merged with the file's existing deletes (v3), or by
//     a position-delete file naming it (v2) on merge-on-read tables;
//     on copy-on-write tables (write.delete.mode, whose default is
//     copy-on-write, as Spark reads it) the file is replaced by a copy
//     without those rows, each kept row with its lineage (v3), and the
//     DV or file-scoped position deletes of the old file go with it.
//     Equality deletes are never written.
//
// Counts are exact: a row an existing delete removed is neither counted
// nor deleted again. Before committing, every partial file is read again
// with the staged deletes, or its copy read (the scan reader, not the
// planner's own reading), and must hold its live rows less the matched
// ones, none of them matching; after the commit the table's rows are counted again and
// must be the rows before less the rows deleted.
//
// The commit is validated against concurrent commits: a data file added
// since the plan that may hold matching rows, or a delete added to a file
// the run touches, fails the run (nothing is overwritten); other appends
// are kept.
package deleterows
