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
// The path sets (candidates, live files of retained snapshots, the files
// to delete) go through internal/shared/extsort and are compared as sorted
// streams, so memory stays flat as the table grows. Before the commit a
// journal listing the files to delete is written beside the metadata; a
// run killed after its commit leaves it, and the next run finishes those
// deletions, each proven again against the table it loads (orphan
// removal keeps pending journals: see iceberg/reclaim.IsJournalName).
//
// The report holds no per-file state in memory either: its files go to a
// FileList (spilled to disk past 1 MiB) and its deletions to a
// reclaim.Tally (counts, plus the refused and failed paths).
//
// It must never delete a file a retained snapshot reaches, never delete
// anything when a manifest it needs cannot be read or the commit's outcome
// is unknown, never use an incremental shortcut (apache/iceberg#13568),
// and never delete except through iceberg/reclaim.
package expire
