// Package batchrun holds what the maintenance verbs that commit their work
// in batches (compact, dv merge) share: the partial-progress limits and
// their defaults, the commit retry defaults, and how the outcome of a run
// is classified for the exit code. The verbs keep their own options types;
// this package is the one place the rules live.
package batchrun

import (
	"errors"
	"fmt"
	"time"

	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/metastore"
)

// DefaultMaxCommits is Spark's partial-progress.max-commits default.
const DefaultMaxCommits = 10

// ErrTooManyFailedCommits is wrapped by a run's error when, with partial
// progress, more commits failed than MaxFailedCommits allows.
var ErrTooManyFailedCommits = errors.New("too many failed commits")

// Limits are the partial-progress settings of a run (Spark's
// partial-progress.* options).
type Limits struct {
	MaxCommits       int           // 0 = DefaultMaxCommits
	MaxFailedCommits int           // 0 = MaxCommits
	MaxDuration      time.Duration // 0 = none: start no new unit of work after it
}

// WithDefaults fills the zero limits with their defaults and checks them.
// The error says which limit is wrong; callers wrap it with their own
// invalid-options error.
func (l Limits) WithDefaults() (Limits, error) {
	if l.MaxCommits == 0 {
		l.MaxCommits = DefaultMaxCommits
	}
	if l.MaxFailedCommits == 0 {
		l.MaxFailedCommits = l.MaxCommits
	}
	switch {
	case l.MaxCommits < 0:
		return l, fmt.Errorf("max commits is %d but must be > 0", l.MaxCommits)
	case l.MaxFailedCommits < 0:
		return l, fmt.Errorf("max failed commits is %d but must be >= 0", l.MaxFailedCommits)
	case l.MaxDuration < 0:
		return l, fmt.Errorf("max duration is %s but must be >= 0", l.MaxDuration)
	}
	return l, nil
}

// Fill applies Limits.WithDefaults to a verb's own option fields and
// CommitOptions to its commit options, in place.
func Fill(maxCommits, maxFailedCommits *int, maxDuration time.Duration, c *commit.Options) error {
	l, err := Limits{MaxCommits: *maxCommits, MaxFailedCommits: *maxFailedCommits, MaxDuration: maxDuration}.WithDefaults()
	if err != nil {
		return err
	}
	*maxCommits, *maxFailedCommits = l.MaxCommits, l.MaxFailedCommits
	*c = CommitOptions(*c)
	return nil
}

// CommitOptions gives commit options with no retry settings at all (a
// caller that set none) the defaults of commit.DefaultOptions, keeping
// every other field the caller set (Sleep, Now, Warn). Options with any
// retry setting are the caller's choice and are returned as they are.
func CommitOptions(c commit.Options) commit.Options {
	if c.NumRetries != 0 || c.MinWait != 0 || c.MaxWait != 0 || c.TotalTimeout != 0 {
		return c
	}
	d := commit.DefaultOptions()
	c.NumRetries, c.MinWait, c.MaxWait, c.TotalTimeout = d.NumRetries, d.MinWait, d.MaxWait, d.TotalTimeout
	return c
}

// Outcome is how a batched run ended; the CLI maps each to its exit code.
type Outcome int

// Outcomes of a run.
const (
	Done         Outcome = iota // everything planned was committed, or nothing to do
	Failed                      // an error: nothing more to say than the error
	Usage                       // the options were refused
	Partial                     // some batches committed, some failed
	Conflict                    // a conflict outlasted the retries, or every unit lost one
	StateUnknown                // a commit's outcome is unknown: nothing it may reference was deleted
)

// Run is what the outcome of a finished run depends on: the verb's
// counts from its report and its own sentinel errors.
type Run struct {
	Verb string // in messages: "compaction", "dv merge"
	Unit string // what a run commits in batches: "group", "partition"
	// PartialProgress: the run committed batch by batch.
	PartialProgress bool
	// Reported: a report was printed, so its counts below are known and
	// an error need not repeat what it lists.
	Reported bool
	// Committed, Failed and Dropped count the run's units: Dropped lost to
	// a concurrent commit that removed their inputs.
	Committed, Failed, Dropped int
	FailedCommits              int
	// Left counts the units not started because the run's budget
	// (MaxDuration) ran out: work a rerun continues.
	Left        int
	MaxDuration time.Duration
	// InvalidOptions is the verb's invalid-options error.
	InvalidOptions error
	// UnitsFailed is the verb's error for a run without partial progress
	// that committed nothing because a unit failed.
	UnitsFailed error
}

// Outcome classifies the end of r, whose Execute returned err, and gives
// the error to print (nil for Done).
func (r Run) Outcome(err error) (Outcome, error) {
	switch {
	case err == nil:
		if !r.Reported {
			return Done, nil
		}
		if r.PartialProgress && (r.FailedCommits > 0 || r.Failed > 0) {
			return Partial, fmt.Errorf("%s partly failed: %d %s(s) failed, %d commit(s) failed", r.Verb, r.Failed, r.Unit, r.FailedCommits)
		}
		// Units dropped because a concurrent commit removed their inputs
		// lost a conflict: nothing committed is a conflict, some is partial.
		if r.Dropped > 0 {
			if r.Committed == 0 {
				return Conflict, fmt.Errorf("%s committed nothing: %d %s(s) dropped because concurrent commits removed their inputs", r.Verb, r.Dropped, r.Unit)
			}
			return Partial, fmt.Errorf("%s partly committed: %d %s(s) committed, %d dropped because concurrent commits removed their inputs", r.Verb, r.Committed, r.Unit, r.Dropped)
		}
		if r.Left > 0 && r.MaxDuration > 0 {
			return Partial, fmt.Errorf("%s stopped by its budget (--max-duration %s) with %d %s(s) left; what finished is committed, and running it again continues",
				r.Verb, r.MaxDuration, r.Left, r.Unit)
		}
		return Done, nil
	case errors.Is(err, metastore.ErrCommitStateUnknown):
		return StateUnknown, err
	case errors.Is(err, metastore.ErrCommitConflict):
		return Conflict, err
	case errors.Is(err, ErrTooManyFailedCommits):
		return Partial, err
	case r.InvalidOptions != nil && errors.Is(err, r.InvalidOptions):
		return Usage, err
	case r.UnitsFailed != nil && errors.Is(err, r.UnitsFailed) && r.Reported:
		// The report has printed each unit's failure; the error line does
		// not repeat it.
		return Failed, fmt.Errorf("%s failed: %d %s(s) failed (see the report); nothing was committed "+
			"(use --partial-progress to commit the %ss that succeed)", r.Verb, r.Failed, r.Unit, r.Unit)
	}
	return Failed, err
}
