package expire

import (
	"context"
	"errors"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/internal/shared/batchrun"
	"github.com/icectl/icectl/internal/shared/verbrun"
)

// Verb is expire as the verb runner (internal/shared/verbrun) runs it for
// the CLI and maintain: Idle as its read-only plan (nothing to expire and
// no interrupted expiry to finish; options the table refuses, or
// gc.enabled=false, refuse the run before the claim), Run as its
// execution, which plans again on the table it is given, and Outcome.
// commitFor, when not nil, gives the commit options of the table as it
// is executed (by its properties); else opts.Commit.
func Verb(cat catalog.Catalog, opts Options, commitFor func(props map[string]string) commit.Options) verbrun.Verb[struct{}, *Report] {
	return verbrun.Verb[struct{}, *Report]{
		Name: "expire",
		Plan: func(ctx context.Context, t *catalog.Table) (struct{}, bool, error) {
			idle, err := Idle(ctx, t, opts)
			return struct{}{}, idle, err
		},
		Execute: func(ctx context.Context, t *catalog.Table, _ struct{}) (*Report, error) {
			o := opts
			if commitFor != nil {
				o.Commit = commitFor(t.Metadata.Properties)
			}
			return Run(ctx, cat, t, o)
		},
		Outcome: func(_ *Report, err error) (verbrun.Outcome, error) { return Outcome(err) },
	}
}

// Outcome classifies the end of an expire run by its error.
func Outcome(err error) (batchrun.Outcome, error) {
	switch {
	case err == nil:
		return batchrun.Done, nil
	case errors.Is(err, metastore.ErrCommitStateUnknown):
		return batchrun.StateUnknown, err
	case errors.Is(err, metastore.ErrCommitConflict):
		return batchrun.Conflict, err
	case errors.Is(err, ErrInvalidOptions):
		return batchrun.Usage, err
	}
	return batchrun.Failed, err
}
