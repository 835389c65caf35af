package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/plan/where"
	"github.com/icectl/icectl/rewritemanifests"
)

// RewriteManifestsOptions are the inputs of `icectl rewrite-manifests`.
type RewriteManifestsOptions struct {
	f          *Factory
	Catalog    config.Flags
	Table      string
	SpecID     int32
	hasSpecID  bool
	Where      string
	TargetSize string
	DryRun     bool
	// Wait is --wait: how long to wait for another run's claim.
	Wait string
}

// NewCmdRewriteManifests returns `icectl rewrite-manifests`. runF replaces
// the run function in tests; nil runs the command.
func NewCmdRewriteManifests(f *Factory, runF func(*RewriteManifestsOptions) error) *cobra.Command {
	opts := &RewriteManifestsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "rewrite-manifests TABLE",
		Short: "Regroup the current snapshot's data manifests to the target size, clustered by partition",
		Long: `Rewrite the data manifests of the table's current snapshot into manifests of
about commit.manifest.target-size-bytes (8 MiB unless set; --target-size
overrides it), their entries sorted by partition, and commit the result as a
"replace" snapshot. No data or delete file is touched; every entry keeps its
sequence numbers and, in v3, its first_row_id, so rows and lineage are
unchanged. Nothing is committed when the rewrite would not reduce the
manifest count.

--spec-id limits the rewrite to manifests of one partition spec; --where to
manifests holding a file whose partition matches (partition columns only).
--dry-run prints the plan and changes nothing.

` + exitCodesHelp + "\n\n" + catalogFlagsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			opts.hasSpecID = cmd.Flags().Changed("spec-id")
			if opts.hasSpecID && opts.SpecID < 0 {
				return usageErrorf("invalid --spec-id %d", opts.SpecID)
			}
			if opts.TargetSize != "" {
				n, err := bytesize.Parse(opts.TargetSize)
				if err != nil || n <= 0 {
					return usageErrorf("invalid --target-size %q: want a positive size such as 8MiB", opts.TargetSize)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return runRewriteManifests(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.Int32Var(&opts.SpecID, "spec-id", 0, "rewrite only manifests of this partition spec")
	fs.StringVar(&opts.Where, "where", "", "rewrite only manifests holding a file that may hold matching rows, by partition and column bounds, e.g. \"order_ts >= '2024-06-06'\"")
	fs.StringVar(&opts.TargetSize, "target-size", "", "manifest size to aim for (default: commit.manifest.target-size-bytes, 8MiB)")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "print the plan and change nothing")
	addClaimWait(cmd, &opts.Wait)
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

func runRewriteManifests(ctx context.Context, opts *RewriteManifestsOptions) error {
	if isMetadataFile(opts.Table) && !opts.DryRun {
		return refuseMetadataFile(opts.Table, "rewrite its manifests", true)
	}
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	ro := rewritemanifests.Options{Commit: opts.f.CommitOptions(t.Metadata.Properties)}
	if opts.hasSpecID {
		id := opts.SpecID
		ro.SpecID = &id
		if _, ok := t.Metadata.SpecByID(int(id)); !ok {
			return usageErrorf("table %s has no partition spec %d", t.Ident, id)
		}
	}
	if opts.TargetSize != "" {
		ro.TargetSize, _ = bytesize.Parse(opts.TargetSize)
	}
	if opts.Where != "" {
		w, err := where.Compile(opts.Where, t.Metadata.CurrentSchema())
		if err != nil {
			return usageErrorf("invalid --where: %v", err)
		}
		ro.Where = w
	}
	if bar := opts.f.progressBar("manifests"); bar != nil && !opts.DryRun {
		ro.Progress = bar
	}
	res, err := runVerb(ctx, opts.f, oc, t, rewritemanifests.Verb(oc.cat, ro, opts.f.CommitOptions), opts.Wait, opts.DryRun)
	switch {
	case err != nil:
		return rewriteManifestsExit(oc.cfg, t.Ident, err)
	case opts.DryRun:
		return writeRewriteManifests(opts.f, &rewritemanifests.Result{Plan: res.Plan, MetadataLocation: t.MetadataLocation}, true)
	}
	return writeRewriteManifests(opts.f, res.Report, false)
}

func rewriteManifestsExit(cfg *config.Catalog, id catalog.Ident, err error) error {
	return rewriteExit(cfg, id, err, "may or may not have new manifests", "the manifests of %s were not rewritten")
}

type rewriteManifestsView struct {
	rewritemanifests.Plan
	DryRun           bool   `json:"dry_run"`
	Committed        bool   `json:"committed"`
	NewSnapshotID    *int64 `json:"new_snapshot_id"`
	MetadataLocation string `json:"metadata_location"`
}

func writeRewriteManifests(f *Factory, res *rewritemanifests.Result, dryRun bool) error {
	// res.Plan is the plan of the attempt that landed (a retry re-plans on
	// the table it commits to), computed as the dry run computes it.
	v := rewriteManifestsView{Plan: res.Plan, DryRun: dryRun, Committed: res.Committed, MetadataLocation: res.MetadataLocation}
	if res.Snapshot != nil {
		id := res.Snapshot.SnapshotID
		v.NewSnapshotID = &id
	}
	if f.Output == outputJSON {
		return writeJSON(f.Out, v)
	}
	w := f.Out
	dropped := ""
	if v.Dropped > 0 {
		dropped = fmt.Sprintf(", and drop %d without live files", v.Dropped)
	}
	switch {
	case v.Committed:
		fmt.Fprintf(w, "%s: rewrote %d manifests into %d%s (%s)\n", v.Table, v.Selected, v.Planned, strings.Replace(dropped, "drop", "dropped", 1), v.MetadataLocation)
	case !v.Worthwhile():
		fmt.Fprintf(w, "%s: nothing to rewrite: rewriting would not reduce the manifest count\n", v.Table)
	default:
		fmt.Fprintf(w, "%s: dry run: would rewrite %d manifests into %d%s\n", v.Table, v.Selected, v.Planned, dropped)
	}
	t := newTable(w)
	t.row("  snapshot", optInt64(v.SnapshotID))
	t.row("  data manifests", v.DataManifests)
	t.row("  selected", fmt.Sprintf("%d (%d entries)", v.Selected, v.Entries))
	t.row("  planned", v.Planned)
	t.row("  without live files", v.Dropped)
	t.row("  target size", bytesize.Format(v.TargetSize))
	if v.NewSnapshotID != nil {
		t.row("  new snapshot", *v.NewSnapshotID)
	}
	return t.flush()
}
