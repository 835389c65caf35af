package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/internal/cli/config"
)

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
when. It lasts 30 minutes and is renewed every 10 while the run works. A run
interrupted (SIGINT, SIGTERM) releases it before it exits; a run that was
killed leaves it: the next run on the same host takes it over at once, as
its holder no longer runs there, and a run on another host once its lease
ends.`,
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
	// HolderGone: the holder ran on this host and no longer runs (see
	// claim.HolderGone); the next run takes the claim over at once.
	HolderGone       bool   `json:"holder_gone"`
	HolderGoneReason string `json:"holder_gone_reason,omitempty"`
	Token            string `json:"token,omitempty"`
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
		if !v.Expired && v.Released == nil {
			v.HolderGoneReason, v.HolderGone = claim.HolderGone(*info, claim.HostProcs())
		}
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
		switch {
		case v.Expired:
			state = "expired (the next run takes it over)"
		case v.HolderGone:
			state = "stale: " + v.HolderGoneReason + " (the next run takes it over)"
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
