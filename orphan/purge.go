package orphan

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/reclaim"
)

// PurgeOptions are the inputs of PurgeTrash.
type PurgeOptions struct {
	// Trash is the --trash directory of the runs to purge.
	Trash string
	// OlderThan: runs created before Now()-OlderThan are purged, newer
	// ones kept (0 purges every run).
	OlderThan time.Duration
	// Now is the clock (nil: time.Now).
	Now    func() time.Time
	DryRun bool
	// MaxConcurrent bounds parallel deletions.
	MaxConcurrent int
	TempDir       string
	MemoryBudget  int
}

// PurgeStatus is what became of one trash run.
type PurgeStatus string

const (
	StatusWouldPurge PurgeStatus = "would_purge"
	StatusPurged     PurgeStatus = "purged"
	// StatusRunKept: the run is newer than the cutoff; it stays restorable.
	StatusRunKept PurgeStatus = "kept"
	// StatusPurgeFailed: some of the run's files could not be deleted;
	// its run.json stays, so what is left is still a run that restores
	// and that the next purge finishes.
	StatusPurgeFailed PurgeStatus = "failed"
)

// PurgedRun is one trash run and what became of it.
type PurgedRun struct {
	Run     string
	Created time.Time
	// Files and Bytes count the run's files (run.json included): those
	// deleted, or those a dry run or a kept run holds.
	Files  int64
	Bytes  int64
	Status PurgeStatus
	Detail string
}

// PurgeSummary counts a purge.
type PurgeSummary struct {
	Table       string
	Trash       string
	Cutoff      time.Time
	DryRun      bool
	Purged      int
	PurgedFiles int64
	PurgedBytes int64
	Kept        int
	Failed      int
}

// PurgeTrash empties the trash runs of o.Trash created before the cutoff,
// oldest first, through the guarded deletion path (only inside the trash,
// never a file the table references). A run's files go first and its
// run.json last, so a purge that stops halfway leaves a run that still
// restores what it holds and that the next purge finishes. Runs newer
// than the cutoff are kept, untouched, and reported as such. An empty
// trash is not an error: there is nothing to purge.
func PurgeTrash(ctx context.Context, load Loader, o PurgeOptions, fn func(PurgedRun) error) (*PurgeSummary, error) {
	if o.Trash == "" {
		return nil, fmt.Errorf("%w: --trash is required", ErrInvalidOptions)
	}
	if o.OlderThan < 0 {
		return nil, fmt.Errorf("%w: --older-than is negative", ErrInvalidOptions)
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = 8
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	t, trash, lister, err := openTrash(ctx, load, o.Trash, o.DryRun, "purging the trash deletes files")
	if err != nil {
		return nil, err
	}
	sum := &PurgeSummary{Table: t.Ident.String(), Trash: trash, Cutoff: now().Add(-o.OlderThan), DryRun: o.DryRun}
	runs, err := trashRuns(ctx, lister, trash)
	if err != nil {
		return sum, err
	}
	// The guard (the table's referenced files) is built for the first run
	// to delete, not for a dry run or a purge that keeps every run.
	var d *reclaim.Deleter
	release := func() error { return nil }
	defer func() { release() }()
	for _, run := range runs {
		runDir := trash + "/" + run
		info, err := readRun(ctx, t.IO, runDir)
		if err != nil {
			return sum, fmt.Errorf("trash run %s: %w", run, err)
		}
		r := PurgedRun{Run: run, Created: time.UnixMilli(info.CreatedMS)}
		switch {
		case !r.Created.Before(sum.Cutoff):
			r.Status = StatusRunKept
		case o.DryRun:
			r.Status = StatusWouldPurge
		case d == nil:
			if d, release, err = trashDeleter(ctx, t, trash, o.MaxConcurrent, o.TempDir, o.MemoryBudget); err != nil {
				return sum, err
			}
		}
		if err := purgeRun(ctx, lister, d, runDir, &r); err != nil {
			return sum, fmt.Errorf("purge trash run %s: %w", run, err)
		}
		switch r.Status {
		case StatusRunKept:
			sum.Kept++
		case StatusPurgeFailed:
			sum.Failed++
		default:
			sum.Purged++
			sum.PurgedFiles += r.Files
			sum.PurgedBytes += r.Bytes
		}
		if err := fn(r); err != nil {
			return sum, err
		}
	}
	if sum.Failed > 0 {
		return sum, fmt.Errorf("%w: %d trash run(s) could not be purged", ErrIncomplete, sum.Failed)
	}
	return sum, nil
}

// purgeRun counts the files of the run in runDir and, when r has no
// status yet, deletes them through d, run.json last. A run that is not
// wholly deleted is failed, its counts what it held.
func purgeRun(ctx context.Context, lister fileio.Lister, d *reclaim.Deleter, runDir string, r *PurgedRun) error {
	del := r.Status == ""
	var batch []string
	var tally reclaim.Tally
	flush := func() {
		if len(batch) > 0 {
			tally.Add(d.Delete(ctx, batch))
			batch = batch[:0]
		}
	}
	err := lister.List(ctx, runDir+"/", func(fi fileio.FileInfo) error {
		if !strings.HasPrefix(fi.Path, runDir+"/") {
			return fmt.Errorf("listing %s returned %s, outside it", runDir, fi.Path)
		}
		r.Files++
		r.Bytes += fi.Size
		if del && fi.Path != runDir+"/"+runFile {
			if batch = append(batch, fi.Path); len(batch) == batchSize {
				flush()
			}
		}
		return nil
	})
	if err != nil || !del {
		return err
	}
	flush()
	if err := tally.Err(); err != nil {
		r.Status, r.Detail = StatusPurgeFailed, err.Error()
		return nil
	}
	// Every file is gone: the run itself goes.
	if rep := d.Delete(ctx, []string{runDir + "/" + runFile}); rep.Err() != nil {
		r.Status, r.Detail = StatusPurgeFailed, rep.Err().Error()
		return nil
	}
	r.Status = StatusPurged
	return nil
}
