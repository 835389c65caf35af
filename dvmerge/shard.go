package dvmerge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/shared/shard"
	"github.com/icectl/icectl/internal/shared/stage"
	"github.com/icectl/icectl/plan"
)

// Snapshot summary keys of a sharded run's commits: the plan and the
// partitions each snapshot committed. A committer reads them back to leave
// out the partitions an earlier run already committed.
const (
	SummaryPlanID       = "icectl.dv-merge.plan-id"
	SummaryPartitionIDs = "icectl.dv-merge.partition-ids"
)

// Statuses of a partition in a sharded run's reports.
const (
	StatusStaged           = "staged"
	StatusAlreadyStaged    = "already-staged"    // a result of this plan was there: kept
	StatusAlreadyCommitted = "already-committed" // a snapshot of the branch committed it
)

// ErrBadStage is wrapped by the errors about a stage directory that
// cannot be committed as it is: a result of another table or plan, or
// one that does not parse. The committer refuses them before committing
// anything.
var ErrBadStage = stage.ErrBad

// PlanDoc is a saved plan (the document --plan-out writes) as the workers
// and the committer of a sharded run read it: the table, the options that
// decide the merge, and the partitions with their stable ids.
type PlanDoc struct {
	TableUUID      string          `json:"table_uuid"`
	Branch         string          `json:"branch"`
	BaseSnapshotID *int64          `json:"base_snapshot_id"`
	Where          string          `json:"where"`
	Repair         bool            `json:"repair_resurrected"`
	Equality       bool            `json:"equality"`
	Partitions     []PartitionPlan `json:"partitions"`

	id  string
	raw []byte
}

// ParsePlan reads a plan saved by --plan-out.
func ParsePlan(data []byte) (*PlanDoc, error) {
	var d PlanDoc
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("not a dv merge plan (truncated, or not written by `icectl dv merge --plan-out`?): %v", err)
	}
	if d.TableUUID == "" || d.Branch == "" || d.Partitions == nil {
		return nil, errors.New("not a dv merge plan: no table_uuid, branch or partitions (written by `icectl dv merge --plan-out`?)")
	}
	seen := map[string]bool{}
	for _, pp := range d.Partitions {
		if pp.ID == "" || seen[pp.ID] {
			return nil, fmt.Errorf("not a dv merge plan: partition id %q is empty or repeated", pp.ID)
		}
		seen[pp.ID] = true
	}
	sum := sha256.Sum256(data)
	d.id, d.raw = hex.EncodeToString(sum[:8]), data
	return &d, nil
}

// ID identifies the plan: a hash of the document as saved. Every staged
// result, Puffin file name and committed snapshot of a sharded run
// records it.
func (d *PlanDoc) ID() string { return d.id }

// Assign is the shard of every partition, in plan order: split by their
// delete bytes (shard.Assign), the same in every worker.
func (d *PlanDoc) Assign(n int) []int {
	sizes := make([]int64, len(d.Partitions))
	for i := range d.Partitions {
		sizes[i] = d.Partitions[i].Bytes
	}
	return shard.Assign(sizes, n)
}

// check refuses a plan of another table, of a table below v3, or one a
// sharded run cannot carry out.
func (d *PlanDoc) check(t *catalog.Table) error {
	if d.TableUUID != t.Metadata.TableUUID {
		return fmt.Errorf("%w: the plan is of table %s, but %s is table %s", ErrInvalidOptions, d.TableUUID, t.Ident, t.Metadata.TableUUID)
	}
	if t.Metadata.FormatVersion < 3 {
		return fmt.Errorf("%w: %s is format v%d", ErrNotV3, t.Ident, t.Metadata.FormatVersion)
	}
	if d.Equality {
		// Retiring an equality-delete file needs every partition it
		// applies to covered, which one partition's result cannot say.
		return fmt.Errorf("%w: a plan made with --equality cannot be run sharded: run it in one process", ErrInvalidOptions)
	}
	return nil
}

// Stage is the directory a sharded dv merge's workers write to and its
// committer reads (see internal/shared/stage): DIR/plan.json and
// DIR/partitions/<key>.json.
type Stage struct {
	IO  fileio.FileIO // must list (fileio.Lister)
	Dir string        // local path or s3:// URI, without a trailing slash
}

func (s Stage) planPath() string          { return s.Dir + "/" + stage.PlanFile }
func (s Stage) partsDir() string          { return s.Dir + "/partitions/" }
func (s Stage) partPath(id string) string { return s.partsDir() + partKey(id) + ".json" }
func (s Stage) list(ctx context.Context) (map[string]string, error) {
	return stage.List(ctx, s.IO, s.partsDir())
}

// partKey is a partition id as a file name: the id names partition
// values, which may hold anything.
func partKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// checkPlan refuses a stage that records another plan than d; recorded
// says whether it records one.
func (s Stage) checkPlan(ctx context.Context, d *PlanDoc) (recorded bool, err error) {
	data, err := stage.RecordedPlan(ctx, s.IO, s.planPath())
	if err != nil || data == nil {
		return false, err
	}
	other, err := ParsePlan(data)
	if err != nil {
		return true, fmt.Errorf("%w: %s: %v", ErrBadStage, s.planPath(), err)
	}
	if other.ID() != d.ID() {
		return true, fmt.Errorf("%w: %s holds the results of plan %s of table %s, not of plan %s: stage each plan in a directory of its own",
			ErrBadStage, s.Dir, other.ID(), other.TableUUID, d.ID())
	}
	return true, nil
}

// ReadStagePlan reads the plan the workers recorded in the stage.
func ReadStagePlan(ctx context.Context, s Stage) (*PlanDoc, error) {
	data, err := stage.RecordedPlan(ctx, s.IO, s.planPath())
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, fmt.Errorf("%w: %s holds no %s: no worker has staged into it (give --plan, or check the directory)", ErrBadStage, s.Dir, stage.PlanFile)
	}
	d, err := ParsePlan(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadStage, s.planPath(), err)
	}
	return d, nil
}

// Staged-result document identity.
const (
	stagedFormat  = "icectl-dv-merge-staged-partition"
	stagedVersion = 1
)

// stagedPart is one partition's staged result: the DVs its worker wrote
// (the Puffin files and their manifest entries), the delete files they
// replace, and the digest of the data files and deletes they cover, which
// the committer validates against the table as a single-process run
// validates its own batches (executor.check).
type stagedPart struct {
	Format      string              `json:"format"`
	Version     int                 `json:"version"`
	TableUUID   string              `json:"table_uuid"`
	PlanID      string              `json:"plan_id"`
	PartitionID string              `json:"partition_id"`
	Shard       int                 `json:"shard"`
	Shards      int                 `json:"shards"`
	SnapshotID  *int64              `json:"snapshot_id"` // the head it was merged against
	Digest      string              `json:"digest"`
	Written     []string            `json:"puffin_files"`
	DVs         []stagedDV          `json:"dvs"`
	Remove      []stagedKey         `json:"replaces"`
	ChangesRows bool                `json:"changes_rows"`
	Result      PartitionResult     `json:"result"`
	Kept        []KeptDelete        `json:"kept"`
	Resurrected []DataFilePositions `json:"resurrected"`
	Repaired    []RepairedFile      `json:"repaired"`
	OutOfRange  []DataFilePositions `json:"out_of_range"`
	Multiple    []MultipleDVs       `json:"multiple_dvs"`
}

// stagedDV is a DV's manifest entry; its partition is typed, so it
// survives JSON exactly.
type stagedDV struct {
	Partition   plan.Tuple `json:"partition"`
	Puffin      string     `json:"puffin"`
	DataFile    string     `json:"data_file"`
	Size        int64      `json:"size"`
	Offset      int64      `json:"offset"`
	Length      int64      `json:"length"`
	Cardinality int64      `json:"cardinality"`
	SpecID      int32      `json:"spec_id"`
}

type stagedKey struct {
	Path          string `json:"path"`
	ContentOffset int64  `json:"content_offset"` // -1: a whole file
}

func stageOf(d *PlanDoc, pp *PartitionPlan, m *merged, sh shard.Shard) *stagedPart {
	s := &stagedPart{Format: stagedFormat, Version: stagedVersion, TableUUID: d.TableUUID, PlanID: d.ID(), PartitionID: pp.ID,
		Shard: sh.Index, Shards: sh.Count, Digest: strconv.FormatUint(m.digest, 16), Written: append([]string{}, m.written...),
		DVs: []stagedDV{}, Remove: []stagedKey{}, ChangesRows: m.changesRows, Result: m.res,
		Kept: m.kept, Resurrected: m.resurrected, Repaired: m.repaired, OutOfRange: m.outOfRange, Multiple: m.multiple}
	s.Result.ID, s.Result.Status = pp.ID, StatusStaged
	if m.snap != nil {
		id := m.snap.SnapshotID
		s.SnapshotID = &id
	}
	for _, e := range m.add {
		s.DVs = append(s.DVs, stagedDV{Puffin: e.puffin, DataFile: e.ref, Size: e.size, Offset: e.offset, Length: e.length,
			Cardinality: e.cardinality, SpecID: e.specID, Partition: plan.Tuple(e.partition)})
	}
	for _, k := range m.remove {
		s.Remove = append(s.Remove, stagedKey{Path: k.Path, ContentOffset: k.ContentOffset})
	}
	return s
}

// parseStaged reads a staged result and checks it belongs to plan d: the
// table, the plan, a partition of it, and Puffin files its workers named.
func parseStaged(data []byte, name string, d *PlanDoc) (*stagedPart, error) {
	var s stagedPart
	if err := stage.Decode(data, name, &s); err != nil {
		return nil, err
	}
	switch {
	case s.Format != stagedFormat || s.Version != stagedVersion:
		return nil, fmt.Errorf("%w: %s is not a staged dv merge result (format %q version %d)", ErrBadStage, name, s.Format, s.Version)
	case s.TableUUID != d.TableUUID:
		return nil, fmt.Errorf("%w: staged result %s is of table %s, not %s", ErrBadStage, name, s.TableUUID, d.TableUUID)
	case s.PlanID != d.ID():
		return nil, fmt.Errorf("%w: staged result %s is of plan %s, not %s: stage each plan in a directory of its own", ErrBadStage, name, s.PlanID, d.ID())
	case path.Base(name) != partKey(s.PartitionID)+".json" || d.find(s.PartitionID) == nil:
		return nil, fmt.Errorf("%w: staged result %s names partition %q, which is not its own or not of plan %s", ErrBadStage, name, s.PartitionID, d.ID())
	}
	if _, err := strconv.ParseUint(s.Digest, 16, 64); err != nil {
		return nil, fmt.Errorf("%w: staged result %s has digest %q", ErrBadStage, name, s.Digest)
	}
	prefix := puffinPrefix(d, s.PartitionID)
	written := map[string]bool{}
	for _, p := range s.Written {
		if !strings.HasPrefix(path.Base(p), prefix) {
			// Only files a worker of this plan wrote for this partition
			// may be committed for it, never a file named by hand.
			return nil, fmt.Errorf("%w: staged result %s lists %q, which is not a Puffin file of its partition (named %s...)", ErrBadStage, name, p, prefix)
		}
		written[p] = true
	}
	for _, e := range s.DVs {
		if !written[e.Puffin] {
			return nil, fmt.Errorf("%w: staged result %s has a DV in %s, which it does not list as written", ErrBadStage, name, e.Puffin)
		}
	}
	return &s, nil
}

func (d *PlanDoc) find(id string) *PartitionPlan {
	for i := range d.Partitions {
		if d.Partitions[i].ID == id {
			return &d.Partitions[i]
		}
	}
	return nil
}

// puffinPrefix starts the name of every Puffin file a worker writes for
// the partition: the committer sweeps what no commit took by it.
func puffinPrefix(d *PlanDoc, id string) string { return d.ID() + "-" + partKey(id) + "-" }

func (s Stage) write(ctx context.Context, sp *stagedPart) error {
	data, err := json.MarshalIndent(sp, "", "  ")
	if err != nil {
		return fmt.Errorf("stage partition %s: %w", sp.PartitionID, err)
	}
	if err := fileio.WriteFile(ctx, s.IO, s.partPath(sp.PartitionID), append(data, '\n')); err != nil {
		return fmt.Errorf("stage partition %s: %w", sp.PartitionID, err)
	}
	return nil
}

// committedParts are the partitions of plan d that snapshots of the branch
// committed since the plan's base: partition id -> snapshot id. Only
// snapshot summaries are read.
func committedParts(md *spec.TableMetadata, d *PlanDoc) map[string]int64 {
	return stage.Committed(md, d.Branch, d.BaseSnapshotID, SummaryPlanID, d.ID(), func(sum map[string]string) []string {
		var ids []string
		if json.Unmarshal([]byte(sum[SummaryPartitionIDs]), &ids) != nil {
			return nil
		}
		return ids
	})
}

// ShardReport is what a worker did with its partitions.
type ShardReport struct {
	PlanID         string            `json:"plan_id"`
	Shard          int               `json:"shard"`
	Shards         int               `json:"shards"`
	PlanPartitions int               `json:"plan_partitions"`
	Partitions     []PartitionResult `json:"partitions"`
}

// Count returns how many partitions have status s.
func (r *ShardReport) Count(s string) int {
	n := 0
	for _, p := range r.Partitions {
		if p.Status == s {
			n++
		}
	}
	return n
}

// MergeShard is one worker of a sharded run: it merges the partitions of
// d that d.Assign gives shard sh, against the branch head as it is now
// (as Execute does), and writes one staged result per partition into st.
// It commits nothing. A partition already committed under this plan, or
// already staged with a valid result, is skipped, so a worker run again
// (a retry, a duplicate pod) redoes only what is missing.
func MergeShard(ctx context.Context, t *catalog.Table, d *PlanDoc, sh shard.Shard, st Stage, opts Options) (*ShardReport, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
		return nil, invalidf("shard %d/%d: the index must be 0 to %d", sh.Index, sh.Count, max(sh.Count-1, 0))
	}
	if err := d.check(t); err != nil {
		return nil, fmt.Errorf("dv merge shard %d/%d of %s: %w", sh.Index, sh.Count, t.Ident, err)
	}
	rep := &ShardReport{PlanID: d.ID(), Shard: sh.Index, Shards: sh.Count, PlanPartitions: len(d.Partitions), Partitions: []PartitionResult{}}
	recorded, err := st.checkPlan(ctx, d)
	if err != nil {
		return rep, err
	}
	if !recorded {
		if err := fileio.WriteFile(ctx, st.IO, st.planPath(), d.raw); err != nil {
			return rep, fmt.Errorf("record the plan in the stage: %w", err)
		}
	}
	mine := map[string]*PartitionResult{}
	for i, s := range d.Assign(sh.Count) {
		if s == sh.Index {
			rep.Partitions = append(rep.Partitions, PartitionResult{ID: d.Partitions[i].ID, Status: StatusNothing,
				Reason: "nothing to merge on the table now"})
		}
	}
	if len(rep.Partitions) == 0 {
		return rep, nil
	}
	for i := range rep.Partitions {
		mine[rep.Partitions[i].ID] = &rep.Partitions[i]
	}
	committed := committedParts(t.Metadata, d)
	staged, err := st.list(ctx)
	if err != nil {
		return rep, err
	}
	opts.Branch, opts.Where, opts.RepairResurrected, opts.Equality = d.Branch, d.Where, d.Repair, false
	for id, r := range mine {
		if snap, ok := committed[id]; ok {
			r.Status, r.Reason, r.SnapshotID = StatusAlreadyCommitted, fmt.Sprintf("committed by snapshot %d", snap), snap
			delete(mine, id)
			continue
		}
		if name := staged[partKey(id)]; name != "" {
			if data, err := fileio.ReadFile(ctx, st.IO, name); err == nil {
				if _, err := parseStaged(data, name, d); err == nil {
					r.Status, r.Reason = StatusAlreadyStaged, "a result of this plan is staged already"
					delete(mine, id)
				}
			}
			// Unreadable or not of this plan: merged again and replaced.
		}
	}
	if len(mine) == 0 {
		return rep, nil
	}
	// Planned on the head as it is now: the partitions are merged as a
	// single-process run would merge them now.
	p, err := PlanTable(ctx, t, opts)
	if err != nil {
		return rep, err
	}
	defer p.Close()
	err = p.each(ctx, false, func(pp *PartitionPlan, h *head) error {
		r := mine[pp.ID]
		if r == nil {
			return ctx.Err()
		}
		mg := &merger{opts: opts, runID: puffinPrefix(d, pp.ID) + uuid.NewString()[:8]}
		m, err := mg.merge(ctx, h, pp)
		if err == nil {
			if err = st.write(ctx, stageOf(d, pp, m, sh)); err != nil {
				err = errors.Join(err, removeWritten(ctx, t.IO, t.Metadata, m.written))
			}
		}
		if err != nil {
			r.Status, r.Reason = StatusFailed, err.Error()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return nil
		}
		*r = m.res
		r.ID, r.Status = pp.ID, StatusStaged
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "partition %s: %d DV(s) in %d Puffin file(s), staged\n", pp.ID, m.res.DVsWritten, m.res.PuffinFiles)
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("dv merge shard %d/%d: %w", sh.Index, sh.Count, err)
	}
	return rep, nil
}

// Committed reports whether snapshots of d's branch committed every
// partition of d: a committer of its stage has nothing left to commit.
// Only snapshot summaries are read.
func Committed(md *spec.TableMetadata, d *PlanDoc) bool {
	done := committedParts(md, d)
	for _, pp := range d.Partitions {
		if _, ok := done[pp.ID]; !ok {
			return false
		}
	}
	return true
}
