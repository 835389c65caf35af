package maintain

import (
	"context"
	"errors"
	"fmt"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/dvmerge"
	"github.com/icectl/icectl/expire"
	"github.com/icectl/icectl/internal/shared/batchrun"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/orphan"
	"github.com/icectl/icectl/plan"
	"github.com/icectl/icectl/rewritemanifests"
	"github.com/icectl/icectl/rewriteposdeletes"
)

// runVerb runs verb d.Verb on t through the verb's own package, as its
// command does, and fills vr with what it did.
func (r *runner) runVerb(ctx context.Context, t *catalog.Table, tp *TablePlan, d Due, vr *VerbReport) error {
	switch d.Verb {
	case VerbDVMerge:
		return r.dvMerge(ctx, t, vr)
	case VerbCompact:
		return r.compact(ctx, t, tp, vr)
	case VerbRewritePositionDeletes:
		return r.rewritePositionDeletes(ctx, t, tp, vr)
	case VerbRewriteManifests:
		return r.rewriteManifests(ctx, t, tp, vr)
	case VerbExpire:
		return r.expire(ctx, t, tp, vr)
	case VerbOrphan:
		return r.orphan(ctx, t, tp, vr)
	}
	return fmt.Errorf("unknown verb %q", d.Verb)
}

// outcome sets vr's status from a batched verb's classified end.
func outcome(run batchrun.Run, err error, left int, vr *VerbReport) error {
	out, err := run.Outcome(err)
	switch out {
	case batchrun.Done:
		vr.Status = StatusDone
		if left > 0 {
			vr.Status = StatusPartial
		}
		return nil
	case batchrun.Partial:
		// Partial progress with nothing committed is a failure.
		vr.Status = StatusPartial
		if vr.Commits == 0 {
			vr.Status = StatusFailed
		}
	default:
		vr.Status = StatusFailed
	}
	return err
}

func (r *runner) dvMerge(ctx context.Context, t *catalog.Table, vr *VerbReport) error {
	mo := dvmerge.Options{PartialProgress: true, MaxDuration: r.remaining(), Commit: r.commitOptions(t.Metadata.Properties),
		CreatedBy: r.o.CreatedBy, Now: r.o.Now}
	p, err := dvmerge.PlanTable(ctx, t, mo)
	if err != nil {
		return err
	}
	defer p.Close()
	rep, err := dvmerge.Execute(ctx, r.cat, t, p, mo)
	run := batchrun.Run{Verb: "dv merge", Unit: "partition", PartialProgress: true, InvalidOptions: dvmerge.ErrInvalidOptions}
	left := 0
	if rep != nil {
		run.Reported, run.Failed, run.FailedCommits = true, rep.Failed(), rep.FailedCommits
		left = rep.LeftForNextRun
		vr.FilesIn = int64(rep.PositionDeleteFilesRetired + rep.DVsRemoved + rep.DanglingDeletesRemoved)
		vr.FilesOut = int64(rep.DVsWritten)
		vr.BytesOut = rep.PuffinBytes
		vr.Commits, vr.LeftForNextRun = rep.Commits, rep.LeftForNextRun
		vr.Detail = fmt.Sprintf("%d data files: %d position delete files and %d DVs replaced by %d DVs in %d Puffin files, %d dangling deletes removed",
			rep.DataFiles, rep.PositionDeleteFilesRetired, rep.DVsRemoved, rep.DVsWritten, rep.PuffinFiles, rep.DanglingDeletesRemoved)
		if rep.Commits == 0 && rep.DataFiles == 0 && rep.DanglingDeletesRemoved == 0 {
			vr.Detail = "nothing to merge"
		}
		if len(rep.Kept) > 0 {
			vr.Detail += fmt.Sprintf("; %d delete files kept (see icectl dv merge --dry-run)", len(rep.Kept))
		}
	}
	if left > 0 {
		vr.Detail = joinNonEmpty(vr.Detail, fmt.Sprintf("%d partitions left for the next run", left))
	}
	return outcome(run, err, left, vr)
}

func (r *runner) compact(ctx context.Context, t *catalog.Table, tp *TablePlan, vr *VerbReport) error {
	pol := tp.state.Policy
	co := compact.Options{
		Plan: plan.Options{TargetFileSize: pol.TargetFileSize, MinInputFiles: pol.MinInputFiles, DeleteRatioThreshold: pol.DeleteRatio},
		// Partial progress: a budget or a failure keeps what finished.
		PartialProgress: true, MaxDuration: r.remaining(),
		Commit: r.commitOptions(t.Metadata.Properties), Now: r.o.Now,
	}
	var p *plan.Plan
	limited := false
	ok, err := r.reserveBytes(func(limit *int64) (int64, error) {
		var err error
		if p, err = compact.PlanTable(ctx, t, co); err != nil {
			return 0, err
		}
		if limit != nil && p.Totals.InputBytes > *limit {
			// Only whole groups that fit what is left of the budget.
			limited = true
			co.Plan.MaxBytesToRewrite = limit
			if p, err = compact.PlanTable(ctx, t, co); err != nil {
				return 0, err
			}
		}
		return p.Totals.InputBytes, nil
	})
	if err != nil {
		return err
	}
	if !ok {
		vr.Status = StatusNotStarted
		vr.Detail = "not started: the run's --max-rewrite-bytes is spent; the next run does it"
		return nil
	}
	if limited {
		r.noteBytesHit()
	}
	if len(p.Groups) == 0 {
		vr.Status, vr.Detail = StatusDone, "nothing to compact: no group of files met the thresholds"
		if limited {
			vr.Status, vr.Detail = StatusNotStarted, "not started: no group fits what is left of --max-rewrite-bytes; the next run does it"
		}
		return nil
	}
	rep, err := compact.Execute(ctx, r.cat, t, p, co)
	run := batchrun.Run{Verb: "compaction", Unit: "group", PartialProgress: true,
		InvalidOptions: compact.ErrInvalidOptions, UnitsFailed: compact.ErrGroupsFailed}
	left := 0
	if rep != nil {
		run.Reported = true
		run.Committed, run.Failed, run.Dropped, run.FailedCommits = rep.Committed(), rep.Failed(), rep.Dropped(), rep.FailedCommits
		left = rep.LeftForNextRun
		vr.FilesIn, vr.FilesOut, vr.BytesIn, vr.BytesOut = int64(rep.FilesIn), int64(rep.FilesOut), rep.BytesIn, rep.BytesOut
		vr.Rows, vr.Commits, vr.LeftForNextRun = rep.RowsOut, rep.Commits, rep.LeftForNextRun
		vr.Detail = fmt.Sprintf("%d files -> %d (%s -> %s), %d rows, %d deleted rows applied, %d delete files retired, %d commits",
			rep.FilesIn, rep.FilesOut, bytesize.Format(rep.BytesIn), bytesize.Format(rep.BytesOut), rep.RowsOut,
			rep.DeletedRowsApplied, rep.DeleteFilesRetired, rep.Commits)
	}
	if limited {
		vr.Detail = joinNonEmpty(vr.Detail, "groups beyond --max-rewrite-bytes left for the next run")
		left++
	}
	if rep != nil && rep.LeftForNextRun > 0 {
		vr.Detail = joinNonEmpty(vr.Detail, fmt.Sprintf("%d groups left for the next run", rep.LeftForNextRun))
	}
	return outcome(run, err, left, vr)
}

func (r *runner) rewriteManifests(ctx context.Context, t *catalog.Table, tp *TablePlan, vr *VerbReport) error {
	res, err := rewritemanifests.Run(ctx, r.cat, t, rewritemanifests.Options{TargetSize: tp.state.Policy.ManifestTargetSize,
		Commit: r.commitOptions(t.Metadata.Properties)})
	if err != nil {
		return err
	}
	vr.FilesIn, vr.FilesOut = int64(res.Plan.Selected), int64(res.Plan.Planned)
	if res.Committed {
		vr.Commits = 1
		vr.Detail = fmt.Sprintf("%d manifests -> %d", res.Plan.Selected, res.Plan.Planned)
	} else {
		vr.Detail = "nothing to do: rewriting would not reduce the manifest count"
	}
	return nil
}

func (r *runner) rewritePositionDeletes(ctx context.Context, t *catalog.Table, tp *TablePlan, vr *VerbReport) error {
	pol := tp.state.Policy
	res, err := rewriteposdeletes.Run(ctx, r.cat, t, rewriteposdeletes.Options{TargetSize: pol.DeleteTargetSize,
		MinInputFiles: pol.PosDeleteMinFiles, Commit: r.commitOptions(t.Metadata.Properties)})
	if err != nil {
		return err
	}
	if !res.Committed {
		vr.Detail = "nothing to rewrite: no partition has enough small position-delete files and none is dangling"
		return nil
	}
	vr.Commits = 1
	vr.FilesIn, vr.FilesOut, vr.BytesOut = int64(res.Removed), int64(res.Added), res.AddedBytes
	for _, g := range res.Groups {
		vr.BytesIn += g.Bytes
	}
	vr.Detail = fmt.Sprintf("%d position-delete files in %d partitions -> %d (%s -> %s, %d positions), %d dangling removed",
		res.Rewritten, len(res.Groups), res.Added, bytesize.Format(vr.BytesIn), bytesize.Format(res.AddedBytes), res.Positions, len(res.Dangling))
	return nil
}

func (r *runner) expire(ctx context.Context, t *catalog.Table, tp *TablePlan, vr *VerbReport) error {
	eo := expire.Options{Policy: expirePolicy(tp.state.Policy, r.o.now()), Cleanup: expire.CleanupAll,
		Commit: r.commitOptions(t.Metadata.Properties)}
	rep, err := expire.Run(ctx, r.cat, t, eo)
	if rep != nil {
		defer rep.Close()
		if rep.Plan != nil {
			vr.Snapshots = len(rep.Plan.Remove)
		}
		vr.FilesIn, vr.BytesIn = int64(rep.Deletion.Deleted), rep.DeletedBytes
		if rep.Committed {
			vr.Commits = 1
		}
		vr.Detail = fmt.Sprintf("%d snapshots expired, %d files deleted (%s)", vr.Snapshots, rep.Deletion.Deleted, bytesize.Format(rep.DeletedBytes))
		if n := len(rep.Deletion.Refused) + len(rep.Deletion.Failed); n > 0 && err == nil {
			vr.Status = StatusPartial
			vr.Detail += fmt.Sprintf("; %d files could not be deleted (the next expire retries them)", n)
		}
	}
	if errors.Is(err, expire.ErrGCDisabled) {
		vr.Status, vr.Detail = StatusSkipped, "gc.enabled=false: nothing expired"
		return nil
	}
	return err
}

func (r *runner) orphan(ctx context.Context, t *catalog.Table, tp *TablePlan, vr *VerbReport) error {
	first := t
	load := func(ctx context.Context) (*catalog.Table, error) {
		if t := first; t != nil {
			first = nil
			return t, nil
		}
		return r.cat.LoadTable(ctx, tp.state.Ident)
	}
	var sink orphanCounter
	sum, err := orphan.Run(ctx, load, orphan.Options{OlderThan: tp.state.Policy.OrphanOlderThan, Now: r.o.Now}, &sink)
	if sum != nil {
		vr.FilesIn, vr.BytesIn = sum.Deleted, sum.DeletedBytes
		vr.Orphans = sum.Orphans
		vr.Detail = fmt.Sprintf("%d orphans found, %d deleted (%s), %d kept", sum.Orphans, sum.Deleted, bytesize.Format(sum.DeletedBytes), sum.Kept)
		if sum.Conflicts > 0 {
			vr.Detail += fmt.Sprintf("; %d files referenced under another scheme or authority, nothing deleted (see icectl orphan --dry-run)", sum.Conflicts)
		}
	}
	if errors.Is(err, orphan.ErrGCDisabled) {
		vr.Status, vr.Detail = StatusSkipped, "gc.enabled=false: nothing deleted"
		return nil
	}
	if errors.Is(err, orphan.ErrIncomplete) && sum != nil && sum.Deleted > 0 {
		vr.Status = StatusPartial
	}
	return err
}

// orphanCounter takes orphan's streamed report; the summary counts it.
type orphanCounter struct{}

func (orphanCounter) Begin(orphan.Summary) error         { return nil }
func (orphanCounter) Conflict(orphan.ConflictFile) error { return nil }
func (orphanCounter) Orphan(orphan.Result) error         { return nil }
