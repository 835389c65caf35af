// Package compact rewrites the data files of an Iceberg table into fewer,
// larger ones, following a plan from package plan: every delete that
// applies is applied while reading, v3 row lineage is carried into the new
// files, and the result is committed as "replace" snapshots, one per batch.
//
// The package must never commit a rewritten file without every delete that
// applies to its input rows (a group whose inputs gained deletes meanwhile
// is rewritten again, "rebased"), never change a row's lineage, never
// delete a file a commit might reference (outputs are removed only after a
// definite failure), and never delete an input: a replace snapshot only
// stops referencing files, so a crash at any point leaves at most
// unreferenced files for `icectl orphan`.
//
// A group is rewritten one of two ways, and both write the same rows,
// lineage and metrics (tests compare them). By default the Parquet inputs
// are transcoded column by column (datafile.Transcoder): the positions
// every delete removes are computed first (DVs and position deletes as
// read; equality deletes by reading only their columns of the data file),
// then each column chunk is decoded to typed values, deleted positions are
// dropped, lineage is materialized, and the values are encoded again, one
// goroutine per column, with no Arrow record batches in between: about 40%
// less CPU, and both cores busy. Columns added since a file was written
// get their initial-default or nulls, and int and float columns promoted
// to long and double are widened. Sorted rewrites, non-Parquet inputs,
// inputs larger than an output file (split row by row) and inputs that
// need more (another type change, files without field ids) go through
// Arrow: scan reads record batches with every delete applied,
// datafile.Writer writes them.
// The report names the path of each group and why it went through Arrow.
// Row groups are never copied unchanged: a compacted file gets row groups
// of the configured size, not the small ones its inputs had.
package compact
