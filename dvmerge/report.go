package dvmerge

import "time"

// Partition statuses.
const (
	StatusCommitted  = "committed"
	StatusRebuilt    = "rebuilt" // merged again on a newer table after a concurrent commit, then committed
	StatusNothing    = "nothing-to-do"
	StatusFailed     = "failed"
	StatusNotStarted = "not-started"
)

// PartitionResult is the fate of one planned partition.
type PartitionResult struct {
	ID                         string `json:"id"`
	Status                     string `json:"status"`
	Reason                     string `json:"reason,omitempty"`
	DataFiles                  int    `json:"data_files"`
	DVsWritten                 int    `json:"dvs_written"`
	PuffinFiles                int    `json:"puffin_files"`
	PuffinBytes                int64  `json:"puffin_bytes"`
	DVsRemoved                 int    `json:"dvs_removed"`
	PositionDeleteFilesRetired int    `json:"position_delete_files_retired"`
	// With PositionDeletes: the position-delete files written in place of
	// equality deletes, their bytes and positions.
	PositionDeleteFilesWritten int   `json:"position_delete_files_written,omitempty"`
	PositionDeleteBytes        int64 `json:"position_delete_bytes,omitempty"`
	PositionsWritten           int64 `json:"positions_written,omitempty"`
	Rebuilds                   int   `json:"rebuilds"`
	SnapshotID                 int64 `json:"snapshot_id,omitempty"`
}

// KeptDelete is a position-delete file that stays: some live data file's
// DV lacks positions it deletes.
type KeptDelete struct {
	DeleteFile string `json:"delete_file"`
	// Resurrected: the positions are missing from a DV that existed before
	// the merge (rows visible again; --repair-resurrected retires it).
	Resurrected bool     `json:"resurrected"`
	HeldBy      []string `json:"held_by"` // data files whose DV lacks its positions
}

// DataFilePositions names positions of one data file.
type DataFilePositions struct {
	DataFile       string   `json:"data_file"`
	RecordCount    int64    `json:"record_count"`
	Positions      int64    `json:"positions"`
	FirstPositions []int64  `json:"first_positions"`
	DeleteFiles    []string `json:"delete_files"`
}

// RepairedFile lists every row --repair-resurrected deleted again in one
// data file.
type RepairedFile struct {
	DataFile  string   `json:"data_file"`
	Positions []int64  `json:"positions"`
	Rows      []string `json:"rows"`
}

// MultipleDVs is a data file that had more than one live DV.
type MultipleDVs struct {
	DataFile string   `json:"data_file"`
	DVs      []string `json:"dvs"`
}

// Report is what a run did. Lists and totals cover committed partitions.
type Report struct {
	Plan                       *Plan               `json:"-"`
	Partitions                 []PartitionResult   `json:"partitions"`
	Commits                    int                 `json:"commits"`
	FailedCommits              int                 `json:"failed_commits"`
	Operations                 []string            `json:"operations"`
	DataFiles                  int                 `json:"data_files"`
	DVsWritten                 int                 `json:"dvs_written"`
	PuffinFiles                int                 `json:"puffin_files"`
	PuffinBytes                int64               `json:"puffin_bytes"`
	DVsRemoved                 int                 `json:"dvs_removed"`
	PositionDeleteFilesRetired int                 `json:"position_delete_files_retired"`
	EqualityDeleteFilesRetired int                 `json:"equality_delete_files_retired"`
	PositionDeleteFilesWritten int                 `json:"position_delete_files_written,omitempty"`
	PositionDeleteBytes        int64               `json:"position_delete_bytes,omitempty"`
	PositionsWritten           int64               `json:"positions_written,omitempty"`
	DanglingDeletesRemoved     int                 `json:"dangling_deletes_removed"`
	Kept                       []KeptDelete        `json:"kept_delete_files"`
	Resurrected                []DataFilePositions `json:"resurrected"`
	Repaired                   []RepairedFile      `json:"repaired"`
	OutOfRange                 []DataFilePositions `json:"out_of_range_positions"`
	MultipleDVs                []MultipleDVs       `json:"multiple_dvs"`
	LeftForNextRun             int                 `json:"left_for_next_run"`
	Duration                   time.Duration       `json:"-"`
}

// Failed counts partitions that failed.
func (r *Report) Failed() int {
	n := 0
	for _, p := range r.Partitions {
		if p.Status == StatusFailed {
			n++
		}
	}
	return n
}
