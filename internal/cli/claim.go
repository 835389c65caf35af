package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/cli/config"
)

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

// withClaim runs fn holding the claim on t's table (iceberg/claim), so
// that two icectl runs never maintain one table at once. fn gets the
// table as loaded once the claim is held: a run that waited sees what the
// other run did. A claim another run holds is exit 4 (conflict), with
// what to type.
//
// idle, when not nil, is asked first, on t read-only: when it says the
// verb has nothing to do, fn runs on that same t without the claim, so a
// run with nothing to do (a cron job on a healthy table) commits nothing.
// An error from idle is the run's refusal: it is returned as it is, before
// the claim, so a refused run writes nothing.
func withClaim(ctx context.Context, f *Factory, oc *openedCatalog, t *catalog.Table, verb, wait string, idle idleFunc, fn func(ctx context.Context, t *catalog.Table) error) error {
	var pre prePlan[struct{}]
	if idle != nil {
		pre = func(ctx context.Context, t *catalog.Table) (*struct{}, bool, error) {
			ok, err := idle(ctx, t)
			return nil, ok, err
		}
	}
	return withClaimPlan(ctx, f, oc, t, verb, wait, pre, func(ctx context.Context, t *catalog.Table, _ *struct{}) error {
		return fn(ctx, t)
	})
}

// idleFunc reports that a verb has nothing to do on a table, reading only,
// or refuses the run with an error (returned unclaimed, classified).
type idleFunc func(ctx context.Context, t *catalog.Table) (bool, error)

// prePlan plans a verb on a table, reading only: the plan, and whether it
// has nothing to do, or the error that refuses the run (bad options for
// the table, a crafted path, unreadable input), classified for the exit
// code: it is returned before the claim, so a refused run writes nothing.
type prePlan[P any] func(ctx context.Context, t *catalog.Table) (p *P, idle bool, err error)

// withClaimPlan is withClaim for a verb whose pre-check is its plan: the
// plan is made once, on t read-only, and handed to fn, unclaimed when it
// has nothing to do, else under the claim when the table is unchanged
// since (claim.Unchanged: only claims were committed in between, so the
// plan is the one fn would make). When the table changed while the claim
// was awaited or taken (a writer committed, another run maintained it), fn
// gets nil and plans again on the table as it is now. A plan fn does not
// get is closed, when it has a Close method.
func withClaimPlan[P any](ctx context.Context, f *Factory, oc *openedCatalog, t *catalog.Table, verb, wait string, pre prePlan[P], fn func(ctx context.Context, t *catalog.Table, p *P) error) error {
	o, err := claimOptions(f, oc, verb, wait)
	if err != nil {
		return err
	}
	var planned *P
	if pre != nil {
		ro := *t
		ro.IO = fileio.ReadOnly(t.IO)
		p, idle, err := pre(ctx, &ro)
		if err != nil {
			return err
		}
		if idle {
			return fn(ctx, t, p)
		}
		planned = p
	}
	handed := false
	defer func() {
		if c, ok := any(planned).(interface{ Close() error }); ok && !handed {
			c.Close()
		}
	}()
	return claimDo(ctx, oc, t.Ident, o, func(ctx context.Context) error {
		fresh, err := oc.cat.LoadTable(ctx, t.Ident)
		if err != nil {
			return loadTableError(oc.cfg, err)
		}
		if planned != nil && claim.Unchanged(t.Metadata, fresh.Metadata) {
			handed = true
			return fn(ctx, fresh, planned)
		}
		return fn(ctx, fresh, nil)
	})
}

// claimDo runs fn holding the claim on table id, mapping a claim held by
// another run, or lost during fn, to exit 4 with what to type.
func claimDo(ctx context.Context, oc *openedCatalog, id catalog.Ident, o claim.Options, fn func(ctx context.Context) error) error {
	err := claim.Do(ctx, oc.cat, id, o, fn)
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

// replanned is p, or, when the table changed between the pre-check and
// the claim (p nil), plan's plan of t as it is now.
func replanned[P any](ctx context.Context, t *catalog.Table, p *P, plan prePlan[P]) (*P, error) {
	if p != nil {
		return p, nil
	}
	p, _, err := plan(ctx, t)
	return p, err
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
	return o, nil
}

// ClaimOptions are the inputs of `icectl claim show|release`.
type ClaimOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
	Action  string // show or release
	Force   bool
}

// NewCmdClaim returns `icectl claim`: look at and, by force, release the
// claim icectl's maintenance verbs take on a table.
func NewCmdClaim(f *Factory, runF func(*ClaimOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "claim <command>",
		Short: "Show or release the claim that keeps two icectl runs off one table",
		Long: `compact, dv merge, expire, orphan (when it deletes or trashes),
rewrite-manifests, rewrite-position-deletes and maintain claim the table while they work, so two icectl runs (cron,
by hand, on two hosts) never maintain one table at once. The claim is a lease
committed to the table: the tag icectl-claim plus a tag icectl-claim-<token>
on main's head, and the property icectl.claim saying who holds it and until
when. It lasts 30 minutes and is renewed every 10 while the run works; a run
that was killed leaves it until its lease ends, after which the next run
takes it over.`,
	}
	for _, action := range []string{"show", "release"} {
		opts := &ClaimOptions{f: f, Action: action}
		c := &cobra.Command{Use: action + " TABLE", Args: cobra.ExactArgs(1)}
		switch action {
		case "show":
			c.Short = "Show who holds a table's claim and until when"
			c.Long = "Show who holds the table's claim, since and until when. Changes nothing.\n\n" + catalogFlagsHelp
		case "release":
			c.Short = "Remove a table's claim, whoever holds it (--force)"
			c.Long = `Remove the table's claim, whoever holds it: for a claim whose run is gone
and that you do not want to wait out. Needs --force. A run still holding it
finds it lost at its next renewal and stops.

` + catalogFlagsHelp + "\n\n" + exitCodesHelp
			c.Flags().BoolVar(&opts.Force, "force", false, "remove the claim even though another run may hold it")
		}
		c.RunE = func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if opts.Action == "release" && !opts.Force {
				return usageErrorf("claim release removes another run's claim: add --force to confirm (see `icectl claim show %s` first)", opts.Table)
			}
			if runF != nil {
				return runF(opts)
			}
			return runClaim(cmd.Context(), opts)
		}
		addCatalogFlags(c, &opts.Catalog)
		cmd.AddCommand(c)
	}
	return cmd
}

type claimView struct {
	Table   string `json:"table"`
	Claimed bool   `json:"claimed"`
	Owner   string `json:"owner,omitempty"`
	Verb    string `json:"verb,omitempty"`
	Since   string `json:"since,omitempty"`
	Until   string `json:"until,omitempty"`
	Expired bool   `json:"expired"`
	Token   string `json:"token,omitempty"`
	// Released is set by release: whether there was a claim to remove.
	Released *bool `json:"released,omitempty"`
}

func runClaim(ctx context.Context, opts *ClaimOptions) error {
	if isMetadataFile(opts.Table) {
		return usageErrorf("%s is a metadata file: claims live in a catalog; name the table in its catalog", opts.Table)
	}
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	var info *claim.Info
	v := claimView{Table: t.Ident.String()}
	if opts.Action == "release" {
		info, err = claim.ForceRelease(ctx, oc.cat, t.Ident)
		released := info != nil
		v.Released = &released
	} else {
		info, err = claim.Show(ctx, oc.cat, t.Ident)
	}
	if err != nil {
		return scrub(oc.cfg, err)
	}
	if info != nil {
		v.Claimed, v.Owner, v.Verb, v.Token = true, info.Owner, info.Verb, info.Token
		v.Expired = info.Expired(time.Now())
		if !info.Since.IsZero() {
			v.Since = info.Since.UTC().Format(time.RFC3339)
		}
		v.Until = info.Until.UTC().Format(time.RFC3339)
	}
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	w := opts.f.Out
	switch {
	case !v.Claimed && v.Released != nil:
		_, err = printf(w, "%s: no claim to release\n", v.Table)
	case !v.Claimed:
		_, err = printf(w, "%s: not claimed\n", v.Table)
	default:
		state := "held"
		if v.Expired {
			state = "expired (the next run takes it over)"
		}
		if v.Released != nil {
			state = "released"
		}
		tb := newTable(w)
		tb.row("table", v.Table)
		tb.row("claim", state)
		tb.row("owner", orUnknown(v.Owner))
		tb.row("verb", orUnknown(v.Verb))
		tb.row("since", orUnknown(v.Since))
		tb.row("until", v.Until)
		err = tb.flush()
	}
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
