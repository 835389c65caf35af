// Package upgrade raises a table's format version (v1 to v2, v2 to v3, or
// v1 to v3 in one step) and makes the first v3 commit at once, and judges
// beforehand whether a table is ready for it.
//
// Check is a planner: a pure function of the table's metadata, the live
// files and the manifests of its current snapshot. Run commits through the
// catalog with the commit loop (iceberg/commit, iceberg/table): an
// upgrade-format-version update, and with AssignRowIDs, in the same
// metadata commit, a snapshot that lists the current manifests again so
// that every data manifest gets a first_row_id (spec: row lineage).
//
// The package never rewrites a data, delete or manifest file, never
// changes an existing snapshot, never downgrades, and deletes nothing but
// the files of its own failed commit attempts (through the commit loop).
package upgrade
