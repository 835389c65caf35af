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
	// ErrNotV2 is returned when equality deletes are to be converted into
	// position-delete files (PositionDeletes) on a table that is not
	// format v2: v1 has no deletes, v3 keeps position deletes in DVs.
	ErrNotV2 = errors.New("converting equality deletes to position-delete files needs a format v2 table")
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
	Equality bool
	// PositionDeletes converts, on a format v2 table, the equality deletes
	// into position-delete files for the data files they apply to (`icectl
	// rewrite-equality-deletes`), and removes each equality-delete file
	// once every live data file it applies to is converted. It implies
	// Equality and looks at nothing else: position-delete files stay as
	// they are, and RepairResurrected does not apply.
	PositionDeletes  bool
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

// scope is which deletes a run merges.
type scope uint8

const (
	scopePositions    scope = iota // position deletes and DVs, into DVs
	scopeEquality                  // and equality deletes
	scopeEqualityOnly              // equality deletes alone, into position-delete files (v2)
)

func (o Options) scope() scope {
	switch {
	case o.PositionDeletes:
		return scopeEqualityOnly
	case o.Equality:
		return scopeEquality
	}
	return scopePositions
}

func (s scope) equality() bool { return s != scopePositions }

// verbName is the command a run is, for its errors.
func (o Options) verbName() string {
	if o.PositionDeletes {
		return "rewrite-equality-deletes"
	}
	return "dv merge"
}

// checkFormat refuses a table whose format version the run cannot take.
func (o Options) checkFormat(ident fmt.Stringer, version int) error {
	if o.PositionDeletes {
		if version == 2 {
			return nil
		}
		if version >= 3 {
			return fmt.Errorf("%w: %s is format v%d, whose deletes belong in deletion vectors: `icectl dv merge --equality %s` turns its equality deletes into DVs", ErrNotV2, ident, version, ident)
		}
		return fmt.Errorf("%w: %s is format v%d, which has no delete files", ErrNotV2, ident, version)
	}
	if version < 3 {
		return fmt.Errorf("%w: %s is format v%d; `icectl upgrade %s --to 3 --merge-deletes` upgrades it and merges its deletes in one run", ErrNotV3, ident, version, ident)
	}
	return nil
}

func (o Options) withDefaults() (Options, error) {
	if o.PositionDeletes {
		if o.RepairResurrected {
			return o, invalidf("repairing resurrected rows is dv merge's, not part of converting equality deletes")
		}
		o.Equality = true
	}
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
