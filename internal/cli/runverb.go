package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/internal/shared/batchrun"
	"github.com/icectl/icectl/internal/shared/verbrun"
)

// runVerb runs v on t through the verb runner (internal/shared/verbrun),
// the one sequence of every verb that changes a table: planned reading
// only (a refusal returns before the claim, so it writes nothing), a
// dry run or a run with nothing to do unclaimed, else under the table's
// claim (--wait) and planned again if the table moved while it was
// taken. A run with nothing to do still executes, unclaimed, for its
// report (each verb's Execute commits nothing then). The error is the
// claim's, mapped to exit 4 with what to type, or the run's as the verb
// classified it (outcomeExit); the caller renders the result.
func runVerb[P, R any](ctx context.Context, f *Factory, oc *openedCatalog, t *catalog.Table, v verbrun.Verb[P, R], wait string, dryRun bool) (verbrun.Result[P, R], error) {
	o := verbrun.Options{DryRun: dryRun, ExecuteIdle: true}
	if !dryRun {
		co, err := claimOptions(f, oc, v.Name, wait)
		if err != nil {
			return verbrun.Result[P, R]{}, err
		}
		o.Claim = verbrun.Claims{Cat: oc.cat, Options: co}
		o.Load = func(ctx context.Context, id catalog.Ident) (*catalog.Table, error) {
			t, err := oc.cat.LoadTable(ctx, id)
			if err != nil {
				return nil, loadTableError(oc.cfg, err)
			}
			return t, nil
		}
	}
	if plan := v.Plan; f.onPlan != nil {
		v.Plan = func(ctx context.Context, t *catalog.Table) (P, bool, error) {
			f.notePlan(v.Name)
			return plan(ctx, t)
		}
	}
	res := verbrun.Run(ctx, v, t, o)
	if err := claimError(oc, t.Ident, res.Err); err != res.Err {
		return res, err
	}
	return res, outcomeExit(res.Outcome, res.Err)
}

// withClaim runs fn under t's claim through the verb runner, for a verb
// whose plan is its own business: idle, when not nil, is asked first, on
// t read-only, and either refuses the run (its error, returned
// unclaimed), says there is nothing to do (fn then runs unclaimed, and
// commits nothing), or lets fn run under the claim on the table as loaded
// once the claim is held.
func withClaim(ctx context.Context, f *Factory, oc *openedCatalog, t *catalog.Table, verb, wait string, idle idleFunc, fn func(ctx context.Context, t *catalog.Table) error) error {
	v := verbrun.Verb[struct{}, struct{}]{Name: verb,
		Plan: func(ctx context.Context, t *catalog.Table) (struct{}, bool, error) {
			if idle == nil {
				return struct{}{}, false, nil
			}
			ok, err := idle(ctx, t)
			return struct{}{}, ok, err
		},
		Execute: func(ctx context.Context, t *catalog.Table, _ struct{}) (struct{}, error) {
			return struct{}{}, fn(ctx, t)
		},
	}
	_, err := runVerb(ctx, f, oc, t, v, wait, false)
	return err
}

// idleFunc reports that a verb has nothing to do on a table, reading only,
// or refuses the run with an error (returned unclaimed, classified).
type idleFunc func(ctx context.Context, t *catalog.Table) (bool, error)

// claimError maps a claim another run holds, or one lost during the run,
// to exit 4 with what to type; other errors are returned as they are.
func claimError(oc *openedCatalog, id catalog.Ident, err error) error {
	var held *claim.HeldError
	switch {
	case errors.As(err, &held):
		hint := "add --wait 10m to wait for it"
		if held.Waited > 0 {
			hint = "wait longer with a larger --wait"
		}
		return &ExitError{Code: ExitConflict, Err: fmt.Errorf("%w; %s; if that run is gone, the claim lapses at its end, or see `icectl claim show %s`",
			held, hint, id)}
	case errors.Is(err, claim.ErrLost):
		var ee *ExitError
		if !errors.As(err, &ee) {
			return &ExitError{Code: ExitConflict, Err: scrub(oc.cfg, err)}
		}
	}
	return err
}

// outcomeExit maps how a run ended, as its verb classified it
// (batchrun's outcomes), to the process exit code; an error that
// already carries one keeps it.
func outcomeExit(out batchrun.Outcome, err error) error {
	code := ExitFailure
	switch out {
	case batchrun.Done:
		return nil
	case batchrun.Failed:
		return err
	case batchrun.Usage:
		code = ExitUsage
	case batchrun.Partial:
		code = ExitPartial
	case batchrun.Conflict:
		code = ExitConflict
	case batchrun.StateUnknown:
		code = ExitCommitState
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return &ExitError{Code: code, Err: err}
}

// claimWaitUsage is the help of --wait on every verb that takes the claim.
const claimWaitUsage = "if another icectl run holds the table's claim, wait up to this long for it (e.g. 10m; default: fail at once)"

// addClaimWait adds --wait to a verb that takes the table's claim.
func addClaimWait(cmd *cobra.Command, wait *string) {
	cmd.Flags().StringVar(wait, "wait", "", claimWaitUsage)
}

// parseClaimWait parses --wait.
func parseClaimWait(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := parseDuration(s)
	if err != nil || d < 0 {
		return 0, usageErrorf("invalid --wait %q: want a duration like 30s, 10m or 1h", s)
	}
	return d, nil
}

// claimLeaseEnv overrides the claim's lease (claim.DefaultLease): a
// shorter one lets a killed run's claim lapse sooner, at the cost of more
// renewal commits (one per third of the lease).
const claimLeaseEnv = "ICECTL_CLAIM_LEASE"

// claimOptions are the claim options of a command run: its verb, --wait
// and the lease.
func claimOptions(f *Factory, oc *openedCatalog, verb, wait string) (claim.Options, error) {
	d, err := parseClaimWait(wait)
	if err != nil {
		return claim.Options{}, err
	}
	o := claim.Options{Verb: verb, Wait: d, Warn: func(err error) {
		printf(f.ErrOut, "icectl: warning: %v\n", scrub(oc.cfg, err))
	}}
	if v := f.Getenv(claimLeaseEnv); v != "" {
		if o.Lease, err = parseDuration(v); err != nil || o.Lease < time.Second {
			return claim.Options{}, usageErrorf("invalid %s=%q: want a duration of at least 1s, like 10m", claimLeaseEnv, v)
		}
	}
	if f.Getenv(claimPauseEnv) != "" {
		o.Held = func(ctx context.Context, c *claim.Claim) error {
			printf(f.ErrOut, "icectl: test: holding a claim as %s (token %s); paused until interrupted\n", c.Info().Owner, c.Info().Token)
			<-ctx.Done()
			return ctx.Err()
		}
	}
	return o, nil
}

// claimPauseEnv, set, pauses every run once it holds a table's claim,
// after a line on stderr, until it is interrupted or killed: tests use it
// to kill or interrupt a run that holds its claim (docs/testing.md).
const claimPauseEnv = "ICECTL_TEST_PAUSE_CLAIMED"
