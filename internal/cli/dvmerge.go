package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/dvmerge"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/internal/shared/shard"
	"github.com/icectl/icectl/internal/shared/verbrun"
)

// NewCmdDV returns the `icectl dv` group.
func NewCmdDV(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dv <command>",
		Short: "Deletion vectors: merge delete files into one DV per data file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(NewCmdDVMerge(f, nil))
	return cmd
}

// DVMergeOptions are the inputs of `icectl dv merge`.
type DVMergeOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
	Merge   dvmerge.Options
	DryRun  bool
	// Wait is --wait: how long to wait for another run's claim.
	Wait    string
	PlanOut string
	// A sharded run (dvmerge_shard.go): a worker has Plan, Shard and
	// Stage; the committer has Commit (and Plan, optionally).
	Plan   string
	Shard  shard.Shard
	Stage  string
	Commit string
}

// NewCmdDVMerge returns `icectl dv merge`. runF replaces the run function
// in tests; nil runs the command.
func NewCmdDVMerge(f *Factory, runF func(*DVMergeOptions) error) *cobra.Command {
	opts := &DVMergeOptions{f: f}
	var puffinSize, maxDuration, shardFlag string
	cmd := &cobra.Command{
		Use:   "merge TABLE",
		Short: "Merge position deletes and DVs into one deletion vector per data file (v3)",
		Long: `Merge the deletes of a format v3 table into one deletion vector (DV) per data
file, as Spark's rewrite_position_delete_files does on v3: for every live data
file with position-delete files (file- or partition-scoped, by the spec's
sequence-number rules) or more than one DV, write one DV holding the union of
its deleted positions, pack the DVs into Puffin files per partition (closed at
--puffin-target-size), and commit a "replace" snapshot that adds them and
removes the old DVs, every position-delete file now fully replaced, and
dangling deletes. Positions at or beyond a file's row count are reported and
left out. The rows readers see do not change.

A data file whose DV lacks positions an older delete file deleted shows those
rows again ("resurrected"; icectl health reports it). Plain dv merge keeps such
a delete file and lists it; --repair-resurrected folds those positions into the
DV, committed as a "delete" snapshot, and lists every row it deletes again.
--equality also resolves equality deletes into DVs and removes each
equality-delete file once every data file it applies to is covered.

Without --partial-progress the run is one commit; with it, partitions are
committed in up to --max-commits batches. --max-duration starts no partition
after the given time; the rest is left for the next run (exit 3, partial). --dry-run prints the
plan and writes nothing.

Sharded (one plan, N workers, one committer, e.g. a Kubernetes Indexed Job):
--dry-run --plan-out PLAN saves the plan; --plan PLAN --shard I/N --stage DIR
merges the partitions that fall to shard I (split by delete bytes) and stages
one result per partition in DIR, committing nothing; --commit DIR validates
each staged partition against the table as it is now (merged again when a
concurrent commit changed its deletes), commits them in --max-commits batches
and removes the Puffin files of partitions it did not commit. Run again, each
does only what is missing. See docs/deploy/kubernetes/.

A run holds one partition's files at a time: the table's live files are
sorted by partition into a temporary file in $TMPDIR (unlinked as soon as it
is created, so nothing is left behind), so its memory does not grow with the
table's data files.

` + catalogFlagsHelp + "\n\n" + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if puffinSize != "" {
				n, err := bytesize.Parse(puffinSize)
				if err != nil || n <= 0 {
					return usageErrorf("invalid --puffin-target-size %q: want a positive size like 8MiB", puffinSize)
				}
				opts.Merge.PuffinTargetSize = n
			}
			if maxDuration != "" {
				d, err := parseDuration(maxDuration)
				if err != nil || d <= 0 {
					return usageErrorf("invalid --max-duration %q: want a duration like 90m, 8h or 1d", maxDuration)
				}
				opts.Merge.MaxDuration = d
			}
			if opts.Merge.MaxCommits < 1 {
				return usageErrorf("invalid --max-commits %d: want >= 1", opts.Merge.MaxCommits)
			}
			if opts.Merge.MaxFailedCommits < 0 {
				return usageErrorf("invalid --max-failed-commits %d: want >= 0", opts.Merge.MaxFailedCommits)
			}
			sh, err := checkShardedFlags(cmd, shardedFlags{plan: opts.Plan, commit: opts.Commit, stage: opts.Stage, shard: shardFlag},
				dvPlanningFlags, f.Getenv)
			if err != nil {
				return err
			}
			opts.Shard = sh
			if runF != nil {
				return runF(opts)
			}
			return runDVMerge(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	mo := &opts.Merge
	fs.StringVar(&mo.Where, "where", "", "merge only partitions that may hold matching rows (any column, projected onto the partition), e.g. \"order_ts >= '2024-06-06'\"")
	fs.StringVar(&mo.Branch, "branch", "", "branch to merge (default main)")
	fs.StringVar(&puffinSize, "puffin-target-size", "8MiB", "close a Puffin file of DVs at this size")
	fs.BoolVar(&mo.RepairResurrected, "repair-resurrected", false, "delete again the rows a DV lost (changes what readers see; every row is listed)")
	fs.BoolVar(&mo.Equality, "equality", false, "also resolve equality deletes into DVs")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "print the plan and write nothing")
	addClaimWait(cmd, &opts.Wait)
	fs.StringVar(&opts.PlanOut, "plan-out", "", "save the plan as JSON to this file")
	fs.BoolVar(&mo.PartialProgress, "partial-progress", false, "commit partitions in batches as they are merged")
	fs.IntVar(&mo.MaxCommits, "max-commits", dvmerge.DefaultMaxCommits, "with --partial-progress, the number of batches")
	fs.IntVar(&mo.MaxFailedCommits, "max-failed-commits", 0, "with --partial-progress, fail the run when more commits fail (default --max-commits)")
	fs.StringVar(&maxDuration, "max-duration", "", "start no new partition after this long (e.g. 2h)")
	fs.StringVar(&opts.Plan, "plan", "", "merge or commit a plan saved by --plan-out (a path or a URI: s3://, gs://, abfss://, ...)")
	fs.StringVar(&shardFlag, "shard", "", "with --plan: merge shard I of N (I/N, or N with the index in $JOB_COMPLETION_INDEX or $AWS_BATCH_JOB_ARRAY_INDEX)")
	fs.StringVar(&opts.Stage, "stage", "", "with --plan and --shard: directory or URI prefix (s3://, gs://, abfss://, ...) for the staged results")
	fs.StringVar(&opts.Commit, "commit", "", "commit the results staged in this directory or URI prefix")
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

func runDVMerge(ctx context.Context, opts *DVMergeOptions) error {
	if isMetadataFile(opts.Table) && !opts.DryRun {
		return refuseMetadataFile(opts.Table, "merge its deletes", true)
	}
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	if opts.Stage != "" && !opts.DryRun {
		// A sharded run's worker stages its partitions and commits
		// nothing: it takes no claim (its committer does).
		return scrub(oc.cfg, runDVSharded(ctx, opts, oc, t))
	}
	if opts.Commit != "" && !opts.DryRun {
		// A committer run again after every partition landed has nothing
		// to commit: no claim.
		idle := func(ctx context.Context, t *catalog.Table) (bool, error) {
			_, d, err := dvShardPlan(ctx, opts, oc, t)
			return err == nil && dvmerge.Committed(t.Metadata, d), err
		}
		return scrub(oc.cfg, withClaim(ctx, opts.f, oc, t, "dv merge", opts.Wait, idle, func(ctx context.Context, t *catalog.Table) error {
			return runDVSharded(ctx, opts, oc, t)
		}))
	}
	res, err := runVerb(ctx, opts.f, oc, t, dvMergeVerb(opts, oc, t), opts.Wait, opts.DryRun)
	if err == nil && opts.DryRun {
		err = writeDVDryRun(ctx, opts, oc, t, res.Plan)
	}
	if res.Executed && res.Report != nil {
		if werr := writeDVMergeReport(opts.f, res.Table, res.Report); werr != nil && err == nil {
			err = werr
		}
	}
	return scrub(oc.cfg, err)
}

// dvMergeVerb is dv merge with the run's options: its progress and log,
// and --plan-out written once the plan is made (rw is the table as loaded,
// through whose IO the plan file, which is not the table's, is written).
func dvMergeVerb(opts *DVMergeOptions, oc *openedCatalog, rw *catalog.Table) verbrun.Verb[*dvmerge.Plan, *dvmerge.Report] {
	f := opts.f
	mo := opts.Merge
	mo.CreatedBy = "icectl " + buildVersion()
	mo.Log = f.ErrOut
	if bar := f.progressBar("partitions"); bar != nil && !opts.DryRun {
		mo.Progress, mo.Log = bar, bar
	}
	v := dvmerge.Verb(oc.cat, mo, f.CommitOptions)
	if opts.PlanOut != "" && !opts.DryRun {
		execute := v.Execute
		v.Execute = func(ctx context.Context, t *catalog.Table, p *dvmerge.Plan) (*dvmerge.Report, error) {
			if err := writeDVPlanFile(ctx, f, oc, opts.PlanOut, rw, p); err != nil {
				return nil, err
			}
			return execute(ctx, t, p)
		}
	}
	return v
}

// writeDVDryRun prints the plan of a dry run (and saves it with
// --plan-out), and closes it.
func writeDVDryRun(ctx context.Context, opts *DVMergeOptions, oc *openedCatalog, t *catalog.Table, p *dvmerge.Plan) error {
	defer p.Close()
	f := opts.f
	if opts.PlanOut != "" {
		// The document a dry run prints, byte for byte, written through
		// an IO that may write (t's): the plan file is not the table's.
		if err := writeDVPlanFile(ctx, f, oc, opts.PlanOut, t, p); err != nil {
			return err
		}
	}
	if f.Output == outputJSON {
		return p.WriteJSON(ctx, newJSONIndenter(f.Out), t.Ident.String())
	}
	return writeDVPlanText(f.Out, t.Ident.String(), p)
}

// writeDVPlanFile saves the plan as --plan-out does (a path or a
// URI), streaming its partitions' files from the plan's spill.
func writeDVPlanFile(ctx context.Context, f *Factory, oc *openedCatalog, name string, t *catalog.Table, p *dvmerge.Plan) error {
	return writePlanTo(ctx, f, oc, t, name, func(w io.Writer) error {
		return p.WriteJSON(ctx, newJSONIndenter(w), t.Ident.String())
	})
}

func writeDVPlanText(w io.Writer, table string, p *dvmerge.Plan) error {
	if len(p.Partitions) == 0 && len(p.Dangling) == 0 {
		_, err := printf(w, "%s: %s\n", table, dvMergeNothing)
		return err
	}
	t := newTable(w)
	t.row("partitions", len(p.Partitions))
	t.row("data files", p.DataFiles)
	t.row("position delete files", p.PositionDeleteFiles)
	t.row("deletion vectors", p.DVs)
	if p.Equality {
		t.row("equality delete files", p.EqualityDeleteFiles)
	}
	t.row("dangling deletes", len(p.Dangling))
	if err := t.flush(); err != nil {
		return err
	}
	for _, pp := range p.Partitions {
		printf(w, "partition %s: %d data file(s), %d position delete file(s), %d DV(s)\n",
			pp.ID, pp.DataFiles, pp.PositionDeleteFiles, pp.DVs)
	}
	return nil
}
