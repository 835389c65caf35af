package maintain

import (
	"context"
	"errors"
	"fmt"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/deleterows"
	"github.com/icectl/icectl/dvmerge"
	"github.com/icectl/icectl/expire"
	"github.com/icectl/icectl/internal/shared/batchrun"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/internal/shared/verbrun"
	"github.com/icectl/icectl/orphan"
	"github.com/icectl/icectl/plan"
	"github.com/icectl/icectl/rewritemanifests"
	"github.com/icectl/icectl/rewriteposdeletes"
)

// runVerb runs verb d.Verb on t through the verb's own package, as its
// command does, and fills vr with what it did.
func (r *runner) runVerb(ctx context.Context, t *catalog.Table, tp *TablePlan, d Due, vr *VerbReport) error {
	switch d.Verb {
	case VerbRetention:
		return r.retention(ctx, t, tp, vr)
	case VerbDVMerge:
		return r.dvMerge(ctx, t, vr)
	case VerbRewriteEqualityDeletes:
		return r.rewriteEqualityDeletes(ctx, t, vr)
	case VerbCompact:
		return r.compact(ctx, t, tp, vr)
	case VerbRewritePositionDeletes:
		return r.rewritePositionDeletes(ctx, t, tp, vr)
	case VerbRewriteManifests:
		return r.rewriteManifests(ctx, t, tp, vr)
	case VerbExpire:
		return r.expire(ctx, t, tp, vr)
	case VerbStatsColumns:
		return r.statsColumns(ctx, t, tp, vr)
	case VerbOrphan:
		return r.orphan(ctx, t, tp, vr)
	}
	return fmt.Errorf("unknown verb %q", d.Verb)
}

// outcome sets vr's status from a verb's classified end (verbrun).
func outcome(out verbrun.Outcome, err error, left int, vr *VerbReport) error {
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

// The verbs run through the verb runner (internal/shared/verbrun) as the
// CLI runs them, without a claim of their own: the table's claim is held
// around all of them (runner.table).

func (r *runner) dvMerge(ctx context.Context, t *catalog.Table, vr *VerbReport) error {
	res := verbrun.Run(ctx, r.dvMergeVerb(), t, verbrun.Options{})
	left := 0
	if rep := res.Report; rep != nil {
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
	if res.Idle {
		res.Plan.Close()
		vr.Detail = "nothing to merge"
	}
	if left > 0 {
		vr.Detail = joinNonEmpty(vr.Detail, fmt.Sprintf("%d partitions left for the next run", left))
	}
	return outcome(res.Outcome, res.Err, left, vr)
}

func (r *runner) rewriteEqualityDeletes(ctx context.Context, t *catalog.Table, vr *VerbReport) error {
	res := verbrun.Run(ctx, r.rewriteEqualityDeletesVerb(), t, verbrun.Options{})
	left := 0
	if rep := res.Report; rep != nil {
		left = rep.LeftForNextRun
		vr.FilesIn = int64(rep.EqualityDeleteFilesRetired + rep.DanglingDeletesRemoved)
		vr.FilesOut = int64(rep.PositionDeleteFilesWritten)
		vr.BytesOut = rep.PositionDeleteBytes
		vr.Commits, vr.LeftForNextRun = rep.Commits, rep.LeftForNextRun
		vr.Detail = fmt.Sprintf("%d data files: %d equality delete files replaced by %d position delete files (%d positions), %d dangling deletes removed",
			rep.DataFiles, rep.EqualityDeleteFilesRetired, rep.PositionDeleteFilesWritten, rep.PositionsWritten, rep.DanglingDeletesRemoved)
		if rep.Commits == 0 && rep.DataFiles == 0 && rep.DanglingDeletesRemoved == 0 {
			vr.Detail = "nothing to convert"
		}
	}
	if res.Idle {
		res.Plan.Close()
		vr.Detail = "nothing to convert"
	}
	if left > 0 {
		vr.Detail = joinNonEmpty(vr.Detail, fmt.Sprintf("%d partitions left for the next run", left))
	}
	return outcome(res.Outcome, res.Err, left, vr)
}

func (r *runner) compact(ctx context.Context, t *catalog.Table, tp *TablePlan, vr *VerbReport) error {
	co := r.compactOptions(tp)
	v := compact.Verb(r.cat, co, r.commitOptions)
	limited, started := false, true
	planTable := v.Plan
	v.Plan = func(ctx context.Context, t *catalog.Table) (p *plan.Plan, idle bool, err error) {
		ok, err := r.reserveBytes(func(limit *int64) (int64, error) {
			if p, idle, err = planTable(ctx, t); err != nil {
				return 0, err
			}
			if limit != nil && p.Totals.InputBytes > *limit {
				// Only whole groups that fit what is left of the budget.
				limited = true
				co.Plan.MaxBytesToRewrite = limit
				v = compact.Verb(r.cat, co, r.commitOptions)
				if p, idle, err = v.Plan(ctx, t); err != nil {
					return 0, err
				}
			}
			return p.Totals.InputBytes, nil
		})
		if !ok {
			started = false
			return nil, true, err
		}
		return p, idle, err
	}
	execute := v.Execute
	run := v
	run.Execute = func(ctx context.Context, t *catalog.Table, p *plan.Plan) (*compact.Report, error) {
		if limited {
			return v.Execute(ctx, t, p)
		}
		return execute(ctx, t, p)
	}
	res := verbrun.Run(ctx, run, t, verbrun.Options{})
	if !started {
		vr.Status = StatusNotStarted
		vr.Detail = "not started: the run's --max-rewrite-bytes is spent; the next run does it"
		return nil
	}
	if limited {
		r.noteBytesHit()
	}
	if res.Idle {
		vr.Status, vr.Detail = StatusDone, "nothing to compact: no group of files met the thresholds"
		if limited {
			vr.Status, vr.Detail = StatusNotStarted, "not started: no group fits what is left of --max-rewrite-bytes; the next run does it"
		}
		return nil
	}
	left := 0
	if rep := res.Report; rep != nil {
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
	if rep := res.Report; rep != nil && rep.LeftForNextRun > 0 {
		vr.Detail = joinNonEmpty(vr.Detail, fmt.Sprintf("%d groups left for the next run", rep.LeftForNextRun))
	}
	return outcome(res.Outcome, res.Err, left, vr)
}

func (r *runner) rewriteManifests(ctx context.Context, t *catalog.Table, tp *TablePlan, vr *VerbReport) error {
	res := verbrun.Run(ctx, r.rewriteManifestsVerb(tp), t, verbrun.Options{})
	if res.Err != nil {
		return res.Err
	}
	if res.Idle || !res.Report.Committed {
		vr.Detail = "nothing to do: rewriting would not reduce the manifest count"
		return nil
	}
	p := res.Report.Plan
	vr.FilesIn, vr.FilesOut = int64(p.Selected), int64(p.Planned)
	vr.Commits = 1
	vr.Detail = fmt.Sprintf("%d manifests -> %d", p.Selected, p.Planned)
	return nil
}

func (r *runner) rewritePositionDeletes(ctx context.Context, t *catalog.Table, tp *TablePlan, vr *VerbReport) error {
	res := verbrun.Run(ctx, r.rewritePositionDeletesVerb(tp), t, verbrun.Options{})
	if res.Err != nil {
		return res.Err
	}
	if res.Idle || !res.Report.Committed {
		vr.Detail = "nothing to rewrite: no partition has enough small position-delete files and none is dangling"
		return nil
	}
	rep := res.Report
	vr.Commits = 1
	vr.FilesIn, vr.FilesOut, vr.BytesOut = int64(rep.Removed), int64(rep.Added), rep.AddedBytes
	for _, g := range rep.Groups {
		vr.BytesIn += g.Bytes
	}
	vr.Detail = fmt.Sprintf("%d position-delete files in %d partitions -> %d (%s -> %s, %d positions), %d dangling removed",
		rep.Rewritten, len(rep.Groups), rep.Added, bytesize.Format(vr.BytesIn), bytesize.Format(rep.AddedBytes), rep.Positions, len(rep.Dangling))
	return nil
}

func (r *runner) expire(ctx context.Context, t *catalog.Table, tp *TablePlan, vr *VerbReport) error {
	// Executed with nothing to do too, as before: the report says so.
	res := verbrun.Run(ctx, r.expireVerb(tp), t, verbrun.Options{ExecuteIdle: true})
	rep, err := res.Report, res.Err
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
	var sum orphan.Summary
	res := verbrun.Run(ctx, r.orphanVerb(tp, &sum), t, verbrun.Options{ExecuteIdle: true})
	if sum.Table != "" {
		vr.FilesIn, vr.BytesIn = sum.Deleted, sum.DeletedBytes
		vr.Orphans = sum.Orphans
		vr.Detail = fmt.Sprintf("%d orphans found, %d deleted (%s), %d kept", sum.Orphans, sum.Deleted, bytesize.Format(sum.DeletedBytes), sum.Kept)
		if sum.Conflicts > 0 {
			vr.Detail += fmt.Sprintf("; %d files referenced under another scheme or authority, nothing deleted (see icectl orphan --dry-run)", sum.Conflicts)
		}
	}
	if errors.Is(res.Err, orphan.ErrGCDisabled) {
		vr.Status, vr.Detail = StatusSkipped, "gc.enabled=false: nothing deleted"
		return nil
	}
	if res.Outcome == batchrun.Partial {
		vr.Status = StatusPartial
	}
	return res.Err
}

// orphanCounter takes orphan's streamed report; the summary counts it.
type orphanCounter struct{}

func (orphanCounter) Begin(orphan.Summary) error         { return nil }
func (orphanCounter) Conflict(orphan.ConflictFile) error { return nil }
func (orphanCounter) Orphan(orphan.Result) error         { return nil }

// The verbs as maintain runs them, with the table's policy.

func (r *runner) dvMergeVerb() verbrun.Verb[*dvmerge.Plan, *dvmerge.Report] {
	// Equality: a v3 table's equality deletes go into DVs too (a Flink
	// upsert stream writes one with every commit), so that readers stop
	// joining them and compaction need not rewrite data for them.
	return dvmerge.Verb(r.cat, dvmerge.Options{Equality: true, PartialProgress: true, MaxDuration: r.remaining(), CreatedBy: r.o.CreatedBy, Now: r.o.Now}, r.commitOptions)
}

func (r *runner) rewriteEqualityDeletesVerb() verbrun.Verb[*dvmerge.Plan, *dvmerge.Report] {
	return dvmerge.Verb(r.cat, dvmerge.Options{PositionDeletes: true, PartialProgress: true, MaxDuration: r.remaining(), Now: r.o.Now}, r.commitOptions)
}

func (r *runner) compactOptions(tp *TablePlan) compact.Options {
	pol := tp.state.Policy
	return compact.Options{
		Plan: plan.Options{TargetFileSize: pol.TargetFileSize, MinInputFiles: pol.MinInputFiles, DeleteRatioThreshold: pol.DeleteRatio,
			OutputSpec: pol.OutputSpec},
		// Partial progress: a budget or a failure keeps what finished.
		PartialProgress: true, MaxDuration: r.remaining(), Now: r.o.Now,
	}
}

func (r *runner) rewriteManifestsVerb(tp *TablePlan) verbrun.Verb[rewritemanifests.Plan, *rewritemanifests.Result] {
	return rewritemanifests.Verb(r.cat, rewritemanifests.Options{TargetSize: tp.state.Policy.ManifestTargetSize}, r.commitOptions)
}

func (r *runner) rewritePositionDeletesVerb(tp *TablePlan) verbrun.Verb[rewriteposdeletes.Plan, *rewriteposdeletes.Result] {
	pol := tp.state.Policy
	return rewriteposdeletes.Verb(r.cat, rewriteposdeletes.Options{TargetSize: pol.DeleteTargetSize, MinInputFiles: pol.PosDeleteMinFiles}, r.commitOptions)
}

func (r *runner) orphanVerb(tp *TablePlan, sum *orphan.Summary) verbrun.Verb[*orphan.Plan, *orphan.Summary] {
	return orphan.Verb(r.cat, orphan.Options{OlderThan: tp.state.Policy.OrphanOlderThan, Now: r.o.Now}, orphanCounter{}, sum)
}

func (r *runner) expireVerb(tp *TablePlan) verbrun.Verb[struct{}, *expire.Report] {
	pol := tp.state.Policy
	return expire.Verb(r.cat, expire.Options{Policy: expirePolicy(pol, r.o.now()), Cleanup: expire.CleanupAll,
		CleanExpiredMetadata: pol.CleanExpiredMetadata}, r.commitOptions)
}

// planVerb plans verb d on t reading only, as its run would before taking
// a claim (verbrun.Verb.Plan): whether it has nothing to do, or the error
// that refuses the table. It charges no budget. orphan, whose plan is a
// listing of storage, always has work here.
func (r *runner) planVerb(ctx context.Context, t *catalog.Table, tp *TablePlan, d Due) (idle bool, err error) {
	ro := verbrun.ReadOnly(t)
	switch d.Verb {
	case VerbRetention:
		v, err := r.retentionVerb(t, tp)
		if err != nil {
			return false, err
		}
		_, idle, err := v.Plan(ctx, ro)
		return idle, err
	case VerbDVMerge:
		p, idle, err := r.dvMergeVerb().Plan(ctx, ro)
		p.Close()
		return idle, err
	case VerbRewriteEqualityDeletes:
		p, idle, err := r.rewriteEqualityDeletesVerb().Plan(ctx, ro)
		p.Close()
		return idle, err
	case VerbCompact:
		_, idle, err := compact.Verb(r.cat, r.compactOptions(tp), nil).Plan(ctx, ro)
		return idle, err
	case VerbRewritePositionDeletes:
		_, idle, err := r.rewritePositionDeletesVerb(tp).Plan(ctx, ro)
		return idle, err
	case VerbRewriteManifests:
		_, idle, err := r.rewriteManifestsVerb(tp).Plan(ctx, ro)
		return idle, err
	case VerbStatsColumns:
		return planStatsColumns(ro, tp)
	case VerbExpire:
		_, idle, err := r.expireVerb(tp).Plan(ctx, ro)
		if errors.Is(err, expire.ErrGCDisabled) {
			return true, nil
		}
		return idle, err
	}
	return false, nil
}

// retentionVerb is delete-rows with the table's retention cutoff, as of
// the run's now; a column that is not a timestamp or date refuses it.
func (r *runner) retentionVerb(t *catalog.Table, tp *TablePlan) (verbrun.Verb[*deleterows.Plan, *deleterows.Report], error) {
	pol := tp.state.Policy
	w, err := deleterows.RetentionWhere(t.Metadata.CurrentSchema(), pol.RetentionColumn, pol.RetentionKeep, r.o.now())
	if err != nil {
		return verbrun.Verb[*deleterows.Plan, *deleterows.Report]{}, err
	}
	return deleterows.Verb(r.cat, deleterows.Options{Where: w}, r.commitOptions), nil
}

func (r *runner) retention(ctx context.Context, t *catalog.Table, tp *TablePlan, vr *VerbReport) error {
	v, err := r.retentionVerb(t, tp)
	if err != nil {
		vr.Status = StatusFailed
		return err
	}
	res := verbrun.Run(ctx, v, t, verbrun.Options{})
	switch rep := res.Report; {
	case res.Idle:
		vr.Detail = "no row past retention"
	case rep != nil && rep.SnapshotID != 0:
		vr.Commits = 1
		vr.Rows = rep.Deleted
		vr.FilesIn, vr.FilesOut = int64(rep.FilesRemoved), int64(rep.DeleteFilesAdded)
		vr.Detail = fmt.Sprintf("deleted %d rows where %s: %d data files removed, %d delete files added; rows %d -> %d",
			rep.Deleted, rep.Plan.Where, rep.FilesRemoved, rep.DeleteFilesAdded, rep.RowsBefore, rep.RowsAfter)
	}
	return outcome(res.Outcome, res.Err, 0, vr)
}
