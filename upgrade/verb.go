package upgrade

import (
	"context"
	"errors"
	"fmt"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/shared/batchrun"
	"github.com/icectl/icectl/internal/shared/verbrun"
)

// VerbOptions say what an upgrade run through the verb runner does.
type VerbOptions struct {
	Options
	// Force upgrades although the readiness check finds a blocker the
	// run does not settle.
	Force bool
}

// Refusal is the error of an upgrade that the readiness check refuses:
// the blockers the run would leave in place (Report.Unsettled).
type Refusal struct {
	Table    string
	To       int
	Blockers []Finding
}

func (e *Refusal) Error() string {
	return fmt.Sprintf("refusing to upgrade %s to format v%d: %d blocker(s), the first: %s", e.Table, e.To, len(e.Blockers), e.Blockers[0].Message)
}

// MergeError is the error of a run whose upgrade landed and whose merge
// of deletes (the merge given to Verb) failed.
type MergeError struct {
	Table string
	To    int
	Err   error
}

func (e *MergeError) Error() string {
	return fmt.Sprintf("%s is at format v%d, but merging its deletes failed; run `icectl dv merge %s` to finish: %v", e.Table, e.To, e.Table, e.Err)
}

func (e *MergeError) Unwrap() error { return e.Err }

// VerbResult is what an upgrade run through the verb runner did: the upgrade
// (nil when it failed) and, when the run merged, the merge's report.
type VerbResult[MR any] struct {
	Upgrade *Result
	Merged  MR
	// Merging: the run had a merge to do, and ran it (Merged is its
	// report, zero when it failed before one).
	Merging bool
}

// Verb is upgrade as the verb runner (internal/shared/verbrun) runs it:
// its read-only plan is the target check and, unless o.Force, the
// readiness check (Preflight), which refuses before the claim an upgrade
// with a blocker the run does not settle (*Refusal); a table already at
// the target, with its row ids given when asked and nothing to merge, is
// idle. Execute upgrades and then, when merge is not nil, runs merge (dv
// merge, which the command layer hands in, so that no verb package drives
// another) on the table as the upgrade left it; a merge that fails is a
// *MergeError, classified by merge's Outcome. commitFor, when not nil,
// gives the commit options of the table as it is executed.
func Verb[MP, MR any](cat catalog.Catalog, o VerbOptions, merge *verbrun.Verb[MP, MR], commitFor func(props map[string]string) commit.Options) verbrun.Verb[struct{}, *VerbResult[MR]] {
	return verbrun.Verb[struct{}, *VerbResult[MR]]{
		Name: "upgrade",
		Plan: func(ctx context.Context, t *catalog.Table) (struct{}, bool, error) {
			idle, err := plan(ctx, t, o, merge)
			return struct{}{}, idle, err
		},
		Execute: func(ctx context.Context, t *catalog.Table, _ struct{}) (*VerbResult[MR], error) {
			uo := o.Options
			if commitFor != nil {
				uo.Commit = commitFor(t.Metadata.Properties)
			}
			res, err := Run(ctx, cat, t, uo)
			if err != nil {
				return nil, err
			}
			rep := &VerbResult[MR]{Upgrade: res}
			if merge == nil {
				return rep, nil
			}
			rep.Merging = true
			if rep.Merged, err = mergeAfter(ctx, cat, t.Ident, merge); err != nil {
				return rep, &MergeError{Table: res.Table, To: res.To, Err: err}
			}
			return rep, nil
		},
		Outcome: func(rep *VerbResult[MR], err error) (verbrun.Outcome, error) {
			var me *MergeError
			if errors.As(err, &me) && merge.Outcome != nil {
				out, _ := merge.Outcome(rep.Merged, me.Err)
				return out, err
			}
			return Outcome(err)
		},
	}
}

// plan is Verb's read-only plan: whether the run has nothing to commit,
// or the error that refuses it.
func plan[MP, MR any](ctx context.Context, t *catalog.Table, o VerbOptions, merge *verbrun.Verb[MP, MR]) (idle bool, err error) {
	if err := CheckTarget(t.Metadata.FormatVersion, o.To); err != nil {
		return false, fmt.Errorf("table %s: %w", t.Ident, err)
	}
	var r Report
	if !o.Force || (o.AssignRowIDs && o.To >= 3) {
		if r, err = Preflight(ctx, t, o.To); err != nil {
			return false, err
		}
	}
	rowIDs := o.AssignRowIDs && o.To >= 3 && r.UnassignedManifests > 0
	if !o.Force && (t.Metadata.FormatVersion < o.To || rowIDs) {
		if bs := r.Unsettled(merge != nil); len(bs) > 0 {
			return false, &Refusal{Table: t.Ident.String(), To: o.To, Blockers: bs}
		}
	}
	if t.Metadata.FormatVersion != o.To || rowIDs {
		return false, nil
	}
	if merge == nil {
		return true, nil
	}
	p, idle, err := merge.Plan(ctx, t)
	if err == nil && merge.Close != nil {
		merge.Close(p)
	}
	return idle, err
}

// mergeAfter runs merge on the table as the upgrade left it, reloaded so
// that the merge plans from the new metadata.
func mergeAfter[MP, MR any](ctx context.Context, cat catalog.Catalog, id catalog.Ident, merge *verbrun.Verb[MP, MR]) (MR, error) {
	var zero MR
	t, err := cat.LoadTable(ctx, id)
	if err != nil {
		return zero, fmt.Errorf("reload after the upgrade: %w", err)
	}
	p, _, err := merge.Plan(ctx, verbrun.ReadOnly(t))
	if err != nil {
		return zero, err
	}
	if merge.Close != nil {
		defer merge.Close(p)
	}
	return merge.Execute(ctx, t, p)
}

// Outcome classifies the end of an upgrade by its error.
func Outcome(err error) (batchrun.Outcome, error) {
	switch {
	case err == nil:
		return batchrun.Done, nil
	case errors.Is(err, ErrBadTarget):
		return batchrun.Usage, err
	case errors.Is(err, catalog.ErrCommitStateUnknown):
		return batchrun.StateUnknown, err
	case errors.Is(err, catalog.ErrCommitConflict), errors.Is(err, spec.ErrRequirementFailed):
		return batchrun.Conflict, err
	}
	return batchrun.Failed, err
}
