package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	icetable "github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/rewriteposdeletes"
)

// RewritePositionDeletesOptions are the inputs of `icectl
// rewrite-position-deletes`.
type RewritePositionDeletesOptions struct {
	f             *Factory
	Catalog       config.Flags
	Table         string
	TargetSize    string
	MinInputFiles int
	DryRun        bool
	// Wait is --wait: how long to wait for another run's claim.
	Wait string
}

// NewCmdRewritePositionDeletes returns `icectl rewrite-position-deletes`.
// runF replaces the run function in tests; nil runs the command.
func NewCmdRewritePositionDeletes(f *Factory, runF func(*RewritePositionDeletesOptions) error) *cobra.Command {
	opts := &RewritePositionDeletesOptions{f: f}
	cmd := &cobra.Command{
		Use:   "rewrite-position-deletes TABLE",
		Short: "Merge a v2 table's small position-delete files per partition and drop dangling ones",
		Long: `Merge the small position-delete files of each partition of a format v2
table into files of about write.delete.target-file-size-bytes (64 MiB unless
set; --target-size overrides it), as Spark's rewrite_position_delete_files
does, and commit the result as a "replace" snapshot. A partition is rewritten
when it has at least --min-input-files (5) files smaller than the target.
Positions of data files that are gone, and delete files that apply to no live
data file, are dropped. Each new file applies to exactly the data files its
inputs applied to (it carries their largest data sequence number), so the
rows readers see are unchanged. Format v3 tables keep position deletes in
deletion vectors: use ` + "`icectl dv merge`" + ` on them.

--dry-run prints the plan and changes nothing.

` + exitCodesHelp + "\n\n" + catalogFlagsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if opts.TargetSize != "" {
				n, err := bytesize.Parse(opts.TargetSize)
				if err != nil || n <= 0 {
					return usageErrorf("invalid --target-size %q: want a positive size such as 64MiB", opts.TargetSize)
				}
			}
			if opts.MinInputFiles < 1 {
				return usageErrorf("invalid --min-input-files %d: want 1 or more", opts.MinInputFiles)
			}
			if runF != nil {
				return runF(opts)
			}
			return runRewritePositionDeletes(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.TargetSize, "target-size", "", "delete file size to aim for (default: write.delete.target-file-size-bytes, 64MiB)")
	fs.IntVar(&opts.MinInputFiles, "min-input-files", rewriteposdeletes.DefaultMinInputFiles, "rewrite a partition with at least this many small position-delete files")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "print the plan and change nothing")
	addClaimWait(cmd, &opts.Wait)
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

func runRewritePositionDeletes(ctx context.Context, opts *RewritePositionDeletesOptions) error {
	if isMetadataFile(opts.Table) && !opts.DryRun {
		return refuseMetadataFile(opts.Table, "rewrite its position deletes", true)
	}
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	if t.Metadata.FormatVersion >= 3 {
		return usageErrorf("%s is a format v%d table, whose position deletes belong in deletion vectors: run `icectl dv merge %s` instead", t.Ident, t.Metadata.FormatVersion, t.Ident)
	}
	ro := rewriteposdeletes.Options{MinInputFiles: opts.MinInputFiles, Commit: opts.f.CommitOptions(t.Metadata.Properties)}
	if opts.TargetSize != "" {
		ro.TargetSize, _ = bytesize.Parse(opts.TargetSize)
	}
	res, err := runVerb(ctx, opts.f, oc, t, rewriteposdeletes.Verb(oc.cat, ro, opts.f.CommitOptions), opts.Wait, opts.DryRun)
	switch {
	case err != nil:
		return rewritePositionDeletesExit(oc.cfg, t.Ident, err)
	case opts.DryRun:
		return writeRewritePositionDeletes(opts.f, &rewriteposdeletes.Result{Plan: res.Plan, MetadataLocation: t.MetadataLocation}, true)
	}
	return writeRewritePositionDeletes(opts.f, res.Report, false)
}

func rewritePositionDeletesExit(cfg *config.Catalog, id catalog.Ident, err error) error {
	if errors.Is(err, icetable.ErrFileGone) {
		return &ExitError{Code: ExitConflict, Err: fmt.Errorf("commit conflict: another commit removed files the rewrite of %s replaces; nothing was committed; run it again: %w", id, scrub(cfg, err))}
	}
	return rewriteExit(cfg, id, err, "may or may not have its position deletes rewritten", "the position deletes of %s were not rewritten")
}

type rewritePositionDeletesView struct {
	*rewriteposdeletes.Result
	DryRun        bool   `json:"dry_run"`
	NewSnapshotID *int64 `json:"new_snapshot_id"`
}

func writeRewritePositionDeletes(f *Factory, res *rewriteposdeletes.Result, dryRun bool) error {
	v := rewritePositionDeletesView{Result: res, DryRun: dryRun}
	if res.Snapshot != nil {
		id := res.Snapshot.SnapshotID
		v.NewSnapshotID = &id
	}
	if f.Output == outputJSON {
		return writeJSON(f.Out, v)
	}
	w := f.Out
	switch {
	case res.Committed:
		fmt.Fprintf(w, "%s: rewrote %d position-delete files into %d, dropped %d dangling (%s)\n", res.Table, res.Rewritten, res.Added, len(res.Dangling), res.MetadataLocation)
	case !res.Worthwhile():
		fmt.Fprintf(w, "%s: nothing to rewrite: no partition has %d small position-delete files and none is dangling\n", res.Table, res.MinInputFiles)
	default:
		fmt.Fprintf(w, "%s: dry run: would rewrite %d position-delete files in %d partitions and drop %d dangling\n", res.Table, res.Rewritten, len(res.Groups), len(res.Dangling))
	}
	t := newTable(w)
	t.row("  snapshot", optInt64(res.SnapshotID))
	t.row("  position-delete files", res.PositionDeleteFiles)
	t.row("  target size", bytesize.Format(res.TargetSize))
	for _, g := range res.Groups {
		name := g.Partition
		if name == "" {
			name = "(unpartitioned)"
		}
		t.row("  partition "+name, fmt.Sprintf("%d files, %s -> at most %d", g.Files, bytesize.Format(g.Bytes), g.Outputs))
	}
	if res.Committed {
		t.row("  positions written", res.Positions)
	}
	if v.NewSnapshotID != nil {
		t.row("  new snapshot", *v.NewSnapshotID)
	}
	return t.flush()
}
