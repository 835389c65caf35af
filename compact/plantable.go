package compact

import (
	"context"
	"fmt"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan"
)

// PlanTable reads the live files of the branch head of t and plans their
// compaction. It reads manifests only, never data files.
func PlanTable(ctx context.Context, t *catalog.Table, opts Options) (*plan.Plan, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	md := t.Metadata
	r, err := opts.Plan.Resolve(md)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	snap, err := branchHead(md, opts.Branch)
	if err != nil {
		return nil, fmt.Errorf("plan compaction of %s: %w", t.Ident, err)
	}
	in := &plan.Input{Metadata: md, MetadataLocation: t.MetadataLocation, Branch: opts.Branch, BaseSnapshot: snap}
	if snap != nil {
		fs, err := table.LiveFilesWith(ctx, t.IO, snap, table.WalkOptions{SkipMetrics: true})
		if err != nil {
			return nil, fmt.Errorf("plan compaction of %s: %w", t.Ident, err)
		}
		in.Data, in.Deletes = fs.Data, fs.Deletes
	}
	p, err := plan.New(in, r, opts.Now())
	if err != nil {
		return nil, fmt.Errorf("plan compaction of %s: %w", t.Ident, err)
	}
	return p, nil
}

// branchHead is the snapshot branch points at: nil for a table without
// snapshots, an error for a branch that does not exist (other than main).
func branchHead(md *spec.TableMetadata, branch string) (*spec.Snapshot, error) {
	if branch == "" {
		branch = spec.MainBranch
	}
	ref, ok := md.Refs[branch]
	if !ok {
		if branch == spec.MainBranch {
			return md.CurrentSnapshot(), nil
		}
		return nil, fmt.Errorf("branch %q does not exist", branch)
	}
	if ref.Type != spec.RefTypeBranch {
		return nil, fmt.Errorf("%q is a %s, not a branch", branch, ref.Type)
	}
	s, ok := md.SnapshotByID(ref.SnapshotID)
	if !ok {
		return nil, fmt.Errorf("branch %q points at missing snapshot %d", branch, ref.SnapshotID)
	}
	return s, nil
}
