// Package expire removes old snapshots from a table and deletes the files
// only they reached.
//
// NewPlan is pure: it decides from table metadata which snapshots and refs
// go, with Java's RemoveSnapshots rules (per-ref retention, table
// defaults, main never removed). Run is the executor: it computes the
// files to delete as a reachability difference (files reachable from the
// removed snapshots minus files reachable from every retained one, over
// manifest lists, manifests, data and delete files, DV Puffin files and
// statistics), commits the metadata change through the commit loop, and
// deletes only after the commit is confirmed.
//
// It must never delete a file a retained snapshot reaches, never delete
// anything when a manifest it needs cannot be read or the commit's outcome
// is unknown, never use an incremental shortcut (apache/iceberg#13568),
// and never delete except through iceberg/reclaim.
package expire
