package partstats

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
	// SnapshotID is the snapshot to compute for; nil means the current
	// one.
	SnapshotID *int64
	// Full computes from the snapshot's manifests alone (Options.Full).
	Full bool
	// Commit configures the commit.
	Commit commit.Options
}

// Plan is a computation made reading only. Idle, when not empty, says
// why there is nothing to do.
type Plan struct {
	Idle       string
	SnapshotID int64
	Result     *Result
}

// Report is what an execution did: the file written and the table as
// committed. Idle, when not empty, says why nothing was registered after
// all (another writer registered a file for the snapshot first).
type Report struct {
	// Plan is the plan executed.
	Plan      *Plan
	Idle      string
	File      spec.PartitionStatisticsFile
	Committed *catalog.Table
}

// PlanRun computes what a run would register, reading only. A snapshot
// the table does not have wraps ErrNoSnapshot, a previous file that
// cannot be read ErrBadFile: each refuses the run before anything is
// written. A snapshot that has a file, an unpartitioned table and a
// snapshot without files are nothing to do.
func PlanRun(ctx context.Context, t *catalog.Table, o RunOptions) (*Plan, error) {
	md := t.Metadata
	var id int64
	switch {
	case o.SnapshotID != nil:
		id = *o.SnapshotID
		if _, ok := md.SnapshotByID(id); !ok {
			return nil, fmt.Errorf("%w %d", ErrNoSnapshot, id)
		}
	case md.CurrentSnapshotID == nil:
		return &Plan{Idle: "the table has no snapshots"}, nil
	default:
		id = *md.CurrentSnapshotID
	}
	p := &Plan{SnapshotID: id}
	if f, ok := Registered(md, id); ok {
		p.Idle = fmt.Sprintf("snapshot %d has partition statistics (%s)", id, f.StatisticsPath)
		return p, nil
	}
	res, err := Compute(ctx, t.IO, md, id, Options{Full: o.Full})
	switch {
	case errors.Is(err, ErrUnpartitioned):
		p.Idle = err.Error()
		return p, nil
	case err != nil:
		return nil, err
	case len(res.Rows) == 0:
		p.Idle = fmt.Sprintf("snapshot %d has no files", id)
		return p, nil
	}
	p.Result = res
	return p, nil
}

// Execute writes p's file and registers it on t; an idle plan does
// nothing.
func Execute(ctx context.Context, cat catalog.Catalog, t *catalog.Table, p *Plan, o RunOptions) (*Report, error) {
	if p.Idle != "" {
		return &Report{Plan: p, Idle: p.Idle}, nil
	}
	data, err := Encode(p.Result, t.Metadata.FormatVersion)
	if err != nil {
		return nil, err
	}
	f, err := Write(ctx, t.IO, NewPath(t.Metadata, p.SnapshotID), p.SnapshotID, data)
	if err != nil {
		return nil, err
	}
	committed, err := Commit(ctx, cat, t, f, o.Commit)
	if errors.Is(err, ErrRegistered) {
		return &Report{Plan: p, Idle: err.Error()}, nil
	}
	if err != nil {
		return nil, err
	}
	return &Report{Plan: p, File: f, Committed: committed}, nil
}

// Verb is `stats partitions` as the verb runner
// (internal/shared/verbrun) runs it for the CLI and maintain: PlanRun
// (reading only, so an unreadable previous file refuses the run before
// the claim), Execute, Outcome. commitFor, when not nil, gives the
// commit options of the table as it is executed; else o.Commit.
func Verb(cat catalog.Catalog, o RunOptions, commitFor func(props map[string]string) commit.Options) verbrun.Verb[*Plan, *Report] {
	return verbrun.Verb[*Plan, *Report]{
		Name: "stats partitions",
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
	if errors.Is(err, ErrNoSnapshot) {
		return batchrun.Usage, err
	}
	return batchrun.Run{Verb: "stats partitions"}.Outcome(err)
}
