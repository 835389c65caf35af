package dvmerge

import (
	"context"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/internal/shared/batchrun"
	"github.com/icectl/icectl/internal/shared/verbrun"
)

// Verb is dv merge as the verb runner (internal/shared/verbrun) runs it
// for the CLI and maintain: PlanTable (reading only: a table that is not
// v3, or options it cannot take, refuse the run before the claim),
// Execute, and Outcome. commitFor, when not nil, gives the commit options
// of the table as it is executed (by its properties); else opts.Commit.
func Verb(cat catalog.Catalog, opts Options, commitFor func(props map[string]string) commit.Options) verbrun.Verb[*Plan, *Report] {
	return verbrun.Verb[*Plan, *Report]{
		Name: opts.verbName(),
		Plan: func(ctx context.Context, t *catalog.Table) (*Plan, bool, error) {
			p, err := PlanTable(ctx, t, opts)
			if err != nil {
				return nil, false, err
			}
			return p, p.Idle(), nil
		},
		Execute: func(ctx context.Context, t *catalog.Table, p *Plan) (*Report, error) {
			o := opts
			if commitFor != nil {
				o.Commit = commitFor(t.Metadata.Properties)
			}
			return Execute(ctx, cat, t, p, o)
		},
		Outcome: func(rep *Report, err error) (verbrun.Outcome, error) { return Outcome(opts, rep, err) },
		Close:   func(p *Plan) { p.Close() },
	}
}

// Idle reports whether p has nothing to merge: no partition and no
// dangling delete.
func (p *Plan) Idle() bool { return len(p.Partitions) == 0 && len(p.Dangling) == 0 }

// Outcome classifies the end of a dv merge run with opts, whose Execute
// (or CommitStaged) returned rep (nil when it did not run) and err: the
// one mapping from a report to a batch outcome, for the CLI's exit code
// and maintain's report. A failed partition's error names the delete file
// at fault, so it is shown as it is (no summary of failed units).
func Outcome(opts Options, rep *Report, err error) (batchrun.Outcome, error) {
	r := batchrun.Run{Verb: opts.verbName(), Unit: "partition", PartialProgress: opts.PartialProgress,
		InvalidOptions: ErrInvalidOptions}
	if rep != nil {
		r.Reported = true
		r.Failed, r.FailedCommits = rep.Failed(), rep.FailedCommits
		r.Left, r.MaxDuration = rep.LeftForNextRun, opts.MaxDuration
	}
	return r.Outcome(err)
}
