package compact

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/fanout"
	"github.com/icectl/icectl/internal/shared/shard"
	"github.com/icectl/icectl/internal/shared/stage"
	"github.com/icectl/icectl/plan"
)

// Snapshot summary keys of a sharded run's commits: the plan and the
// groups each snapshot committed. A committer reads them back to leave
// out the groups an earlier run already committed.
const (
	SummaryPlanID   = "icectl.compaction.plan-id"
	SummaryGroupIDs = "icectl.compaction.group-ids"
)

// Statuses of a group in a worker's report (ShardGroup.Status).
const (
	ShardStaged           = "staged"
	ShardAlreadyStaged    = "already-staged"       // a result of this plan was there: kept
	ShardAlreadyCommitted = StatusAlreadyCommitted // a snapshot of the branch committed it
)

// Shard is a worker's share of a sharded run: shard Index of Count.
type Shard = shard.Shard

// ShardReport is what a worker did: its groups as a run's report lists
// them, with the worker's statuses (ShardStaged, ShardAlreadyStaged,
// ShardAlreadyCommitted, StatusDropped, StatusFailed, StatusCancelled).
// Totals count the groups it staged in this run.
type ShardReport struct {
	PlanID     string        `json:"plan_id"`
	Shard      int           `json:"shard"`
	Shards     int           `json:"shards"`
	PlanGroups int           `json:"plan_groups"`
	Groups     []GroupResult `json:"groups"`
	BytesIn    int64         `json:"bytes_in"`
	BytesOut   int64         `json:"bytes_out"`
	RowsOut    int64         `json:"rows_out"`
	Duration   time.Duration `json:"-"`
}

// Count returns how many groups have status s.
func (r *ShardReport) Count(s string) int {
	n := 0
	for _, g := range r.Groups {
		if g.Status == s {
			n++
		}
	}
	return n
}

// checkPlanTable refuses a plan of another table, or one without a base.
func checkPlanTable(t *catalog.Table, p *plan.Plan) error {
	if p == nil {
		return errors.New("no plan")
	}
	if err := refuseV1(t); err != nil {
		return err
	}
	if p.TableRef.UUID != t.Metadata.TableUUID {
		name := p.TableRef.Name
		if name == "" {
			name = p.TableRef.Location
		}
		return fmt.Errorf("%w: the plan is of table %s (%s), but %s is table %s", ErrInvalidOptions, name, p.TableRef.UUID, t.Ident, t.Metadata.TableUUID)
	}
	if len(p.Groups) > 0 && p.Base == nil {
		return errors.New("the plan has groups but no base snapshot")
	}
	return nil
}

// RewriteShard is one worker of a sharded run: it rewrites the groups of p
// that plan.Assign gives shard sh.Index of sh.Count, against the branch
// head as it is now (as Execute does), and writes one staged result per
// group into st. It commits nothing. A group already committed under this
// plan, or already staged with a valid result, is skipped, so a worker run
// again (a retry, a duplicate pod) redoes only what is missing; a group
// whose inputs are gone is dropped without writing anything.
func RewriteShard(ctx context.Context, t *catalog.Table, p *plan.Plan, sh Shard, st Stage, opts Options) (*ShardReport, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
		return nil, fmt.Errorf("%w: shard %d/%d: the index must be 0 to %d", ErrInvalidOptions, sh.Index, sh.Count, max(sh.Count-1, 0))
	}
	if err := checkPlanTable(t, p); err != nil {
		return nil, fmt.Errorf("rewrite shard %d/%d of %s: %w", sh.Index, sh.Count, t.Ident, err)
	}
	start := opts.Now()
	opts.Sort, opts.SortOrder, opts.ZOrder = p.Sort, p.SortOrder, p.ZOrder
	x := &executor{t: t, p: p, opts: opts, branch: p.Branch, planID: p.ID(), schemas: manifest.NewSchemaCache()}
	rep := &ShardReport{PlanID: x.planID, Shard: sh.Index, Shards: sh.Count, PlanGroups: len(p.Groups), Groups: []GroupResult{}}
	defer func() { rep.Duration = opts.Now().Sub(start) }()
	if err := st.ensurePlan(ctx, p, x.planID); err != nil {
		return rep, err
	}
	var mine []*plan.Group
	for i, s := range plan.Assign(p.Groups, sh.Count) {
		if s == sh.Index {
			mine = append(mine, &p.Groups[i])
		}
	}
	if len(mine) == 0 {
		return rep, nil
	}
	x.baseSeq = p.Base.SequenceNumber
	snap, err := table.BranchHead(t.Metadata, x.branch)
	if err != nil {
		return rep, fmt.Errorf("rewrite shard of %s: %w", t.Ident, err)
	}
	h, err := x.headAt(ctx, t, snap)
	if err != nil {
		return rep, fmt.Errorf("rewrite shard of %s: %w", t.Ident, err)
	}
	committed := committedGroups(t.Metadata, x.branch, p, x.planID)
	staged, err := st.listStaged(ctx)
	if err != nil {
		return rep, err
	}
	byID := groupsByID(p)
	rep.Groups = make([]GroupResult, len(mine))
	var total int64
	for i, g := range mine {
		rep.Groups[i] = GroupResult{ID: g.ID, Status: StatusNotStarted, InputFiles: len(g.Inputs), BytesIn: g.InputBytes, RowsIn: g.InputRecords}
		total += g.InputBytes
	}
	if opts.Progress != nil {
		opts.Progress.Start(len(mine), total)
		defer opts.Progress.Done()
	}
	// Largest group first, as Execute dispatches (dispatchOrder); the
	// report keeps plan order.
	order := make([]int, len(mine))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(mine[b].InputBytes, mine[a].InputBytes) })
	fanout.Each(len(order), opts.MaxConcurrentGroups, func(k int) {
		i := order[k]
		g, r := mine[i], &rep.Groups[i]
		if ctx.Err() != nil {
			r.Status, r.Reason = StatusCancelled, "not started: the run was interrupted"
			return
		}
		x.stageGroup(ctx, h, st, sh, g, r, committed, staged[g.ID], byID)
		if opts.Progress != nil {
			opts.Progress.Step(g.InputBytes)
		}
	})
	for _, r := range rep.Groups {
		if r.Status == ShardStaged {
			rep.BytesIn += r.BytesIn
			rep.BytesOut += r.BytesOut
			rep.RowsOut += r.RowsOut
		}
	}
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("rewrite shard interrupted: %w", err)
	}
	return rep, nil
}

// stageGroup rewrites g and stages its result, leaving the outcome in r.
func (x *executor) stageGroup(ctx context.Context, h *head, st Stage, sh Shard, g *plan.Group, r *GroupResult,
	committed map[string]int64, stagedPath string, byID map[string]*plan.Group) {
	if id, ok := committed[g.ID]; ok {
		r.Status, r.Reason = ShardAlreadyCommitted, fmt.Sprintf("committed by snapshot %d", id)
		return
	}
	if stagedPath != "" {
		data, err := fileio.ReadFile(ctx, st.IO, stagedPath)
		if err == nil {
			if s, err := parseStaged(data, stagedPath, x.p, x.planID, byID); err == nil {
				r.Status, r.Reason = ShardAlreadyStaged, "a result of this plan is staged already"
				r.OutputFiles, r.BytesOut, r.RowsOut, r.Rewrite = len(s.Outputs), s.BytesOut, s.RowsOut, s.Rewrite
				return
			}
		}
		// Unreadable or not of this plan: rewritten and replaced.
	}
	rw, err := resolve(h, g, x.baseSeq)
	if errors.Is(err, errInputGone) {
		r.Status, r.Reason = StatusDropped, err.Error()
		return
	}
	if err == nil {
		err = x.run(ctx, h, g, rw)
	}
	if err == nil {
		if err = st.writeStaged(ctx, stageOf(x.p, x.planID, g, h, rw, sh.Index, sh.Count)); err != nil {
			err = errors.Join(err, removeFiles(ctx, h.fio, h.md, rw.outputs))
		}
	}
	if err != nil {
		r.Status, r.Reason = StatusFailed, fmt.Sprintf("rewrite group %s: %v", g.ID, err)
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			r.Status = StatusCancelled
		}
		return
	}
	r.Status = ShardStaged
	r.InputFiles, r.OutputFiles = len(rw.inputs), len(rw.outputs)
	r.BytesIn, r.BytesOut, r.RowsIn, r.RowsOut = rw.bytesIn, rw.bytesOut, rw.rowsIn, rw.rowsOut
	r.Rewrite, r.RewriteNote = rw.path, rw.pathNote
	r.DeletedRowsApplied, r.DeleteFilesRetired = rw.rowsIn-rw.rowsOut, len(rw.retire)
	x.logf("group %s: %d files, %d rows -> %d files, %d rows (%s), staged", g.ID, len(rw.inputs), rw.rowsIn, len(rw.outputs), rw.rowsOut, rw.path)
}

// committedGroups are the groups of plan planID that snapshots of the
// branch committed since the plan's base: group id -> snapshot id. Only
// snapshot summaries are read.
func committedGroups(md *spec.TableMetadata, branch string, p *plan.Plan, planID string) map[string]int64 {
	var base *int64
	if p.Base != nil {
		base = &p.Base.SnapshotID
	}
	return stage.Committed(md, branch, base, SummaryPlanID, planID, func(sum map[string]string) []string {
		return strings.Split(sum[SummaryGroupIDs], ",")
	})
}

// Committed reports whether snapshots of p's branch committed every group
// of p: a committer of its stage has nothing left to commit. Only
// snapshot summaries are read.
func Committed(md *spec.TableMetadata, p *plan.Plan) bool {
	done := committedGroups(md, p.Branch, p, p.ID())
	for i := range p.Groups {
		if _, ok := done[p.Groups[i].ID]; !ok {
			return false
		}
	}
	return true
}
