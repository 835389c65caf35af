package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/internal/shared/verbrun"
	"github.com/icectl/icectl/plan"
)

// CompactOptions are the inputs of `icectl compact`.
type CompactOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
	Compact compact.Options
	DryRun  bool
	PlanOut string
	// Wait is --wait: how long to wait for another run's claim.
	Wait string
	// A sharded run (compact_shard.go): a worker has Plan, Shard and
	// Stage; the committer has Commit (and Plan, optionally).
	Plan   string
	Shard  compact.Shard
	Stage  string
	Commit string
}

// compactFlags holds flag values that need parsing.
type compactFlags struct {
	target, minSize, maxSize, maxGroup string
	deleteFileThreshold                string
	maxFilesToRewrite                  string
	maxDuration                        string
	shard                              string
	sort, zorder, sortBuffer           string
	removeDanglingDeletes              bool
}

// sortTableOrder is --sort without a value: the table's own sort order
// (parentheses, which no order parses with, so it is no column name).
const sortTableOrder = "(table)"

// NewCmdCompact returns `icectl compact`. runF replaces the run function in
// tests; nil runs the command.
func NewCmdCompact(f *Factory, runF func(*CompactOptions) error) *cobra.Command {
	opts := &CompactOptions{f: f}
	var fl compactFlags
	cmd := &cobra.Command{
		Use:   "compact TABLE",
		Short: "Rewrite small files and files with many deletes into target-size files",
		Long: `Plan and run a compaction of a table's branch head, as Spark's rewrite_data_files:
small, large and delete-heavy files are grouped by partition and rewritten with
every delete applied and (v3) row lineage kept, then committed as "replace"
snapshots. --dry-run prints the plan and writes nothing.

Without --partial-progress the run is one commit: if any group fails, nothing is
committed. With it, groups are committed in up to --max-commits batches as they
finish. --max-duration stops starting groups after the given time; what is done
is committed and the rest is left for the next run (exit 3, partial).

Sizes take units (512MiB, 1GB); durations take s, m, h and d (90m, 8h, 1d).

One table across many machines: --dry-run --plan-out PLAN saves the plan;
each worker runs --plan PLAN --shard I/N --stage DIR (or --shard N with the
index in $JOB_COMPLETION_INDEX or $AWS_BATCH_JOB_ARRAY_INDEX), rewrites its
share of the groups and stages one result per group in DIR (a path or a URI:
s3://, gs://, abfs[s]://, wasb[s]://),
committing nothing; one committer runs --commit DIR. See docs/deploy/kubernetes.

` + catalogFlagsHelp + "\n\n" + exitCodesHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 && fl.sort == sortTableOrder {
				_, _, err := splitSortArg(args)
				return err
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if len(args) == 2 {
				// --sort 'id DESC', the order as the next argument.
				table, order, err := splitSortArg(args)
				if err != nil {
					return err
				}
				opts.Table, fl.sort = table, order
			}
			if err := fl.apply(cmd, &opts.Compact); err != nil {
				return err
			}
			if err := opts.checkShardFlags(cmd, fl.shard); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runCompact(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	po := &opts.Compact.Plan
	fs.StringVar(&fl.target, "target-file-size", "", "target output file size (default: write.target-file-size-bytes, else 512MiB)")
	fs.StringVar(&fl.minSize, "min-file-size", "", "files below this are rewritten (default 0.75 x target)")
	fs.StringVar(&fl.maxSize, "max-file-size", "", "files above this are rewritten (default 1.8 x target)")
	fs.IntVar(&po.MinInputFiles, "min-input-files", plan.DefaultMinInputFiles, "rewrite a group only with at least this many files")
	fs.StringVar(&fl.deleteFileThreshold, "delete-file-threshold", "off", "rewrite files with at least this many deletes: a count >= 0, or off")
	fs.Float64Var(&po.DeleteRatioThreshold, "delete-ratio-threshold", plan.DefaultDeleteRatioThreshold, "rewrite files with at least this share of rows deleted")
	fs.BoolVar(&po.RewriteAll, "rewrite-all", false, "rewrite every file")
	fs.StringVar(&po.OutputSpec, "output-spec", "", "write the rewritten files in this partition spec: current or a spec id (default: each file's own); files of other specs are rewritten")
	fs.StringVar(&po.OutputSpec, "output-spec-id", "", "Spark's name for --output-spec")
	fs.BoolVar(&fl.removeDanglingDeletes, "remove-dangling-deletes", true, "also remove, in the same commit, delete files that apply to no live data file (Spark's option; off: =false)")
	fs.StringVar(&fl.maxGroup, "max-file-group-size", "", "largest group of input bytes (default 100GiB)")
	fs.StringVar(&fl.maxFilesToRewrite, "max-files-to-rewrite", "unlimited", "rewrite at most this many files")
	fs.StringVar(&po.JobOrder, "job-order", "none", "group order: none, bytes-asc, bytes-desc, files-asc, files-desc")
	fs.StringVar(&po.Where, "where", "", whereUsage)
	fs.StringVar(&opts.Compact.Branch, "branch", "", "branch to compact (default main)")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "print the plan and write nothing")
	fs.StringVar(&opts.PlanOut, "plan-out", "", "save the plan as JSON to this path or URI (s3://, gs://, abfss://, ...)")
	fs.StringVar(&opts.Plan, "plan", "", "rewrite or commit a plan saved by --plan-out (a path or a URI: s3://, gs://, abfss://, ...)")
	fs.StringVar(&fl.shard, "shard", "", "with --plan: rewrite shard I of N (I/N, or N with the index in $JOB_COMPLETION_INDEX)")
	fs.StringVar(&opts.Stage, "stage", "", "with --plan and --shard: directory or URI prefix (s3://, gs://, abfss://, ...) for the staged results")
	fs.StringVar(&opts.Commit, "commit", "", "commit the results staged in this directory or URI prefix")
	fs.IntVar(&opts.Compact.MaxConcurrentGroups, "max-concurrent-groups", 0, "groups rewritten at once (default: number of cores)")
	fs.BoolVar(&opts.Compact.PartialProgress, "partial-progress", false, "commit groups in batches as they finish")
	fs.IntVar(&opts.Compact.MaxCommits, "max-commits", compact.DefaultMaxCommits, "with --partial-progress, the number of batches")
	fs.IntVar(&opts.Compact.MaxFailedCommits, "max-failed-commits", 0, "with --partial-progress, fail the run when more commits fail (default --max-commits)")
	fs.StringVar(&fl.maxDuration, "max-duration", "", "start no new group after this long (e.g. 2h)")
	fs.StringVar(&fl.sort, "sort", "", "sort rows by the table's sort order, or by --sort 'col [ASC|DESC] [NULLS FIRST|LAST], ...'")
	fs.Lookup("sort").NoOptDefVal = sortTableOrder
	fs.StringVar(&fl.zorder, "zorder", "", "z-order rows by these columns (col1,col2)")
	fs.StringVar(&fl.sortBuffer, "sort-buffer", "", "with --sort or --zorder, bytes of rows ordered at once per group (default 1GiB)")
	addClaimWait(cmd, &opts.Wait)
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

// splitSortArg tells the table from the sort order in the two arguments
// of `compact --sort ORDER TABLE` (or `TABLE --sort ORDER`): the order,
// given after a space, comes as an argument of its own, since --sort
// alone means the table's order. The order is the argument that parses as
// one and is no table name (a table is NAMESPACE.NAME or a metadata
// file); a column with a dot, which could be either, has to be written
// --sort='a.b'.
func splitSortArg(args []string) (table, order string, err error) {
	isOrder := func(s string) bool {
		if _, err := compact.ParseSortOrder(s); err != nil || isMetadataFile(s) {
			return false
		}
		return !strings.Contains(s, ".") || strings.ContainsAny(s, " \t,")
	}
	isTable := func(s string) bool {
		return isMetadataFile(s) || strings.Contains(s, ".") && !strings.ContainsAny(s, " \t,")
	}
	a, b := args[0], args[1]
	switch {
	case isOrder(a) && isTable(b) && !(isOrder(b) && isTable(a)):
		return b, a, nil
	case isOrder(b) && isTable(a):
		return a, b, nil
	}
	return "", "", usageErrorf("cannot tell the table from the sort order in %q and %q: write the order after '=', --sort='ORDER'", a, b)
}

// apply parses the flags that need it into o.
func (fl *compactFlags) apply(cmd *cobra.Command, o *compact.Options) error {
	size := func(name, v string) (int64, error) {
		if v == "" {
			return 0, nil
		}
		n, err := bytesize.Parse(v)
		if err != nil || n <= 0 {
			return 0, usageErrorf("invalid --%s %q: want a positive size like 512MiB", name, v)
		}
		return n, nil
	}
	var err error
	po := &o.Plan
	po.RemoveDanglingDeletes = &fl.removeDanglingDeletes
	if po.TargetFileSize, err = size("target-file-size", fl.target); err != nil {
		return err
	}
	if po.MaxFileSize, err = size("max-file-size", fl.maxSize); err != nil {
		return err
	}
	if po.MaxFileGroupSize, err = size("max-file-group-size", fl.maxGroup); err != nil {
		return err
	}
	if fl.minSize != "" {
		n, err := bytesize.Parse(fl.minSize)
		if err != nil || n < 0 {
			return usageErrorf("invalid --min-file-size %q: want a size like 128MiB", fl.minSize)
		}
		po.MinFileSize = &n
	}
	if s := strings.TrimSpace(fl.deleteFileThreshold); s != "off" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return usageErrorf("invalid --delete-file-threshold %q: want a count >= 0, or off", fl.deleteFileThreshold)
		}
		po.DeleteFileThreshold = &n
	}
	if s := strings.TrimSpace(fl.maxFilesToRewrite); s != "" && s != "unlimited" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return usageErrorf("invalid --max-files-to-rewrite %q: want a positive count or unlimited", fl.maxFilesToRewrite)
		}
		po.MaxFilesToRewrite = &n
	}
	if s := strings.ToLower(strings.TrimSpace(po.OutputSpec)); s != "" && s != "current" {
		if n, err := strconv.Atoi(s); err != nil || n < 0 {
			return usageErrorf("invalid --output-spec %q: want current or a partition spec id", po.OutputSpec)
		}
	}
	if err := fl.applyOrder(cmd, o); err != nil {
		return err
	}
	if o.SortBuffer, err = size("sort-buffer", fl.sortBuffer); err != nil {
		return err
	}
	if _, err := plan.ParseJobOrder(po.JobOrder); err != nil {
		return usageErrorf("invalid --job-order: %v", err)
	}
	if fl.maxDuration != "" {
		d, err := parseDuration(fl.maxDuration)
		if err != nil || d <= 0 {
			return usageErrorf("invalid --max-duration %q: want a duration like 90m, 8h or 1d", fl.maxDuration)
		}
		o.MaxDuration = d
	}
	for _, c := range []struct {
		name string
		v    int
		min  int
	}{{"max-concurrent-groups", o.MaxConcurrentGroups, 0}, {"max-commits", o.MaxCommits, 1}, {"max-failed-commits", o.MaxFailedCommits, 0}, {"min-input-files", po.MinInputFiles, 1}} {
		if c.v < c.min {
			return usageErrorf("invalid --%s %d: want >= %d", c.name, c.v, c.min)
		}
	}
	return nil
}

// applyOrder checks the syntax of --sort and --zorder; their columns are
// checked against the table when it is planned.
func (fl *compactFlags) applyOrder(cmd *cobra.Command, o *compact.Options) error {
	for _, name := range []string{"sort", "zorder"} {
		if v, _ := cmd.Flags().GetString(name); cmd.Flags().Changed(name) && strings.TrimSpace(v) == "" {
			return usageErrorf("invalid --%s: empty; name the columns", name)
		}
	}
	if fl.sort != "" && fl.zorder != "" {
		return usageErrorf("--sort and --zorder are exclusive: give one")
	}
	if fl.sort != "" {
		o.Sort = true
		if fl.sort != sortTableOrder {
			if _, err := compact.ParseSortOrder(fl.sort); err != nil {
				return usageErrorf("invalid --sort: %v", err)
			}
			o.SortOrder = fl.sort
		}
	}
	if fl.zorder != "" {
		cols, err := compact.ParseZOrder(fl.zorder)
		if err != nil {
			return usageErrorf("invalid --zorder: %v", err)
		}
		o.ZOrder = cols
	}
	return nil
}

func runCompact(ctx context.Context, opts *CompactOptions) error {
	if isMetadataFile(opts.Table) && !opts.DryRun {
		return refuseMetadataFile(opts.Table, "compact it", true)
	}
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	if opts.DryRun {
		return scrub(oc.cfg, compactDryRun(ctx, opts, oc, t))
	}
	if opts.Stage != "" && opts.Commit == "" {
		// A sharded run's worker stages its groups and commits nothing:
		// it takes no claim (its committer does).
		return scrub(oc.cfg, runSharded(ctx, opts, oc, t))
	}
	if opts.Commit != "" {
		// A committer run again after every group landed (a retried job)
		// has nothing to commit: no claim.
		idle := func(ctx context.Context, t *catalog.Table) (bool, error) {
			_, p, err := shardPlan(ctx, opts, oc, t)
			return err == nil && compact.Committed(t.Metadata, p), err
		}
		return scrub(oc.cfg, withClaim(ctx, opts.f, oc, t, "compact", opts.Wait, idle, func(ctx context.Context, t *catalog.Table) error {
			return runSharded(ctx, opts, oc, t)
		}))
	}
	f := opts.f
	co := opts.Compact
	co.Log = f.ErrOut
	if bar := f.progressBar("groups"); bar != nil {
		co.Progress, co.Log = bar, bar
	}
	defer f.limitCompactionMemory()()
	v := compact.Verb(oc.cat, co, f.CommitOptions)
	if opts.PlanOut != "" {
		execute := v.Execute
		v.Execute = func(ctx context.Context, t *catalog.Table, p *plan.Plan) (*compact.Report, error) {
			if err := writeCompactPlan(ctx, f, oc, t, opts.PlanOut, p); err != nil {
				return nil, err
			}
			return execute(ctx, t, p)
		}
	}
	res, err := runVerb(ctx, f, oc, t, v, opts.Wait, false)
	if res.Executed && res.Report != nil {
		if werr := writeCompactReport(f, res.Table, res.Report); werr != nil && err == nil {
			err = werr
		}
	}
	return scrub(oc.cfg, err)
}

// writeCompactPlan saves p as --plan-out does (a path or a URI).
func writeCompactPlan(ctx context.Context, f *Factory, oc *openedCatalog, t *catalog.Table, name string, p *plan.Plan) error {
	data, err := p.MarshalJSON()
	if err != nil {
		return err
	}
	return writePlanTo(ctx, f, oc, t, name, func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	})
}

// compactDryRun plans and prints the plan, through the verb runner's dry
// run (reading only). The plan is written from the planner's records
// group by group, never held whole: a table's plan lists every file it
// rewrites.
func compactDryRun(ctx context.Context, opts *CompactOptions, oc *openedCatalog, t *catalog.Table) error {
	f := opts.f
	v := verbrun.Verb[*plan.Result, struct{}]{Name: "compact",
		Plan: func(ctx context.Context, ro *catalog.Table) (*plan.Result, bool, error) {
			res, err := compact.PlanTableResult(ctx, ro, opts.Compact)
			return res, false, err
		},
		Outcome: func(_ struct{}, err error) (verbrun.Outcome, error) { return compact.Outcome(opts.Compact, nil, err) },
	}
	run, err := runVerb(ctx, f, oc, t, v, "", true)
	if err != nil {
		return err
	}
	res := run.Plan
	defer res.Close()
	if opts.PlanOut != "" {
		// The plan file is not the table's: it is written through an IO
		// that may write (t's), while the table is read read-only.
		err := writePlanTo(ctx, f, oc, t, opts.PlanOut, func(w io.Writer) error { return res.WriteJSON(newJSONIndenter(w)) })
		if err != nil {
			return err
		}
	}
	if f.Output == outputJSON {
		return res.WriteJSON(newJSONIndenter(f.Out))
	}
	return res.WriteText(f.Out)
}

type compactReportView struct {
	Table                  string                `json:"table"`
	Location               string                `json:"location"`
	Branch                 string                `json:"branch"`
	BaseSnapshotID         *int64                `json:"base_snapshot_id"`
	Groups                 []compact.GroupResult `json:"groups"`
	Commits                int                   `json:"commits"`
	FailedCommits          int                   `json:"failed_commits"`
	FilesIn                int                   `json:"files_in"`
	FilesOut               int                   `json:"files_out"`
	BytesIn                int64                 `json:"bytes_in"`
	BytesOut               int64                 `json:"bytes_out"`
	RowsOut                int64                 `json:"rows_out"`
	DeletedRowsApplied     int64                 `json:"deleted_rows_applied"`
	DeleteFilesRetired     int                   `json:"delete_files_retired"`
	DanglingDeletesRemoved int                   `json:"dangling_deletes_removed"`
	LeftForNextRun         int                   `json:"left_for_next_run"`
	DurationMS             int64                 `json:"duration_ms"`
}

func writeCompactReport(f *Factory, t *catalog.Table, rep *compact.Report) error {
	v := reportView(t, rep)
	if f.Output == outputJSON {
		return writeJSON(f.Out, v)
	}
	return writeCompactText(f.Out, v)
}

// reportView names the table as the command line did (namespace.table)
// and gives its location apart, whatever the plan holds.
func reportView(t *catalog.Table, rep *compact.Report) compactReportView {
	v := compactReportView{Groups: rep.Groups, Commits: rep.Commits, FailedCommits: rep.FailedCommits,
		FilesIn: rep.FilesIn, FilesOut: rep.FilesOut, BytesIn: rep.BytesIn, BytesOut: rep.BytesOut, RowsOut: rep.RowsOut,
		DeletedRowsApplied: rep.DeletedRowsApplied, DeleteFilesRetired: rep.DeleteFilesRetired,
		DanglingDeletesRemoved: rep.DanglingDeletesRemoved, LeftForNextRun: rep.LeftForNextRun, DurationMS: rep.Duration.Milliseconds()}
	if v.Groups == nil {
		v.Groups = []compact.GroupResult{}
	}
	v.Table, v.Location = t.Ident.String(), t.Metadata.Location
	if p := rep.Plan; p != nil {
		v.Branch = p.Branch
		if p.Base != nil {
			id := p.Base.SnapshotID
			v.BaseSnapshotID = &id
		}
	}
	return v
}

func writeCompactText(w io.Writer, v compactReportView) error {
	if len(v.Groups) == 0 {
		_, err := printf(w, "%s: nothing to compact: no group of files met the thresholds (see --dry-run for the plan)\n", v.Table)
		return err
	}
	counts := map[string]int{}
	for _, g := range v.Groups {
		counts[g.Status]++
	}
	t := newTable(w)
	groups := fmt.Sprintf("%d committed, %d rebased, %d dropped, %d failed, %d cancelled, %d not started",
		counts[compact.StatusCommitted], counts[compact.StatusRebased], counts[compact.StatusDropped],
		counts[compact.StatusFailed], counts[compact.StatusCancelled], counts[compact.StatusNotStarted])
	if n := counts[compact.StatusAlreadyCommitted]; n > 0 {
		groups += fmt.Sprintf(", %d committed by an earlier run", n)
	}
	t.row("groups", groups)
	t.row("files", fmt.Sprintf("%d -> %d", v.FilesIn, v.FilesOut))
	t.row("bytes", fmt.Sprintf("%s -> %s", bytesize.Format(v.BytesIn), bytesize.Format(v.BytesOut)))
	t.row("rows written", v.RowsOut)
	t.row("deleted rows applied", v.DeletedRowsApplied)
	t.row("delete files retired", fmt.Sprintf("%d (%d dangling)", v.DeleteFilesRetired, v.DanglingDeletesRemoved))
	t.row("commits", fmt.Sprintf("%d (%d failed)", v.Commits, v.FailedCommits))
	if v.LeftForNextRun > 0 {
		t.row("left for next run", fmt.Sprintf("%d group(s)", v.LeftForNextRun))
	}
	t.row("time", (time.Duration(v.DurationMS) * time.Millisecond).String())
	if err := t.flush(); err != nil {
		return err
	}
	for _, g := range v.Groups {
		if g.Status == compact.StatusCommitted || g.Reason == "" {
			continue
		}
		printf(w, "group %s %s: %s\n", g.ID, g.Status, g.Reason)
	}
	return nil
}
