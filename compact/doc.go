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
package compact
