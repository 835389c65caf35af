// Package verbrun runs a maintenance verb on a table the one way every
// caller does (the CLI's verbs and maintain): load the table; plan
// reading only, which also refuses bad input and says "nothing to do";
// refuse, or stop with nothing to do, before anything is written; take
// the table's claim; plan again if the table moved while it was taken;
// execute; classify the outcome. A refusal is decided before the claim by
// construction, so a refused run writes nothing.
//
// A verb describes itself to the runner with one Verb value (its
// package's Verb function), in the manner of iceberg-rust's
// TransactionAction: a read-only plan, its execution, and how its result
// maps to an outcome. The CLI keeps flags, views and rendering; maintain
// keeps the fleet.
package verbrun

import (
	"context"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/internal/shared/batchrun"
)

// Outcome is how a run ended; batchrun's outcomes, which every verb
// shares.
type Outcome = batchrun.Outcome

// Verb describes one maintenance verb to the runner. P is its plan, R
// what its execution reports.
type Verb[P, R any] struct {
	// Name is the verb as a claim records it ("compact", "dv merge").
	Name string
	// Plan plans the verb on t, reading only (t's IO refuses every
	// write): the plan and whether it has nothing to do, or the error that
	// refuses the run (options the table cannot take, a format version
	// the verb does not work on, a crafted path, input no reader can
	// read).
	Plan func(ctx context.Context, t *catalog.Table) (p P, idle bool, err error)
	// Execute carries out p, a plan of t as it is, on t (loaded under the
	// claim when the run takes one).
	Execute func(ctx context.Context, t *catalog.Table, p P) (R, error)
	// Outcome classifies the end of a run: the report (zero when Execute
	// did not run) and the error of Plan or Execute. It returns the
	// error to show, nil when the outcome needs none. Nil: Done on no
	// error, else Failed.
	Outcome func(r R, err error) (Outcome, error)
	// Close releases a plan (nil: there is nothing to release).
	Close func(p P)
	// Rechecks: Execute checks its plan against the table it works on
	// itself (orphan re-checks every file against the table loaded right
	// before it deletes), so a table that moved before the claim is not
	// planned again: the plan (a storage listing) is made once, and its
	// report is not given twice.
	Rechecks bool
}

// Claimer runs fn holding table id's claim (iceberg/claim).
type Claimer interface {
	Do(ctx context.Context, id metastore.Ident, fn func(ctx context.Context) error) error
}

// Claims takes claims through a catalog with the given options.
type Claims struct {
	Cat     metastore.Committer
	Options claim.Options
}

// Do runs fn holding id's claim.
func (c Claims) Do(ctx context.Context, id metastore.Ident, fn func(ctx context.Context) error) error {
	return claim.Do(ctx, c.Cat, id, c.Options, fn)
}

// Options configure Run.
type Options struct {
	// DryRun plans only: the result holds the plan (the caller renders
	// and closes it) and nothing is claimed or executed.
	DryRun bool
	// Claim takes the table's claim around the execution; nil takes none
	// (the caller holds the table, as maintain does for all its verbs).
	Claim Claimer
	// Load loads the table as it is once the claim is held (a run that
	// waited sees what the other run did). Needed with Claim.
	Load func(ctx context.Context, id metastore.Ident) (*catalog.Table, error)
	// ExecuteIdle runs Execute on a plan with nothing to do as well,
	// unclaimed, for its report ("nothing to compact"): a Verb's Execute
	// commits nothing for such a plan.
	ExecuteIdle bool
}

// Result is what Run did.
type Result[P, R any] struct {
	// Plan is the plan the run executed, or, for a dry run or a run with
	// nothing to do, the one it made. Run closes a plan it executed or
	// dropped; a dry run's or an idle run's is the caller's to close.
	Plan    P
	Planned bool
	// Idle: nothing to do; nothing was claimed, nor executed unless
	// Options.ExecuteIdle.
	Idle bool
	// Executed: Execute ran and Report is its report.
	Executed bool
	Report   R
	// Table is the table the run worked on: as loaded under the claim
	// when it took one.
	Table *catalog.Table
	// Outcome and Err classify the end of the run (Verb.Outcome); Err is
	// also a failure to take the claim (claim.HeldError, claim.ErrLost),
	// as the claim returned it.
	Outcome Outcome
	Err     error
}

// ReadOnly is t with an IO that refuses every write: what a plan, and
// every dry run, reads the table through.
func ReadOnly(t *catalog.Table) *catalog.Table {
	ro := *t
	ro.IO = fileio.ReadOnly(t.IO)
	return &ro
}

// Run runs v on t, which the caller loaded, in the order the package doc
// gives.
func Run[P, R any](ctx context.Context, v Verb[P, R], t *catalog.Table, o Options) Result[P, R] {
	res := Result[P, R]{Table: t}
	p, idle, err := v.Plan(ctx, ReadOnly(t))
	if err != nil {
		return res.end(v, err)
	}
	res.Plan, res.Planned, res.Idle = p, true, idle
	if o.DryRun {
		return res
	}
	if idle {
		if o.ExecuteIdle {
			return res.execute(ctx, v, t)
		}
		return res
	}
	if o.Claim == nil {
		return res.execute(ctx, v, t)
	}
	// The plan is handed to the execution when only claims were committed
	// between it and the claim (claim.Unchanged): it is the plan the
	// execution would make. Else the table moved (a writer committed,
	// another run maintained it) and it is planned again as it is now.
	err = o.Claim.Do(ctx, t.Ident, func(ctx context.Context) error {
		fresh, err := o.Load(ctx, t.Ident)
		if err != nil {
			return err
		}
		res.Table = fresh
		if !v.Rechecks && !claim.Unchanged(t.Metadata, fresh.Metadata) {
			res.close(v)
			p, idle, err := v.Plan(ctx, ReadOnly(fresh))
			if err != nil {
				return err
			}
			res.Plan, res.Planned, res.Idle = p, true, idle
			if idle && !o.ExecuteIdle {
				return nil
			}
		}
		res = res.execute(ctx, v, fresh)
		return nil
	})
	if err != nil {
		res.close(v)
		return res.end(v, err)
	}
	return res
}

// execute runs the plan, closes it and classifies the end.
func (res Result[P, R]) execute(ctx context.Context, v Verb[P, R], t *catalog.Table) Result[P, R] {
	res.Report, res.Err = v.Execute(ctx, t, res.Plan)
	res.Executed = true
	res.close(v)
	return res.end(v, res.Err)
}

// close releases the plan, once.
func (res *Result[P, R]) close(v Verb[P, R]) {
	if res.Planned && v.Close != nil {
		v.Close(res.Plan)
	}
	var zero P
	res.Plan, res.Planned = zero, false
}

func (res Result[P, R]) end(v Verb[P, R], err error) Result[P, R] {
	if v.Outcome != nil {
		res.Outcome, res.Err = v.Outcome(res.Report, err)
		return res
	}
	res.Outcome, res.Err = batchrun.Done, err
	if err != nil {
		res.Outcome = batchrun.Failed
	}
	return res
}
