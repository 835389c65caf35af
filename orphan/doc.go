// Package orphan finds and removes orphan files: files under a table's
// location that no snapshot, metadata file or statistics file of the table
// references and that are older than a cutoff. It is `icectl orphan` and
// `icectl orphan restore`.
//
// The planner (Planner, Join) is pure: it compares a listing and the
// referenced set, both sorted by a normalized path key, and decides for
// each listed file. Run and Restore are the executors: they build the
// sorted streams in bounded memory (spilling through internal/shared/extsort),
// re-load the table before touching anything, and delete only through
// iceberg/reclaim's Deleter with Keep set to the referenced set.
//
// The package must never delete or move a file that the table references
// under any of the equivalent forms of its path (schemes, authorities,
// repeated slashes), a file younger than the cutoff, a file a commit made
// during the run references, or anything outside the listing root and the
// table's locations; it must never delete anything when the listing or
// the referenced set cannot be read completely, or in a dry run.
package orphan
