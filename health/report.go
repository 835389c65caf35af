package health

import (
	"encoding/json"
	"time"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// Input is everything Analyze looks at.
type Input struct {
	// Table is the table's name as recommendations spell it.
	Table    string
	Metadata *spec.TableMetadata
	// Files are the live files of the current snapshot (nil: none).
	Files *table.FileSet
	// Manifests is the current snapshot's manifest list.
	Manifests  []manifest.ManifestFile
	Now        time.Time
	Thresholds Thresholds
	// Resurrected are the data files whose DV lacks positions an older
	// delete of the file deleted (table.FindResurrected), with the rows
	// readers see again; the command layer finds and reads them.
	Resurrected []ResurrectedFile
	// PartitionStats is the current snapshot's partition statistics file
	// (nil: none, or unreadable), checked against the live files.
	PartitionStats *PartitionStats
	// Notes are what the reader could not use, for people (stderr).
	Notes []string
	// FromStats: judge the current snapshot from PartitionStats instead
	// of Files (ReadStatsInput).
	FromStats bool
	// Retention is a retention setting to count the rows past (nil: not
	// asked; maintain's policy or health --policy gives it).
	Retention *Retention
}

// Report is the health of one table. Its JSON form is the output of
// `icectl health --output json`: snake_case keys, sizes in bytes,
// times in epoch milliseconds.
type Report struct {
	Table          string      `json:"table"`
	FormatVersion  int         `json:"format_version"`
	SnapshotID     *int64      `json:"snapshot_id"`
	NowMS          int64       `json:"now_ms"`
	Thresholds     Thresholds  `json:"thresholds"`
	SmallFileBytes int64       `json:"small_file_bytes"`
	Data           FileStats   `json:"data_files"`
	Deletes        DeleteStats `json:"delete_files"`
	// SortOrderID is the table's default sort order when it sorts rows
	// (nil: unsorted), and UnsortedFiles the data files not written in it.
	SortOrderID   *int        `json:"sort_order_id"`
	UnsortedFiles int         `json:"unsorted_data_files"`
	Partitions    []Partition `json:"partitions"`
	// DefaultSpecID is the table's current partition spec, and
	// OtherSpecData the data files of other specs: data in an older
	// layout, which only a rewrite into the current spec moves.
	DefaultSpecID int           `json:"default_spec_id"`
	OtherSpecData SpecData      `json:"other_spec_data"`
	Manifests     ManifestStats `json:"manifests"`
	Snapshots     SnapshotStats `json:"snapshots"`
	MetadataFiles MetadataStats `json:"metadata_files"`
	Resurrected   Resurrected   `json:"resurrected_rows"`
	// PartitionValues are the data files whose metrics show an identity
	// partition column stored otherwise than their partition value.
	PartitionValues PartitionValues `json:"partition_values_mismatch"`
	// Retention counts the live rows past the retention setting asked
	// about (nil: none asked).
	Retention *RetentionStats `json:"retention,omitempty"`
	Findings  []Finding       `json:"findings"`
	// PartitionStatistics is the current snapshot's partition statistics
	// file when its counts are those of the live files ("" otherwise).
	PartitionStatistics string `json:"partition_statistics,omitempty"`
	// Basis is BasisPartitionStats for a report judged from the partition
	// statistics file instead of the manifests ("" otherwise).
	Basis string `json:"basis,omitempty"`
	// Notes are for people: a partition statistics file that could not be
	// read or disagrees with the manifests.
	Notes []string `json:"-"`
}

// SpecData counts data files and their bytes.
type SpecData struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

// Resurrected sums up the rows that deletes removed and readers see again
// because a deletion vector lacks them.
type Resurrected struct {
	DataFiles int               `json:"data_files"`
	Rows      int64             `json:"rows"`
	Files     []ResurrectedFile `json:"files"`
}

// ResurrectedFile is one data file with resurrected rows: how many, the
// first few positions and the rows at them (as readers see them), the DV
// readers apply and the delete files that deleted those rows.
type ResurrectedFile struct {
	DataFile       string   `json:"data_file"`
	DV             string   `json:"deletion_vector"`
	Rows           int64    `json:"rows"`
	FirstPositions []int64  `json:"first_positions"`
	FirstRows      []string `json:"first_rows"`
	DeleteFiles    []string `json:"delete_files"`
}

// FileStats counts data files.
type FileStats struct {
	Files      int      `json:"files"`
	Records    int64    `json:"records"`
	Bytes      int64    `json:"bytes"`
	SmallFiles int      `json:"small_files"`
	Histogram  []Bucket `json:"size_histogram"`
}

// Bucket is one size class of data files: MinBytes <= size < MaxBytes
// (MaxBytes nil: no upper bound).
type Bucket struct {
	Label    string `json:"label"`
	MinBytes int64  `json:"min_bytes"`
	MaxBytes *int64 `json:"max_bytes"`
	Files    int    `json:"files"`
	Bytes    int64  `json:"bytes"`
}

// KindStats counts delete files of one kind. For deletion vectors Count is
// the number of vectors (several share one Puffin file) and Records the
// positions they delete.
type KindStats struct {
	Count   int   `json:"count"`
	Records int64 `json:"records"`
	Bytes   int64 `json:"bytes"`
}

// DeleteStats counts delete files by kind. DeletedRows counts the rows
// position deletes and DVs remove (an upper bound: two delete files may
// name the same row); equality deletes are not counted, since how many rows
// a delete key matches is only known by reading the data. DeleteRatio is
// DeletedRows / data records.
type DeleteStats struct {
	Position KindStats `json:"position_deletes"`
	// SmallPositionFiles counts the position-delete files (not DVs)
	// smaller than the delete target file size.
	SmallPositionFiles int       `json:"small_position_delete_files"`
	DV                 KindStats `json:"deletion_vectors"`
	Equality           KindStats `json:"equality_deletes"`
	DeletedRows        int64     `json:"deleted_rows"`
	DeleteRatio        float64   `json:"delete_ratio"`
}

// Partition is the health of one partition of one spec.
type Partition struct {
	SpecID    int         `json:"spec_id"`
	Partition string      `json:"partition"`
	Data      FileStats   `json:"data_files"`
	Deletes   DeleteStats `json:"delete_files"`
	// UnsortedFiles counts the data files not written in the table's
	// sort order (another sort_order_id, or none), when it has one.
	UnsortedFiles int `json:"unsorted_data_files"`
}

// ManifestStats counts the current snapshot's manifests.
type ManifestStats struct {
	Count           int   `json:"count"`
	DataManifests   int   `json:"data_manifests"`
	DeleteManifests int   `json:"delete_manifests"`
	Bytes           int64 `json:"bytes"`
	SmallManifests  int   `json:"small_manifests"`
	SmallBelowBytes int64 `json:"small_below_bytes"`
}

// SnapshotStats describes the snapshot history.
type SnapshotStats struct {
	Count int `json:"count"`
	// OldestMS is the oldest snapshot's timestamp, OldestAgeMS its age at
	// Now; both nil without snapshots.
	OldestMS    *int64 `json:"oldest_ms"`
	OldestAgeMS *int64 `json:"oldest_age_ms"`
	// Expirable counts snapshots older than the maximum age, other than
	// the current one.
	Expirable int `json:"older_than_max_age"`
	// PerDay counts the snapshots by the UTC day of their timestamp,
	// oldest day first, days without one left out.
	PerDay []DayCount `json:"per_day"`
}

// DayCount is how many of something a UTC day has.
type DayCount struct {
	Day   string `json:"day"` // 2006-01-02
	Count int    `json:"count"`
}

// MetadataStats counts the metadata files the table still tracks: the
// current one and those of its metadata log.
type MetadataStats struct {
	Count               int  `json:"count"`
	LogEntries          int  `json:"log_entries"`
	PreviousVersionsMax int  `json:"previous_versions_max"`
	DeleteAfterCommit   bool `json:"delete_after_commit"`
	// LogPerDay counts the metadata log's entries by the UTC day of
	// their timestamp, as SnapshotStats.PerDay.
	LogPerDay []DayCount `json:"log_per_day"`
}

// Finding is one problem and the command recommended for it.
type Finding struct {
	Kind           string `json:"kind"`
	Message        string `json:"message"`
	Recommendation string `json:"recommendation"`
	// Command is Recommendation as a command line, for commands to render
	// and check against what they have.
	Command Command `json:"-"`
}

// MarshalJSON writes durations as milliseconds.
func (t Thresholds) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		TargetFileSize      int64   `json:"target_file_size_bytes"`
		SmallFileFraction   float64 `json:"small_file_fraction"`
		MinInputFiles       int     `json:"min_input_files"`
		DeleteTargetSize    int64   `json:"delete_target_file_size_bytes"`
		MinPosDeleteFiles   int     `json:"min_position_delete_files"`
		DeleteRatio         float64 `json:"delete_ratio"`
		ManifestTargetSize  int64   `json:"manifest_target_size_bytes"`
		MinSmallManifests   int     `json:"min_small_manifests"`
		MaxSnapshotAgeMS    int64   `json:"max_snapshot_age_ms"`
		MinSnapshotsToKeep  int     `json:"min_snapshots_to_keep"`
		PreviousVersionsMax int     `json:"previous_versions_max"`
		DeleteAfterCommit   bool    `json:"delete_after_commit"`
	}{t.TargetFileSize, t.SmallFileFraction, t.MinInputFiles, t.DeleteTargetFileSize, t.MinPositionDeleteFiles, t.DeleteRatio, t.ManifestTargetSize,
		t.MinSmallManifests, t.MaxSnapshotAge.Milliseconds(), t.MinSnapshotsToKeep, t.PreviousVersionsMax, t.DeleteAfterCommit})
}
