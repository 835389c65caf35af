package compact

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/fanout"
	"github.com/icectl/icectl/internal/shared/stage"
	"github.com/icectl/icectl/plan"
)

// CommitStaged is the committer of a sharded run: it commits the groups of
// p staged in st that no snapshot of the branch has committed yet, in up
// to opts.MaxCommits batches, each validated against the table as it is
// then by the same rules, conflict handling included, as Execute's
// batches: a group whose inputs are gone is dropped, one whose inputs
// gained deletes is rewritten here (rebased), retirements that no longer
// hold are left out. Every snapshot records the plan and its groups
// (SummaryPlanID, SummaryGroupIDs), so a committer run again after a
// crash commits only what is missing.
//
// Every staged result is read and checked first: one of another table or
// plan, or one that does not parse, fails the run with ErrBadStage before
// anything is committed. A group whose staged outputs are missing is
// failed (its shard can be run again). Afterwards, for every group this
// run decided or no worker staged, the files any attempt at it wrote that
// no commit took (a killed worker's, a duplicate's, a dropped group's) are
// removed through iceberg/reclaim, and so is the staged result of a group
// not committed, so that its shard may stage it again.
func CommitStaged(ctx context.Context, cat catalog.Catalog, t *catalog.Table, p *plan.Plan, st Stage, opts Options) (*Report, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := checkPlanTable(t, p); err != nil {
		return nil, fmt.Errorf("commit staged compaction of %s: %w", t.Ident, err)
	}
	start := opts.Now()
	opts.PartialProgress, opts.Sort, opts.SortOrder, opts.ZOrder = true, p.Sort, p.SortOrder, p.ZOrder
	planID := p.ID()
	if _, err := st.checkPlan(ctx, planID); err != nil {
		return nil, err
	}
	staged, err := readAllStaged(ctx, st, p, planID)
	if err != nil {
		return nil, err
	}
	x := &executor{cat: cat, t: t, p: p, opts: opts, branch: p.Branch, planID: planID,
		report:          &Report{Plan: p, Groups: make([]GroupResult, len(p.Groups))},
		committedGroups: map[string]bool{}, condDone: map[int]bool{}, condDead: map[int]bool{},
		schemas: manifest.NewSchemaCache()}
	x.committedOutputs = map[string][]string{}
	x.rebased = func(s *groupState, h *head) {
		// The staged result follows the rewrite the commit will take, so
		// a committer killed now finds it on its next run.
		if err := st.writeStaged(ctx, stageOf(p, planID, s.g, h, s.rw, -1, 0)); err != nil {
			x.logf("group %s: %v", s.g.ID, err)
		}
	}
	defer func() {
		x.report.total()
		x.report.DeleteFilesRetired += len(x.condDone) + x.swept
		x.report.DanglingDeletesRemoved = x.dangling + len(x.condDone) + x.swept
		x.report.Duration = opts.Now().Sub(start)
	}()
	for i := range p.Groups {
		g := &p.Groups[i]
		x.report.Groups[i] = GroupResult{ID: g.ID, Status: StatusNotStarted, Reason: "not staged: no worker result for it in " + st.Dir,
			InputFiles: len(g.Inputs), BytesIn: g.InputBytes, RowsIn: g.InputRecords}
	}
	if len(p.Groups) == 0 {
		return x.report, nil
	}
	x.baseSeq = p.Base.SequenceNumber
	snap, err := table.BranchHead(t.Metadata, x.branch)
	if err != nil {
		return x.report, fmt.Errorf("commit staged compaction of %s: %w", t.Ident, err)
	}
	h, err := x.headAt(ctx, t, snap)
	if err != nil {
		return x.report, fmt.Errorf("commit staged compaction of %s: %w", t.Ident, err)
	}
	done := committedGroups(t.Metadata, x.branch, p, planID)
	for i, cr := range p.RetireAfterGroups {
		if !h.keys[refKey(cr.Delete.Path, cr.Delete.ContentOffset)] {
			x.condDead[i] = true
		}
	}
	var states []*groupState
	for i := range p.Groups {
		g, r := &p.Groups[i], &x.report.Groups[i]
		if id, ok := done[g.ID]; ok {
			r.Status, r.Reason, r.SnapshotID = StatusAlreadyCommitted, "committed by an earlier run", id
			x.committedGroups[g.ID] = true
			continue
		}
		s, ok := staged[g.ID]
		if !ok {
			continue
		}
		gs := &groupState{g: g, res: r, rw: s.rewrite()}
		r.Reason = ""
		states = append(states, gs)
	}
	states = x.checkStaged(ctx, h, states)
	var total int64
	for _, s := range states {
		total += s.g.InputBytes
	}
	if opts.Progress != nil {
		opts.Progress.Start(len(states), total)
		defer opts.Progress.Done()
	}
	defer x.sweep(ctx, st, staged, h)
	batchSize := max((len(states)+opts.MaxCommits-1)/opts.MaxCommits, 1)
	for len(states) > 0 {
		n := min(batchSize, len(states))
		batch := states[:n]
		states = states[n:]
		err := x.commitBatch(ctx, batch)
		if opts.Progress != nil {
			for _, s := range batch {
				opts.Progress.Step(s.g.InputBytes)
			}
		}
		if err != nil {
			for _, s := range states {
				s.res.Reason = "not committed: the run stopped"
			}
			return x.report, err
		}
		if err := ctx.Err(); err != nil {
			for _, s := range states {
				s.res.Reason = "not committed: the run was interrupted"
			}
			return x.report, fmt.Errorf("compaction commit interrupted: %w", err)
		}
	}
	if x.report.FailedCommits > opts.MaxFailedCommits {
		return x.report, fmt.Errorf("%w: %d commits failed, more than the %d allowed (--max-failed-commits)",
			ErrTooManyFailedCommits, x.report.FailedCommits, opts.MaxFailedCommits)
	}
	return x.report, nil
}

// readAllStaged reads and checks every staged result in st, in parallel.
func readAllStaged(ctx context.Context, st Stage, p *plan.Plan, planID string) (map[string]*stagedGroup, error) {
	paths, err := st.listStaged(ctx)
	if err != nil {
		return nil, err
	}
	byID := groupsByID(p)
	all, err := stage.ReadAll(ctx, st.IO, paths, func(data []byte, name string) (*stagedGroup, error) {
		return parseStaged(data, name, p, planID, byID)
	})
	res := map[string]*stagedGroup{}
	for _, s := range all {
		res[s.GroupID] = s
	}
	return res, err
}

// storageWidth is how many requests to storage the committer has in
// flight: they wait on the network, so more than there are cores.
const storageWidth = 16

// checkStaged drops the groups whose inputs are gone from h and fails the
// ones whose staged outputs are missing (or of another size), removing
// what they wrote; it returns the groups left to commit.
func (x *executor) checkStaged(ctx context.Context, h *head, states []*groupState) []*groupState {
	missing := make([]string, len(states))
	fanout.Each(len(states), storageWidth, func(i int) {
		for _, in := range states[i].rw.inputs {
			if _, ok := h.data[in.entry.Entry.DataFile.FilePath]; !ok {
				return // dropped below: whether its outputs exist does not matter
			}
		}
		for _, o := range states[i].rw.outputs {
			f, err := h.fio.Open(ctx, o.FilePath)
			if err != nil {
				missing[i] = fmt.Sprintf("staged output %s cannot be opened: %v", o.FilePath, err)
				return
			}
			size := f.Size()
			f.Close()
			if size != o.FileSizeInBytes {
				missing[i] = fmt.Sprintf("staged output %s is %d bytes, its result says %d", o.FilePath, size, o.FileSizeInBytes)
				return
			}
		}
	})
	var out []*groupState
	for i, s := range states {
		if gone := firstGone(h, s.rw); gone != "" {
			x.discard(s, fmt.Sprintf("input %s was removed by another commit", gone))
			s.res.Status = StatusDropped
			continue
		}
		if missing[i] != "" {
			x.discard(s, missing[i]+"; run its shard again")
			continue
		}
		// What the commit retires is decided here, from the table as it
		// is, as a single-process run decides it (resolve): a staged
		// result says what its rewrite applied, never which delete files
		// the table may lose.
		fresh, err := resolve(h, s.g, x.baseSeq)
		if err != nil {
			x.discard(s, err.Error())
			continue
		}
		s.rw.retire, s.rw.dangling = fresh.retire, fresh.dangling
		out = append(out, s)
	}
	return out
}

func firstGone(h *head, rw *rewrite) string {
	for _, in := range rw.inputs {
		if p := in.entry.Entry.DataFile.FilePath; h.data[p] == nil {
			return p
		}
	}
	return ""
}

// sweep removes, for every group this run decided and every group no
// worker staged, the files under the group's output prefix that no commit
// of this run took, and the staged result of every group not committed. A group whose commit state is
// unknown keeps everything: its files may be the table's now. Paths are
// compared by sameFileKey, and a file live in start (the head the run
// began on) is never removed, whatever its name.
func (x *executor) sweep(ctx context.Context, st Stage, staged map[string]*stagedGroup, start *head) {
	ctx = context.WithoutCancel(ctx)
	l, ok := x.t.IO.(fileio.Lister)
	if !ok {
		return
	}
	md := x.t.Metadata
	liveKeys := map[string]bool{}
	for p := range start.data {
		liveKeys[sameFileKey(p)] = true
	}
	var dels, results []string
	for i := range x.p.Groups {
		g, r := &x.p.Groups[i], &x.report.Groups[i]
		s := staged[g.ID]
		switch {
		case r.Status == StatusAlreadyCommitted, strings.HasPrefix(r.Reason, "commit state unknown"),
			s != nil && r.Status == StatusNotStarted:
			// Committed before, perhaps committed, or left staged for
			// the next run: nothing of it is removed.
			continue
		case s == nil:
			// Never staged: whatever a killed worker wrote for it is no
			// commit's (it was never in a result).
			s = &stagedGroup{}
		}
		keep := map[string]bool{}
		if r.Status == StatusCommitted || r.Status == StatusRebased {
			for _, f := range x.committedOutputs[g.ID] {
				keep[sameFileKey(f)] = true
			}
		} else if staged[g.ID] != nil {
			results = append(results, st.groupPath(g.ID))
		}
		dirs := map[string]bool{}
		if ps, ok := md.SpecByID(g.SpecID); ok {
			dirs[groupDir(md, ps, g)] = true
		}
		for _, o := range s.Outputs {
			// The directory in the path's own form: path.Dir would clean
			// file:///t/data into file:/t/data, whose listing names the
			// same files in another spelling.
			if i := strings.LastIndexByte(o.Path, '/'); i > 0 {
				dirs[o.Path[:i]] = true
			}
		}
		for d := range dirs {
			err := l.List(ctx, d+"/"+x.groupPrefix(g), func(fi fileio.FileInfo) error {
				if k := sameFileKey(fi.Path); !keep[k] && !liveKeys[k] {
					dels = append(dels, fi.Path)
				}
				return nil
			})
			if err != nil {
				x.logf("list the files of group %s: %v", g.ID, err)
			}
		}
	}
	if len(dels) > 0 {
		if err := reclaim.DeleteWritten(ctx, x.t.IO, md, dels); err != nil {
			x.logf("%v", err)
		} else {
			x.logf("removed %d file(s) of attempts no commit took", len(dels))
		}
	}
	for _, p := range results {
		if err := st.IO.Remove(ctx, p); err != nil && !errors.Is(err, fileio.ErrNotFound) {
			x.logf("remove staged result: %v", err)
		}
	}
}

// sameFileKey is a path with its scheme lower-cased and runs of slashes
// collapsed, so two spellings of one file (file:///t/x, file:/t/x) compare
// equal.
func sameFileKey(p string) string {
	scheme, rest, ok := strings.Cut(p, ":")
	if !ok || strings.Contains(scheme, "/") {
		scheme, rest = "", p
	}
	var b strings.Builder
	b.WriteString(strings.ToLower(scheme))
	b.WriteByte(':')
	prev := byte(0)
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c != '/' || prev != '/' {
			b.WriteByte(c)
			prev = c
		}
	}
	return b.String()
}
