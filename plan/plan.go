package plan

import (
	"time"
)

// Plan document identity. Version changes when a field changes meaning
// (2: "table" is the namespace.table string every command prints, the
// table's identity beside it, no longer an object).
const (
	DocumentFormat  = "icectl-compaction-plan"
	DocumentVersion = 2
)

// Plan is a compaction plan: which files each group rewrites, the deletes
// that apply to them, what the rewrite is expected to produce and which
// delete files the commit retires. It is a plain value: JSON with stable
// keys, identical for identical inputs.
type Plan struct {
	Format    string    `json:"format"`
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	TableRef
	Branch  string        `json:"branch"`
	Base    *BaseSnapshot `json:"base_snapshot"`
	Options Resolved      `json:"options"`
	// Sort is compact --sort: the rewrite orders rows by the table's sort
	// order. It is not a planning option, but a worker of a sharded run
	// rewrites as the plan says, so the plan carries it.
	Sort bool `json:"sort,omitempty"`
	// SortOrder is compact --sort=ORDER: an explicit order (Spark's
	// sort_order syntax) instead of the table's.
	SortOrder string `json:"sort_order,omitempty"`
	// ZOrder is compact --zorder: the columns rows are z-ordered by.
	ZOrder []string `json:"zorder,omitempty"`
	Groups []Group  `json:"groups"`
	// RetireAfterGroups lists partition-scoped delete files that become
	// dangling only once every listed group is committed: the committer
	// retires each with the last of its groups (or drops it from the retire
	// set if any of them is not committed).
	RetireAfterGroups []ConditionalRetire `json:"retire_after_groups"`
	// DanglingDeletes (with remove-dangling-deletes, and only when there
	// are groups) are the delete files that apply to no live data file of
	// the base snapshot, by partition and data sequence number
	// (table.DataReach without file sequence numbers), and that no group
	// retires: the first commit removes them. Each commit decides again, from the table it is
	// applied to, what dangles after it (compact's executor), so it may
	// remove more, never one that applies again.
	DanglingDeletes []DeleteRef `json:"dangling_deletes,omitempty"`
	Totals          Totals      `json:"totals"`
}

// TableRef identifies the table planned. Its fields sit at the top of the
// plan document, as in every command's JSON: "table" is namespace.table.
type TableRef struct {
	// Name is the table's name in its catalog (namespace.table), when the
	// caller knows it.
	Name             string `json:"table"`
	UUID             string `json:"table_uuid"`
	Location         string `json:"location"`
	MetadataLocation string `json:"metadata_location,omitempty"`
	FormatVersion    int    `json:"format_version"`
}

// BaseSnapshot is the branch head the plan was made from; a committer
// validates against everything committed after it, and gives the output
// files its sequence number.
type BaseSnapshot struct {
	SnapshotID     int64 `json:"snapshot_id"`
	SequenceNumber int64 `json:"sequence_number"`
	TimestampMS    int64 `json:"timestamp_ms"`
}

// Group is one unit of rewriting: files of one spec and partition.
type Group struct {
	// ID is stable: a hash of the spec, partition and input paths.
	ID string `json:"id"`
	// Index is the 1-based position in job order.
	Index int `json:"index"`
	// PartitionIndex is the 1-based position among the groups of the same
	// partition, in packing order.
	PartitionIndex int            `json:"partition_index"`
	SpecID         int            `json:"spec_id"`
	Partition      map[string]any `json:"partition"`
	PartitionTuple Tuple          `json:"partition_tuple"`
	// PartitionText is the partition as every command renders it
	// (spec.PartitionText: region=eu/order_ts_day=2024-06-03), for text.
	PartitionText string      `json:"-"`
	Inputs        []InputFile `json:"inputs"`
	InputFiles    int         `json:"input_files"`
	InputBytes    int64       `json:"input_bytes"`
	InputRecords  int64       `json:"input_records"`
	// KnownDeletedRecords counts rows removed by DVs and file-scoped
	// position deletes (capped per file at its record count).
	KnownDeletedRecords int64 `json:"known_deleted_records"`
	ExpectedOutputFiles int   `json:"expected_output_files"`
	// ExpectedOutputBytes is an estimate: input bytes less the share of
	// known deleted rows.
	ExpectedOutputBytes int64 `json:"expected_output_bytes"`
	// SplitSize is Java's inputSplitSize: the bytes each output task reads.
	SplitSize int64 `json:"split_size_bytes"`
	// Retire are the delete files this group's commit removes.
	Retire []DeleteRef `json:"retire"`
}

// InputFile is one data file to rewrite, with the deletes that apply to it.
type InputFile struct {
	Path               string   `json:"path"`
	FileFormat         string   `json:"file_format"`
	SizeBytes          int64    `json:"size_bytes"`
	RecordCount        int64    `json:"record_count"`
	DataSequenceNumber int64    `json:"data_sequence_number"`
	FileSequenceNumber *int64   `json:"file_sequence_number"`
	FirstRowID         *int64   `json:"first_row_id"`
	Reasons            []string `json:"reasons"`
	Deletes            Deletes  `json:"deletes"`
}

// Reasons a file is a candidate.
const (
	ReasonTooSmall       = "too-small"
	ReasonTooLarge       = "too-large"
	ReasonTooManyDeletes = "too-many-deletes"
	ReasonDeleteRatio    = "delete-ratio"
	ReasonRewriteAll     = "rewrite-all"
	// ReasonOutputSpec: the file is in another spec than the output spec.
	ReasonOutputSpec = "output-spec"
)

// Deletes are the delete files that apply to one data file.
type Deletes struct {
	DV       *DeleteRef  `json:"dv,omitempty"`
	Position []DeleteRef `json:"position,omitempty"`
	Equality []DeleteRef `json:"equality,omitempty"`
}

// Delete content kinds in DeleteRef.Content.
const (
	ContentDV       = "dv"
	ContentPosition = "position"
	ContentEquality = "equality"
)

// DeleteRef identifies a delete file (or one DV blob of a Puffin file).
type DeleteRef struct {
	Path               string  `json:"path"`
	Content            string  `json:"content"`
	ContentOffset      *int64  `json:"content_offset,omitempty"`
	ContentSizeBytes   *int64  `json:"content_size_bytes,omitempty"`
	SizeBytes          int64   `json:"size_bytes"`
	RecordCount        int64   `json:"record_count"`
	DataSequenceNumber int64   `json:"data_sequence_number"`
	SpecID             int     `json:"spec_id"`
	ReferencedDataFile *string `json:"referenced_data_file,omitempty"`
	// FileScoped is true for DVs and position-delete files that reference
	// one data file (referenced_data_file, or equal file_path bounds).
	FileScoped  bool   `json:"file_scoped"`
	EqualityIDs []int  `json:"equality_ids,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

// Retire reasons.
const (
	RetireDV           = "dv-of-rewritten-file"
	RetireFileScoped   = "file-scoped-of-rewritten-file"
	RetirePartitionPos = "all-applicable-data-files-rewritten"
	RetireEqualityDead = "no-older-data-file-left"
	// RetireDangling: it applied to no live data file of the base snapshot.
	RetireDangling = "dangling"
)

// ConditionalRetire is a delete file that is dangling once all Groups are
// committed.
type ConditionalRetire struct {
	Delete DeleteRef `json:"delete"`
	Groups []string  `json:"groups"`
}

// Totals summarize a plan.
type Totals struct {
	LiveDataFiles       int   `json:"live_data_files"`
	SelectedByWhere     int   `json:"selected_by_where"`
	CandidateFiles      int   `json:"candidate_files"`
	Groups              int   `json:"groups"`
	InputFiles          int   `json:"input_files"`
	InputBytes          int64 `json:"input_bytes"`
	InputRecords        int64 `json:"input_records"`
	KnownDeletedRecords int64 `json:"known_deleted_records"`
	ExpectedOutputFiles int   `json:"expected_output_files"`
	ExpectedOutputBytes int64 `json:"expected_output_bytes"`
	// DeleteFilesApplied counts distinct delete files (and DVs) that apply
	// to some input.
	DeleteFilesApplied int `json:"delete_files_applied"`
	// DeleteFilesRetired counts delete files retired by some group, plus
	// the conditional ones.
	DeleteFilesRetired int `json:"delete_files_retired"`
}
