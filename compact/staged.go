package compact

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/stage"
	"github.com/icectl/icectl/plan"
)

// A sharded run (one plan, N workers, one committer) meets in a stage
// directory, local or s3://:
//
//	DIR/plan.json          the plan, as the first worker found it
//	DIR/groups/<id>.json   one staged result per rewritten group
//
// A staged result is written whole or not at all (a FileIO makes a file
// visible only when it is closed), under a name only its group has, so a
// worker that runs a group again replaces its own result and the
// committer can never see two.

// Staged-result document identity.
const (
	stagedFormat  = "icectl-compaction-staged-group"
	stagedVersion = 1
)

// ErrBadStage is wrapped by the errors about a stage directory that cannot
// be committed as it is: a result of another table or plan, or one that
// does not parse. The committer refuses them before committing anything.
var ErrBadStage = stage.ErrBad

// Stage is the directory a sharded run's workers write to and its
// committer reads.
type Stage struct {
	IO  fileio.FileIO // must list (fileio.Lister)
	Dir string        // local path or s3:// URI, without a trailing slash
}

func (s Stage) planPath() string           { return s.Dir + "/" + stage.PlanFile }
func (s Stage) groupsDir() string          { return s.Dir + "/groups/" }
func (s Stage) groupPath(id string) string { return s.groupsDir() + id + ".json" }

// stagedGroup is one group's staged result: what its rewrite replaces, with
// the deletes it applied, and what it wrote. The committer rebuilds the
// rewrite from it and validates it against the table exactly as a
// single-process run validates its own (executor.check).
type stagedGroup struct {
	Format    string `json:"format"`
	Version   int    `json:"version"`
	TableUUID string `json:"table_uuid"`
	PlanID    string `json:"plan_id"`
	GroupID   string `json:"group_id"`
	Shard     int    `json:"shard"`
	Shards    int    `json:"shards"`
	// HeadSnapshotID is the branch head the worker resolved the group's
	// inputs and deletes against.
	HeadSnapshotID *int64        `json:"head_snapshot_id"`
	Inputs         []stagedInput `json:"inputs"`
	Applied        []stagedKey   `json:"applied_deletes"`
	// Retire and Dangling are what the worker found to retire, for a
	// reader of the stage: the committer decides again from the table
	// (checkStaged).
	Retire      []stagedKey    `json:"retire"`
	Dangling    int            `json:"dangling"`
	Outputs     []stagedOutput `json:"outputs"`
	RowsIn      int64          `json:"rows_in"`
	RowsOut     int64          `json:"rows_out"`
	BytesIn     int64          `json:"bytes_in"`
	BytesOut    int64          `json:"bytes_out"`
	Rewrite     string         `json:"rewrite"`
	RewriteNote string         `json:"rewrite_note,omitempty"`
}

type stagedInput struct {
	Path       string `json:"path"`
	FirstRowID *int64 `json:"first_row_id"`
}

type stagedKey struct {
	Path          string `json:"path"`
	ContentOffset *int64 `json:"content_offset,omitempty"`
}

func keyOf(k table.FileKey) stagedKey {
	s := stagedKey{Path: k.Path}
	if k.ContentOffset >= 0 {
		off := k.ContentOffset
		s.ContentOffset = &off
	}
	return s
}

func (s stagedKey) key() table.FileKey { return refKey(s.Path, s.ContentOffset) }

// stagedOutput is a written data file with everything its manifest entry
// holds: metrics, partition (typed, so it survives JSON exactly) and, in
// v3, nothing of lineage but the rows' own columns (first_row_id is
// assigned at commit).
type stagedOutput struct {
	Path            string         `json:"path"`
	FileFormat      string         `json:"file_format"`
	SpecID          int32          `json:"spec_id"`
	Partition       plan.Tuple     `json:"partition"`
	RecordCount     int64          `json:"record_count"`
	FileSizeInBytes int64          `json:"file_size_in_bytes"`
	ColumnSizes     map[int]int64  `json:"column_sizes,omitempty"`
	ValueCounts     map[int]int64  `json:"value_counts,omitempty"`
	NullValueCounts map[int]int64  `json:"null_value_counts,omitempty"`
	NaNValueCounts  map[int]int64  `json:"nan_value_counts,omitempty"`
	LowerBounds     map[int][]byte `json:"lower_bounds,omitempty"`
	UpperBounds     map[int][]byte `json:"upper_bounds,omitempty"`
	KeyMetadata     []byte         `json:"key_metadata,omitempty"`
	SplitOffsets    []int64        `json:"split_offsets,omitempty"`
	SortOrderID     *int32         `json:"sort_order_id,omitempty"`
}

func outputOf(df *manifest.DataFile) stagedOutput {
	return stagedOutput{Path: df.FilePath, FileFormat: df.FileFormat, SpecID: df.SpecID, Partition: plan.Tuple(df.Partition),
		RecordCount: df.RecordCount, FileSizeInBytes: df.FileSizeInBytes, ColumnSizes: df.ColumnSizes,
		ValueCounts: df.ValueCounts, NullValueCounts: df.NullValueCounts, NaNValueCounts: df.NaNValueCounts,
		LowerBounds: df.LowerBounds, UpperBounds: df.UpperBounds, KeyMetadata: df.KeyMetadata,
		SplitOffsets: df.SplitOffsets, SortOrderID: df.SortOrderID}
}

func (o *stagedOutput) dataFile() manifest.DataFile {
	return manifest.DataFile{Content: manifest.ContentData, FilePath: o.Path, FileFormat: o.FileFormat, SpecID: o.SpecID,
		Partition: []any(o.Partition), RecordCount: o.RecordCount, FileSizeInBytes: o.FileSizeInBytes,
		ColumnSizes: o.ColumnSizes, ValueCounts: o.ValueCounts, NullValueCounts: o.NullValueCounts,
		NaNValueCounts: o.NaNValueCounts, LowerBounds: o.LowerBounds, UpperBounds: o.UpperBounds,
		KeyMetadata: o.KeyMetadata, SplitOffsets: o.SplitOffsets, SortOrderID: o.SortOrderID}
}

// stage turns a finished rewrite of g into its staged result.
func stageOf(p *plan.Plan, planID string, g *plan.Group, h *head, rw *rewrite, shard, shards int) *stagedGroup {
	s := &stagedGroup{Format: stagedFormat, Version: stagedVersion, TableUUID: p.TableRef.UUID, PlanID: planID,
		GroupID: g.ID, Shard: shard, Shards: shards, Dangling: rw.dangling, RowsIn: rw.rowsIn, RowsOut: rw.rowsOut,
		BytesIn: rw.bytesIn, BytesOut: rw.bytesOut, Rewrite: rw.path, RewriteNote: rw.pathNote,
		Inputs: []stagedInput{}, Applied: []stagedKey{}, Retire: []stagedKey{}, Outputs: []stagedOutput{}}
	if h.snap != nil {
		id := h.snap.SnapshotID
		s.HeadSnapshotID = &id
	}
	for _, in := range rw.inputs {
		df := &in.entry.Entry.DataFile
		s.Inputs = append(s.Inputs, stagedInput{Path: df.FilePath, FirstRowID: df.FirstRowID})
	}
	seen := map[table.FileKey]bool{}
	for _, in := range rw.inputs {
		// In input order, each key once: the document is the same for the
		// same rewrite.
		for _, k := range applicableKeys(in.deletes) {
			if !seen[k] {
				seen[k] = true
				s.Applied = append(s.Applied, keyOf(k))
			}
		}
	}
	for _, k := range rw.retire {
		s.Retire = append(s.Retire, keyOf(k))
	}
	for i := range rw.outputs {
		s.Outputs = append(s.Outputs, outputOf(&rw.outputs[i]))
	}
	return s
}

// rewrite rebuilds the rewrite a staged result describes, as check and
// change read it: inputs by path with the first_row_id the worker saw.
func (s *stagedGroup) rewrite() *rewrite {
	rw := &rewrite{applied: map[table.FileKey]bool{}, dangling: s.Dangling, rowsIn: s.RowsIn, rowsOut: s.RowsOut,
		bytesIn: s.BytesIn, bytesOut: s.BytesOut, path: s.Rewrite, pathNote: s.RewriteNote}
	for _, in := range s.Inputs {
		var e table.FileEntry
		e.Entry.DataFile = manifest.DataFile{Content: manifest.ContentData, FilePath: in.Path, FirstRowID: in.FirstRowID}
		rw.inputs = append(rw.inputs, input{entry: e})
	}
	for _, k := range s.Applied {
		rw.applied[k.key()] = true
	}
	for _, k := range s.Retire {
		rw.retire = append(rw.retire, k.key())
	}
	for i := range s.Outputs {
		rw.outputs = append(rw.outputs, s.Outputs[i].dataFile())
	}
	return rw
}

// groupsByID indexes the groups of p by id.
func groupsByID(p *plan.Plan) map[string]*plan.Group {
	out := make(map[string]*plan.Group, len(p.Groups))
	for i := range p.Groups {
		out[p.Groups[i].ID] = &p.Groups[i]
	}
	return out
}

// parseStaged reads a staged result and checks it belongs to plan p (id
// planID): the table, the plan and a group of it with exactly its inputs.
func parseStaged(data []byte, name string, p *plan.Plan, planID string, groups map[string]*plan.Group) (*stagedGroup, error) {
	var s stagedGroup
	if err := stage.Decode(data, name, &s); err != nil {
		return nil, err
	}
	switch {
	case s.Format != stagedFormat || s.Version != stagedVersion:
		return nil, fmt.Errorf("%w: %s is not a staged result (format %q version %d)", ErrBadStage, name, s.Format, s.Version)
	case s.TableUUID != p.TableRef.UUID:
		return nil, fmt.Errorf("%w: staged result %s is of table %s, not %s", ErrBadStage, name, s.TableUUID, p.TableRef.UUID)
	case s.PlanID != planID:
		return nil, fmt.Errorf("%w: staged result %s is of plan %s, not %s: stage each plan in a directory of its own", ErrBadStage, name, s.PlanID, planID)
	}
	g, ok := groups[s.GroupID]
	if !ok {
		return nil, fmt.Errorf("%w: staged result %s names group %s, which plan %s does not have", ErrBadStage, name, s.GroupID, planID)
	}
	if path.Base(name) != s.GroupID+".json" {
		return nil, fmt.Errorf("%w: staged result %s holds group %s", ErrBadStage, name, s.GroupID)
	}
	if len(s.Inputs) != len(g.Inputs) {
		return nil, fmt.Errorf("%w: staged result %s lists %d inputs, its group has %d", ErrBadStage, name, len(s.Inputs), len(g.Inputs))
	}
	for i, in := range s.Inputs {
		if in.Path != g.Inputs[i].Path {
			return nil, fmt.Errorf("%w: staged result %s replaces %s, its group's input is %s", ErrBadStage, name, in.Path, g.Inputs[i].Path)
		}
	}
	prefix := planID + "-" + g.ID + "-"
	for _, o := range s.Outputs {
		if o.SpecID != int32(outputSpec(p, g)) || !strings.HasPrefix(path.Base(o.Path), prefix) {
			// Only files a worker of this plan wrote for this group may
			// be committed for it, never a file named by hand.
			return nil, fmt.Errorf("%w: staged result %s lists output %q, which is not a file of its group (named %s...) in spec %d",
				ErrBadStage, name, o.Path, prefix, outputSpec(p, g))
		}
	}
	return &s, nil
}

// writeStaged writes s as its group's result, replacing any earlier one.
func (st Stage) writeStaged(ctx context.Context, s *stagedGroup) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("stage group %s: %w", s.GroupID, err)
	}
	if err := fileio.WriteFile(ctx, st.IO, st.groupPath(s.GroupID), append(data, '\n')); err != nil {
		return fmt.Errorf("stage group %s: %w", s.GroupID, err)
	}
	return nil
}

// listStaged lists the staged results in the stage: group id -> path.
// Files that are not results (a local writer's hidden temporary files,
// anything not ending in .json) are left out.
func (st Stage) listStaged(ctx context.Context) (map[string]string, error) {
	return stage.List(ctx, st.IO, st.groupsDir())
}

// recordedPlan is the plan recorded in the stage, nil when there is none.
func (st Stage) recordedPlan(ctx context.Context) (*plan.Plan, error) {
	data, err := stage.RecordedPlan(ctx, st.IO, st.planPath())
	if err != nil || data == nil {
		return nil, err
	}
	p, err := plan.ParsePlan(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadStage, st.planPath(), err)
	}
	return p, nil
}

// checkPlan refuses a stage that records another plan than planID: one
// stage directory holds the results of one plan.
func (st Stage) checkPlan(ctx context.Context, planID string) (recorded bool, err error) {
	other, err := st.recordedPlan(ctx)
	if err != nil || other == nil {
		return false, err
	}
	if id := other.ID(); id != planID {
		return true, fmt.Errorf("%w: %s holds the results of plan %s of table %s, not of plan %s: stage each plan in a directory of its own",
			ErrBadStage, st.Dir, id, other.TableRef.UUID, planID)
	}
	return true, nil
}

// ensurePlan records p in the stage, or checks that the plan recorded
// there is p.
func (st Stage) ensurePlan(ctx context.Context, p *plan.Plan, planID string) error {
	recorded, err := st.checkPlan(ctx, planID)
	if err != nil || recorded {
		return err
	}
	data, err := p.MarshalJSON()
	if err != nil {
		return err
	}
	if err := fileio.WriteFile(ctx, st.IO, st.planPath(), append(data, '\n')); err != nil {
		return fmt.Errorf("record the plan in the stage: %w", err)
	}
	return nil
}

// ReadStagePlan reads the plan the workers recorded in the stage.
func ReadStagePlan(ctx context.Context, st Stage) (*plan.Plan, error) {
	p, err := st.recordedPlan(ctx)
	if err == nil && p == nil {
		err = fmt.Errorf("%w: %s holds no plan.json: no worker has staged into it (give --plan, or check the directory)", ErrBadStage, st.Dir)
	}
	return p, err
}
