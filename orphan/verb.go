package orphan

import (
	"context"
	"errors"
	"fmt"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/internal/shared/batchrun"
	"github.com/icectl/icectl/internal/shared/verbrun"
)

// Verb is orphan as the verb runner (internal/shared/verbrun) runs it for
// the CLI and maintain: PlanRun as its read-only plan (the listing, whose
// report streams to sink; options the table refuses, a prefix mismatch
// and gc.enabled=false refuse the run before the claim; no orphan, or a
// dry run, is nothing to do), and the removal as its execution, on the
// table loaded from cat once more right before it, every orphan checked
// against that version. The plan is not made again when the table moved
// before the claim (Rechecks): storage is listed once. sum, when not nil,
// is set to the run's summary after the plan and after the execution,
// also when either fails once the listing was planned (the report's
// end); it is left alone by a run that stopped before.
func Verb(cat catalog.Catalog, o Options, sink Sink, sum *Summary) verbrun.Verb[*Plan, *Summary] {
	note := func(p *Plan) {
		if p != nil && sum != nil {
			*sum = *p.Summary
		}
	}
	return verbrun.Verb[*Plan, *Summary]{
		Name:     "orphan",
		Rechecks: true,
		Plan: func(ctx context.Context, t *catalog.Table) (*Plan, bool, error) {
			p, err := PlanRun(ctx, t, o, sink)
			note(p)
			if err != nil {
				p.Close()
				return nil, false, err
			}
			return p, p.Idle(), nil
		},
		Execute: func(ctx context.Context, t *catalog.Table, p *Plan) (*Summary, error) {
			if p.Idle() {
				return p.Summary, nil
			}
			t1, err := cat.LoadTable(ctx, t.Ident)
			if err != nil {
				return p.Summary, fmt.Errorf("re-load %s before deleting: %w", t.Ident, err)
			}
			err = p.Execute(ctx, t1)
			note(p)
			return p.Summary, err
		},
		Outcome: Outcome,
		Close:   func(p *Plan) { p.Close() },
	}
}

// Outcome classifies the end of an orphan run by its summary (nil when it
// stopped before listing) and error: an incomplete run that removed some
// orphans is partial.
func Outcome(sum *Summary, err error) (batchrun.Outcome, error) {
	switch {
	case err == nil:
		return batchrun.Done, nil
	case errors.Is(err, ErrInvalidOptions):
		return batchrun.Usage, err
	case errors.Is(err, ErrIncomplete) && sum != nil && sum.Deleted+sum.Trashed > 0:
		return batchrun.Partial, err
	}
	return batchrun.Failed, err
}
