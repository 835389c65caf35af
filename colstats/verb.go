package colstats

import (
	"context"
	"errors"
	"fmt"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/shared/batchrun"
	"github.com/icectl/icectl/internal/shared/verbrun"
)

// RunOptions are what a run of the verb is asked for.
type RunOptions struct {
	// Columns are the names to sketch; empty means every top-level column
	// of a primitive type (Columns).
	Columns []string
	// SnapshotID is the snapshot to compute for; nil means the current
	// one.
	SnapshotID *int64
	// Full reads every live row (Options.Full).
	Full bool
	// CreatedBy is the Puffin file's created-by property.
	CreatedBy string
	// Commit configures the commit.
	Commit commit.Options
}

// Plan is a computation made reading only: the sketches of the columns
// the snapshot's statistics file lacks, and the blobs of that file to
// carry into the new one. Idle, when not empty, says why there is
// nothing to do.
type Plan struct {
	Idle       string
	SnapshotID int64
	// Prev is the snapshot's statistics file when it has one.
	Prev    *spec.StatisticsFile
	Carried []Blob
	Result  *Result
}

// Report is what an execution did: the file written and the table as
// committed (nil when the plan was idle).
type Report struct {
	// Plan is the plan executed.
	Plan      *Plan
	File      spec.StatisticsFile
	Committed *catalog.Table
}

// PlanRun computes what a run would register, reading only. A snapshot
// the table does not have wraps ErrNoSnapshot, a column that cannot be
// sketched ErrColumn, a previous file that cannot be read ErrBadFile:
// each refuses the run before anything is written.
func PlanRun(ctx context.Context, t *catalog.Table, o RunOptions) (*Plan, error) {
	md := t.Metadata
	var snap *spec.Snapshot
	switch {
	case o.SnapshotID != nil:
		s, ok := md.SnapshotByID(*o.SnapshotID)
		if !ok {
			return nil, fmt.Errorf("%w %d", ErrNoSnapshot, *o.SnapshotID)
		}
		snap = s
	case md.CurrentSnapshot() == nil:
		return &Plan{Idle: "the table has no snapshots"}, nil
	default:
		snap = md.CurrentSnapshot()
	}
	p := &Plan{SnapshotID: snap.SnapshotID}
	cols, err := Columns(Schema(md, snap), o.Columns)
	if err != nil {
		return nil, err
	}
	if prev, ok := Registered(md, snap.SnapshotID); ok {
		p.Prev = &prev
		if cols = Missing(prev, snap.SnapshotID, cols); len(cols) == 0 {
			p.Idle = fmt.Sprintf("snapshot %d has sketches of these columns (%s)", snap.SnapshotID, prev.StatisticsPath)
			return p, nil
		}
		// Read before computing: a file that cannot be carried over stops
		// the run before any work.
		if p.Carried, err = Carried(ctx, t.IO, prev, cols); err != nil {
			return nil, err
		}
	}
	if p.Result, err = Compute(ctx, t.IO, md, snap.SnapshotID, cols, Options{Full: o.Full}); err != nil {
		return nil, err
	}
	return p, nil
}

// Execute writes p's file and registers it on t; an idle plan does
// nothing.
func Execute(ctx context.Context, cat catalog.Catalog, t *catalog.Table, p *Plan, o RunOptions) (*Report, error) {
	if p.Idle != "" {
		return &Report{Plan: p}, nil
	}
	data, f, err := Encode(p.Result, p.Carried, NewPath(t.Metadata, p.SnapshotID), o.CreatedBy)
	if err != nil {
		return nil, err
	}
	if err := Write(ctx, t.IO, f, data); err != nil {
		return nil, err
	}
	committed, err := Commit(ctx, cat, t, f, p.Prev, o.Commit)
	if err != nil {
		return nil, err
	}
	return &Report{Plan: p, File: f, Committed: committed}, nil
}

// Verb is `stats columns` as the verb runner (internal/shared/verbrun)
// runs it for the CLI and maintain: PlanRun (reading only, so a bad
// column or an unreadable previous file refuses the run before the
// claim), Execute, Outcome. commitFor, when not nil, gives the commit
// options of the table as it is executed; else o.Commit.
func Verb(cat catalog.Catalog, o RunOptions, commitFor func(props map[string]string) commit.Options) verbrun.Verb[*Plan, *Report] {
	return verbrun.Verb[*Plan, *Report]{
		Name: "stats columns",
		Plan: func(ctx context.Context, t *catalog.Table) (*Plan, bool, error) {
			p, err := PlanRun(ctx, t, o)
			if err != nil {
				return nil, false, err
			}
			return p, p.Idle != "", nil
		},
		Execute: func(ctx context.Context, t *catalog.Table, p *Plan) (*Report, error) {
			oo := o
			if commitFor != nil {
				oo.Commit = commitFor(t.Metadata.Properties)
			}
			return Execute(ctx, cat, t, p, oo)
		},
		Outcome: Outcome,
		// Statistics of a snapshot stay true when the table moves on:
		// the plan made before the claim is executed as it is, and the
		// commit checks the snapshot is still there with the file the
		// plan saw (a table a writer commits to every minute is not read
		// twice per run).
		Rechecks: true,
	}
}

// Outcome classifies the end of a run for the CLI's exit code and
// maintain's report.
func Outcome(_ *Report, err error) (batchrun.Outcome, error) {
	switch {
	case errors.Is(err, ErrColumn), errors.Is(err, ErrNoSnapshot):
		return batchrun.Usage, err
	case errors.Is(err, ErrChanged):
		return batchrun.Conflict, err
	}
	return batchrun.Run{Verb: "stats columns"}.Outcome(err)
}
