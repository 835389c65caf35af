package compact

import (
	"context"
	"fmt"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan"
)

// PlanTable reads the live files of the branch head of t and plans their
// compaction. It reads manifests only, never data files. The plan lists
// every input file; PlanTableResult plans without holding them in memory.
func PlanTable(ctx context.Context, t *catalog.Table, opts Options) (*plan.Plan, error) {
	res, err := PlanTableResult(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	p, err := res.Plan()
	if err != nil {
		return nil, fmt.Errorf("plan compaction of %s: %w", t.Ident, err)
	}
	return p, nil
}

// PlanTableResult is PlanTable for writing the plan rather than executing
// it (a dry run, --plan-out): the manifests are read in parallel straight
// into compact records, and the result writes the plan's text or JSON
// reading the input files back, so memory does not grow with the table.
// The caller closes the result.
func PlanTableResult(ctx context.Context, t *catalog.Table, opts Options) (*plan.Result, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	md := t.Metadata
	if err := refuseV1(t); err != nil {
		return nil, err
	}
	r, err := opts.Plan.Resolve(md)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	snap, err := table.BranchHead(md, opts.Branch)
	if err != nil {
		return nil, fmt.Errorf("plan compaction of %s: %w", t.Ident, err)
	}
	if _, err := resolveOrdering(md, opts); err != nil {
		return nil, err
	}
	in := &plan.Input{Metadata: md, MetadataLocation: t.MetadataLocation, TableName: t.Ident.String(), Branch: opts.Branch,
		Sort: opts.Sort, SortOrder: opts.SortOrder, ZOrder: opts.ZOrder, BaseSnapshot: snap}
	c := plan.NewCollector(md, table.NewPartitions(), plan.CollectorOptions{})
	defer c.Close()
	if snap != nil {
		deletes, err := table.ScanLiveFiles(ctx, t.IO, snap, table.ScanOptions{Partitions: c.Partitions()}, c.NewSink)
		if err != nil {
			return nil, fmt.Errorf("plan compaction of %s: %w", t.Ident, err)
		}
		in.Deletes = deletes
		if f := r.Filter(); f != nil && !f.PartitionsDecide(md.PartitionSpecs) {
			if in.Unmatched, err = unmatchedByMetrics(ctx, t, snap, f); err != nil {
				return nil, fmt.Errorf("plan compaction of %s: %w", t.Ident, err)
			}
		}
	}
	res, err := c.Plan(in, r, opts.Now())
	if err != nil {
		return nil, fmt.Errorf("plan compaction of %s: %w", t.Ident, err)
	}
	return res, nil
}

// refuseV1 refuses a format v1 table, naming the command that upgrades it.
func refuseV1(t *catalog.Table) error {
	if t.Metadata.FormatVersion >= 2 {
		return nil
	}
	return fmt.Errorf("compact %s: %w: it is format v%d and icectl writes v2 and v3 only; upgrade it first with `icectl upgrade %s --to 2`",
		t.Ident, ErrFormatV1, t.Metadata.FormatVersion, t.Ident)
}
