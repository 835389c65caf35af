package compact

import (
	"errors"
	"io"
	"runtime"
	"time"

	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/internal/shared/batchrun"
	"github.com/icectl/icectl/internal/shared/meter"
	"github.com/icectl/icectl/plan"
)

// DefaultMaxCommits is Spark's partial-progress.max-commits default.
const DefaultMaxCommits = batchrun.DefaultMaxCommits

// maxRebases bounds how often one group is rewritten because its inputs
// gained deletes while it was being rewritten or committed.
const maxRebases = 3

// ErrInvalidOptions is wrapped by errors about the options themselves
// (a usage error for the CLI).
var ErrInvalidOptions = errors.New("invalid compaction options")

// ErrFormatV1 is wrapped by the error for a format v1 table: compaction
// refuses it before planning, so nothing is rewritten (a dry run refuses
// too). Spark commits a v1 rewrite; icectl does not, because it writes
// manifests only in v2 and v3, whose readers its tests check, and an
// upgrade to v2 is a metadata-only commit that loses nothing.
var ErrFormatV1 = errors.New("format v1 tables are not compacted")

// ErrTooManyFailedCommits is wrapped by Execute's error when, with partial
// progress, more commits failed than MaxFailedCommits allows.
var ErrTooManyFailedCommits = batchrun.ErrTooManyFailedCommits

// ErrGroupsFailed is wrapped by Execute's error when, without partial
// progress, a group failed and so nothing was committed.
var ErrGroupsFailed = errors.New("compaction group failed")

// Options configure a compaction run.
type Options struct {
	Plan                plan.Options // planning options incl. Where
	Branch              string       // "" = main
	MaxConcurrentGroups int          // default runtime.NumCPU()
	PartialProgress     bool
	MaxCommits          int           // default 10
	MaxFailedCommits    int           // default = MaxCommits
	MaxDuration         time.Duration // 0 = none: start no new group after it, commit what is done
	Sort                bool          // sort rows by SortOrder, else the table's default sort order
	// SortOrder is an explicit sort order in Spark's sort_order syntax
	// ("region ASC NULLS FIRST, ts DESC"), used with Sort.
	SortOrder string
	// ZOrder z-orders rows by these top-level columns (exclusive with Sort).
	ZOrder []string
	// SortBuffer is the bytes of rows a sorting rewrite orders at once
	// (per running group); 0 = DefaultSortBuffer or the max output file
	// size, whichever is larger.
	SortBuffer int64
	// ArrowOnly rewrites every group through Arrow record batches, the path
	// sorting and equality deletes need anyway, instead of transcoding
	// Parquet column by column where the inputs allow it. Both write the
	// same rows; tests compare them.
	ArrowOnly bool
	Commit    commit.Options
	Progress  Progress // nil = silent
	Now       func() time.Time
	Log       io.Writer // nil = none
	// selfCheckHooks break rewrites on purpose (tests only).
	selfCheckHooks *selfCheckHooks
}

// Progress receives the advance of a run: one step per group, of its
// input bytes. The CLI shows it as a terminal bar.
type Progress = meter.Meter

// DefaultSortBuffer is the default Options.SortBuffer.
const DefaultSortBuffer = 1 << 30

// sorting reports whether the rewrite orders rows.
func (o Options) sorting() bool { return o.Sort || len(o.ZOrder) > 0 }

func (o Options) withDefaults() (Options, error) {
	if o.MaxConcurrentGroups == 0 {
		o.MaxConcurrentGroups = runtime.NumCPU()
	}
	if o.MaxConcurrentGroups < 0 {
		return o, errorsJoinf("max concurrent groups is %d but must be > 0", o.MaxConcurrentGroups)
	}
	if err := batchrun.Fill(&o.MaxCommits, &o.MaxFailedCommits, o.MaxDuration, &o.Commit); err != nil {
		return o, errorsJoinf("%v", err)
	}
	if o.SortBuffer < 0 {
		return o, errorsJoinf("sort buffer is %d but must be > 0", o.SortBuffer)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}
