package dvmerge

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/fanout"
	"github.com/icectl/icectl/internal/shared/stage"
)

// storageWidth is how many requests to storage the committer has in
// flight: they wait on the network, so more than there are cores.
const storageWidth = 16

// CommitStaged is the committer of a sharded run: it commits the
// partitions of d staged in st that no snapshot of the branch has
// committed yet, in up to opts.MaxCommits batches, through the executor a
// single-process run commits with, so each batch is validated against the
// table as it is then by the same rules: a partition whose data files or
// deletes another commit changed is merged again on the fresh table
// (rebuilt), one that still changes after maxRebuilds is failed, and
// removals that no longer hold are left out. Every snapshot records the
// plan and its partitions (SummaryPlanID, SummaryPartitionIDs), so a
// committer run again after a crash commits only what is missing.
//
// Every staged result is read and checked first: one of another table or
// plan, or one that does not parse, fails the run with ErrBadStage before
// anything is committed. Afterwards the Puffin files any worker wrote for
// a partition this run did not commit, and its staged result, are removed
// through iceberg/reclaim, so that its shard may stage it again.
func CommitStaged(ctx context.Context, cat catalog.Catalog, t *catalog.Table, d *PlanDoc, st Stage, opts Options) (*Report, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := d.check(t); err != nil {
		return nil, fmt.Errorf("commit staged dv merge of %s: %w", t.Ident, err)
	}
	if _, err := st.checkPlan(ctx, d); err != nil {
		return nil, err
	}
	staged, err := readAllStaged(ctx, st, d)
	if err != nil {
		return nil, err
	}
	start := opts.Now()
	opts.Branch, opts.Where, opts.RepairResurrected, opts.Equality, opts.PartialProgress = d.Branch, d.Where, d.Repair, false, true
	p := &Plan{TableUUID: d.TableUUID, Location: t.Metadata.Location, FormatVersion: t.Metadata.FormatVersion, Branch: d.Branch,
		BaseSnapshotID: d.BaseSnapshotID, Where: d.Where, Repair: d.Repair, Partitions: make([]PartitionSummary, len(d.Partitions)), Dangling: []string{}}
	for i := range d.Partitions {
		p.Partitions[i] = d.Partitions[i].summary()
	}
	x := &executor{cat: cat, t: t, p: p, opts: opts, branch: d.Branch, planID: d.ID(),
		mg:      &merger{opts: opts, runID: d.ID() + "-commit-" + uuid.NewString()[:8]},
		report:  &Report{Plan: p, Partitions: make([]PartitionResult, len(p.Partitions)), Operations: []string{}},
		covered: map[string]bool{}, eqGone: map[table.FileKey]bool{}, own: map[int64]bool{}}
	defer func() {
		x.report.total()
		x.report.Duration = opts.Now().Sub(start)
	}()
	done := committedParts(t.Metadata, d)
	var states []*partState
	for i := range d.Partitions {
		id := d.Partitions[i].ID
		r := &x.report.Partitions[i]
		*r = PartitionResult{ID: id, Status: StatusNotStarted, Reason: "not staged: no worker result for it in " + st.Dir}
		if snap, ok := done[id]; ok {
			r.Status, r.Reason, r.SnapshotID = StatusAlreadyCommitted, "committed by an earlier run", snap
			continue
		}
		if s := staged[id]; s != nil {
			r.Reason = ""
			states = append(states, &partState{sum: &p.Partitions[i], res: r, m: s.merged(t.Metadata)})
		}
	}
	states = x.checkWritten(ctx, states)
	all := states
	var bytes int64
	for _, s := range states {
		bytes += s.sum.Bytes
	}
	if opts.Progress != nil {
		opts.Progress.Start(len(states), bytes)
		defer opts.Progress.Done()
	}
	defer x.sweep(ctx, st, d, staged, all)
	batchSize := max((len(states)+opts.MaxCommits-1)/opts.MaxCommits, 1)
	for len(states) > 0 {
		n := min(batchSize, len(states))
		batch := states[:n]
		states = states[n:]
		for _, s := range batch {
			if err := x.sinkAdd(ctx, s.m); err != nil {
				x.discardAll(batch, "not committed: "+err.Error())
				x.dropAdded(ctx)
				return x.report, fmt.Errorf("dv merge commit: %w", err)
			}
		}
		err := x.commitBatch(ctx, batch)
		if opts.Progress != nil {
			for _, s := range batch {
				opts.Progress.Step(s.sum.Bytes)
			}
		}
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			for _, s := range states {
				s.res.Reason = "not committed: the run stopped"
			}
			return x.report, err
		}
	}
	if x.report.FailedCommits > opts.MaxFailedCommits {
		return x.report, fmt.Errorf("%w: %d commits failed, more than the %d allowed (--max-failed-commits)",
			ErrTooManyFailedCommits, x.report.FailedCommits, opts.MaxFailedCommits)
	}
	return x.report, nil
}

// merged rebuilds the merge a staged result describes, as the executor
// commits and validates it; snap is nil when the head it was merged
// against is no longer in md (the batch is then validated in full).
func (s *stagedPart) merged(md *spec.TableMetadata) *merged {
	dg, _ := strconv.ParseUint(s.Digest, 16, 64) // checked by parseStaged
	m := &merged{digest: dg, written: s.Written, changesRows: s.ChangesRows, res: s.Result, covered: map[string]bool{},
		kept: s.Kept, resurrected: s.Resurrected, repaired: s.Repaired, outOfRange: s.OutOfRange, multiple: s.Multiple}
	if s.SnapshotID != nil {
		if snap, ok := md.SnapshotByID(*s.SnapshotID); ok {
			m.snap = snap
		}
	}
	for _, e := range s.DVs {
		m.add = append(m.add, dvEntry{puffin: e.Puffin, ref: e.DataFile, size: e.Size, offset: e.Offset, length: e.Length,
			cardinality: e.Cardinality, specID: e.SpecID, partition: []any(e.Partition)})
	}
	for _, k := range s.Remove {
		m.remove = append(m.remove, table.FileKey{Path: k.Path, ContentOffset: k.ContentOffset})
	}
	return m
}

// readAllStaged reads and checks every staged result in st, in parallel:
// partition id -> result.
func readAllStaged(ctx context.Context, st Stage, d *PlanDoc) (map[string]*stagedPart, error) {
	paths, err := st.list(ctx)
	if err != nil {
		return nil, err
	}
	all, err := stage.ReadAll(ctx, st.IO, paths, func(data []byte, name string) (*stagedPart, error) {
		return parseStaged(data, name, d)
	})
	res := map[string]*stagedPart{}
	for _, s := range all {
		res[s.PartitionID] = s
	}
	return res, err
}

// checkWritten fails the partitions whose staged Puffin files are missing
// (or of another size), removing the rest of what they wrote; it returns
// the partitions left to commit.
func (x *executor) checkWritten(ctx context.Context, states []*partState) []*partState {
	missing := make([]string, len(states))
	fanout.Each(len(states), storageWidth, func(i int) {
		sizes := map[string]int64{}
		for _, e := range states[i].m.add {
			sizes[e.puffin] = e.size
		}
		for _, p := range states[i].m.written {
			f, err := x.t.IO.Open(ctx, p)
			if err != nil {
				missing[i] = fmt.Sprintf("staged Puffin file %s cannot be opened: %v", p, err)
				return
			}
			size := f.Size()
			f.Close()
			if want, ok := sizes[p]; ok && size != want {
				missing[i] = fmt.Sprintf("staged Puffin file %s is %d bytes, its result says %d", p, size, want)
				return
			}
		}
	})
	var out []*partState
	for i, s := range states {
		if missing[i] != "" {
			x.discard(s, missing[i]+"; run its shard again")
			continue
		}
		out = append(out, s)
	}
	return out
}

// sweep removes, for every partition of the plan this run did not commit
// and an earlier run did not either, the Puffin files any worker wrote for
// it (named by puffinPrefix) and its staged result, so that its shard may
// stage it again. A partition whose commit state is unknown, or that is
// left staged for the next run, keeps everything: its files may be the
// table's now.
func (x *executor) sweep(ctx context.Context, st Stage, d *PlanDoc, staged map[string]*stagedPart, states []*partState) {
	ctx = context.WithoutCancel(ctx)
	l, ok := x.t.IO.(fileio.Lister)
	if !ok {
		return
	}
	keep := map[string]bool{}
	for _, s := range states {
		if s.res.Status == StatusCommitted || s.res.Status == StatusRebuilt {
			for _, p := range s.m.written {
				keep[p] = true
			}
		}
	}
	var dels, results []string
	for i := range d.Partitions {
		pp, r := &d.Partitions[i], &x.report.Partitions[i]
		s := staged[pp.ID]
		switch {
		case r.Status == StatusAlreadyCommitted, strings.HasPrefix(r.Reason, "commit state unknown"),
			s != nil && r.Status == StatusNotStarted:
			continue
		}
		if s != nil && r.Status != StatusCommitted && r.Status != StatusRebuilt {
			results = append(results, st.partPath(pp.ID))
		}
		dir := table.DataLocation(x.t.Metadata)
		if pp.Partition != "" {
			dir += "/" + pp.Partition
		}
		err := l.List(ctx, dir+"/"+puffinPrefix(d, pp.ID), func(fi fileio.FileInfo) error {
			if !keep[fi.Path] {
				dels = append(dels, fi.Path)
			}
			return nil
		})
		if err != nil {
			x.logf("list the Puffin files of partition %s: %v", pp.ID, err)
		}
	}
	if err := removeWritten(ctx, x.t.IO, x.t.Metadata, dels); err != nil {
		x.logf("%v", err)
	} else if len(dels) > 0 {
		x.logf("removed %d Puffin file(s) of attempts no commit took", len(dels))
	}
	for _, p := range results {
		if err := st.IO.Remove(ctx, p); err != nil && !errors.Is(err, fileio.ErrNotFound) {
			x.logf("remove staged result: %v", err)
		}
	}
}
