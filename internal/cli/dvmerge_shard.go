package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/dvmerge"
	"github.com/icectl/icectl/iceberg/fileio"
)

// The sharded run of `icectl dv merge`: --dry-run --plan-out saves a plan,
// N workers run --plan PLAN --shard I/N --stage DIR, one committer runs
// --commit DIR.

// dvPlanningFlags are decided by the plan: a worker or committer that got
// one would silently ignore it.
var dvPlanningFlags = []string{"where", "branch", "repair-resurrected", "equality", "dry-run", "plan-out", "max-duration"}

// runDVSharded runs a worker or the committer of a sharded dv merge.
// dvShardPlan opens the stage of a sharded dv merge's worker or
// committer and reads its plan: --plan, or the one the stage holds.
func dvShardPlan(ctx context.Context, opts *DVMergeOptions, oc *openedCatalog, t *catalog.Table) (dvmerge.Stage, *dvmerge.PlanDoc, error) {
	dir := strings.TrimSuffix(opts.Stage, "/")
	if opts.Commit != "" {
		dir = strings.TrimSuffix(opts.Commit, "/")
	}
	sio, err := locationIO(ctx, opts.f, oc, t, dir)
	if err != nil {
		return dvmerge.Stage{}, nil, err
	}
	st := dvmerge.Stage{IO: sio, Dir: dir}
	if opts.Plan == "" {
		d, err := dvmerge.ReadStagePlan(ctx, st)
		return st, d, err
	}
	pio, err := locationIO(ctx, opts.f, oc, t, opts.Plan)
	if err != nil {
		return st, nil, err
	}
	data, err := fileio.ReadFile(ctx, pio, opts.Plan)
	if err != nil {
		return st, nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("read --plan: %w", err)}
	}
	d, err := dvmerge.ParsePlan(data)
	if err != nil {
		return st, nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s: %w", opts.Plan, err)}
	}
	return st, d, nil
}

func runDVSharded(ctx context.Context, opts *DVMergeOptions, oc *openedCatalog, t *catalog.Table) error {
	f, cat := opts.f, oc.cat
	mo := opts.Merge
	mo.Commit = f.CommitOptions(t.Metadata.Properties)
	mo.CreatedBy = "icectl " + buildVersion()
	mo.Log = f.ErrOut
	if bar := f.progressBar("partitions"); bar != nil {
		mo.Progress, mo.Log = bar, bar
	}
	st, d, err := dvShardPlan(ctx, opts, oc, t)
	if err != nil {
		return err
	}
	if opts.Commit != "" {
		rep, err := dvmerge.CommitStaged(ctx, cat, t, d, st, mo)
		if rep != nil {
			if werr := writeDVMergeReport(f, t, rep); werr != nil && err == nil {
				err = werr
			}
		}
		mo.PartialProgress = true
		return dvMergeExit(mo, rep, err)
	}
	rep, err := dvmerge.MergeShard(ctx, t, d, opts.Shard, st, mo)
	if errors.Is(err, dvmerge.ErrInvalidOptions) {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	if rep != nil {
		if werr := writeDVShardReport(f, t, rep); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return err
	}
	return shardExit(rep.Shard, rep.Shards, "partition", rep.Count(dvmerge.StatusFailed), rep.Count(dvmerge.StatusStaged)+rep.Count(dvmerge.StatusAlreadyStaged))
}

func writeDVShardReport(f *Factory, t *catalog.Table, rep *dvmerge.ShardReport) error {
	if f.Output == outputJSON {
		return writeJSON(f.Out, struct {
			Table string `json:"table"`
			*dvmerge.ShardReport
		}{t.Ident.String(), rep})
	}
	tb := newTable(f.Out)
	tb.row("shard", fmt.Sprintf("%d of %d (plan %s: %d of its %d partitions)", rep.Shard, rep.Shards, rep.PlanID, len(rep.Partitions), rep.PlanPartitions))
	tb.row("partitions", fmt.Sprintf("%d staged, %d already staged, %d already committed, %d nothing to do, %d failed",
		rep.Count(dvmerge.StatusStaged), rep.Count(dvmerge.StatusAlreadyStaged), rep.Count(dvmerge.StatusAlreadyCommitted),
		rep.Count(dvmerge.StatusNothing), rep.Count(dvmerge.StatusFailed)))
	for _, p := range rep.Partitions {
		if p.Status == dvmerge.StatusFailed {
			tb.row("partition "+p.ID, p.Status+": "+p.Reason)
		}
	}
	return tb.flush()
}
