package deleterows

import (
	"context"
	"errors"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/batchrun"
	"github.com/icectl/icectl/internal/shared/verbrun"
)

// Verb is delete-rows as the verb runner (internal/shared/verbrun) runs
// it: PlanTable (reading only: an empty or unknown --where or a v1 table
// refuse the run before the claim), Execute, and Outcome. commitFor, when not nil, gives the
// commit options of the table as it is executed; else opts.Commit.
func Verb(cat catalog.Catalog, opts Options, commitFor func(props map[string]string) commit.Options) verbrun.Verb[*Plan, *Report] {
	return verbrun.Verb[*Plan, *Report]{
		Name: "delete-rows",
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
		Outcome: Outcome,
	}
}

// Outcome classifies the end of a run: the one mapping from a report to
// a batch outcome, for the CLI's exit code and maintain's report.
func Outcome(rep *Report, err error) (batchrun.Outcome, error) {
	r := batchrun.Run{Verb: "delete-rows", Unit: "file", InvalidOptions: ErrInvalidOptions}
	if errors.Is(err, ErrConflict) || errors.Is(err, table.ErrNewDeletes) || errors.Is(err, table.ErrFileGone) {
		// Another writer's commit: running again plans on it.
		return batchrun.Conflict, err
	}
	return r.Outcome(err)
}
