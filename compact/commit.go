package compact

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan"
)

// conflictError is what a batch's validation found on the head it was to
// be committed on: groups whose inputs are gone, groups whose inputs have
// new deletes (or newly assigned row ids) and must be rewritten, and
// retirements that are no longer live.
type conflictError struct {
	h      *head
	gone   map[*groupState]string
	rebase map[*groupState]string
	stale  bool
}

func (c *conflictError) Error() string {
	return fmt.Sprintf("compaction batch conflicts with the table: %d group(s) lost inputs, %d have new deletes", len(c.gone), len(c.rebase))
}

func (c *conflictError) Unwrap() error {
	if len(c.gone) > 0 {
		return table.ErrFileGone
	}
	return table.ErrNewDeletes
}

// check validates batch against h: every input still live, with no delete
// applying to it that its rewrite did not apply and the first_row_id the
// rewrite used (else the rows' lineage would change), and every retired
// delete file still live.
func (x *executor) check(h *head, batch []*groupState) *conflictError {
	c := &conflictError{h: h, gone: map[*groupState]string{}, rebase: map[*groupState]string{}}
	for _, st := range batch {
		rw := st.rw
	inputs:
		for _, in := range rw.inputs {
			path := in.entry.Entry.DataFile.FilePath
			e, ok := h.data[path]
			if !ok {
				c.gone[st] = fmt.Sprintf("input %s was removed by another commit", path)
				break
			}
			if _, done := c.rebase[st]; done {
				continue
			}
			if !sameID(e.Entry.DataFile.FirstRowID, in.entry.Entry.DataFile.FirstRowID) {
				c.rebase[st] = fmt.Sprintf("input %s was assigned row ids by another commit", path)
				continue
			}
			for _, k := range applicableKeys(h.deletesFor(*e, x.baseSeq)) {
				if !rw.applied[k] {
					c.rebase[st] = fmt.Sprintf("delete %s was committed to input %s meanwhile", k, path)
					continue inputs
				}
			}
		}
		if _, gone := c.gone[st]; gone {
			delete(c.rebase, st)
			continue
		}
		for _, k := range rw.retire {
			if !h.keys[k] {
				c.stale = true
			}
		}
	}
	for i, cr := range x.p.RetireAfterGroups {
		if !x.condDone[i] && !x.condDead[i] && !h.keys[refKey(cr.Delete.Path, cr.Delete.ContentOffset)] {
			x.condDead[i] = true
			c.stale = true
		}
	}
	if len(c.gone) == 0 && len(c.rebase) == 0 && !c.stale {
		return nil
	}
	return c
}

func sameID(a, b *int64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func refKey(path string, offset *int64) table.FileKey {
	k := table.PathKey(path)
	if offset != nil {
		k.ContentOffset = *offset
	}
	return k
}

// change builds the replace snapshot of batch: outputs added, inputs and
// retired deletes removed, outputs at the plan's base sequence number.
//
// h (nil: unreadable) is the head the commit is expected to build on.
// The plan's partition-scoped retirements (rules 2 and 3 of plan.retire,
// decided on the plan's base) are made only when the delete dangles once
// batch is committed on h: a commit since may have added a data file it
// applies to (another compaction's output at an older sequence number),
// and removing it would bring that file's deleted rows back. The ones
// kept are returned in kept. With remove-dangling-deletes, every other
// delete file that dangles then is removed too (swept). Validation
// decides both again on the head the commit is actually applied to.
func (x *executor) change(ctx context.Context, batch []*groupState, h *head) (ch table.Change, conds []int, swept []table.FileKey, kept map[table.FileKey]bool) {
	seq := x.baseSeq
	ch = table.Change{Operation: spec.OperationReplace, Branch: x.branch, DataSequenceNumber: &seq,
		Summary: map[string]string{"icectl.compaction.groups": strconv.Itoa(len(batch))},
		// The commit shares the run's parsed manifest headers, and builds
		// on the live files its validation just read when the base is
		// the same snapshot (a retry against a new head reads it anew).
		Schemas: x.schemas, BaseFiles: x.baseFiles}
	seen := map[table.FileKey]bool{}
	remove := func(k table.FileKey) {
		if !seen[k] {
			seen[k] = true
			ch.Remove = append(ch.Remove, k)
		}
	}
	inBatch := map[string]bool{}
	if x.planID != "" {
		ids := make([]string, len(batch))
		for i, st := range batch {
			ids[i] = st.g.ID
		}
		ch.Summary[SummaryPlanID] = x.planID
		ch.Summary[SummaryGroupIDs] = strings.Join(ids, ",")
	}
	scoped := make([]map[table.FileKey]bool, len(batch))
	need := x.p.Options.RemoveDanglingDeletes || len(x.p.RetireAfterGroups) > 0
	for i, st := range batch {
		scoped[i] = partitionScopedRetires(st.g)
		need = need || len(scoped[i]) > 0
	}
	var danglingKeys []table.FileKey // sorted
	if h != nil && need {
		danglingKeys = x.danglingAfter(h, batch)
	}
	dangling := map[table.FileKey]bool{}
	for _, k := range danglingKeys {
		dangling[k] = true
	}
	// checked are the removals that hold only while the delete dangles.
	var checked []table.FileKey
	kept = map[table.FileKey]bool{}
	for i, st := range batch {
		inBatch[st.g.ID] = true
		ch.AddData = append(ch.AddData, st.rw.outputs...)
		for _, in := range st.rw.inputs {
			remove(in.entry.Key())
		}
		for _, k := range st.rw.retire {
			if scoped[i][k] {
				if !dangling[k] {
					kept[k] = true
					x.logf("delete %s is kept: a data file committed since the plan is in its scope", k)
					continue
				}
				checked = append(checked, k)
			}
			remove(k)
		}
	}
	for i, cr := range x.p.RetireAfterGroups {
		if x.condDone[i] || x.condDead[i] {
			continue
		}
		all, any := true, false
		for _, id := range cr.Groups {
			if inBatch[id] {
				any = true
			} else if !x.committedGroups[id] {
				all = false
			}
		}
		if k := refKey(cr.Delete.Path, cr.Delete.ContentOffset); all && any && dangling[k] {
			remove(k)
			checked = append(checked, k)
			conds = append(conds, i)
		}
	}
	if x.p.Options.RemoveDanglingDeletes {
		for _, k := range danglingKeys {
			if !seen[k] {
				swept = append(swept, k)
				checked = append(checked, k)
				remove(k)
			}
		}
	}
	ch.Validate = func(base *catalog.Table, baseSnap *spec.Snapshot) error {
		h, err := x.headAt(ctx, base, baseSnap)
		if err != nil {
			return err
		}
		if c := x.check(h, batch); c != nil {
			return c
		}
		if len(checked) > 0 {
			// Another commit may have added a data file a delete removed
			// as dangling applies to (a compaction's output at an older
			// sequence number), or removed the delete: decide again on
			// this head.
			now := map[table.FileKey]bool{}
			for _, k := range x.danglingAfter(h, batch) {
				now[k] = true
			}
			for _, k := range checked {
				if !now[k] {
					x.logf("dangling delete %s applies again or is gone; deciding again", k)
					return &conflictError{h: h, gone: map[*groupState]string{}, rebase: map[*groupState]string{}, stale: true}
				}
			}
		}
		return nil
	}
	return ch, conds, swept, kept
}

// partitionScopedRetires are the retirements of g's plan that hold only
// while the delete dangles (plan.retire's rules 2 and 3), by key.
func partitionScopedRetires(g *plan.Group) map[table.FileKey]bool {
	out := map[table.FileKey]bool{}
	for _, d := range g.Retire {
		if d.Reason == plan.RetirePartitionPos || d.Reason == plan.RetireEqualityDead {
			out[refKey(d.Path, d.ContentOffset)] = true
		}
	}
	return out
}

// danglingAfter lists the live delete files of h that apply to no data
// file once batch is committed on it: its inputs gone, its outputs added
// at the base sequence number under new paths (table.DataReach).
func (x *executor) danglingAfter(h *head, batch []*groupState) []table.FileKey {
	removed := map[string]bool{}
	var added []table.AddedData
	for _, st := range batch {
		for _, in := range st.rw.inputs {
			removed[in.entry.Entry.DataFile.FilePath] = true
		}
		for _, o := range st.rw.outputs {
			added = append(added, table.AddedData{SpecID: o.SpecID, Partition: o.Partition, Seq: x.baseSeq})
		}
	}
	if h.reach == nil {
		h.reach = table.NewDataReach(h.md, h.files.Data)
		if c := x.last; c != nil && c.files == h.files {
			c.reach = h.reach // headAt hands out copies of x.last
		}
	}
	return h.reach.Dangling(h.files.Deletes, table.DataChange{Removed: func(p string) bool { return removed[p] }, Added: added})
}

// commitHead is the head of the branch as x.t has it, which the next
// commit is expected to build on (validation reads it anyway, and then
// reuses it); nil when it cannot be read, and then no delete is removed
// as dangling by this attempt.
func (x *executor) commitHead(ctx context.Context) *head {
	snap, err := table.BranchHead(x.t.Metadata, x.branch)
	if err == nil {
		var h *head
		if h, err = x.headAt(ctx, x.t, snap); err == nil {
			return h
		}
	}
	x.logf("dangling deletes not removed by this commit: read the head: %v", err)
	return nil
}

// commitBatch commits batch, dropping and rebasing groups as conflicts
// require. It returns an error only when the run must stop: the commit
// state is unknown, or (without partial progress) the commit failed.
func (x *executor) commitBatch(ctx context.Context, batch []*groupState) error {
	for len(batch) > 0 {
		ch, conds, swept, kept := x.change(ctx, batch, x.commitHead(ctx))
		t, snap, err := table.CommitChange(ctx, x.cat, x.t, ch, x.opts.Commit)
		var conflict *conflictError
		switch {
		case err == nil:
			x.t = t
			x.report.Commits++
			for _, i := range conds {
				x.condDone[i] = true
			}
			x.swept += len(swept)
			if len(swept) > 0 {
				x.logf("removed %d dangling delete file(s)", len(swept))
			}
			for _, st := range batch {
				x.committed(st, snap.SnapshotID, kept)
			}
			x.logf("committed %d group(s) as snapshot %d", len(batch), snap.SnapshotID)
			return nil
		case errors.As(err, &conflict):
			batch = x.resolveConflict(ctx, batch, conflict)
		case errors.Is(err, catalog.ErrCommitStateUnknown):
			for _, st := range batch {
				st.res.Status, st.res.Reason = StatusFailed, "commit state unknown; its files were kept"
			}
			x.report.FailedCommits++
			return fmt.Errorf("compaction commit: %w", err)
		case errors.Is(err, table.ErrFileGone) || errors.Is(err, table.ErrNewDeletes):
			// The producer found what validation did not: commit the
			// groups one by one so that only the affected one suffers.
			if len(batch) > 1 {
				for _, st := range batch {
					if err := x.commitBatch(ctx, []*groupState{st}); err != nil {
						return err
					}
				}
				return nil
			}
			x.report.FailedCommits++
			x.discard(batch[0], fmt.Sprintf("commit failed: %v", err))
			return x.commitFailed(err)
		default:
			x.report.FailedCommits++
			for _, st := range batch {
				x.discard(st, fmt.Sprintf("commit failed: %v", err))
			}
			return x.commitFailed(err)
		}
	}
	return nil
}

// commitFailed decides whether a failed commit stops the run.
func (x *executor) commitFailed(err error) error {
	x.logf("commit failed: %v", err)
	if x.opts.PartialProgress && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return fmt.Errorf("compaction commit: %w", err)
}

// resolveConflict drops the groups whose inputs are gone, rewrites the ones
// with new deletes against the new head, refreshes retirements, and
// returns the groups to commit next.
func (x *executor) resolveConflict(ctx context.Context, batch []*groupState, c *conflictError) []*groupState {
	x.t = c.h.t
	var next []*groupState
	for _, st := range batch {
		if why, ok := c.gone[st]; ok {
			x.discard(st, why)
			st.res.Status = StatusDropped
			x.logf("group %s dropped: %s", st.g.ID, why)
			continue
		}
		fresh, err := resolve(c.h, st.g, x.baseSeq)
		if errors.Is(err, errInputGone) {
			x.discard(st, err.Error())
			st.res.Status = StatusDropped
			continue
		}
		if err != nil {
			x.discard(st, err.Error())
			st.res.Status = StatusFailed
			continue
		}
		why, rebase := c.rebase[st]
		if !rebase {
			// Only retirements went stale: keep the rewrite.
			st.rw.retire, st.rw.dangling = fresh.retire, fresh.dangling
			next = append(next, st)
			continue
		}
		if st.rebases >= maxRebases {
			x.discard(st, fmt.Sprintf("rebased %d times and its inputs still gained deletes: %s", st.rebases, why))
			st.res.Status = StatusFailed
			continue
		}
		x.logf("group %s rebased: %s", st.g.ID, why)
		if err := removeFiles(ctx, x.t.IO, x.t.Metadata, st.rw.outputs); err != nil {
			x.logf("%v", err)
		}
		st.rw.outputs = nil
		st.rebases++
		if err := x.run(ctx, c.h, st.g, fresh); err != nil {
			st.res.Status, st.res.Reason = StatusFailed, fmt.Sprintf("rebase (%s) failed: %v", why, err)
			continue
		}
		st.rw = fresh
		st.res.Reason = "rebased: " + why
		if x.rebased != nil {
			x.rebased(st, c.h)
		}
		next = append(next, st)
	}
	return next
}

// committed records a committed group; kept are the retirements its
// commit did not make (see change).
func (x *executor) committed(st *groupState, snapshotID int64, kept map[table.FileKey]bool) {
	rw := st.rw
	r := st.res
	r.Status = StatusCommitted
	if st.rebases > 0 {
		r.Status = StatusRebased
	}
	r.Rebases = st.rebases
	r.SnapshotID = snapshotID
	r.InputFiles = len(rw.inputs)
	r.OutputFiles = len(rw.outputs)
	r.BytesIn, r.BytesOut = rw.bytesIn, rw.bytesOut
	r.RowsIn, r.RowsOut = rw.rowsIn, rw.rowsOut
	r.DeletedRowsApplied = rw.rowsIn - rw.rowsOut
	notMade := 0
	for _, k := range rw.retire {
		if kept[k] {
			notMade++ // partition-scoped, so counted in rw.dangling
		}
	}
	r.DeleteFilesRetired = len(rw.retire) - notMade
	r.Rewrite, r.RewriteNote = rw.path, rw.pathNote
	x.dangling += rw.dangling - notMade
	x.committedGroups[st.g.ID] = true
	if x.committedOutputs != nil {
		for _, o := range rw.outputs {
			x.committedOutputs[st.g.ID] = append(x.committedOutputs[st.g.ID], o.FilePath)
		}
	}
}
