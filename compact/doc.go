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
// unreferenced files for `icectl orphan`. A commit stops referencing a
// delete file only when it applies to no data file left: the DVs and
// file-scoped deletes of its inputs, and, decided on the head it is
// applied to (table.DataReach; commit.go), the plan's partition-scoped
// retirements and, with remove-dangling-deletes, every other dangling
// delete of the table.
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
//
// Every rewrite checks itself before its outputs may be committed, on both
// paths (selfcheck.go): the rows read less the rows deleted are the rows
// the outputs hold; for every leaf of the written schema, nested ones
// included, the non-null values of the kept rows read are those handed to
// the writer and those the outputs' metrics count; the non-null values
// read from each input, deleted rows included, are what its manifest
// entry's value and null counts say (where it has both, and not for
// leaves below a list or map, whose null counts writers disagree on), so
// a reader that silently reads a column as nulls is caught although it
// agrees with itself; and in v3 each written _row_id and
// _last_updated_sequence_number is the one its row had, stored or
// inherited from the entry's first_row_id and sequence number (sums
// weighted by row order per input on the transcode path, a hash of the
// pairs on the Arrow path, which may sort). A mismatch fails the group
// with the column and both counts, and its outputs are removed as any
// failed group's are. The counts are taken where the values pass (levels
// and deleted rows in the Transcoder's column goroutines, Arrow null
// counts on the row path), which costs little.
//
// A run may also be split across processes (shard.go, commitstaged.go):
// RewriteShard rewrites one shard of a saved plan and stages a result per
// group, committing nothing; CommitStaged commits the staged results
// through the same validation and conflict handling as Execute, and
// records the plan and group ids in each snapshot's summary so that it
// never commits a group twice. A worker must never commit, and the
// committer never deletes a file whose commit state is unknown.
package compact
