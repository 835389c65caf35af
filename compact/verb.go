package compact

import (
	"context"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/internal/shared/batchrun"
	"github.com/icectl/icectl/internal/shared/verbrun"
	"github.com/icectl/icectl/plan"
)

// Verb is compaction as the verb runner (internal/shared/verbrun) runs it
// for the CLI and maintain: the plan (PlanTable, then CheckInputs, both
// reading only, so every refusal comes before the claim), Execute, and
// Outcome. commitFor, when not nil, gives the commit options of the
// table as it is executed (by its properties); else opts.Commit.
func Verb(cat catalog.Catalog, opts Options, commitFor func(props map[string]string) commit.Options) verbrun.Verb[*plan.Plan, *Report] {
	return verbrun.Verb[*plan.Plan, *Report]{
		Name: "compact",
		Plan: func(ctx context.Context, t *catalog.Table) (*plan.Plan, bool, error) {
			p, err := PlanTable(ctx, t, opts)
			if err != nil {
				return nil, false, err
			}
			if len(p.Groups) == 0 {
				return p, true, nil
			}
			if err := CheckInputs(ctx, t, p); err != nil {
				return nil, false, err
			}
			return p, false, nil
		},
		Execute: func(ctx context.Context, t *catalog.Table, p *plan.Plan) (*Report, error) {
			o := opts
			if commitFor != nil {
				o.Commit = commitFor(t.Metadata.Properties)
			}
			return Execute(ctx, cat, t, p, o)
		},
		Outcome: func(rep *Report, err error) (verbrun.Outcome, error) { return Outcome(opts, rep, err) },
	}
}

// Outcome classifies the end of a compaction run with opts, whose Execute
// returned rep (nil when it did not run) and err: the one mapping from a
// report to a batch outcome, for the CLI's exit code and maintain's
// report.
func Outcome(opts Options, rep *Report, err error) (batchrun.Outcome, error) {
	r := batchrun.Run{Verb: "compaction", Unit: "group", PartialProgress: opts.PartialProgress,
		InvalidOptions: ErrInvalidOptions, UnitsFailed: ErrGroupsFailed}
	if rep != nil {
		r.Reported = true
		r.Committed, r.Failed, r.Dropped, r.FailedCommits = rep.Committed(), rep.Failed(), rep.Dropped(), rep.FailedCommits
		r.Left, r.MaxDuration = rep.LeftForNextRun, opts.MaxDuration
	}
	return r.Outcome(err)
}
