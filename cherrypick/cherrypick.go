// Package cherrypick publishes a snapshot that is not in main's history
// (a staged write-audit-publish snapshot, or one of another branch) onto
// main, with the checks Java's CherryPickOperation makes: a snapshot whose
// parent is main's head is fast-forwarded to (main points at it); an
// append, or a dynamic overwrite (replace-partitions) whose partitions no
// snapshot changed since its parent, is applied again as a new snapshot on
// main that adds (and removes) the same data files, its summary naming the
// source (source-snapshot-id) and the published write-audit-publish id
// (published-wap-id); anything else is refused.
//
// It must never publish a snapshot twice (one that is in main's history,
// one an ancestor of main was picked from, a wap.id main already
// published), never replace partitions another commit changed since the
// picked snapshot was written, and never commit when a check fails: every
// check runs again on each commit attempt against the table as it is.
package cherrypick

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/refs"
)

// Snapshot summary keys of the write-audit-publish workflow (Java's
// SnapshotSummary).
const (
	StagedWapIDProp       = "wap.id"
	PublishedWapIDProp    = "published-wap-id"
	SourceSnapshotIDProp  = "source-snapshot-id"
	ReplacePartitionsProp = "replace-partitions"
)

// ErrRefused is wrapped by every refusal: the snapshot cannot be picked
// onto the table as it is, and retrying cannot help.
var ErrRefused = errors.New("cherrypick refused")

func refusef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// Kind is how a snapshot is picked.
type Kind string

const (
	// FastForward points main at the snapshot itself: its parent is
	// main's head.
	FastForward Kind = "fast-forward"
	// Append adds the snapshot's added data files in a new snapshot.
	Append Kind = "append"
	// DynamicOverwrite adds and removes the snapshot's data files in a
	// new snapshot, once no snapshot since its parent changed the
	// partitions it replaces.
	DynamicOverwrite Kind = "dynamic-overwrite"
)

// Plan is what picking one snapshot does to the table it was planned on.
type Plan struct {
	Snapshot *spec.Snapshot
	Kind     Kind
	// WapID is the snapshot's staged wap.id ("" when none), which the new
	// snapshot records as published-wap-id.
	WapID string
	// Added and Removed are the data files the snapshot added and removed
	// (empty for FastForward); Added carry no first_row_id, so that in
	// v3 their rows get new row ids on main, as Java's producer gives them.
	Added, Removed []manifest.DataFile
}

// PlanPick decides how snapshotID is picked onto md's main branch and
// checks it as Java's cherrypick does before it commits.
func PlanPick(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, snapshotID int64) (*Plan, error) {
	snap, ok := md.SnapshotByID(snapshotID)
	if !ok {
		return nil, refusef("table has no snapshot %d", snapshotID)
	}
	if inMain(md, snapshotID) {
		return nil, refusef("snapshot %d is already in main's history", snapshotID)
	}
	p := &Plan{Snapshot: snap, WapID: snap.Summary[StagedWapIDProp]}
	op := snap.Summary["operation"]
	switch {
	case op == spec.OperationAppend:
		p.Kind = Append
	case op == spec.OperationOverwrite && snap.Summary[ReplacePartitionsProp] == "true":
		p.Kind = DynamicOverwrite
		if snap.ParentSnapshotID != nil && !inMain(md, *snap.ParentSnapshotID) {
			return nil, refusef("snapshot %d is an overwrite based on snapshot %d, which is not in main's history", snapshotID, *snap.ParentSnapshotID)
		}
	default:
		if !isFastForward(md, snap) {
			return nil, refusef("snapshot %d (%s) is not an append or a dynamic overwrite, and its parent is not main's head: only a fast-forward publishes it", snapshotID, op)
		}
		p.Kind = FastForward
		return p, nil
	}
	// Java checks the wap.id before it knows whether it fast-forwards.
	if err := checkWapID(md, p); err != nil {
		return nil, err
	}
	if isFastForward(md, snap) {
		p.Kind = FastForward
		return p, nil
	}
	if err := p.readFiles(ctx, fio); err != nil {
		return nil, err
	}
	if len(p.Added) == 0 && len(p.Removed) == 0 {
		return nil, refusef("snapshot %d adds and removes no data file: there is nothing to pick", snapshotID)
	}
	return p, p.validate(ctx, fio, md)
}

// readFiles reads the data files the snapshot added and removed: the
// entries of the manifests it wrote that carry its snapshot id (Java's
// SnapshotChanges).
func (p *Plan) readFiles(ctx context.Context, fio fileio.FileIO) error {
	mfs, err := table.ManifestFiles(ctx, fio, p.Snapshot)
	if err != nil {
		return fmt.Errorf("snapshot %d: %w", p.Snapshot.SnapshotID, err)
	}
	id := p.Snapshot.SnapshotID
	for _, mf := range mfs {
		if mf.AddedSnapshotID != id {
			continue
		}
		err := table.ReadManifest(ctx, fio, mf, true, func(e table.FileEntry) error {
			if e.Entry.SnapshotID == nil || *e.Entry.SnapshotID != id {
				return nil
			}
			df := e.Entry.DataFile
			switch {
			case df.Content != manifest.ContentData:
				// An append adds no deletes; a dynamic overwrite's deletes
				// are not picked by Java either.
			case e.Entry.Status == manifest.StatusAdded:
				df.FirstRowID = nil
				p.Added = append(p.Added, df)
			case e.Entry.Status == manifest.StatusDeleted && p.Kind == DynamicOverwrite:
				p.Removed = append(p.Removed, df)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("snapshot %d: %w", id, err)
		}
	}
	return nil
}

// validate is Java's CherryPickOperation.validate against md: run when
// planned and again on every commit attempt.
func (p *Plan) validate(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata) error {
	id := p.Snapshot.SnapshotID
	if _, ok := md.SnapshotByID(id); !ok {
		return refusef("snapshot %d is no longer in the table", id)
	}
	if inMain(md, id) {
		return refusef("snapshot %d is already in main's history", id)
	}
	if by := pickedAs(md, id); by != 0 {
		return refusef("snapshot %d was already cherrypicked onto main as snapshot %d", id, by)
	}
	if err := checkWapID(md, p); err != nil {
		return err
	}
	if p.Kind == DynamicOverwrite {
		return p.checkPartitions(ctx, fio, md)
	}
	return nil
}

// checkWapID refuses a wap.id main's history already staged or published
// (Java's DuplicateWAPCommitException).
func checkWapID(md *spec.TableMetadata, p *Plan) error {
	if p.WapID == "" {
		return nil
	}
	for _, s := range mainHistory(md) {
		if s.Summary[StagedWapIDProp] == p.WapID || s.Summary[PublishedWapIDProp] == p.WapID {
			return refusef("wap.id %q was already published to main (snapshot %d)", p.WapID, s.SnapshotID)
		}
	}
	return nil
}

// checkPartitions refuses a dynamic overwrite when a snapshot of main
// since its parent added data files to a partition it replaces.
func (p *Plan) checkPartitions(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata) error {
	parent := p.Snapshot.ParentSnapshotID
	if md.CurrentSnapshotID == nil {
		return nil
	}
	if parent != nil && !inMain(md, *parent) {
		return refusef("snapshot %d is an overwrite based on snapshot %d, which is no longer in main's history", p.Snapshot.SnapshotID, *parent)
	}
	replaced := map[string]bool{}
	for i := range p.Added {
		replaced[table.PartitionKey(p.Added[i].SpecID, p.Added[i].Partition)] = true
	}
	for _, s := range mainHistory(md) {
		if parent != nil && s.SnapshotID == *parent {
			break
		}
		mfs, err := table.ManifestFiles(ctx, fio, s)
		if err != nil {
			return fmt.Errorf("snapshot %d: %w", s.SnapshotID, err)
		}
		for _, mf := range mfs {
			if mf.AddedSnapshotID != s.SnapshotID || mf.Content != manifest.ManifestContentData {
				continue
			}
			err := table.ReadManifest(ctx, fio, mf, false, func(e table.FileEntry) error {
				df := &e.Entry.DataFile
				if e.Entry.Status == manifest.StatusAdded && replaced[table.PartitionKey(df.SpecID, df.Partition)] {
					return refusef("snapshot %d changed partition %v, which snapshot %d replaces", s.SnapshotID, df.Partition, p.Snapshot.SnapshotID)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func isFastForward(md *spec.TableMetadata, snap *spec.Snapshot) bool {
	if md.CurrentSnapshotID == nil {
		return snap.ParentSnapshotID == nil
	}
	return snap.ParentSnapshotID != nil && *snap.ParentSnapshotID == *md.CurrentSnapshotID
}

func mainHistory(md *spec.TableMetadata) []*spec.Snapshot {
	if md.CurrentSnapshotID == nil {
		return nil
	}
	return refs.Ancestors(md, *md.CurrentSnapshotID)
}

func inMain(md *spec.TableMetadata, id int64) bool {
	return md.CurrentSnapshotID != nil && refs.IsAncestor(md, *md.CurrentSnapshotID, id)
}

// pickedAs returns the snapshot of main's history whose source-snapshot-id
// is id, or 0.
func pickedAs(md *spec.TableMetadata, id int64) int64 {
	want := strconv.FormatInt(id, 10)
	for _, s := range mainHistory(md) {
		if s.Summary[SourceSnapshotIDProp] == want {
			return s.SnapshotID
		}
	}
	return 0
}

// Commit commits p to t. A fast-forward moves main (and fails if main
// moved meanwhile so that it no longer is one: run it again); a pick
// commits a new snapshot on main, checked again against the table on
// every attempt. It returns the committed table.
func Commit(ctx context.Context, cat catalog.Catalog, t *catalog.Table, p *Plan, opts commit.Options) (*catalog.Table, error) {
	id := p.Snapshot.SnapshotID
	if p.Kind == FastForward {
		ch := func(md *spec.TableMetadata) ([]spec.Requirement, []spec.Update, error) {
			snap, ok := md.SnapshotByID(id)
			if !ok {
				return nil, nil, refusef("snapshot %d is no longer in the table", id)
			}
			if !isFastForward(md, snap) {
				return nil, nil, refusef("main moved: snapshot %d's parent is no longer main's head; run cherrypick again", id)
			}
			// Java checks the wap.id of an append before fast-forwarding.
			if op := snap.Summary["operation"]; op == spec.OperationAppend || op == spec.OperationOverwrite {
				if err := checkWapID(md, p); err != nil {
					return nil, nil, err
				}
			}
			return refs.RollbackBranch(spec.MainBranch, id, true)(md)
		}
		return refs.Commit(ctx, cat, t, ch, opts)
	}
	op := spec.OperationAppend
	if p.Kind == DynamicOverwrite {
		op = spec.OperationOverwrite
	}
	summary := map[string]string{SourceSnapshotIDProp: strconv.FormatInt(id, 10)}
	if p.WapID != "" {
		summary[PublishedWapIDProp] = p.WapID
	}
	remove := make([]table.FileKey, len(p.Removed))
	for i := range p.Removed {
		remove[i] = table.KeyOf(&p.Removed[i])
	}
	ch := table.Change{
		Operation: op,
		AddData:   p.Added,
		Remove:    remove,
		Summary:   summary,
		Validate: func(base *metastore.Table, _ *spec.Snapshot) error {
			return p.validate(ctx, base.IO, base.Metadata)
		},
	}
	res, _, err := table.CommitChange(ctx, cat, t, ch, opts)
	return res, err
}
