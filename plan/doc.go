// Package plan decides which data files a compaction rewrites and how they
// are grouped, following Iceberg Java's BinPackRewriteFilePlanner (on top of
// SizeBasedFileRewritePlanner) and Spark's rewrite_data_files option names.
//
// A plan is a pure function of its inputs (table metadata, the live files
// of a branch head, the options and the time): the same inputs in any order
// give a byte-identical plan. It must never select a file it cannot account
// for, and never retire a delete file that could still apply to a live row.
// A --where filter selects the files that may hold matching rows, by their
// partition and their column metrics (see package where); the metrics of
// a Collector's files come from the caller, in Input.Unmatched.
//
// New plans files given in memory and does no IO. A table's files are
// planned with a Collector instead: table.ScanLiveFiles decodes the
// manifests in parallel straight into its sinks, which keep each file as a
// fixed-size record with its path and spill sorted runs of them to a
// temporary file; planning merges the runs, so each partition's files
// arrive together in packing order, and keeps state per partition and per
// group, never per file. The Result writes the plan's text without the
// input files and its JSON group by group, reading them back, so memory
// stays the same however many files the table has.
//
// Deviations from Java, on purpose:
//   - Files are grouped by (spec id, partition tuple) for every spec, not only
//     the current one: icectl writes the output in the input's spec and
//     partition (Java puts files of older specs in one unpartitioned group).
//     With an output spec (Spark's output-spec-id), files of other specs
//     are still grouped by their own spec and partition, and the executor
//     fans each group's rows out to the output spec's partitions; every
//     such file is a candidate (reason output-spec) and every group of them
//     is kept, where Java applies its size rules to them as to any file.
//   - Within a partition, files are packed in a canonical order (data
//     sequence number, then path) instead of scan order, so plans are
//     deterministic.
//   - max-files-to-rewrite is applied after the groups are sorted by the job
//     order (Java caps in partition-map order, then sorts), and a truncated
//     group's expected output is computed from its truncated size.
//   - Groups are ordered deterministically when the job order is "none":
//     by spec id, partition tuple, then position within the partition.
//   - Plans also list the delete files each commit retires (see retire.go):
//     DVs and file-scoped position deletes of rewritten files, and
//     partition-scoped position or equality deletes once every live data
//     file they could apply to is rewritten. Java does the first in the
//     rewrite commit and leaves the rest to remove-dangling-deletes, a
//     second commit. With that option (icectl's default; Java's is off),
//     the plan lists the deletes already dangling at its base
//     (DanglingDeletes), and compact's commits remove whatever dangles
//     after them, decided on the table each is applied to.
package plan
