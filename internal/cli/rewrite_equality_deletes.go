package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/dvmerge"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/shared/bytesize"
)

// RewriteEqualityDeletesOptions are the inputs of `icectl
// rewrite-equality-deletes`.
type RewriteEqualityDeletesOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
	Merge   dvmerge.Options
	DryRun  bool
	// Wait is --wait: how long to wait for another run's claim.
	Wait string
}

// NewCmdRewriteEqualityDeletes returns `icectl rewrite-equality-deletes`.
// runF replaces the run function in tests; nil runs the command.
func NewCmdRewriteEqualityDeletes(f *Factory, runF func(*RewriteEqualityDeletesOptions) error) *cobra.Command {
	opts := &RewriteEqualityDeletesOptions{f: f}
	var maxDuration string
	cmd := &cobra.Command{
		Use:   "rewrite-equality-deletes TABLE",
		Short: "Convert a v2 table's equality deletes into position deletes for the files they hit",
		Long: `Convert the equality deletes of a format v2 table (a Flink upsert stream
writes one with every commit) into position deletes, as Amoro's minor
optimizing does: for every live data file that equality deletes apply to (by
the spec's rules: a strictly lower data sequence number, the same partition
or a global delete), read its equality columns and write the positions they
delete, one position-delete file per partition, sorted by file_path and pos,
with column metrics. Each file carries the largest data sequence number of the
equality deletes it replaces, so it applies to exactly the data files they
applied to. The commit is a "replace" snapshot that adds those files and
removes every equality-delete file whose live data files are all converted,
and dangling deletes. The rows readers see do not change; reading gets
cheaper, since no reader has to join the equality deletes any more.
Position-delete files already in the table are left as they are
(` + "`icectl rewrite-position-deletes`" + ` merges them).

Writers may keep committing: new data files and new equality deletes are left
for the next run, and a concurrent commit that adds an older-numbered data
file or removes a delete the run read is detected and its partition converted
again on the new table. Format v3 tables keep deletes in deletion vectors: use
` + "`icectl dv merge --equality`" + ` on them.

Without --partial-progress the run is one commit; with it, partitions are
committed in up to --max-commits batches. --max-duration starts no partition
after the given time; the rest is left for the next run (exit 3, partial).
--dry-run prints the plan and writes nothing.

` + catalogFlagsHelp + "\n\n" + exitCodesHelp,
		Example: `  icectl rewrite-equality-deletes shop.orders --dry-run --catalog prod
  icectl rewrite-equality-deletes shop.orders --where "day >= '2026-12-01'" --partial-progress --catalog prod`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
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
			opts.Merge.PositionDeletes = true
			if runF != nil {
				return runF(opts)
			}
			return runRewriteEqualityDeletes(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	mo := &opts.Merge
	fs.StringVar(&mo.Where, "where", "", "convert only partitions that may hold matching rows (any column, projected onto the partition), e.g. \"order_ts >= '2024-06-06'\"")
	fs.StringVar(&mo.Branch, "branch", "", "branch to convert (default main)")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "print the plan and write nothing")
	addClaimWait(cmd, &opts.Wait)
	fs.BoolVar(&mo.PartialProgress, "partial-progress", false, "commit partitions in batches as they are converted")
	fs.IntVar(&mo.MaxCommits, "max-commits", dvmerge.DefaultMaxCommits, "with --partial-progress, the number of batches")
	fs.IntVar(&mo.MaxFailedCommits, "max-failed-commits", 0, "with --partial-progress, fail the run when more commits fail (default --max-commits)")
	fs.StringVar(&maxDuration, "max-duration", "", "start no new partition after this long (e.g. 2h)")
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

func runRewriteEqualityDeletes(ctx context.Context, opts *RewriteEqualityDeletesOptions) error {
	if isMetadataFile(opts.Table) && !opts.DryRun {
		return refuseMetadataFile(opts.Table, "rewrite its equality deletes", true)
	}
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	switch v := t.Metadata.FormatVersion; {
	case v >= 3:
		return usageErrorf("%s is a format v%d table, whose deletes belong in deletion vectors: run `icectl dv merge --equality %s` instead", t.Ident, v, t.Ident)
	case v < 2:
		return usageErrorf("%s is a format v%d table, which has no delete files", t.Ident, v)
	}
	f := opts.f
	mo := opts.Merge
	mo.Log = f.ErrOut
	if bar := f.progressBar("partitions"); bar != nil && !opts.DryRun {
		mo.Progress, mo.Log = bar, bar
	}
	res, err := runVerb(ctx, f, oc, t, dvmerge.Verb(oc.cat, mo, f.CommitOptions), opts.Wait, opts.DryRun)
	if err == nil && opts.DryRun {
		err = writeEqDryRun(ctx, f, t, res.Plan)
	}
	if res.Executed && res.Report != nil {
		if werr := writeEqReport(f, res.Table, res.Report); werr != nil && err == nil {
			err = werr
		}
	}
	return scrub(oc.cfg, err)
}

// eqNothing is what the verb says, dry run or not, when nothing is to
// convert.
const eqNothing = "nothing to convert: no equality delete applies to a live data file and no delete is dangling"

func writeEqDryRun(ctx context.Context, f *Factory, t *catalog.Table, p *dvmerge.Plan) error {
	defer p.Close()
	if f.Output == outputJSON {
		return p.WriteJSON(ctx, newJSONIndenter(f.Out), t.Ident.String())
	}
	return writeEqPlanText(f.Out, t.Ident.String(), p)
}

func writeEqPlanText(w io.Writer, table string, p *dvmerge.Plan) error {
	if p.Idle() {
		_, err := printf(w, "%s: %s\n", table, eqNothing)
		return err
	}
	printf(w, "%s: dry run: would convert the equality deletes of %d data file(s) in %d partition(s)\n", table, p.DataFiles, len(p.Partitions))
	t := newTable(w)
	t.row("partitions", len(p.Partitions))
	t.row("data files", p.DataFiles)
	t.row("equality delete files", p.EqualityDeleteFiles)
	t.row("dangling deletes", len(p.Dangling))
	if err := t.flush(); err != nil {
		return err
	}
	for _, pp := range p.Partitions {
		printf(w, "partition %s: %d data file(s), %d equality delete file(s)\n", pp.ID, pp.DataFiles, pp.EqualityDeleteFiles)
	}
	return nil
}

// eqReportView is the report of a conversion: dv merge's, without the
// fields of deletion vectors, which a conversion never writes or reads.
type eqReportView struct {
	Table                      string            `json:"table"`
	Branch                     string            `json:"branch"`
	BaseSnapshotID             *int64            `json:"base_snapshot_id"`
	Partitions                 []eqPartitionView `json:"partitions"`
	Commits                    int               `json:"commits"`
	FailedCommits              int               `json:"failed_commits"`
	Operations                 []string          `json:"operations"`
	DataFiles                  int               `json:"data_files"`
	PositionDeleteFilesWritten int               `json:"position_delete_files_written"`
	PositionDeleteBytes        int64             `json:"position_delete_bytes"`
	PositionsWritten           int64             `json:"positions_written"`
	EqualityDeleteFilesRetired int               `json:"equality_delete_files_retired"`
	DanglingDeletesRemoved     int               `json:"dangling_deletes_removed"`
	LeftForNextRun             int               `json:"left_for_next_run"`
	DurationMS                 int64             `json:"duration_ms"`
}

type eqPartitionView struct {
	ID                         string `json:"id"`
	Status                     string `json:"status"`
	Reason                     string `json:"reason,omitempty"`
	DataFiles                  int    `json:"data_files"`
	PositionDeleteFilesWritten int    `json:"position_delete_files_written"`
	PositionDeleteBytes        int64  `json:"position_delete_bytes"`
	PositionsWritten           int64  `json:"positions_written"`
	Rebuilds                   int    `json:"rebuilds"`
	SnapshotID                 int64  `json:"snapshot_id,omitempty"`
}

func eqView(table string, rep *dvmerge.Report) eqReportView {
	d := dvMergeView(table, rep)
	v := eqReportView{Table: d.Table, Branch: d.Branch, BaseSnapshotID: d.BaseSnapshotID, Partitions: []eqPartitionView{},
		Commits: rep.Commits, FailedCommits: rep.FailedCommits, Operations: rep.Operations, DataFiles: rep.DataFiles,
		PositionDeleteFilesWritten: rep.PositionDeleteFilesWritten, PositionDeleteBytes: rep.PositionDeleteBytes,
		PositionsWritten: rep.PositionsWritten, EqualityDeleteFilesRetired: rep.EqualityDeleteFilesRetired,
		DanglingDeletesRemoved: rep.DanglingDeletesRemoved, LeftForNextRun: rep.LeftForNextRun, DurationMS: d.DurationMS}
	for _, p := range rep.Partitions {
		v.Partitions = append(v.Partitions, eqPartitionView{ID: p.ID, Status: p.Status, Reason: p.Reason, DataFiles: p.DataFiles,
			PositionDeleteFilesWritten: p.PositionDeleteFilesWritten, PositionDeleteBytes: p.PositionDeleteBytes,
			PositionsWritten: p.PositionsWritten, Rebuilds: p.Rebuilds, SnapshotID: p.SnapshotID})
	}
	return v
}

func writeEqReport(f *Factory, tbl *catalog.Table, rep *dvmerge.Report) error {
	if f.Output == outputJSON {
		return writeJSON(f.Out, eqView(tbl.Ident.String(), rep))
	}
	v := dvMergeView(tbl.Ident.String(), rep)
	w := f.Out
	r := v.Report
	if len(r.Partitions) == 0 && r.Commits == 0 && r.FailedCommits == 0 {
		_, err := printf(w, "%s: %s\n", v.Table, eqNothing)
		return err
	}
	counts := map[string]int{}
	for _, p := range r.Partitions {
		counts[p.Status]++
	}
	t := newTable(w)
	t.row("partitions", fmt.Sprintf("%d committed, %d rebuilt, %d failed, %d not started",
		counts[dvmerge.StatusCommitted], counts[dvmerge.StatusRebuilt], counts[dvmerge.StatusFailed], counts[dvmerge.StatusNotStarted]))
	t.row("data files converted", r.DataFiles)
	t.row("position delete files written", fmt.Sprintf("%d, %d position(s), %s", r.PositionDeleteFilesWritten, r.PositionsWritten, bytesize.Format(r.PositionDeleteBytes)))
	t.row("equality delete files retired", r.EqualityDeleteFilesRetired)
	t.row("dangling deletes removed", r.DanglingDeletesRemoved)
	t.row("commits", fmt.Sprintf("%d (%d failed) %s", r.Commits, r.FailedCommits, strings.Join(r.Operations, ", ")))
	if r.LeftForNextRun > 0 {
		t.row("left for next run", fmt.Sprintf("%d partition(s)", r.LeftForNextRun))
	}
	t.row("time", (time.Duration(v.DurationMS) * time.Millisecond).String())
	if err := t.flush(); err != nil {
		return err
	}
	for _, p := range r.Partitions {
		if p.Reason != "" && p.Status != dvmerge.StatusCommitted {
			printf(w, "partition %s %s: %s\n", p.ID, p.Status, p.Reason)
		}
	}
	return nil
}
