package compact

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan"
)

// groupState follows one plan group through a run.
type groupState struct {
	g       *plan.Group
	res     *GroupResult
	rw      *rewrite
	rebases int
	err     error
	skipped bool // not started: the time window closed or the run stopped
}

// executor runs one plan.
type executor struct {
	cat     catalog.Catalog
	t       *catalog.Table // latest known version of the table
	p       *plan.Plan
	opts    Options
	branch  string
	baseSeq int64
	report  *Report
	// committedGroups and retiredConditional track conditional retires
	// (plan.RetireAfterGroups) across batches.
	committedGroups map[string]bool
	condDone        map[int]bool
	condDead        map[int]bool
	dangling        int // partition-scoped deletes retired by committed groups
	swept           int // other dangling deletes removed (remove-dangling-deletes)
	logMu           sync.Mutex
	// schemas parses the manifests' Avro schemas once for the run's head
	// reads (the first, and one per commit attempt).
	schemas *manifest.SchemaCache
	// last is the head read last, reused by a commit's validation when the
	// branch is still at its snapshot (the usual case: nothing was
	// committed meanwhile), instead of reading every manifest again.
	last *head
	// planID is set in a sharded run (worker or committer): it names the
	// outputs by plan and group and is recorded in the summary of every
	// snapshot committed, with the group ids, so a committer run again
	// never commits a group twice.
	planID string
	// committedOutputs, when set, collects the output paths of each
	// committed group; rebased, when set, is told of each group rewritten
	// on a newer head (h) before its commit is tried again.
	committedOutputs map[string][]string
	rebased          func(st *groupState, h *head)
}

// Execute rewrites the groups of p and commits them to the branch the plan
// was made for (opts.Branch, when set, must name the same branch). See the
// package documentation for what it guarantees. The report is returned
// with the error too, when there is one.
//
// Without PartialProgress the whole run is one commit: any failed group
// means nothing is committed. With it, finished groups are committed in
// batches of ceil(groups / MaxCommits) by one committer; a failed batch
// does not undo earlier ones, and the run fails when more than
// MaxFailedCommits commits failed.
func Execute(ctx context.Context, cat catalog.Catalog, t *catalog.Table, p *plan.Plan, opts Options) (*Report, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	start := opts.Now()
	if p == nil {
		return nil, errors.New("execute compaction: no plan")
	}
	if err := refuseV1(t); err != nil {
		return nil, err
	}
	if p.UUID != "" && p.UUID != t.Metadata.TableUUID {
		return nil, fmt.Errorf("execute compaction: the plan is for table %s, but %s is table %s", p.UUID, t.Ident, t.Metadata.TableUUID)
	}
	branch := opts.Branch
	if branch == "" {
		branch = p.Branch
	}
	if branch == "" {
		branch = "main"
	}
	if p.Branch != "" && p.Branch != branch {
		return nil, fmt.Errorf("%w: the plan is for branch %q, not %q", ErrInvalidOptions, p.Branch, branch)
	}
	x := &executor{cat: cat, t: t, p: p, opts: opts, branch: branch,
		report:          &Report{Plan: p, Groups: make([]GroupResult, len(p.Groups))},
		committedGroups: map[string]bool{}, condDone: map[int]bool{}, condDead: map[int]bool{},
		schemas: manifest.NewSchemaCache()}
	states := make([]*groupState, len(p.Groups))
	var totalBytes int64
	for i := range p.Groups {
		g := &p.Groups[i]
		x.report.Groups[i] = GroupResult{ID: g.ID, Status: StatusNotStarted, InputFiles: len(g.Inputs),
			BytesIn: g.InputBytes, RowsIn: g.InputRecords}
		states[i] = &groupState{g: g, res: &x.report.Groups[i]}
		totalBytes += g.InputBytes
	}
	defer func() {
		x.report.total()
		x.report.DeleteFilesRetired += len(x.condDone) + x.swept
		x.report.DanglingDeletesRemoved = x.dangling + len(x.condDone) + x.swept
		x.report.Duration = opts.Now().Sub(start)
	}()
	if len(states) == 0 {
		return x.report, nil
	}
	if p.Base == nil {
		return x.report, errors.New("execute compaction: the plan has groups but no base snapshot")
	}
	x.baseSeq = p.Base.SequenceNumber
	snap, err := table.BranchHead(t.Metadata, branch)
	if err != nil {
		return x.report, fmt.Errorf("execute compaction of %s: %w", t.Ident, err)
	}
	h, err := x.headAt(ctx, t, snap)
	if err != nil {
		return x.report, fmt.Errorf("execute compaction of %s: %w", t.Ident, err)
	}
	if opts.Progress != nil {
		opts.Progress.Start(len(states), totalBytes)
		defer opts.Progress.Done()
	}
	return x.report, x.runAll(ctx, h, states, start)
}

// runAll rewrites groups with bounded concurrency and commits them as they
// finish.
func (x *executor) runAll(ctx context.Context, h *head, states []*groupState, start time.Time) error {
	work, stop := context.WithCancel(ctx)
	defer stop()
	var deadline time.Time
	if x.opts.MaxDuration > 0 {
		deadline = start.Add(x.opts.MaxDuration)
	}
	jobs := make(chan *groupState)
	done := make(chan *groupState)
	order := states
	if deadline.IsZero() {
		// With a time window the plan's order is the priority order:
		// what is left for the next run must be its tail.
		order = dispatchOrder(states)
	}
	go func() {
		defer close(jobs)
		for _, st := range order {
			select {
			case jobs <- st:
			case <-work.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range min(x.opts.MaxConcurrentGroups, len(states)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for st := range jobs {
				if work.Err() != nil || (!deadline.IsZero() && !x.opts.Now().Before(deadline)) {
					st.skipped = true
				} else {
					x.rewriteGroup(work, h, st)
				}
				done <- st
			}
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()

	batchSize := (len(states) + x.opts.MaxCommits - 1) / x.opts.MaxCommits
	var ready []*groupState
	var fatal error
	var failed *groupState
	for st := range done {
		if x.opts.Progress != nil && !st.skipped {
			x.opts.Progress.Step(st.g.InputBytes)
		}
		switch {
		case st.skipped:
			st.res.Reason = "not started: the run stopped before this group"
			if !deadline.IsZero() && ctx.Err() == nil && fatal == nil && failed == nil {
				st.res.Reason = fmt.Sprintf("not started: --max-duration %s had passed; left for the next run", x.opts.MaxDuration)
			}
			continue
		case st.err != nil:
			if errors.Is(st.err, errInputGone) {
				st.res.Status, st.res.Reason = StatusDropped, st.err.Error()
				continue
			}
			if work.Err() != nil && errors.Is(st.err, context.Canceled) {
				// Stopped mid-rewrite by another group's failure (or an
				// interrupt): that failure is reported once, on its own
				// group, not again here.
				st.res.Status, st.res.Reason = StatusCancelled, stopReason(ctx, failed)
				continue
			}
			// The report carries the failure; it is not logged as well,
			// so that each failure is printed once.
			st.res.Status, st.res.Reason = StatusFailed, st.err.Error()
			if !x.opts.PartialProgress && failed == nil {
				failed = st
				stop()
			}
			continue
		}
		if fatal != nil || failed != nil {
			x.cancel(st, "not committed: the run stopped")
			continue
		}
		ready = append(ready, st)
		if x.opts.PartialProgress && len(ready) >= batchSize {
			if err := x.commitBatch(ctx, ready); err != nil {
				fatal = err
				stop()
			}
			ready = nil
		}
	}
	if fatal != nil {
		x.cancelAll(ready, "not committed: the run stopped")
		return fatal
	}
	if err := ctx.Err(); err != nil {
		x.cancelAll(ready, "not committed: the run was interrupted")
		return fmt.Errorf("compaction interrupted: %w", err)
	}
	if failed != nil {
		x.cancelAll(ready, fmt.Sprintf("not committed: group %s failed", failed.g.ID))
		return fmt.Errorf("%w: group %s: %v; nothing was committed (use --partial-progress to commit the groups that succeed)",
			ErrGroupsFailed, failed.g.ID, failed.err)
	}
	if len(ready) > 0 {
		if err := x.commitBatch(ctx, ready); err != nil {
			return err
		}
	}
	if x.opts.PartialProgress && x.report.FailedCommits > x.opts.MaxFailedCommits {
		return fmt.Errorf("%w: %d commits failed, more than the %d allowed (--max-failed-commits)",
			ErrTooManyFailedCommits, x.report.FailedCommits, x.opts.MaxFailedCommits)
	}
	return nil
}

// dispatchOrder is the order groups start in: largest input first, so
// that with many partitions of uneven size the run does not end with one
// large group on one core while the other idles (longest processing time
// first). Equal sizes keep plan order, so the order is deterministic; the
// report keeps plan order whatever the dispatch.
func dispatchOrder(states []*groupState) []*groupState {
	out := slices.Clone(states)
	slices.SortStableFunc(out, func(a, b *groupState) int { return cmp.Compare(b.g.InputBytes, a.g.InputBytes) })
	return out
}

// rewriteGroup resolves and rewrites one group against h; the outcome is
// left in st.
func (x *executor) rewriteGroup(ctx context.Context, h *head, st *groupState) {
	rw, err := resolve(h, st.g, x.baseSeq)
	if err != nil {
		st.err = err
		return
	}
	if err := x.run(ctx, h, st.g, rw); err != nil {
		st.err = fmt.Errorf("rewrite group %s: %w", st.g.ID, err)
		return
	}
	st.rw = rw
	how := rw.path
	if rw.pathNote != "" {
		how += ": " + rw.pathNote
	}
	x.logf("group %s: %d files, %d rows -> %d files, %d rows (%s)", st.g.ID, len(rw.inputs), rw.rowsIn, len(rw.outputs), rw.rowsOut, how)
}

// discard removes the outputs of a group that will not be committed.
func (x *executor) discard(st *groupState, reason string) {
	if st.rw != nil {
		if err := removeFiles(context.Background(), x.t.IO, x.t.Metadata, st.rw.outputs); err != nil {
			x.logf("%v", err)
		}
		st.rw.outputs = nil
	}
	if st.res.Status == StatusNotStarted {
		st.res.Status = StatusFailed
	}
	st.res.Reason = reason
}

// cancelAll discards groups that succeeded but are not committed because
// the run stopped for another reason.
func (x *executor) cancelAll(sts []*groupState, reason string) {
	for _, st := range sts {
		x.cancel(st, reason)
	}
}

func (x *executor) cancel(st *groupState, reason string) {
	x.discard(st, reason)
	st.res.Status = StatusCancelled
}

// stopReason says why the run stopped a group it had started.
func stopReason(ctx context.Context, failed *groupState) string {
	switch {
	case ctx.Err() != nil:
		return "stopped: the run was interrupted"
	case failed != nil:
		return fmt.Sprintf("stopped: group %s failed", failed.g.ID)
	}
	return "stopped: the run stopped"
}

func (x *executor) logf(format string, args ...any) {
	if x.opts.Log != nil {
		x.logMu.Lock()
		defer x.logMu.Unlock()
		fmt.Fprintf(x.opts.Log, format+"\n", args...)
	}
}
