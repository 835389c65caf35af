package dvmerge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// partState follows one planned partition through a run.
type partState struct {
	sum      *PartitionSummary
	res      *PartitionResult
	m        *merged
	rebuilds int
}

// executor runs one plan.
type executor struct {
	cat    catalog.Catalog
	t      *catalog.Table
	p      *Plan
	opts   Options
	branch string
	mg     *merger
	report *Report
	// dangling are the dangling deletes not yet removed; they go with the
	// first commit.
	dangling []table.FileKey
	// covered are the data files whose DVs, committed, hold every delete
	// (with Equality, also their equality deletes): an equality-delete
	// file goes once every live data file it applies to is covered.
	covered map[string]bool
	eqGone  map[table.FileKey]bool
	mu      sync.Mutex // guards fresh, which merges running ahead read
	// fresh is, after a concurrent commit changed partitions of a batch,
	// the table state they were merged again against; the partitions
	// merged after it use it too, instead of the plan's spill.
	fresh *freshHead
	// own holds the snapshots this run committed: a base that only they
	// separate from the head merged against has no change to validate.
	own map[int64]bool
	// sink takes the DV entries of the batch being gathered as each
	// partition's merge is taken, so no batch holds them all; added is
	// the batch's finished manifests, which its commit lists (and a
	// retry after a conflict copies, without the partitions merged again).
	sink  *table.ManifestSink
	added *table.AddedManifests
	// planID is, for a sharded run's committer, the plan whose partitions
	// each commit records in its summary (SummaryPlanID).
	planID string
}

// Execute merges the partitions of p and commits them to p's branch. The
// report is returned with the error too. Without PartialProgress the run
// is one commit (any failed partition: nothing is committed); with it,
// partitions are committed in batches of ceil(partitions / MaxCommits).
func Execute(ctx context.Context, cat catalog.Catalog, t *catalog.Table, p *Plan, opts Options) (*Report, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, errors.New("execute dv merge: no plan")
	}
	if p.TableUUID != t.Metadata.TableUUID {
		return nil, fmt.Errorf("execute dv merge: the plan is for table %s, but %s is table %s", p.TableUUID, t.Ident, t.Metadata.TableUUID)
	}
	opts.Branch = p.Branch
	opts.Equality, opts.RepairResurrected, opts.Where, opts.PositionDeletes = p.Equality, p.Repair, p.Where, p.PositionDeletes
	if err := opts.checkFormat(t.Ident, t.Metadata.FormatVersion); err != nil {
		return nil, err
	}
	start := opts.Now()
	if p.spill == nil {
		return nil, errors.New("execute dv merge: the plan was closed, or not made by PlanTable")
	}
	// The plan may come from a read-only copy of t (a command's pre-check
	// before its claim): the merge reads and writes through t's IO.
	st := *p.spill.t
	st.IO = t.IO
	p.spill.t = &st
	x := &executor{cat: cat, t: t, p: p, opts: opts, branch: p.Branch, dangling: slices.Clone(p.dangling),
		mg:      &merger{opts: opts, runID: uuid.NewString()},
		report:  &Report{Plan: p, Partitions: make([]PartitionResult, len(p.Partitions)), Operations: []string{}},
		covered: map[string]bool{}, eqGone: map[table.FileKey]bool{}, own: map[int64]bool{}}
	defer func() {
		x.report.total()
		x.report.Duration = opts.Now().Sub(start)
	}()
	states := make([]*partState, len(p.Partitions))
	var bytes int64
	for i := range p.Partitions {
		x.report.Partitions[i] = PartitionResult{ID: p.Partitions[i].ID, Status: StatusNotStarted}
		states[i] = &partState{sum: &p.Partitions[i], res: &x.report.Partitions[i]}
		bytes += p.Partitions[i].Bytes
	}
	if opts.Progress != nil {
		opts.Progress.Start(len(states), bytes)
		defer opts.Progress.Done()
	}
	return x.report, x.run(ctx, states, start)
}

func (x *executor) run(ctx context.Context, states []*partState, start time.Time) error {
	batchSize := len(states)
	if x.opts.PartialProgress {
		batchSize = (len(states) + x.opts.MaxCommits - 1) / x.opts.MaxCommits
	}
	deadline := start.Add(x.opts.MaxDuration)
	ahead := x.mergeAhead(ctx, states, deadline)
	defer ahead.stop()
	var ready []*partState
	for i, st := range states {
		out := ahead.next()
		if err := ctx.Err(); err != nil {
			if out.started {
				st.m = out.m
				ready = append(ready, st)
			}
			x.discardAll(ready, "not committed: the run was interrupted")
			x.dropAdded(ctx)
			return fmt.Errorf("dv merge interrupted: %w", err)
		}
		if !out.started {
			for _, rest := range states[i:] {
				rest.res.Reason = fmt.Sprintf("not started: --max-duration %s had passed; left for the next run", x.opts.MaxDuration)
			}
			break
		}
		if x.opts.Progress != nil {
			x.opts.Progress.Step(st.sum.Bytes)
		}
		if err := out.err; err != nil {
			st.res.Status, st.res.Reason = StatusFailed, err.Error()
			x.logf("partition %s failed: %v", st.sum.ID, err)
			if !x.opts.PartialProgress {
				x.discardAll(ready, fmt.Sprintf("not committed: partition %s failed", st.sum.ID))
				x.dropAdded(ctx)
				return fmt.Errorf("%w: partition %s: %v; nothing was committed", ErrPartitionsFailed, st.sum.ID, err)
			}
			continue
		}
		st.m = out.m
		ready = append(ready, st)
		if err := x.sinkAdd(ctx, st.m); err != nil {
			x.discardAll(ready, "not committed: "+err.Error())
			x.dropAdded(ctx)
			return fmt.Errorf("dv merge: %w", err)
		}
		if x.opts.PartialProgress && len(ready) >= batchSize {
			if err := x.commitBatch(ctx, ready); err != nil {
				return err
			}
			ready = nil
		}
	}
	if len(ready) > 0 || len(x.dangling) > 0 {
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

// mergeOut is the outcome of merging one partition.
type mergeOut struct {
	m       *merged
	err     error
	started bool // false: the run stopped or --max-duration passed first
	held    bool // it held a slot of the pipeline
}

// pipeline merges the partitions of a run in plan order on up to
// Concurrency goroutines, at most that many ahead of the commits, so
// independent partitions use every core while the results are taken,
// batched and committed in the plan's order. The partitions are read
// again from the plan's spill as they are started, so no more than those
// in flight are held.
type pipeline struct {
	outs   []chan mergeOut
	sem    chan struct{}
	cancel context.CancelFunc
	n      int // results taken
	x      *executor
	// done is closed when the goroutine reading the spill has returned:
	// the plan (and its spill) may be closed once the run is over.
	done chan struct{}
}

// errStopped ends the reading of the spill when no further partition is
// to be started.
var errStopped = errors.New("no further partition is started")

func (x *executor) mergeAhead(ctx context.Context, states []*partState, deadline time.Time) *pipeline {
	ctx, cancel := context.WithCancel(ctx)
	p := &pipeline{outs: make([]chan mergeOut, len(states)), sem: make(chan struct{}, x.opts.Concurrency), cancel: cancel, x: x,
		done: make(chan struct{})}
	for i := range p.outs {
		p.outs[i] = make(chan mergeOut, 1)
	}
	go func() {
		defer close(p.done)
		if len(states) == 0 {
			return // nothing to read the spill for
		}
		i := 0
		err := x.p.each(ctx, true, func(pp *PartitionPlan, h *head) error {
			if i >= len(states) || pp.ID != states[i].sum.ID {
				return fmt.Errorf("internal error: the plan's spill gives partition %s where the plan has another", pp.ID)
			}
			select {
			case p.sem <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() != nil || (x.opts.MaxDuration > 0 && !x.opts.Now().Before(deadline)) {
				// A slot taken here stays taken: nothing is started after.
				return errStopped
			}
			if f := x.freshHead(); f != nil {
				// A concurrent commit came since the plan: merge on the
				// table as the commit saw it.
				h, pp = f.h, f.plan(pp.ID)
			}
			out := p.outs[i]
			go func() {
				m, err := x.mg.merge(ctx, h, pp)
				out <- mergeOut{m: m, err: err, started: true, held: true}
			}()
			if i++; i == len(states) {
				return errStopped // the rest of the spill holds nothing planned
			}
			return nil
		})
		for ; i < len(states); i++ {
			if err == nil {
				err = fmt.Errorf("internal error: the plan's spill has no partition %s", states[i].sum.ID)
			}
			if errors.Is(err, errStopped) || ctx.Err() != nil {
				p.outs[i] <- mergeOut{}
			} else {
				p.outs[i] <- mergeOut{err: err, started: true}
			}
		}
	}()
	return p
}

// next waits for the next partition's outcome in plan order.
func (p *pipeline) next() mergeOut {
	out := <-p.outs[p.n]
	p.n++
	if out.held {
		<-p.sem
	}
	return out
}

// stop cancels the merges not yet taken, removes the files they wrote,
// and waits for the reading of the spill to end.
func (p *pipeline) stop() {
	p.cancel()
	for p.n < len(p.outs) {
		if out := p.next(); out.m != nil {
			if err := removeWritten(context.Background(), p.x.t.IO, p.x.t.Metadata, out.m.written); err != nil {
				p.x.logf("%v", err)
			}
		}
	}
	<-p.done
}

// freshHead is a whole table state that a conflict made the run merge
// against: its head and plan.
type freshHead struct {
	h        *head
	plans    map[string]*PartitionPlan
	dangling []table.FileKey
}

// newFresh plans h whole (it is loaded whole: only a concurrent commit
// makes a run read the table again).
func newFresh(h *head, sel *selector, opts Options) (*freshHead, error) {
	pps, dangling, err := planPartitions(h, sel, opts)
	if err != nil {
		return nil, err
	}
	f := &freshHead{h: h, plans: make(map[string]*PartitionPlan, len(pps)), dangling: dangling}
	for i := range pps {
		f.plans[pps[i].ID] = &pps[i]
	}
	return f, nil
}

// plan is the partition id as f plans it; one with nothing to merge any
// more is planned empty.
func (f *freshHead) plan(id string) *PartitionPlan {
	if pp := f.plans[id]; pp != nil {
		return pp
	}
	return &PartitionPlan{ID: id}
}

func (x *executor) freshHead() *freshHead {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.fresh
}

// baseSnapshot is the snapshot partitions are merged against now.
func (x *executor) baseSnapshot() *spec.Snapshot {
	if f := x.freshHead(); f != nil {
		return f.h.snap
	}
	if x.p.spill == nil {
		return nil // a sharded run's committer: each partition has its own
	}
	return x.p.spill.snap
}

// eqApplies lists the live data files each equality-delete file applies
// to, on the state partitions are merged against now.
func (x *executor) eqApplies() map[table.FileKey][]string {
	if f := x.freshHead(); f != nil {
		return f.h.eqApplies
	}
	return x.p.eqApplies
}

// conflictError is what a batch's validation found on the table it was
// to be committed on: partitions to merge again, and removals that no
// longer hold.
type conflictError struct {
	fresh   *freshHead
	rebuild map[*partState]string
	drop    map[table.FileKey]string
}

func (c *conflictError) Error() string {
	return fmt.Sprintf("dv merge batch conflicts with the table: %d partition(s) changed, %d removal(s) no longer hold", len(c.rebuild), len(c.drop))
}

func (c *conflictError) Unwrap() error { return table.ErrNewDeletes }

// eqRetirable lists the equality-delete files whose every live data file
// (on the state merged against) is covered by committed DVs or by batch.
func (x *executor) eqRetirable(batch []*partState) []table.FileKey {
	if !x.opts.Equality {
		return nil
	}
	covered := func(p string) bool {
		if x.covered[p] {
			return true
		}
		for _, st := range batch {
			if st.m != nil && st.m.covered[p] {
				return true
			}
		}
		return false
	}
	var out []table.FileKey
	for k, applies := range x.eqApplies() {
		if x.eqGone[k] || len(applies) == 0 {
			continue // dangling: removed as such when selected
		}
		all := true
		for _, p := range applies {
			if !covered(p) {
				all = false
				break
			}
		}
		if all {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, compareKeys)
	return out
}

// change builds the commit of batch on the executor's head.
func (x *executor) change(ctx context.Context, batch []*partState) (table.Change, []table.FileKey) {
	ch := table.Change{Operation: spec.OperationReplace, Branch: x.branch,
		Summary: map[string]string{"icectl.dv-merge.partitions": strconv.Itoa(len(batch))}}
	if x.planID != "" {
		ids := make([]string, len(batch))
		for i, st := range batch {
			ids[i] = st.sum.ID
		}
		b, _ := json.Marshal(ids) // strings: cannot fail
		ch.Summary[SummaryPlanID], ch.Summary[SummaryPartitionIDs] = x.planID, string(b)
	}
	ch.AddManifests = x.added
	seen := map[table.FileKey]bool{}
	remove := func(k table.FileKey) {
		if !seen[k] {
			seen[k] = true
			ch.Remove = append(ch.Remove, k)
		}
	}
	for _, st := range batch {
		for _, k := range st.m.remove {
			remove(k)
		}
		if st.m.changesRows {
			// Rows readers saw are deleted (a repair, or duplicate DVs
			// merged): Java's RowDelta with only deletes is a "delete".
			ch.Operation = spec.OperationDelete
		}
	}
	for _, k := range x.dangling {
		remove(k)
	}
	eq := x.eqRetirable(batch)
	for _, k := range eq {
		remove(k)
	}
	dangling := slices.Clone(x.dangling)
	ch.Validate = func(base *catalog.Table, baseSnap *spec.Snapshot) error {
		if x.unchangedSince(base.Metadata, baseSnap, batch) {
			// Reading every manifest again would find what the batch was
			// merged against: only this run's commits, on other
			// partitions, came since.
			return nil
		}
		h, err := loadHead(ctx, base, baseSnap, x.opts.scope())
		if err != nil {
			return err
		}
		// Selected on the fresh table's own specs: another writer may
		// have evolved the partitioning.
		sel, err := newSelector(h.t.Metadata, x.opts.Where)
		if err != nil {
			return err
		}
		fresh, err := newFresh(h, sel, x.opts)
		if err != nil {
			return err
		}
		return x.check(fresh, batch, dangling, eq)
	}
	return ch, eq
}

// check validates a batch on the fresh state: every merged partition's
// data files with deletes to merge, and their deletes, the same as when it
// was merged (a digest of them), every removal still live, dangling
// deletes still dangling, and every retired equality-delete file still
// covered.
func (x *executor) check(fresh *freshHead, batch []*partState, dangling, eq []table.FileKey) error {
	h := fresh.h
	c := &conflictError{fresh: fresh, rebuild: map[*partState]string{}, drop: map[table.FileKey]string{}}
	for _, st := range batch {
		var now uint64
		if pp := fresh.plans[st.sum.ID]; pp != nil {
			now = x.mg.digest(collectWork(h, pp, x.opts.scope()), st.m.known)
		}
		if now != st.m.digest {
			c.rebuild[st] = "its data files or their deletes changed in another commit"
			continue
		}
		for _, k := range st.m.remove {
			if _, ok := h.dels[k]; !ok {
				c.rebuild[st] = fmt.Sprintf("%s was removed by another commit", k)
				break
			}
		}
	}
	for _, k := range dangling {
		if _, ok := h.dels[k]; !ok {
			c.drop[k] = "removed by another commit"
		} else if h.applies[k] {
			c.drop[k] = "applies to a data file again"
		}
	}
	for _, k := range eq {
		if _, ok := h.dels[k]; !ok {
			c.drop[k] = "removed by another commit"
			continue
		}
		for _, p := range h.eqApplies[k] {
			if !x.covered[p] && !coveredIn(batch, p) {
				c.drop[k] = "applies to a data file this run did not merge"
				break
			}
		}
	}
	if len(c.rebuild) == 0 && len(c.drop) == 0 {
		return nil
	}
	return c
}

// unchangedSince reports whether baseSnap is the head every partition of
// batch was merged against, or follows it through this run's own commits
// only.
func (x *executor) unchangedSince(md *spec.TableMetadata, baseSnap *spec.Snapshot, batch []*partState) bool {
	merged := x.baseSnapshot()
	if len(batch) > 0 {
		merged = batch[0].m.snap
	}
	for _, st := range batch {
		if !sameSnapshot(st.m.snap, merged) {
			return false
		}
	}
	for s := baseSnap; s != nil; {
		if merged != nil && s.SnapshotID == merged.SnapshotID {
			return true
		}
		if !x.own[s.SnapshotID] {
			return false
		}
		if s.ParentSnapshotID == nil {
			return merged == nil
		}
		next, ok := md.SnapshotByID(*s.ParentSnapshotID)
		if !ok {
			return false
		}
		s = next
	}
	return merged == nil
}

func sameSnapshot(a, b *spec.Snapshot) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.SnapshotID == b.SnapshotID
}

func coveredIn(batch []*partState, p string) bool {
	for _, st := range batch {
		if st.m.covered[p] {
			return true
		}
	}
	return false
}

// commitBatch commits batch (and the pending dangling deletes), merging
// partitions again on the fresh table when a concurrent commit changed
// their deletes. It returns an error only when the run must stop.
func (x *executor) commitBatch(ctx context.Context, batch []*partState) error {
	if err := x.finishAdded(); err != nil {
		x.discardAll(batch, "not committed: "+err.Error())
		x.dropAdded(ctx)
		return fmt.Errorf("dv merge: %w", err)
	}
	for {
		ch, eq := x.change(ctx, batch)
		if ch.AddManifests.Files() == 0 && len(ch.Remove) == 0 {
			for _, st := range batch {
				st.res.Status = StatusNothing
				x.collect(st)
			}
			return nil
		}
		t, snap, err := table.CommitChange(ctx, x.cat, x.t, ch, x.opts.Commit)
		var conflict *conflictError
		switch {
		case err == nil:
			x.t = t
			x.added = nil // committed: the table lists them now
			x.own[snap.SnapshotID] = true
			x.report.Commits++
			x.report.Operations = append(x.report.Operations, ch.Operation)
			x.report.DanglingDeletesRemoved += len(x.dangling)
			x.dangling = nil
			x.report.EqualityDeleteFilesRetired += len(eq)
			for _, k := range eq {
				x.eqGone[k] = true
			}
			for _, st := range batch {
				st.res.Status = StatusCommitted
				if st.rebuilds > 0 {
					st.res.Status = StatusRebuilt
				}
				st.res.Rebuilds = st.rebuilds
				st.res.SnapshotID = snap.SnapshotID
				for p := range st.m.covered {
					x.covered[p] = true
				}
				x.collect(st)
			}
			x.logf("committed %d partition(s) as %s snapshot %d", len(batch), ch.Operation, snap.SnapshotID)
			return nil
		case errors.As(err, &conflict):
			if batch, err = x.resolve(ctx, batch, conflict); err != nil {
				x.discardAll(batch, "not committed: "+err.Error())
				x.dropAdded(ctx)
				return fmt.Errorf("dv merge: %w", err)
			}
		case errors.Is(err, catalog.ErrCommitStateUnknown):
			for _, st := range batch {
				st.res.Status, st.res.Reason = StatusFailed, "commit state unknown; its files were kept"
			}
			x.added = nil // kept with the Puffin files: the commit may have landed
			x.report.FailedCommits++
			return fmt.Errorf("dv merge commit: %w", err)
		default:
			x.report.FailedCommits++
			x.discardAll(batch, fmt.Sprintf("commit failed: %v", err))
			x.dropAdded(ctx)
			x.logf("commit failed: %v", err)
			if x.opts.PartialProgress && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				return nil
			}
			return fmt.Errorf("dv merge commit: %w", err)
		}
	}
}

// resolve merges the conflicting partitions again on the fresh head and
// drops removals that no longer hold; it returns the batch to commit next,
// with x.added rewritten to hold its DVs. An error (writing manifests)
// stops the run.
func (x *executor) resolve(ctx context.Context, batch []*partState, c *conflictError) ([]*partState, error) {
	x.mu.Lock()
	x.t, x.fresh = c.fresh.h.t, c.fresh
	x.mu.Unlock()
	// Deletes may have become dangling meanwhile (a compaction removed
	// the data file a file-scoped delete names): take them along.
	x.dangling = slices.Clone(c.fresh.dangling)
	x.dangling = slices.DeleteFunc(x.dangling, func(k table.FileKey) bool { _, drop := c.drop[k]; return drop })
	// An equality-delete file that applies to a data file this run did
	// not merge is not retired by it; but when partitions are merged again
	// on the fresh table, that file may be among theirs, and whether it is
	// covered is decided again on the fresh table (the merges again are
	// bounded, so this does not go on for ever).
	if len(c.rebuild) == 0 {
		for k := range c.drop {
			if e, ok := c.fresh.h.dels[k]; ok && e.content == manifest.ContentEqualityDeletes {
				x.eqGone[k] = true
			}
		}
	}
	// The DVs of the partitions merged again leave the batch's manifests:
	// those kept are copied to new ones, which the new merges join.
	stale := map[string]bool{}
	for st := range c.rebuild {
		for _, p := range st.m.written {
			stale[p] = true
		}
	}
	if len(stale) > 0 {
		if err := x.copyAdded(ctx, func(df *manifest.DataFile) bool { return !stale[df.FilePath] }); err != nil {
			return batch, err
		}
	}
	var next []*partState
	for _, st := range batch {
		why, again := c.rebuild[st]
		if !again {
			next = append(next, st)
			continue
		}
		x.logf("partition %s merged again: %s", st.sum.ID, why)
		if err := removeWritten(ctx, x.t.IO, x.t.Metadata, st.m.written); err != nil {
			x.logf("%v", err)
		}
		st.m.written, st.m.add, st.m.posAdd = nil, nil, nil
		if st.rebuilds >= maxRebuilds {
			st.res.Status, st.res.Reason = StatusFailed, fmt.Sprintf("merged %d times and its deletes still changed: %s", st.rebuilds, why)
			continue
		}
		st.rebuilds++
		m, err := x.mg.merge(ctx, c.fresh.h, c.fresh.plan(st.sum.ID))
		if err != nil {
			st.res.Status, st.res.Reason = StatusFailed, fmt.Sprintf("merge again (%s) failed: %v", why, err)
			continue
		}
		st.m = m
		st.res.Reason = "merged again: " + why
		next = append(next, st)
		if err := x.sinkAdd(ctx, m); err != nil {
			return batch, err // every partition's files go
		}
	}
	return next, x.finishAdded()
}

// sinkAdd writes the DV entries of m to the batch's manifests and drops
// them from m.
func (x *executor) sinkAdd(ctx context.Context, m *merged) error {
	if len(m.add) == 0 && len(m.posAdd) == 0 {
		return nil
	}
	if x.sink == nil {
		s, err := table.NewManifestSink(x.t.IO, x.t.Metadata)
		if err != nil {
			return err
		}
		x.sink = s
	}
	for i := range m.add {
		df := m.add[i].dataFile()
		if err := x.sink.Add(ctx, &df); err != nil {
			return err
		}
	}
	for i := range m.posAdd {
		if err := x.sink.AddWithDataSequence(ctx, &m.posAdd[i].df, m.posAdd[i].seq); err != nil {
			return err
		}
	}
	m.add, m.posAdd = nil, nil
	return nil
}

// finishAdded closes the batch's manifests being written, after those of
// a copy (copyAdded) if any: x.added is then what the commit lists.
func (x *executor) finishAdded() error {
	if x.sink == nil {
		return nil
	}
	if x.added != nil {
		return errors.New("internal error: a batch has two sets of added manifests")
	}
	a, err := x.sink.Finish()
	if err != nil {
		return err
	}
	x.sink, x.added = nil, a
	return nil
}

// copyAdded starts a new sink holding the entries of x.added that keep
// accepts, and removes x.added's manifests: no snapshot lists them.
func (x *executor) copyAdded(ctx context.Context, keep func(*manifest.DataFile) bool) error {
	s, err := table.NewManifestSink(x.t.IO, x.t.Metadata)
	if err != nil {
		return err
	}
	if x.added != nil {
		if err := x.added.CopyTo(ctx, s, keep); err != nil {
			return errors.Join(err, s.Abort(ctx))
		}
		if err := x.added.Remove(ctx, x.t.IO, x.t.Metadata); err != nil {
			x.logf("%v", err)
		}
	}
	if x.sink != nil {
		// Not reached: a batch's sink is finished before its commit.
		return errors.Join(errors.New("internal error: copy of added manifests while others are written"), s.Abort(ctx))
	}
	x.sink, x.added = s, nil
	return nil
}

// dropAdded removes the manifests of a batch that will not be committed.
func (x *executor) dropAdded(ctx context.Context) {
	if x.sink != nil {
		if err := x.sink.Abort(ctx); err != nil {
			x.logf("%v", err)
		}
		x.sink = nil
	}
	if err := x.added.Remove(ctx, x.t.IO, x.t.Metadata); err != nil {
		x.logf("%v", err)
	}
	x.added = nil
}

// collect moves a committed partition's results into the report.
func (x *executor) collect(st *partState) {
	m := st.m
	r := st.res
	r.DataFiles, r.DVsWritten, r.PuffinFiles, r.PuffinBytes = m.res.DataFiles, m.res.DVsWritten, m.res.PuffinFiles, m.res.PuffinBytes
	r.DVsRemoved, r.PositionDeleteFilesRetired = m.res.DVsRemoved, m.res.PositionDeleteFilesRetired
	r.PositionDeleteFilesWritten, r.PositionDeleteBytes, r.PositionsWritten = m.res.PositionDeleteFilesWritten, m.res.PositionDeleteBytes, m.res.PositionsWritten
	rep := x.report
	rep.Kept = append(rep.Kept, m.kept...)
	rep.Resurrected = append(rep.Resurrected, m.resurrected...)
	rep.Repaired = append(rep.Repaired, m.repaired...)
	rep.OutOfRange = append(rep.OutOfRange, m.outOfRange...)
	rep.MultipleDVs = append(rep.MultipleDVs, m.multiple...)
}

// discard removes the Puffin files of a partition that will not be
// committed.
func (x *executor) discard(st *partState, reason string) {
	if st.m != nil {
		if err := removeWritten(context.Background(), x.t.IO, x.t.Metadata, st.m.written); err != nil {
			x.logf("%v", err)
		}
		st.m.written, st.m.add, st.m.posAdd = nil, nil, nil
	}
	st.res.Status, st.res.Reason = StatusFailed, reason
}

func (x *executor) discardAll(sts []*partState, reason string) {
	for _, st := range sts {
		x.discard(st, reason)
	}
}

func (x *executor) logf(format string, args ...any) {
	if x.opts.Log != nil {
		fmt.Fprintf(x.opts.Log, format+"\n", args...)
	}
}

func (r *Report) total() {
	r.DataFiles, r.DVsWritten, r.PuffinFiles, r.PuffinBytes, r.DVsRemoved, r.PositionDeleteFilesRetired, r.LeftForNextRun = 0, 0, 0, 0, 0, 0, 0
	r.PositionDeleteFilesWritten, r.PositionDeleteBytes, r.PositionsWritten = 0, 0, 0
	for _, p := range r.Partitions {
		switch p.Status {
		case StatusCommitted, StatusRebuilt:
			r.DataFiles += p.DataFiles
			r.DVsWritten += p.DVsWritten
			r.PuffinFiles += p.PuffinFiles
			r.PuffinBytes += p.PuffinBytes
			r.DVsRemoved += p.DVsRemoved
			r.PositionDeleteFilesRetired += p.PositionDeleteFilesRetired
			r.PositionDeleteFilesWritten += p.PositionDeleteFilesWritten
			r.PositionDeleteBytes += p.PositionDeleteBytes
			r.PositionsWritten += p.PositionsWritten
		case StatusNotStarted:
			r.LeftForNextRun++
		}
	}
	for _, l := range []*[]DataFilePositions{&r.Resurrected, &r.OutOfRange} {
		if *l == nil {
			*l = []DataFilePositions{}
		}
	}
	if r.Kept == nil {
		r.Kept = []KeptDelete{}
	}
	if r.Repaired == nil {
		r.Repaired = []RepairedFile{}
	}
	if r.MultipleDVs == nil {
		r.MultipleDVs = []MultipleDVs{}
	}
}
