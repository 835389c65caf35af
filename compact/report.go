package compact

import (
	"time"

	"github.com/icectl/icectl/plan"
)

// Group statuses.
const (
	StatusCommitted = "committed"
	StatusRebased   = "rebased" // rewritten again with new deletes, then committed
	StatusDropped   = "dropped" // an input was removed by another commit
	StatusFailed    = "failed"
	// StatusCancelled: the group was stopped, or its rewrite discarded,
	// only because another group failed or the run was interrupted.
	StatusCancelled  = "cancelled"
	StatusNotStarted = "not-started"
	// StatusAlreadyCommitted: a sharded run's committer found the group
	// committed by an earlier run of it (the snapshot summaries say so).
	StatusAlreadyCommitted = "already-committed"
)

// GroupResult is the fate of one plan group.
type GroupResult struct {
	ID                 string `json:"id"`
	Status             string `json:"status"`
	Reason             string `json:"reason,omitempty"`
	InputFiles         int    `json:"input_files"`
	OutputFiles        int    `json:"output_files"`
	BytesIn            int64  `json:"bytes_in"`
	BytesOut           int64  `json:"bytes_out"`
	RowsIn             int64  `json:"rows_in"`
	RowsOut            int64  `json:"rows_out"`
	DeletedRowsApplied int64  `json:"deleted_rows_applied"`
	DeleteFilesRetired int    `json:"delete_files_retired"`
	Rebases            int    `json:"rebases"`
	SnapshotID         int64  `json:"snapshot_id,omitempty"`
	// Rewrite is how the committed rewrite was made: RewriteTranscode or
	// RewriteArrow; RewriteNote says why a group took the Arrow path.
	Rewrite     string `json:"rewrite,omitempty"`
	RewriteNote string `json:"rewrite_note,omitempty"`
}

// How a group's rows were rewritten.
const (
	// RewriteTranscode: Parquet column chunks decoded to typed values and
	// encoded again, column by column in parallel.
	RewriteTranscode = "parquet-transcode"
	// RewriteArrow: rows read into Arrow record batches (deletes, lineage
	// and sorting applied there) and written by the Parquet writer.
	RewriteArrow = "arrow"
)

// Report is what a run did. Totals count committed groups only.
type Report struct {
	Plan                   *plan.Plan    `json:"-"`
	Groups                 []GroupResult `json:"groups"`
	Commits                int           `json:"commits"`
	FailedCommits          int           `json:"failed_commits"`
	FilesIn                int           `json:"files_in"`
	FilesOut               int           `json:"files_out"`
	BytesIn                int64         `json:"bytes_in"`
	BytesOut               int64         `json:"bytes_out"`
	RowsOut                int64         `json:"rows_out"`
	DeletedRowsApplied     int64         `json:"deleted_rows_applied"`
	DeleteFilesRetired     int           `json:"delete_files_retired"`
	DanglingDeletesRemoved int           `json:"dangling_deletes_removed"`
	LeftForNextRun         int           `json:"left_for_next_run"`
	Duration               time.Duration `json:"duration_ns"`
}

// Failed counts groups that failed.
func (r *Report) Failed() int {
	n := 0
	for _, g := range r.Groups {
		if g.Status == StatusFailed {
			n++
		}
	}
	return n
}

// Committed counts groups whose rewrite was committed.
func (r *Report) Committed() int {
	n := 0
	for _, g := range r.Groups {
		if g.Status == StatusCommitted || g.Status == StatusRebased {
			n++
		}
	}
	return n
}

// Dropped counts groups given up because a concurrent commit removed one
// of their inputs.
func (r *Report) Dropped() int {
	n := 0
	for _, g := range r.Groups {
		if g.Status == StatusDropped {
			n++
		}
	}
	return n
}

func (r *Report) total() {
	r.FilesIn, r.FilesOut, r.BytesIn, r.BytesOut, r.RowsOut, r.DeletedRowsApplied, r.DeleteFilesRetired = 0, 0, 0, 0, 0, 0, 0
	r.LeftForNextRun = 0
	for _, g := range r.Groups {
		switch g.Status {
		case StatusCommitted, StatusRebased:
			r.FilesIn += g.InputFiles
			r.FilesOut += g.OutputFiles
			r.BytesIn += g.BytesIn
			r.BytesOut += g.BytesOut
			r.RowsOut += g.RowsOut
			r.DeletedRowsApplied += g.DeletedRowsApplied
			r.DeleteFilesRetired += g.DeleteFilesRetired
		case StatusNotStarted:
			r.LeftForNextRun++
		}
	}
}
