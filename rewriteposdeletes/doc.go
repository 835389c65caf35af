// Package rewriteposdeletes compacts the position-delete files of a format
// v2 table, as Spark's rewrite_position_delete_files does: in each
// partition with enough small position-delete files, the files are
// bin-packed to the target size and each bin is rewritten as one file
// holding the positions its inputs still apply to. Positions of data
// files that are no longer live, or that an input did not apply to, are
// dropped (dangling deletes); delete files that apply to no live data
// file at all are removed without being read. It is
// `icectl rewrite-position-deletes`.
//
// A rewritten file must apply to exactly the data files its inputs
// applied to. Applicability comes from the table's own rules
// (table.DeleteIndex): an input keeps a position only for a data file it
// applies to, so every data file the output names has a data sequence
// number at most that of the input naming it, and the output carries the
// largest data sequence number of its inputs (Java's
// RewriteFiles.addFile(file, maxRewrittenDataSequenceNumber)). An output
// naming a single data file is file-scoped (referenced_data_file).
//
// Plan is pure and reads only metadata; Run writes the new files and
// commits a "replace" snapshot through the commit loop
// (table.CommitChange), which rebuilds it on a fresh table after a
// concurrent commit and refuses it (table.ErrFileGone) when a file it
// removes, or the data file an output is scoped to, is gone: a rewrite
// never brings back a row. It refuses format v3 tables, whose position
// deletes become deletion vectors (`icectl dv merge`). It never deletes a
// table file but its own uncommitted outputs.
package rewriteposdeletes
