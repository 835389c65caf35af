package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/plan"
)

// The sharded run of `icectl compact`: --plan-out saves a plan, N workers
// run --plan PLAN --shard I/N --stage DIR, one committer runs --commit DIR.

// planningFlags are decided by the plan: a worker or committer that got
// one would silently ignore it.
var planningFlags = []string{"target-file-size", "min-file-size", "max-file-size", "min-input-files", "delete-file-threshold",
	"delete-ratio-threshold", "rewrite-all", "output-spec", "output-spec-id", "remove-dangling-deletes", "max-file-group-size", "max-files-to-rewrite", "job-order", "where", "sort", "zorder", "branch", "dry-run", "plan-out",
	"max-duration"}

// checkShardFlags validates the combination of the sharded-run flags and
// resolves the shard; it runs when flags are parsed.
func (o *CompactOptions) checkShardFlags(cmd *cobra.Command, shard string) error {
	sh, err := checkShardedFlags(cmd, shardedFlags{plan: o.Plan, commit: o.Commit, stage: o.Stage, shard: shard}, planningFlags, o.f.Getenv)
	o.Shard = sh
	return err
}

// readPlan reads a plan saved by --plan-out.
func readPlan(ctx context.Context, fio fileio.FileIO, name string) (*plan.Plan, error) {
	data, err := fileio.ReadFile(ctx, fio, name)
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("read --plan: %w", err)}
	}
	p, err := plan.ParsePlan(data)
	if err != nil {
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s: %w", name, err)}
	}
	return p, nil
}

// shardPlan opens the stage of a sharded compaction's worker or
// committer and reads its plan: --plan, or the one the stage holds.
func shardPlan(ctx context.Context, opts *CompactOptions, oc *openedCatalog, t *catalog.Table) (compact.Stage, *plan.Plan, error) {
	dir := strings.TrimSuffix(opts.Stage, "/")
	if opts.Commit != "" {
		dir = strings.TrimSuffix(opts.Commit, "/")
	}
	sio, err := locationIO(ctx, opts.f, oc, t, dir)
	if err != nil {
		return compact.Stage{}, nil, err
	}
	st := compact.Stage{IO: sio, Dir: dir}
	if opts.Plan == "" {
		p, err := compact.ReadStagePlan(ctx, st)
		return st, p, err
	}
	pio, err := locationIO(ctx, opts.f, oc, t, opts.Plan)
	if err != nil {
		return st, nil, err
	}
	p, err := readPlan(ctx, pio, opts.Plan)
	return st, p, err
}

// runSharded runs a worker or the committer of a sharded compaction.
func runSharded(ctx context.Context, opts *CompactOptions, oc *openedCatalog, t *catalog.Table) error {
	f, cat := opts.f, oc.cat
	co := opts.Compact
	co.Commit = f.CommitOptions(t.Metadata.Properties)
	co.Log = f.ErrOut
	if bar := f.progressBar("groups"); bar != nil {
		co.Progress, co.Log = bar, bar
	}
	st, p, err := shardPlan(ctx, opts, oc, t)
	if err != nil {
		return err
	}
	defer f.limitCompactionMemory()()
	if opts.Commit != "" {
		rep, err := compact.CommitStaged(ctx, cat, t, p, st, co)
		if rep != nil {
			if werr := writeCompactReport(f, t, rep); werr != nil && err == nil {
				err = werr
			}
		}
		co.PartialProgress = true
		return outcomeExit(compact.Outcome(co, rep, err))
	}
	rep, err := compact.RewriteShard(ctx, t, p, opts.Shard, st, co)
	if errors.Is(err, compact.ErrInvalidOptions) {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	if rep != nil {
		if werr := writeShardReport(f, t, rep); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return err
	}
	return shardExit(rep.Shard, rep.Shards, "group", rep.Count(compact.StatusFailed), rep.Count(compact.ShardStaged)+rep.Count(compact.ShardAlreadyStaged))
}

type shardReportView struct {
	Table            string                `json:"table"`
	PlanID           string                `json:"plan_id"`
	Shard            int                   `json:"shard"`
	Shards           int                   `json:"shards"`
	PlanGroups       int                   `json:"plan_groups"`
	Groups           []compact.GroupResult `json:"groups"`
	Staged           int                   `json:"staged"`
	AlreadyStaged    int                   `json:"already_staged"`
	AlreadyCommitted int                   `json:"already_committed"`
	Dropped          int                   `json:"dropped"`
	Failed           int                   `json:"failed"`
	BytesIn          int64                 `json:"bytes_in"`
	BytesOut         int64                 `json:"bytes_out"`
	RowsOut          int64                 `json:"rows_out"`
	DurationMS       int64                 `json:"duration_ms"`
}

func writeShardReport(f *Factory, t *catalog.Table, rep *compact.ShardReport) error {
	v := shardReportView{Table: t.Ident.String(), PlanID: rep.PlanID, Shard: rep.Shard, Shards: rep.Shards, PlanGroups: rep.PlanGroups,
		Groups: rep.Groups, Staged: rep.Count(compact.ShardStaged), AlreadyStaged: rep.Count(compact.ShardAlreadyStaged),
		AlreadyCommitted: rep.Count(compact.ShardAlreadyCommitted), Dropped: rep.Count(compact.StatusDropped),
		Failed: rep.Count(compact.StatusFailed), BytesIn: rep.BytesIn, BytesOut: rep.BytesOut, RowsOut: rep.RowsOut,
		DurationMS: rep.Duration.Milliseconds()}
	if f.Output == outputJSON {
		return writeJSON(f.Out, v)
	}
	tb := newTable(f.Out)
	tb.row("shard", fmt.Sprintf("%d of %d (plan %s: %d of its %d groups)", v.Shard, v.Shards, v.PlanID, len(v.Groups), v.PlanGroups))
	tb.row("groups", fmt.Sprintf("%d staged, %d already staged, %d already committed, %d dropped, %d failed",
		v.Staged, v.AlreadyStaged, v.AlreadyCommitted, v.Dropped, v.Failed))
	tb.row("bytes", fmt.Sprintf("%s -> %s", bytesize.Format(v.BytesIn), bytesize.Format(v.BytesOut)))
	tb.row("rows written", v.RowsOut)
	tb.row("duration", rep.Duration.Round(1e6).String())
	for _, g := range v.Groups {
		if g.Status == compact.StatusFailed || g.Status == compact.StatusDropped {
			tb.row("group "+g.ID, g.Status+": "+g.Reason)
		}
	}
	return tb.flush()
}
