// Package refs changes a table's branches and tags and rolls main back:
// each change is a pure function from a table's metadata to the
// requirements and updates that make it, committed through the commit loop
// (Commit), which rebuilds it on the fresh table after a conflict.
//
// It must never move or drop a ref that changed since the change was
// built (every change asserts the refs it touches), never drop main, and
// never make main point at a snapshot outside its history unless forced.
package refs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/spec"
)

// ErrInvalid is wrapped by errors in what a change asks for (an unknown
// snapshot, a ref that exists or does not, dropping main): retrying cannot
// help.
var ErrInvalid = errors.New("invalid ref change")

// Change builds one ref change against md.
type Change func(md *spec.TableMetadata) ([]spec.Requirement, []spec.Update, error)

// Retention is the retention of a ref (spec fields; nil = table default).
type Retention struct {
	MinSnapshotsToKeep *int
	MaxSnapshotAgeMS   *int64
	MaxRefAgeMS        *int64
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// resolve returns snapshotID, or md's current snapshot when nil.
func resolve(md *spec.TableMetadata, snapshotID *int64) (int64, error) {
	if snapshotID == nil {
		if md.CurrentSnapshotID == nil {
			return 0, invalidf("table has no current snapshot; give one with --snapshot")
		}
		return *md.CurrentSnapshotID, nil
	}
	if _, ok := md.SnapshotByID(*snapshotID); !ok {
		return 0, invalidf("table has no snapshot %d", *snapshotID)
	}
	return *snapshotID, nil
}

func checkName(name string) error {
	if strings.TrimSpace(name) == "" {
		return invalidf("empty ref name")
	}
	if claim.IsRef(name) {
		return invalidf("%s is a tag of icectl's table claim, which icectl manages: see `icectl claim show` and `icectl claim release --force`", name)
	}
	return nil
}

// OnExisting says what creating a ref does when one of its name exists.
type OnExisting int

const (
	// FailIfExists refuses (ErrInvalid).
	FailIfExists OnExisting = iota
	// ReplaceExisting moves the ref (Spark's CREATE OR REPLACE), which
	// must be of the same type, to the new snapshot and retention, unless
	// another writer moved it meanwhile.
	ReplaceExisting
	// KeepExisting leaves it as it is (Spark's IF NOT EXISTS): the Change
	// returns ErrKept, a no-op for the caller, whatever the ref points at.
	KeepExisting
)

// ErrKept is returned by a KeepExisting Create whose ref exists.
var ErrKept = errors.New("the ref exists and is kept")

// Create makes a new branch or tag (typ spec.RefTypeBranch or
// spec.RefTypeTag) named name at snapshotID, or at the current snapshot
// when nil. A ref of that name must not exist; tags take only MaxRefAgeMS.
func Create(typ, name string, snapshotID *int64, r Retention) Change {
	return CreateOr(typ, name, snapshotID, r, FailIfExists)
}

// CreateOr is Create with on saying what happens to an existing ref of
// that name: a runbook that runs twice must be able to say "again" or
// "only once".
func CreateOr(typ, name string, snapshotID *int64, r Retention, on OnExisting) Change {
	return func(md *spec.TableMetadata) ([]spec.Requirement, []spec.Update, error) {
		if err := checkName(name); err != nil {
			return nil, nil, err
		}
		assert := spec.AssertRefSnapshotID{Ref: name}
		if old, ok := md.Refs[name]; ok {
			switch {
			case on == KeepExisting:
				return nil, nil, fmt.Errorf("%w: %s %s is at snapshot %d", ErrKept, old.Type, name, old.SnapshotID)
			case on != ReplaceExisting:
				return nil, nil, invalidf("%s %s already exists (at snapshot %d); --replace moves it, --if-not-exists keeps it", old.Type, name, old.SnapshotID)
			case old.Type != typ:
				return nil, nil, invalidf("%s is a %s, not a %s: drop it first", name, old.Type, typ)
			case name == spec.MainBranch:
				return nil, nil, invalidf("main is not replaced: rollback moves it")
			}
			assert.SnapshotID = &old.SnapshotID
		}
		id, err := resolve(md, snapshotID)
		if err != nil {
			return nil, nil, err
		}
		ref := spec.SnapshotRef{SnapshotID: id, Type: typ, MaxRefAgeMS: r.MaxRefAgeMS}
		switch typ {
		case spec.RefTypeBranch:
			ref.MinSnapshotsToKeep, ref.MaxSnapshotAgeMS = r.MinSnapshotsToKeep, r.MaxSnapshotAgeMS
		case spec.RefTypeTag:
			if r.MinSnapshotsToKeep != nil || r.MaxSnapshotAgeMS != nil {
				return nil, nil, invalidf("tags keep one snapshot: min-snapshots-to-keep and max-snapshot-age apply to branches only")
			}
		default:
			return nil, nil, invalidf("unknown ref type %q", typ)
		}
		if name == spec.MainBranch && ref.MaxRefAgeMS != nil {
			return nil, nil, invalidf("main never expires: it takes no max-ref-age")
		}
		return []spec.Requirement{assert},
			[]spec.Update{spec.SetSnapshotRef{RefName: name, Ref: ref}}, nil
	}
}

// Drop removes the ref name, which must be of type typ. main is never
// dropped.
func Drop(typ, name string) Change {
	return func(md *spec.TableMetadata) ([]spec.Requirement, []spec.Update, error) {
		if name == spec.MainBranch {
			return nil, nil, invalidf("the main branch cannot be dropped")
		}
		if err := checkName(name); err != nil {
			return nil, nil, err
		}
		ref, ok := md.Refs[name]
		if !ok {
			return nil, nil, invalidf("table has no %s %s", typ, name)
		}
		if ref.Type != typ {
			return nil, nil, invalidf("%s is a %s, not a %s", name, ref.Type, typ)
		}
		id := ref.SnapshotID
		return []spec.Requirement{spec.AssertRefSnapshotID{Ref: name, SnapshotID: &id}},
			[]spec.Update{spec.RemoveSnapshotRef{RefName: name}}, nil
	}
}

// Ancestors returns id and its ancestors in md, newest first, stopping at
// a parent md no longer has.
func Ancestors(md *spec.TableMetadata, id int64) []*spec.Snapshot { return md.Ancestors(id) }

// IsAncestor reports whether id is head or one of its ancestors.
func IsAncestor(md *spec.TableMetadata, head, id int64) bool {
	return slices.ContainsFunc(Ancestors(md, head), func(s *spec.Snapshot) bool { return s.SnapshotID == id })
}

// SnapshotAsOf returns the newest ancestor of main's head committed at or
// before tsMS, as Java's rollbackToTime picks it.
func SnapshotAsOf(md *spec.TableMetadata, tsMS int64) (int64, error) {
	return SnapshotAsOfBranch(md, spec.MainBranch, tsMS)
}

// SnapshotAsOfBranch is SnapshotAsOf on the history of branch.
func SnapshotAsOfBranch(md *spec.TableMetadata, branch string, tsMS int64) (int64, error) {
	head, err := branchHead(md, branch)
	if err != nil {
		return 0, err
	}
	if head == nil {
		return 0, invalidf("table has no current snapshot")
	}
	for _, s := range Ancestors(md, *head) {
		if s.TimestampMS <= tsMS {
			return s.SnapshotID, nil
		}
	}
	return 0, invalidf("no snapshot of %s's history was committed at or before %d ms", branch, tsMS)
}

// branchHead is the snapshot id branch points at: nil for main in a table
// without snapshots; ErrInvalid for another branch that does not exist or
// for a tag.
func branchHead(md *spec.TableMetadata, branch string) (*int64, error) {
	ref, ok := md.Refs[branch]
	switch {
	case !ok && branch == spec.MainBranch:
		if md.CurrentSnapshotID == nil {
			return nil, nil
		}
		c := *md.CurrentSnapshotID
		return &c, nil
	case !ok:
		return nil, invalidf("table has no branch %s", branch)
	case ref.Type != spec.RefTypeBranch:
		return nil, invalidf("%s is a %s, not a branch", branch, ref.Type)
	}
	id := ref.SnapshotID
	return &id, nil
}

// Rollback makes snapshotID main's head (set-current). It must be main's
// head or an ancestor of it unless force; rolling back to the head is
// refused as a no-op only by the caller (the change is still valid).
func Rollback(snapshotID int64, force bool) Change {
	return RollbackBranch(spec.MainBranch, snapshotID, force)
}

// RollbackBranch makes snapshotID the head of branch, which must exist
// (main may lack a ref in a table without snapshots). The snapshot must be
// the branch's head or one of its ancestors unless force: Java's
// replaceBranch sets any snapshot, its rollbackTo only an ancestor, and an
// operator who moves a branch sideways says so.
func RollbackBranch(branch string, snapshotID int64, force bool) Change {
	return func(md *spec.TableMetadata) ([]spec.Requirement, []spec.Update, error) {
		if _, ok := md.SnapshotByID(snapshotID); !ok {
			return nil, nil, invalidf("table has no snapshot %d", snapshotID)
		}
		cur, err := branchHead(md, branch)
		if err != nil {
			return nil, nil, err
		}
		if !force && (cur == nil || !IsAncestor(md, *cur, snapshotID)) {
			return nil, nil, invalidf("snapshot %d is not an ancestor of %s's head; --force makes it the head anyway", snapshotID, branch)
		}
		return []spec.Requirement{spec.AssertRefSnapshotID{Ref: branch, SnapshotID: cur}},
			[]spec.Update{spec.SetSnapshotRef{RefName: branch, Ref: movedRef(md, branch, snapshotID)}}, nil
	}
}

// movedRef is branch's ref pointing at id, with the retention it has.
func movedRef(md *spec.TableMetadata, branch string, id int64) spec.SnapshotRef {
	ref := spec.SnapshotRef{SnapshotID: id, Type: spec.RefTypeBranch}
	if old, ok := md.Refs[branch]; ok {
		ref.MinSnapshotsToKeep, ref.MaxSnapshotAgeMS, ref.MaxRefAgeMS, ref.Extra = old.MinSnapshotsToKeep, old.MaxSnapshotAgeMS, old.MaxRefAgeMS, old.Extra
	}
	return ref
}

// ErrNothingToDo is returned by a change that would leave the table as it
// is (a fast-forward of a branch already at the target): a no-op for the
// caller, never a failure.
var ErrNothingToDo = errors.New("nothing to change")

// FastForward moves branch to the head of the ref to (a branch or a tag),
// as Java's fastForwardBranch does: only when branch's head is an ancestor
// of to's head, so no snapshot of branch is left behind. A branch that
// does not exist is created at to's head (as Java does); a branch already
// there returns ErrNothingToDo.
func FastForward(branch, to string) Change {
	return func(md *spec.TableMetadata) ([]spec.Requirement, []spec.Update, error) {
		if err := checkName(branch); err != nil {
			return nil, nil, err
		}
		var target int64
		if toRef, ok := md.Refs[to]; ok {
			target = toRef.SnapshotID
		} else if to == spec.MainBranch && md.CurrentSnapshotID != nil {
			target = *md.CurrentSnapshotID
		} else {
			return nil, nil, invalidf("table has no branch or tag %s", to)
		}
		if _, ok := md.SnapshotByID(target); !ok {
			return nil, nil, invalidf("%s points at snapshot %d, which the table does not have", to, target)
		}
		if _, exists := md.Refs[branch]; !exists && branch != spec.MainBranch {
			return []spec.Requirement{spec.AssertRefSnapshotID{Ref: branch}, spec.AssertRefSnapshotID{Ref: to, SnapshotID: &target}},
				[]spec.Update{spec.SetSnapshotRef{RefName: branch, Ref: spec.SnapshotRef{SnapshotID: target, Type: spec.RefTypeBranch}}}, nil
		}
		cur, err := branchHead(md, branch)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case cur != nil && *cur == target:
			return nil, nil, fmt.Errorf("%w: %s is already at snapshot %d, the head of %s", ErrNothingToDo, branch, target, to)
		case cur != nil && !IsAncestor(md, target, *cur):
			return nil, nil, invalidf("cannot fast-forward %s to %s: %s's head %d is not an ancestor of %s's head %d (the branches diverged; cherrypick the snapshots, or `rollback --branch %s --force`)",
				branch, to, branch, *cur, to, target, branch)
		}
		return []spec.Requirement{spec.AssertRefSnapshotID{Ref: branch, SnapshotID: cur}, spec.AssertRefSnapshotID{Ref: to, SnapshotID: &target}},
			[]spec.Update{spec.SetSnapshotRef{RefName: branch, Ref: movedRef(md, branch, target)}}, nil
	}
}

// Commit commits ch to t through the commit loop; it is rebuilt against
// the reloaded table after a conflict, so an error of ErrInvalid can come
// from a retry (someone else created the tag meanwhile).
func Commit(ctx context.Context, cat catalog.Catalog, t *catalog.Table, ch Change, opts commit.Options) (*catalog.Table, error) {
	build := func(ctx context.Context, base *catalog.Table, attempt int) (*commit.Attempt, error) {
		reqs, ups, err := ch(base.Metadata)
		if err != nil {
			return nil, err
		}
		reqs = append([]spec.Requirement{spec.AssertTableUUID{UUID: base.Metadata.TableUUID}}, reqs...)
		return &commit.Attempt{Requirements: reqs, Updates: ups}, nil
	}
	return commit.Run(ctx, cat, t, build, opts)
}

// Info describes one ref for listings.
type Info struct {
	Name string
	spec.SnapshotRef
	// TimestampMS is when the ref's snapshot was committed (0 when md lacks
	// it).
	TimestampMS int64
}

// List returns md's refs of type typ ("" for all), by name.
func List(md *spec.TableMetadata, typ string) []Info {
	var out []Info
	for name, r := range md.Refs {
		if typ != "" && r.Type != typ {
			continue
		}
		i := Info{Name: name, SnapshotRef: r}
		if s, ok := md.SnapshotByID(r.SnapshotID); ok {
			i.TimestampMS = s.TimestampMS
		}
		out = append(out, i)
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out
}
