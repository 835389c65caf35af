package dvmerge

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/internal/meter"
)

// DefaultPuffinTargetSize is the size at which a Puffin file of DVs is
// closed and the next one started.
const DefaultPuffinTargetSize = 8 << 20

// DefaultMaxCommits is the number of commits partial progress makes at
// most (Spark's partial-progress.max-commits).
const DefaultMaxCommits = 10

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
	ErrTooManyFailedCommits = errors.New("too many failed commits")
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
	Commit           commit.Options
	Progress         Progress // nil = silent
	Now              func() time.Time
	Log              io.Writer // nil = none
}

// Progress receives the advance of a run: one step per partition, of its
// input bytes. The CLI shows it as a terminal bar.
type Progress = meter.Meter

func (o Options) withDefaults() (Options, error) {
	if o.PuffinTargetSize == 0 {
		o.PuffinTargetSize = DefaultPuffinTargetSize
	}
	if o.MaxCommits == 0 {
		o.MaxCommits = DefaultMaxCommits
	}
	if o.MaxFailedCommits == 0 {
		o.MaxFailedCommits = o.MaxCommits
	}
	if o.CreatedBy == "" {
		o.CreatedBy = "icectl"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if c := o.Commit; c.NumRetries == 0 && c.MinWait == 0 && c.MaxWait == 0 && c.TotalTimeout == 0 {
		d := commit.DefaultOptions()
		d.Sleep = c.Sleep
		o.Commit = d
	}
	switch {
	case o.PuffinTargetSize < 0:
		return o, invalidf("puffin target size is %d but must be > 0", o.PuffinTargetSize)
	case o.MaxCommits < 0:
		return o, invalidf("max commits is %d but must be > 0", o.MaxCommits)
	case o.MaxFailedCommits < 0:
		return o, invalidf("max failed commits is %d but must be >= 0", o.MaxFailedCommits)
	case o.MaxDuration < 0:
		return o, invalidf("max duration is %s but must be >= 0", o.MaxDuration)
	}
	return o, nil
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...)
}
