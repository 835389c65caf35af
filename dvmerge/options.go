package dvmerge

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/internal/shared/batchrun"
	"github.com/icectl/icectl/internal/shared/meter"
)

// DefaultPuffinTargetSize is the size at which a Puffin file of DVs is
// closed and the next one started.
const DefaultPuffinTargetSize = 8 << 20

// DefaultMaxCommits is the number of commits partial progress makes at
// most (Spark's partial-progress.max-commits).
const DefaultMaxCommits = batchrun.DefaultMaxCommits

// maxRebuilds bounds how often one partition is merged again because a
// concurrent commit changed its deletes.
const maxRebuilds = 3

var (
	// ErrInvalidOptions is wrapped by errors about the options (usage).
	ErrInvalidOptions = errors.New("invalid dv merge options")
	// ErrNotV3 is returned for tables below format v3, which have no DVs.
	ErrNotV3 = errors.New("deletion vectors need a format v3 table")
	// ErrTooManyFailedCommits: with partial progress, more commits failed
	// than MaxFailedCommits allows.
	ErrTooManyFailedCommits = batchrun.ErrTooManyFailedCommits
	// ErrPartitionsFailed: without partial progress a partition failed, so
	// nothing was committed.
	ErrPartitionsFailed = errors.New("dv merge of a partition failed")
)

// Options configure a run.
type Options struct {
	Where            string // selects partitions that may hold matching rows (plan/where syntax)
	Branch           string // "" = main
	PuffinTargetSize int64  // default DefaultPuffinTargetSize
	// RepairResurrected folds into a data file's DV the positions older
	// delete files deleted and the DV lacks, deleting those rows again.
	RepairResurrected bool
	// Equality resolves equality deletes into the DVs of the data files
	// they apply to, and removes each equality-delete file once every live
	// data file it applies to is covered.
	Equality         bool
	PartialProgress  bool
	MaxCommits       int           // default 10
	MaxFailedCommits int           // default MaxCommits
	MaxDuration      time.Duration // 0 = none: start no partition after it
	CreatedBy        string        // Puffin created-by (default "icectl")
	// Concurrency is how many partitions are merged at once (default
	// GOMAXPROCS); they are committed in plan order all the same.
	Concurrency int
	Commit      commit.Options
	// TempDir is where a run spills the table's live files, sorted by
	// partition, to hold one partition's at a time ("" = the system's
	// temporary directory, $TMPDIR). The file is unlinked at once.
	TempDir  string
	Progress Progress // nil = silent
	Now      func() time.Time
	Log      io.Writer // nil = none

	// spillBudget is the memory the spill holds before it writes a run
	// (0 = spillBudget): tests make it small to exercise the runs.
	spillBudget int
}

// Progress receives the advance of a run: one step per partition, of its
// input bytes. The CLI shows it as a terminal bar.
type Progress = meter.Meter

func (o Options) withDefaults() (Options, error) {
	if o.PuffinTargetSize == 0 {
		o.PuffinTargetSize = DefaultPuffinTargetSize
	}
	if o.PuffinTargetSize < 0 {
		return o, invalidf("puffin target size is %d but must be > 0", o.PuffinTargetSize)
	}
	if err := batchrun.Fill(&o.MaxCommits, &o.MaxFailedCommits, o.MaxDuration, &o.Commit); err != nil {
		return o, invalidf("%v", err)
	}
	if o.Concurrency == 0 {
		o.Concurrency = runtime.GOMAXPROCS(0)
	}
	if o.Concurrency < 0 {
		return o, invalidf("concurrency is %d but must be > 0", o.Concurrency)
	}
	if o.CreatedBy == "" {
		o.CreatedBy = "icectl"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.spillBudget == 0 {
		o.spillBudget = spillBudget
	}
	return o, nil
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...)
}
