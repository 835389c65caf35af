package commit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
)

// cleanupTimeout bounds the removal of a failed commit's files, which runs
// even when the caller's context is already cancelled.
const cleanupTimeout = time.Minute

// Attempt is one change built against one version of a table.
type Attempt struct {
	Requirements []spec.Requirement
	Updates      []spec.Update
	// Written lists every file this attempt wrote.
	Written []string
	// Reused lists files written by earlier attempts that this attempt's
	// updates still reference (manifests of added files are written once and
	// reused, since they inherit everything a retry changes).
	Reused []string
}

// BuildFunc builds the change against base. attempt is 0 for the caller's
// table and counts up on each reload. An error stops Run; a build decides
// what can be retried by validating against base.
type BuildFunc func(ctx context.Context, base *metastore.Table, attempt int) (*Attempt, error)

// Run commits the change build makes, retrying on conflicts.
//
// File removal rule: a file written by an attempt is removed exactly when
// the loop knows no committed metadata references it, which is
//
//   - after a definite conflict, once the next attempt is built: the failed
//     attempts' files that the new attempt does not list in Reused;
//
//   - when the loop gives up after a definite conflict (retries or time
//     exhausted, build error, cancelled while waiting): every file any
//     attempt wrote that was not removed yet.
//
//   - after a definite failure (the catalog says ErrCommitFailed: the
//     commit did not happen and will not), every file any attempt wrote.
//
// Nothing is removed after ErrCommitStateUnknown or after any other
// catalog error, since the catalog may have applied the change; those
// files are left for orphan removal and the error says so. Every removal
// goes through iceberg/reclaim: inside the table's locations, never a file
// the base version references.
//
// After a commit to a catalog that owns its metadata files, the metadata
// files that fell off the log are deleted when the table asks for it
// (reclaim.DeleteRemovedMetadata); the commit stands whatever that does,
// and what could not be deleted goes to opts.Warn.
func Run(ctx context.Context, cat metastore.Committer, t *metastore.Table, build BuildFunc, opts Options) (*metastore.Table, error) {
	if t == nil || t.Metadata == nil {
		return nil, errors.New("commit: no table")
	}
	start := opts.now()
	base := t
	var pending []string // files of failed attempts that may still be reused
	giveUp := func(err error) error {
		return errors.Join(err, removeFiles(ctx, base, pending))
	}
	for attempt := 0; ; attempt++ {
		a, err := build(ctx, base, attempt)
		if err != nil {
			return nil, giveUp(fmt.Errorf("commit %s: attempt %d: %w", t.Ident, attempt+1, err))
		}
		var unreferenced []string
		pending, unreferenced = carry(pending, a)
		if err := removeFiles(ctx, base, unreferenced); err != nil {
			return nil, giveUp(fmt.Errorf("commit %s: attempt %d: remove files of the failed attempt: %w", t.Ident, attempt+1, err))
		}
		res, err := cat.CommitTable(ctx, base, a.Requirements, a.Updates)
		if err == nil {
			cleanUpMetadata(ctx, cat, base, res, opts)
			return res, nil
		}
		// The catalog's errors name the table and the commit (metastore.
		// Committer): what is added here is the attempt and its files.
		if errors.Is(err, metastore.ErrCommitStateUnknown) {
			if len(pending) == 0 {
				return nil, fmt.Errorf("%w (%s); reload the table to see whether it landed", err, describe(a))
			}
			return nil, fmt.Errorf("%w (%s); kept %s this commit wrote (they may be referenced; reload the table to see whether it landed, `icectl orphan` removes them if not)",
				err, describe(a), files(len(pending)))
		}
		if errors.Is(err, metastore.ErrCommitFailed) {
			return nil, giveUp(fmt.Errorf("%w (%s)%s", err, describe(a), filesNote("removed", len(pending))))
		}
		if !isConflict(err) {
			return nil, fmt.Errorf("%w (%s)%s", err, describe(a), filesNote("kept", len(pending)))
		}
		if attempt >= opts.NumRetries {
			return nil, giveUp(fmt.Errorf("gave up after %d attempts: %w", attempt+1, err))
		}
		wait := opts.backoff(attempt + 1)
		if opts.TotalTimeout > 0 && opts.now().Add(wait).Sub(start) > opts.TotalTimeout {
			return nil, giveUp(fmt.Errorf("commit %s: gave up after %d attempts, retry timeout %s reached: %w", t.Ident, attempt+1, opts.TotalTimeout, err))
		}
		if err := opts.sleep(ctx, wait); err != nil {
			return nil, giveUp(fmt.Errorf("commit %s: waiting to retry after a conflict: %w", t.Ident, err))
		}
		fresh, err := cat.LoadTable(ctx, t.Ident)
		if err != nil {
			return nil, giveUp(fmt.Errorf("commit %s: reload after conflict: %w", t.Ident, err))
		}
		if fresh.IO == nil {
			fresh.IO = base.IO
		}
		base = fresh
	}
}

// isConflict reports whether err means the commit definitely did not
// happen and can be rebuilt on a fresh base: a lost compare-and-swap or a
// failed requirement, including the add-snapshot checks (sequence number,
// first-row-id) that go stale when another commit lands first.
func isConflict(err error) bool {
	return errors.Is(err, metastore.ErrCommitConflict) || errors.Is(err, spec.ErrRequirementFailed)
}

// carry splits the files of failed attempts into those a new attempt
// reuses (still pending, with its own) and those nothing references.
func carry(pending []string, a *Attempt) (next, unreferenced []string) {
	reused := make(map[string]bool, len(a.Reused))
	for _, p := range a.Reused {
		reused[p] = true
	}
	for _, p := range pending {
		if !reused[p] {
			unreferenced = append(unreferenced, p)
		}
	}
	next = make([]string, 0, len(a.Reused)+len(a.Written))
	next = append(next, a.Reused...)
	for _, p := range a.Written {
		if !slices.Contains(next, p) {
			next = append(next, p)
		}
	}
	return next, unreferenced
}

// files is "the N files" ("the 1 file").
func files(n int) string {
	if n == 1 {
		return "the 1 file"
	}
	return fmt.Sprintf("the %d files", n)
}

// filesNote is "; removed the N files this commit wrote", or "" when it
// wrote none.
func filesNote(verb string, n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %s %s this commit wrote", verb, files(n))
}

// describe names what an attempt tried to commit, for error messages.
func describe(a *Attempt) string {
	var parts []string
	for _, u := range a.Updates {
		switch u := u.(type) {
		case spec.AddSnapshot:
			parts = append(parts, fmt.Sprintf("snapshot %d, manifest list %s", u.Snapshot.SnapshotID, u.Snapshot.ManifestList))
		case *spec.AddSnapshot:
			parts = append(parts, fmt.Sprintf("snapshot %d, manifest list %s", u.Snapshot.SnapshotID, u.Snapshot.ManifestList))
		}
	}
	if len(parts) == 0 {
		actions := make([]string, len(a.Updates))
		for i, u := range a.Updates {
			actions[i] = u.Action()
		}
		return "updates [" + strings.Join(actions, ", ") + "]"
	}
	return "committing " + strings.Join(parts, "; ")
}

// removeFiles deletes files no committed metadata references, through the
// guard.
func removeFiles(ctx context.Context, base *metastore.Table, paths []string) error {
	if base.IO == nil {
		return nil
	}
	return reclaim.DeleteWritten(ctx, base.IO, base.Metadata, paths)
}

// cleanUpMetadata deletes the metadata files the commit from base to res
// dropped from the log, when the catalog owns them and the table asks.
func cleanUpMetadata(ctx context.Context, cat metastore.Committer, base, res *metastore.Table, opts Options) {
	owner, ok := cat.(metastore.MetadataFileOwner)
	if !ok || !owner.OwnsMetadataFiles() {
		return
	}
	fio := res.IO
	if fio == nil {
		fio = base.IO
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	rep := reclaim.DeleteRemovedMetadata(ctx, fio, base.MetadataLocation, base.Metadata, res.MetadataLocation, res.Metadata)
	if err := rep.Err(); err != nil {
		opts.warn(fmt.Errorf("commit %s landed; old metadata files not deleted (%s): %w", res.Ident, reclaim.PropDeleteAfterCommit, err))
	}
}
