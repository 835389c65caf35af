package upgrade

import (
	"context"
	"errors"
	"fmt"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/meter"
)

// ErrBadTarget is wrapped when the target version is not one icectl can
// upgrade to, or is below the table's version (a downgrade): both are
// mistakes in the request, never retried.
var ErrBadTarget = errors.New("bad target format version")

// Options say what Run does.
type Options struct {
	// To is the target format version, 2 or 3.
	To int
	// AssignRowIDs, for a v3 target, commits together with the upgrade a
	// snapshot that gives every data manifest of main a first_row_id, so
	// that the next business write does not pay for it. On a table already
	// at v3 whose current manifests still lack ids, Run does only that.
	AssignRowIDs bool
	Commit       commit.Options
	// Progress receives one step for the commit that reads the manifests
	// and gives them row ids.
	Progress meter.Meter
}

// Result is what Run did.
type Result struct {
	Table string
	From  int
	To    int
	// Upgraded is true when this run raised the format version.
	Upgraded bool
	// Snapshot is the snapshot that assigned row ids (nil when none was
	// committed): its first-row-id and added-rows.
	Snapshot *spec.Snapshot
	// ManifestsAssigned is how many data manifests got a first_row_id.
	ManifestsAssigned int
	NextRowID         *int64
	MetadataLocation  string
}

// Committed reports whether anything changed.
func (r *Result) Committed() bool { return r.Upgraded || r.Snapshot != nil }

// CheckTarget refuses a target icectl cannot upgrade a version-from table to.
func CheckTarget(from, to int) error {
	switch {
	case to < 2 || to > spec.MaxFormatVersion:
		return fmt.Errorf("%w: %d (icectl upgrades to 2 or 3)", ErrBadTarget, to)
	case to < from:
		return fmt.Errorf("%w: the table is at format v%d and cannot be downgraded to v%d", ErrBadTarget, from, to)
	}
	return nil
}

// errNothingToAssign stops the row-id commit when main's snapshot has no
// data manifest without a first_row_id (a concurrent v3 writer may have
// assigned them first).
var errNothingToAssign = errors.New("no data manifest lacks a first_row_id")

// errNothingToChange stops the plain upgrade when the table already is at
// the target (a concurrent upgrade may have landed first).
var errNothingToChange = errors.New("already at the target format version")

// Run upgrades t to opts.To. Nothing is committed when the table already
// is at the target (and, with AssignRowIDs, every data manifest of main
// has a first_row_id).
func Run(ctx context.Context, cat catalog.Catalog, t *catalog.Table, opts Options) (*Result, error) {
	md := t.Metadata
	if err := CheckTarget(md.FormatVersion, opts.To); err != nil {
		return nil, err
	}
	res := &Result{Table: t.Ident.String(), From: md.FormatVersion, To: opts.To, MetadataLocation: t.MetadataLocation, NextRowID: md.NextRowID}
	if opts.AssignRowIDs && opts.To >= 3 {
		done, err := assignRowIDs(ctx, cat, t, opts, res)
		if err != nil || done {
			return res, err
		}
	}
	build := func(ctx context.Context, base *catalog.Table, attempt int) (*commit.Attempt, error) {
		if err := CheckTarget(base.Metadata.FormatVersion, opts.To); err != nil {
			return nil, err
		}
		if base.Metadata.FormatVersion == opts.To {
			return nil, errNothingToChange
		}
		return &commit.Attempt{
			Requirements: []spec.Requirement{spec.AssertTableUUID{UUID: base.Metadata.TableUUID}},
			Updates:      []spec.Update{spec.UpgradeFormatVersion{FormatVersion: opts.To}},
		}, nil
	}
	if md.FormatVersion == opts.To {
		return res, nil
	}
	out, err := commit.Run(ctx, cat, t, build, opts.Commit)
	switch {
	case errors.Is(err, errNothingToChange):
		return res, nil
	case err != nil:
		return nil, err
	}
	res.Upgraded = true
	res.MetadataLocation, res.NextRowID = out.MetadataLocation, out.Metadata.NextRowID
	return res, nil
}

// assignRowIDs commits the relist snapshot (with the upgrade when the
// table is below v3). done is false when there was nothing to assign, and
// the caller still has the format version to raise.
func assignRowIDs(ctx context.Context, cat catalog.Catalog, t *catalog.Table, opts Options, res *Result) (done bool, err error) {
	var assigned int
	ch := table.Change{
		Operation:     spec.OperationReplace,
		RelistOnly:    true,
		FormatVersion: opts.To,
		Validate: func(base *catalog.Table, baseSnap *spec.Snapshot) error {
			if err := CheckTarget(base.Metadata.FormatVersion, opts.To); err != nil {
				return err
			}
			if baseSnap == nil {
				return errNothingToAssign
			}
			mfs, err := table.ManifestFiles(ctx, base.IO, baseSnap)
			if err != nil {
				return err
			}
			if assigned = Unassigned(mfs); assigned == 0 {
				return errNothingToAssign
			}
			return nil
		},
	}
	pm := meter.Or(opts.Progress)
	pm.Start(1, 0)
	defer pm.Done()
	out, snap, err := table.CommitChange(ctx, cat, t, ch, opts.Commit)
	pm.Step(0)
	if errors.Is(err, errNothingToAssign) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	res.Upgraded = t.Metadata.FormatVersion < opts.To
	res.Snapshot, res.ManifestsAssigned = snap, assigned
	res.MetadataLocation, res.NextRowID = out.MetadataLocation, out.Metadata.NextRowID
	return true, nil
}

// Unassigned counts the data manifests of a manifest list that hold live
// files and have no first_row_id: those the next v3 commit must give ids.
func Unassigned(mfs []manifest.ManifestFile) int {
	n := 0
	for _, mf := range mfs {
		if mf.Content != manifest.ManifestContentData || mf.FirstRowID != nil {
			continue
		}
		if mf.AddedFilesCount != nil && mf.ExistingFilesCount != nil && *mf.AddedFilesCount+*mf.ExistingFilesCount == 0 {
			continue
		}
		n++
	}
	return n
}
