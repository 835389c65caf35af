package rewriteposdeletes

import (
	"context"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/internal/shared/verbrun"
)

// Verb is rewrite-position-deletes as the verb runner
// (internal/shared/verbrun) runs it for the CLI and maintain: PlanRewrite
// (reading only), nothing to do when no partition has enough small files
// and none is dangling, Execute. commitFor, when not nil, gives the
// commit options of the table as it is executed (by its properties);
// else opts.Commit.
func Verb(cat catalog.Catalog, opts Options, commitFor func(props map[string]string) commit.Options) verbrun.Verb[Plan, *Result] {
	return verbrun.Verb[Plan, *Result]{
		Name: "rewrite-position-deletes",
		Plan: func(ctx context.Context, t *catalog.Table) (Plan, bool, error) {
			p, err := PlanRewrite(ctx, t, opts)
			return p, err == nil && !p.Worthwhile(), err
		},
		Execute: func(ctx context.Context, t *catalog.Table, p Plan) (*Result, error) {
			o := opts
			if commitFor != nil {
				o.Commit = commitFor(t.Metadata.Properties)
			}
			return Execute(ctx, cat, t, p, o)
		},
	}
}
