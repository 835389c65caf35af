package expire

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/iceberg/spec"
)

// Table properties of expiry, with Java's defaults.
const (
	PropMaxSnapshotAgeMS   = "history.expire.max-snapshot-age-ms"
	PropMinSnapshotsToKeep = "history.expire.min-snapshots-to-keep"
	PropMaxRefAgeMS        = "history.expire.max-ref-age-ms"
	PropGCEnabled          = "gc.enabled"

	DefaultMaxSnapshotAgeMS   = int64(5 * 24 * time.Hour / time.Millisecond)
	DefaultMinSnapshotsToKeep = 1
	DefaultMaxRefAgeMS        = int64(math.MaxInt64)
)

// ErrInvalidOptions is wrapped by errors in the options or in the table
// properties they default to.
var ErrInvalidOptions = errors.New("invalid expire options")

// Policy says which snapshots to expire.
type Policy struct {
	// Now is the time ages are measured from.
	Now time.Time
	// OlderThan expires snapshots committed before it (subject to the
	// retention of refs); nil: Now - history.expire.max-snapshot-age-ms.
	OlderThan *time.Time
	// RetainLast is the number of ancestors each branch keeps at least
	// (unless the branch sets its own); nil:
	// history.expire.min-snapshots-to-keep.
	RetainLast *int
	// SnapshotIDs, when set, are expired exactly; OlderThan and RetainLast
	// are then not applied unless also set.
	SnapshotIDs []int64
}

// Reasons a snapshot or ref is removed or kept, as reports print them.
const (
	ReasonOlderThan     = "older than the cutoff and outside every branch's retention"
	ReasonRequested     = "requested by id"
	ReasonRefExpired    = "ref older than its max-ref-age"
	ReasonRefDangling   = "ref points at a missing snapshot"
	ReasonRefHead       = "head of a retained ref"
	ReasonBranchHistory = "within a branch's retention"
	ReasonNewer         = "newer than the cutoff"
	ReasonNotRequested  = "not requested"
	ReasonFlinkRestore  = "history down to a Flink job's last commit, which its restore reads"
)

// FlinkCheckpointKey is the snapshot summary key in which Iceberg's Flink
// sink records the last checkpoint it committed (with flink.job-id and
// flink.operator-id beside it). On restore the sink walks the branch's
// history from the head, parent by parent, to the newest snapshot of its
// job and reads that checkpoint id; a walk that meets an expired parent
// stops, finds nothing and commits the restored checkpoint again, which
// duplicates its rows, or fails the restore when the committer already
// deleted the checkpoint's manifests (IcebergFilesCommitter
// .getMaxCommittedCheckpointId; internal/testing/flinkinterop's control).
const FlinkCheckpointKey = "flink.max-committed-checkpoint-id"

// PropFlinkRestoreWindowMS bounds how long after a Flink job's last commit
// expiry keeps the history down to it (0: not at all): a table a Flink job
// wrote long ago and others since would otherwise keep every snapshot
// committed after it.
const PropFlinkRestoreWindowMS = "icectl.expire.flink-restore-window-ms"

// DefaultFlinkRestoreWindowMS is 30 days: a stopped job restored within a
// month finds its commit.
const DefaultFlinkRestoreWindowMS = int64(30 * 24 * time.Hour / time.Millisecond)

// Snapshot is a snapshot the plan removes or keeps, and why.
type Snapshot struct {
	SnapshotID  int64
	TimestampMS int64
	Reason      string
}

// Ref is a ref the plan removes, and why.
type Ref struct {
	Name   string
	Ref    spec.SnapshotRef
	Reason string
}

// Plan is what an expiry removes from a table's metadata.
type Plan struct {
	// OlderThanMS and MinSnapshotsToKeep are the defaults applied to
	// branches without their own (0 and 0 when only ids were requested).
	OlderThanMS        int64
	MinSnapshotsToKeep int
	MaxRefAgeMS        int64
	// Remove and Retain partition the table's snapshots, by timestamp then
	// id; RemoveRefs is by name.
	Remove     []Snapshot
	Retain     []Snapshot
	RemoveRefs []Ref
	// MoveClaimRefs are the claim tags (iceberg/claim) on removed
	// snapshots: a claim keeps no snapshot, so they move to main's head.
	MoveClaimRefs []string
	// RemoveSpecIDs and RemoveSchemaIDs are the partition specs and
	// schemas no retained snapshot uses, removed with
	// --clean-expired-metadata (see planMetadataCleanup).
	RemoveSpecIDs   []int
	RemoveSchemaIDs []int
}

// Empty reports whether the plan changes nothing.
func (p *Plan) Empty() bool {
	return len(p.Remove) == 0 && len(p.RemoveRefs) == 0 && len(p.RemoveSpecIDs) == 0 && len(p.RemoveSchemaIDs) == 0
}

// RemovedIDs returns the ids of the removed snapshots.
func (p *Plan) RemovedIDs() []int64 {
	ids := make([]int64, len(p.Remove))
	for i, s := range p.Remove {
		ids[i] = s.SnapshotID
	}
	return ids
}

// RetainedIDs returns the ids of the retained snapshots.
func (p *Plan) RetainedIDs() []int64 {
	ids := make([]int64, len(p.Retain))
	for i, s := range p.Retain {
		ids[i] = s.SnapshotID
	}
	return ids
}

func propInt64(md *spec.TableMetadata, key string, def int64, min int64) (int64, error) {
	v, ok := md.Properties[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < min {
		return 0, fmt.Errorf("%w: table property %s=%q: want an integer >= %d", ErrInvalidOptions, key, v, min)
	}
	return n, nil
}

// NewPlan decides, from md alone, which snapshots and refs an expiry
// removes, as Java's RemoveSnapshots does:
//   - main is always retained; another ref is retained while its snapshot is
//     younger than its max-ref-age-ms (default history.expire.max-ref-age-ms,
//     else forever), and removed otherwise, as is a ref to a missing
//     snapshot;
//   - each retained branch keeps its ancestors while fewer than its
//     min-snapshots-to-keep are kept or they are newer than its
//     max-snapshot-age-ms (defaults: RetainLast and OlderThan); a retained
//     tag keeps its snapshot;
//   - a snapshot in no retained branch's history and no tag is kept while
//     newer than OlderThan;
//   - everything else is removed.
//
// With SnapshotIDs only those are removed; naming the head of a retained
// ref, or a snapshot md does not have, is an error.
func NewPlan(md *spec.TableMetadata, pol Policy) (*Plan, error) {
	now := pol.Now.UnixMilli()
	p := &Plan{}
	idsOnly := len(pol.SnapshotIDs) > 0 && pol.OlderThan == nil && pol.RetainLast == nil

	maxAge, err := propInt64(md, PropMaxSnapshotAgeMS, DefaultMaxSnapshotAgeMS, 1)
	if err != nil {
		return nil, err
	}
	minKeep, err := propInt64(md, PropMinSnapshotsToKeep, DefaultMinSnapshotsToKeep, 1)
	if err != nil {
		return nil, err
	}
	maxRefAge, err := propInt64(md, PropMaxRefAgeMS, DefaultMaxRefAgeMS, 1)
	if err != nil {
		return nil, err
	}
	p.OlderThanMS = now - maxAge
	if pol.OlderThan != nil {
		p.OlderThanMS = pol.OlderThan.UnixMilli()
	}
	p.MinSnapshotsToKeep = int(min(minKeep, math.MaxInt32))
	if pol.RetainLast != nil {
		if *pol.RetainLast < 1 {
			return nil, fmt.Errorf("%w: retain-last must be at least 1, got %d", ErrInvalidOptions, *pol.RetainLast)
		}
		p.MinSnapshotsToKeep = *pol.RetainLast
	}
	p.MaxRefAgeMS = maxRefAge
	flinkWindow, err := propInt64(md, PropFlinkRestoreWindowMS, DefaultFlinkRestoreWindowMS, 0)
	if err != nil {
		return nil, err
	}

	// Refs: which are retained.
	retainedRefs := map[string]spec.SnapshotRef{}
	var claimRefs []string
	for _, name := range sortedRefNames(md) {
		ref := md.Refs[name]
		if claim.IsRef(name) {
			// A claim (another icectl run's lease, or this run's own)
			// neither keeps its snapshot nor expires by age here: it ends
			// with its lease, by its holder or the next taker.
			claimRefs = append(claimRefs, name)
			continue
		}
		if name == spec.MainBranch || idsOnly {
			retainedRefs[name] = ref
			continue
		}
		snap, ok := md.SnapshotByID(ref.SnapshotID)
		if !ok {
			p.RemoveRefs = append(p.RemoveRefs, Ref{Name: name, Ref: ref, Reason: ReasonRefDangling})
			continue
		}
		age := maxRefAge
		if ref.MaxRefAgeMS != nil {
			age = *ref.MaxRefAgeMS
		}
		if now-snap.TimestampMS <= age {
			retainedRefs[name] = ref
		} else {
			p.RemoveRefs = append(p.RemoveRefs, Ref{Name: name, Ref: ref, Reason: ReasonRefExpired})
		}
	}
	heads := map[int64]bool{}
	for _, r := range retainedRefs {
		heads[r.SnapshotID] = true
	}

	keep := map[int64]string{}
	remove := map[int64]string{}
	if idsOnly {
		for _, id := range pol.SnapshotIDs {
			if _, ok := md.SnapshotByID(id); !ok {
				return nil, fmt.Errorf("%w: table has no snapshot %d", ErrInvalidOptions, id)
			}
			if heads[id] {
				return nil, fmt.Errorf("%w: cannot expire snapshot %d: it is the head of %s", ErrInvalidOptions, id, refsAt(retainedRefs, id))
			}
			remove[id] = ReasonRequested
		}
		for _, s := range md.Snapshots {
			if _, ok := remove[s.SnapshotID]; !ok {
				keep[s.SnapshotID] = ReasonNotRequested
			}
		}
	} else {
		for _, id := range pol.SnapshotIDs {
			if _, ok := md.SnapshotByID(id); !ok {
				return nil, fmt.Errorf("%w: table has no snapshot %d", ErrInvalidOptions, id)
			}
			if heads[id] {
				return nil, fmt.Errorf("%w: cannot expire snapshot %d: it is the head of %s", ErrInvalidOptions, id, refsAt(retainedRefs, id))
			}
		}
		referenced := map[int64]bool{}
		for _, name := range sortedKeys(retainedRefs) {
			ref := retainedRefs[name]
			keep[ref.SnapshotID] = ReasonRefHead
			if ref.Type != spec.RefTypeBranch {
				referenced[ref.SnapshotID] = true
				continue
			}
			olderThan := p.OlderThanMS
			if ref.MaxSnapshotAgeMS != nil {
				olderThan = now - *ref.MaxSnapshotAgeMS
			}
			minSnaps := p.MinSnapshotsToKeep
			if ref.MinSnapshotsToKeep != nil {
				minSnaps = *ref.MinSnapshotsToKeep
			}
			kept := 0
			for _, s := range md.Ancestors(ref.SnapshotID) {
				if kept < minSnaps || s.TimestampMS >= olderThan {
					if _, ok := keep[s.SnapshotID]; !ok {
						keep[s.SnapshotID] = ReasonBranchHistory
					}
					kept++
					continue
				}
				break
			}
			// A Flink job's restore must still reach its last commit:
			// the history down to the newest snapshot a Flink sink
			// committed stays (compaction and other maintenance commit
			// on top of it while the job is stopped).
			if fs := flinkAncestor(md, ref.SnapshotID); fs != nil && now-fs.TimestampMS < flinkWindow {
				for _, s := range md.Ancestors(ref.SnapshotID) {
					if _, ok := keep[s.SnapshotID]; !ok {
						keep[s.SnapshotID] = ReasonFlinkRestore
					}
					if _, ok := s.Summary[FlinkCheckpointKey]; ok {
						break
					}
				}
			}
			// The whole history is referenced, so the rest of it is not
			// kept by the rule for unreferenced snapshots below.
			for _, s := range md.Ancestors(ref.SnapshotID) {
				referenced[s.SnapshotID] = true
			}
		}
		for _, s := range md.Snapshots {
			if _, ok := keep[s.SnapshotID]; ok {
				continue
			}
			if !referenced[s.SnapshotID] && s.TimestampMS >= p.OlderThanMS {
				keep[s.SnapshotID] = ReasonNewer
			}
		}
		for _, id := range pol.SnapshotIDs {
			delete(keep, id)
			remove[id] = ReasonRequested
		}
		for _, s := range md.Snapshots {
			if _, ok := keep[s.SnapshotID]; !ok {
				if _, ok := remove[s.SnapshotID]; !ok {
					remove[s.SnapshotID] = ReasonOlderThan
				}
			}
		}
	}
	for _, s := range md.Snapshots {
		if r, ok := remove[s.SnapshotID]; ok {
			p.Remove = append(p.Remove, Snapshot{SnapshotID: s.SnapshotID, TimestampMS: s.TimestampMS, Reason: r})
		} else {
			p.Retain = append(p.Retain, Snapshot{SnapshotID: s.SnapshotID, TimestampMS: s.TimestampMS, Reason: keep[s.SnapshotID]})
		}
	}
	bySnapshot := func(a, b Snapshot) int {
		return cmp.Or(cmp.Compare(a.TimestampMS, b.TimestampMS), cmp.Compare(a.SnapshotID, b.SnapshotID))
	}
	slices.SortFunc(p.Remove, bySnapshot)
	slices.SortFunc(p.Retain, bySnapshot)
	for _, name := range claimRefs {
		if _, ok := remove[md.Refs[name].SnapshotID]; ok {
			p.MoveClaimRefs = append(p.MoveClaimRefs, name)
		}
	}
	return p, nil
}

// flinkAncestor is the newest snapshot of head's history a Flink sink
// committed, or nil.
func flinkAncestor(md *spec.TableMetadata, head int64) *spec.Snapshot {
	for _, s := range md.Ancestors(head) {
		if _, ok := s.Summary[FlinkCheckpointKey]; ok {
			return s
		}
	}
	return nil
}

// Updates are the metadata updates of p against md: the removed refs, the
// statistics and partition statistics of removed snapshots, and the
// removed snapshots.
func (p *Plan) Updates(md *spec.TableMetadata) []spec.Update {
	var ups []spec.Update
	// Claim tags move first: removing their snapshot would drop them.
	for _, name := range p.MoveClaimRefs {
		ups = append(ups, claim.Repoint(md, name, p.claimTarget(md)))
	}
	for _, r := range p.RemoveRefs {
		ups = append(ups, spec.RemoveSnapshotRef{RefName: r.Name})
	}
	removed := map[int64]bool{}
	for _, s := range p.Remove {
		removed[s.SnapshotID] = true
	}
	for _, st := range md.Statistics {
		if removed[st.SnapshotID] {
			ups = append(ups, spec.RemoveStatistics{SnapshotID: st.SnapshotID})
		}
	}
	for _, st := range md.PartitionStatistics {
		if removed[st.SnapshotID] {
			ups = append(ups, spec.RemovePartitionStatistics{SnapshotID: st.SnapshotID})
		}
	}
	if len(p.Remove) > 0 {
		ups = append(ups, spec.RemoveSnapshots{SnapshotIDs: p.RemovedIDs()})
	}
	if len(p.RemoveSpecIDs) > 0 {
		ups = append(ups, spec.RemovePartitionSpecs{SpecIDs: p.RemoveSpecIDs})
	}
	if len(p.RemoveSchemaIDs) > 0 {
		ups = append(ups, spec.RemoveSchemas{SchemaIDs: p.RemoveSchemaIDs})
	}
	return ups
}

// claimTarget is where claim tags on removed snapshots move: main's head,
// which expiry always keeps, else the newest retained snapshot.
func (p *Plan) claimTarget(md *spec.TableMetadata) *spec.Snapshot {
	if s := md.CurrentSnapshot(); s != nil {
		return s
	}
	if n := len(p.Retain); n > 0 {
		s, _ := md.SnapshotByID(p.Retain[n-1].SnapshotID)
		return s
	}
	return nil
}

// Requirements guard p's updates: the table is the same, and every ref
// of md still points where it did (a ref moved or created onto a removed
// snapshot would be lost otherwise); a conflict rebuilds the plan. When p
// removes specs or schemas, the default spec and the current schema must
// not have changed either, as Java requires: a writer that made a removed
// spec the default again would otherwise lose it.
func (p *Plan) Requirements(md *spec.TableMetadata) []spec.Requirement {
	reqs := []spec.Requirement{spec.AssertTableUUID{UUID: md.TableUUID}}
	for _, name := range sortedRefNames(md) {
		id := md.Refs[name].SnapshotID
		reqs = append(reqs, spec.AssertRefSnapshotID{Ref: name, SnapshotID: &id})
	}
	if len(p.RemoveSpecIDs) > 0 {
		reqs = append(reqs, spec.AssertDefaultSpecID{ID: md.DefaultSpecID})
	}
	if len(p.RemoveSchemaIDs) > 0 {
		reqs = append(reqs, spec.AssertCurrentSchemaID{ID: md.CurrentSchemaID})
	}
	return reqs
}

func sortedRefNames(md *spec.TableMetadata) []string { return sortedKeys(md.Refs) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func refsAt(refs map[string]spec.SnapshotRef, id int64) string {
	var names []string
	for _, n := range sortedKeys(refs) {
		if refs[n].SnapshotID == id {
			names = append(names, refs[n].Type+" "+n)
		}
	}
	return fmt.Sprint(names)
}
