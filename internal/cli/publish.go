package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/cherrypick"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
	icetable "github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/refs"
)

// CherrypickOptions are the inputs of `icectl cherrypick`.
type CherrypickOptions struct {
	f          *Factory
	Catalog    config.Flags
	Table      string
	SnapshotID int64
	DryRun     bool
}

// NewCmdCherrypick returns `icectl cherrypick`. runF replaces the run
// function in tests; nil runs the command.
func NewCmdCherrypick(f *Factory, runF func(*CherrypickOptions) error) *cobra.Command {
	opts := &CherrypickOptions{f: f}
	var snapshot string
	cmd := &cobra.Command{
		Use:   "cherrypick TABLE --snapshot ID",
		Short: "Publish a staged or branch snapshot onto main (write-audit-publish)",
		Long: `Publish snapshot --snapshot onto main, as Spark's cherrypick_snapshot does:
a snapshot whose parent is main's head becomes main's head (fast-forward); an
append, or a dynamic overwrite (replace-partitions) whose partitions no commit
changed since, is committed again on main as a new snapshot that adds (and
removes) the same data files, with source-snapshot-id and, for a staged
write-audit-publish snapshot, published-wap-id in its summary. Anything else,
a snapshot already in main's history or already picked, and a wap.id main
already published are refused. In v3 the picked rows get new row ids.
--dry-run shows what it would do and changes nothing.

` + exitCodesHelp + "\n\n" + catalogFlagsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			id, err := strconv.ParseInt(strings.TrimSpace(snapshot), 10, 64)
			if err != nil {
				return usageErrorf("invalid --snapshot %q: want a snapshot id", snapshot)
			}
			opts.SnapshotID = id
			if runF != nil {
				return runF(opts)
			}
			return runCherrypick(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&snapshot, "snapshot", "", "the snapshot to publish (required)")
	cmd.MarkFlagRequired("snapshot")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "show what would be published and change nothing")
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

type cherrypickView struct {
	Table             string `json:"table"`
	SourceSnapshotID  int64  `json:"source_snapshot_id"`
	Kind              string `json:"kind"`
	PublishedWapID    string `json:"published_wap_id,omitempty"`
	AddedDataFiles    int    `json:"added_data_files"`
	RemovedDataFiles  int    `json:"removed_data_files"`
	DryRun            bool   `json:"dry_run"`
	Committed         bool   `json:"committed"`
	CurrentSnapshotID *int64 `json:"current_snapshot_id"`
	MetadataLocation  string `json:"metadata_location"`
}

func runCherrypick(ctx context.Context, opts *CherrypickOptions) error {
	if isMetadataFile(opts.Table) && !opts.DryRun {
		return refuseMetadataFile(opts.Table, "publish to it", true)
	}
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	p, err := cherrypick.PlanPick(ctx, fileio.ReadOnly(t.IO), t.Metadata, opts.SnapshotID)
	if err != nil {
		return fmt.Errorf("cherrypick %d onto %s: %w", opts.SnapshotID, t.Ident, scrub(oc.cfg, err))
	}
	v := cherrypickView{Table: t.Ident.String(), SourceSnapshotID: opts.SnapshotID, Kind: string(p.Kind), PublishedWapID: p.WapID,
		AddedDataFiles: len(p.Added), RemovedDataFiles: len(p.Removed), DryRun: opts.DryRun,
		CurrentSnapshotID: t.Metadata.CurrentSnapshotID, MetadataLocation: t.MetadataLocation}
	if !opts.DryRun {
		res, err := cherrypick.Commit(ctx, oc.cat, t, p, opts.f.CommitOptions(t.Metadata.Properties))
		if err != nil {
			return publishError(scrub(oc.cfg, err), t.Ident, fmt.Sprintf("cherrypick %d", opts.SnapshotID))
		}
		v.Committed, v.CurrentSnapshotID, v.MetadataLocation = true, res.Metadata.CurrentSnapshotID, res.MetadataLocation
	}
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	w := opts.f.Out
	switch {
	case v.DryRun:
		printf(w, "%s: dry run, nothing changed; snapshot %d would be published by %s\n", v.Table, v.SourceSnapshotID, v.Kind)
	default:
		printf(w, "%s: published snapshot %d by %s; main is at snapshot %s (%s)\n", v.Table, v.SourceSnapshotID, v.Kind, optInt64(v.CurrentSnapshotID), v.MetadataLocation)
	}
	tb := newTable(w)
	tb.row("  added data files", v.AddedDataFiles)
	tb.row("  removed data files", v.RemovedDataFiles)
	if v.PublishedWapID != "" {
		tb.row("  published wap.id", v.PublishedWapID)
	}
	return tb.flush()
}

// publishError gives a failed cherrypick or fast-forward its exit code.
func publishError(err error, id catalog.Ident, what string) error {
	switch {
	case errors.Is(err, cherrypick.ErrRefused), errors.Is(err, refs.ErrInvalid):
		return fmt.Errorf("%s onto %s: %w", what, id, err)
	case errors.Is(err, catalog.ErrCommitStateUnknown):
		return &ExitError{Code: ExitCommitState, Err: fmt.Errorf("%s onto %s: commit state unknown; check the table with `icectl snapshots %s`: %w", what, id, id, err)}
	case errors.Is(err, catalog.ErrCommitConflict), errors.Is(err, spec.ErrRequirementFailed):
		return &ExitError{Code: ExitConflict, Err: fmt.Errorf("%s onto %s: commit conflict, nothing changed: %w", what, id, err)}
	}
	return fmt.Errorf("%s onto %s: %w", what, id, err)
}

// FastForwardOptions are the inputs of `icectl fast-forward`.
type FastForwardOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
	Branch  string
	To      string
	DryRun  bool
}

// NewCmdFastForward returns `icectl fast-forward`.
func NewCmdFastForward(f *Factory, runF func(*FastForwardOptions) error) *cobra.Command {
	opts := &FastForwardOptions{f: f}
	cmd := &cobra.Command{
		Use:   "fast-forward TABLE --branch B --to REF",
		Short: "Move a branch to the head of another ref, when that only adds snapshots",
		Long: `Move --branch to the head of --to (a branch or a tag), as Spark's
fast_forward does: only when --branch's head is an ancestor of --to's head,
so the branch loses no snapshot. Publishing an audited branch is
"fast-forward T --branch main --to audit". A --branch that does not exist is
created at --to's head. A branch already there is left as it is (exit 0).
--dry-run shows the refs it would leave and changes nothing.

` + exitCodesHelp + "\n\n" + catalogFlagsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if strings.TrimSpace(opts.Branch) == "" || strings.TrimSpace(opts.To) == "" {
				return usageErrorf("give --branch and --to")
			}
			if opts.Branch == opts.To {
				return usageErrorf("--branch and --to are both %s", opts.Branch)
			}
			if runF != nil {
				return runF(opts)
			}
			return runFastForward(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Branch, "branch", "", "the branch to move (required)")
	cmd.Flags().StringVar(&opts.To, "to", "", "the branch or tag whose head it moves to (required)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "show the refs it would leave and change nothing")
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

type fastForwardView struct {
	Table            string        `json:"table"`
	BranchUpdated    string        `json:"branch_updated"`
	PreviousRef      *int64        `json:"previous_ref"`
	UpdatedRef       *int64        `json:"updated_ref"`
	DryRun           bool          `json:"dry_run"`
	Committed        bool          `json:"committed"`
	MetadataLocation string        `json:"metadata_location"`
	Refs             []refListView `json:"refs"`
}

func runFastForward(ctx context.Context, opts *FastForwardOptions) error {
	if isMetadataFile(opts.Table) && !opts.DryRun {
		return refuseMetadataFile(opts.Table, "move its branches", true)
	}
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	what := fmt.Sprintf("fast-forward %s to %s", opts.Branch, opts.To)
	v := fastForwardView{Table: t.Ident.String(), BranchUpdated: opts.Branch, DryRun: opts.DryRun, MetadataLocation: t.MetadataLocation}
	v.PreviousRef = refHead(t.Metadata, opts.Branch)
	ch := refs.FastForward(opts.Branch, opts.To)
	md := t.Metadata
	var res *catalog.Table
	if opts.DryRun {
		md, err = dryRunRefChange(t.Metadata, ch)
	} else if res, err = refs.Commit(ctx, oc.cat, t, ch, opts.f.CommitOptions(t.Metadata.Properties)); err == nil {
		v.Committed, v.MetadataLocation, md = true, res.MetadataLocation, res.Metadata
	}
	switch {
	case errors.Is(err, refs.ErrNothingToDo):
		md = t.Metadata
		if cur, lerr := oc.cat.LoadTable(ctx, t.Ident); lerr == nil && !opts.DryRun {
			md, v.MetadataLocation = cur.Metadata, cur.MetadataLocation
		}
		printf(opts.f.ErrOut, "%s: %s is already at %s, the head of %s; nothing changed\n", t.Ident, opts.Branch, optInt64(refHead(md, opts.Branch)), opts.To)
	case err != nil:
		return publishError(scrub(oc.cfg, err), t.Ident, what)
	}
	v.UpdatedRef = refHead(md, opts.Branch)
	v.Refs = refViews(md, "")
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	w := opts.f.Out
	switch {
	case v.DryRun:
		printf(w, "%s: dry run, nothing changed; %s would move from %s to %s\n", v.Table, v.BranchUpdated, optInt64(v.PreviousRef), optInt64(v.UpdatedRef))
	case v.Committed:
		printf(w, "%s: %s moved from %s to %s (%s)\n", v.Table, v.BranchUpdated, optInt64(v.PreviousRef), optInt64(v.UpdatedRef), v.MetadataLocation)
	default:
		printf(w, "%s: %s is at %s\n", v.Table, v.BranchUpdated, optInt64(v.UpdatedRef))
	}
	return nil
}

// refHead is the snapshot branch points at, nil when there is none.
func refHead(md *spec.TableMetadata, branch string) *int64 {
	s, err := icetable.BranchHead(md, branch)
	if err != nil || s == nil {
		return nil
	}
	id := s.SnapshotID
	return &id
}
