// Package health judges the state of a table: small files, delete files,
// manifests, snapshots and metadata files, and data files whose metrics
// show an identity partition column stored otherwise than their partition
// value, and, given a retention setting (Input.Retention), the live rows
// past it by the files' metrics; each finding with the icectl command
// that would address it.
//
// It is a planner: Analyze is a pure function of its Input (metadata, the
// live files of the current snapshot, the manifest list, the time and the
// thresholds). It does no IO, takes no context and never changes a table;
// ReadInput, its one reader, gathers the input from a table version, and
// the command layer renders the Report.
package health
