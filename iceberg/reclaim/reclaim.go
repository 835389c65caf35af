// Package reclaim is the one path through which icectl deletes files of a
// table: commit cleanup (metadata files that fell off the log, files of a
// failed commit), compaction outputs that were never committed, expiry and
// orphan removal all delete through a Deleter.
//
// A Deleter deletes a path only when it lies inside the table's scope (its
// location and write paths, each a directory) and the caller's Keep rule
// does not name it as still referenced; every refusal and every failed
// deletion is reported, never ignored. The package must never decide on its
// own what is unreferenced: callers prove that (from the commit outcome or
// a reachability difference) and pass the proof on as Keep.
package reclaim

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// DefaultConcurrency is how many deletions a Deleter runs at once when its
// Concurrency is not set.
const DefaultConcurrency = 8

// bulkBatch is how many paths go to one BulkRemover call (S3's
// DeleteObjects takes at most 1000 keys; fileio batches below that).
const bulkBatch = 1000

// retries is how many more times a path whose deletion failed is tried
// (S3 DeleteObjects reports per-key errors such as SlowDown or InternalError
// that usually pass).
const retries = 2

// Deleter deletes files of one table through the guard.
type Deleter struct {
	IO    fileio.FileIO
	Scope Scope
	// Keep, when set, names paths that are still referenced (by a retained
	// snapshot, a ref, the current metadata): they are refused.
	Keep func(path string) bool
	// Concurrency bounds parallel removals; 0 means DefaultConcurrency.
	Concurrency int
}

// Refusal is a path the guard would not delete, and why.
type Refusal struct {
	Path, Reason string
}

// Failure is a path the store failed to delete.
type Failure struct {
	Path string
	Err  error
}

// Report is the outcome of Delete.
type Report struct {
	Deleted []string  // removed, or already gone
	Refused []Refusal // outside the scope, or kept
	Failed  []Failure // the store refused or errored
}

// Merge appends o's paths to r.
func (r *Report) Merge(o Report) {
	r.Deleted = append(r.Deleted, o.Deleted...)
	r.Refused = append(r.Refused, o.Refused...)
	r.Failed = append(r.Failed, o.Failed...)
}

// Err is nil when every path was deleted; otherwise it names how many were
// refused and failed and the first few of each.
func (r Report) Err() error { return deletionErr(len(r.Deleted), r.Refused, r.Failed) }

// Tally sums the Reports of many Delete calls, counting the deleted paths
// instead of keeping them: a caller deleting millions of files in batches
// holds only the refusals and failures.
type Tally struct {
	Deleted int
	Refused []Refusal
	Failed  []Failure
}

// Add counts r's deleted paths and keeps its refusals and failures.
func (t *Tally) Add(r Report) {
	t.Deleted += len(r.Deleted)
	t.Refused = append(t.Refused, r.Refused...)
	t.Failed = append(t.Failed, r.Failed...)
}

// Err is Report.Err over every report added.
func (t Tally) Err() error { return deletionErr(t.Deleted, t.Refused, t.Failed) }

// FailedErr is Err for the failures alone: nil when the store deleted
// every path the guard let through. A refusal is the guard keeping a file
// (outside the table, still referenced), which no retry changes.
func (t Tally) FailedErr() error { return deletionErr(t.Deleted+len(t.Refused), nil, t.Failed) }

func deletionErr(deleted int, refused []Refusal, failed []Failure) error {
	if len(refused) == 0 && len(failed) == 0 {
		return nil
	}
	const show = 3
	var parts []string
	for i, f := range refused {
		if i == show {
			parts = append(parts, fmt.Sprintf("%d more refused", len(refused)-show))
			break
		}
		parts = append(parts, fmt.Sprintf("refused %s: %s", f.Path, f.Reason))
	}
	for i, f := range failed {
		if i == show {
			parts = append(parts, fmt.Sprintf("%d more failed", len(failed)-show))
			break
		}
		parts = append(parts, fmt.Sprintf("delete %s: %v", f.Path, f.Err))
	}
	err := fmt.Errorf("%d of %d files not deleted: %s", len(refused)+len(failed),
		deleted+len(refused)+len(failed), strings.Join(parts, "; "))
	if len(failed) > 0 {
		return errors.Join(err, failures(failed))
	}
	return err
}

// failures carries the store errors so errors.Is sees through Report.Err.
type failures []Failure

func (f failures) Error() string { return "" }

func (f failures) Unwrap() []error {
	errs := make([]error, len(f))
	for i := range f {
		errs[i] = f[i].Err
	}
	return errs
}

// Delete deletes paths that pass the guard and reports every path. It does
// not stop at the first failure: a cleanup that half-ran is worse than one
// that reports what it could not do. Callers with millions of paths call it
// in batches.
func (d *Deleter) Delete(ctx context.Context, paths []string) Report {
	var rep Report
	var allowed []string
	seen := make(map[string]bool, len(paths))
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		if err := d.Scope.check(p); err != nil {
			rep.Refused = append(rep.Refused, Refusal{Path: p, Reason: err.Error()})
			continue
		}
		if d.Keep != nil && d.Keep(p) {
			rep.Refused = append(rep.Refused, Refusal{Path: p, Reason: "still referenced by the table"})
			continue
		}
		allowed = append(allowed, p)
	}
	if d.IO == nil && len(allowed) > 0 {
		for _, p := range allowed {
			rep.Failed = append(rep.Failed, Failure{Path: p, Err: errors.New("no file IO")})
		}
		return rep
	}
	pending := allowed
	for try := 0; len(pending) > 0; try++ {
		failed := d.remove(ctx, pending)
		var again []string
		for _, p := range pending {
			if _, bad := failed[p]; !bad {
				rep.Deleted = append(rep.Deleted, p)
			} else {
				again = append(again, p)
			}
		}
		if try == retries || ctx.Err() != nil {
			for _, p := range again {
				rep.Failed = append(rep.Failed, Failure{Path: p, Err: failed[p]})
			}
			break
		}
		pending = again
	}
	return rep
}

// remove deletes paths and returns the error of each one that failed; a
// file already gone counts as deleted.
func (d *Deleter) remove(ctx context.Context, paths []string) map[string]error {
	failed := map[string]error{}
	var mu sync.Mutex
	note := func(p string, err error) {
		if err != nil && !errors.Is(err, fileio.ErrNotFound) {
			mu.Lock()
			failed[p] = err
			mu.Unlock()
		}
	}
	if bulk, ok := d.IO.(fileio.BulkRemover); ok {
		for start := 0; start < len(paths); start += bulkBatch {
			batch := paths[start:min(start+bulkBatch, len(paths))]
			err := bulk.RemoveMany(ctx, batch)
			var many *fileio.RemoveManyError
			switch {
			case err == nil:
			case errors.As(err, &many):
				for _, f := range many.Failed {
					note(f.Path, f.Err)
				}
			default:
				for _, p := range batch {
					note(p, err)
				}
			}
		}
		return failed
	}
	workers := d.Concurrency
	if workers <= 0 {
		workers = DefaultConcurrency
	}
	next := make(chan string)
	var wg sync.WaitGroup
	for range min(workers, len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				note(p, d.IO.Remove(ctx, p))
			}
		}()
	}
	for _, p := range paths {
		next <- p
	}
	close(next)
	wg.Wait()
	return failed
}

// IsMetadataJSON reports whether p names a table metadata file:
// NNNNN-<uuid>.metadata.json or vN.metadata.json (Hadoop), optionally with
// a codec (.gz) before ".metadata.json".
func IsMetadataJSON(p string) bool {
	name := path.Base(p)
	rest, ok := strings.CutSuffix(name, ".metadata.json")
	if !ok || rest == "" {
		return false
	}
	rest = strings.TrimSuffix(rest, ".gz")
	if v, ok := strings.CutPrefix(rest, "v"); ok {
		digits := v[:len(v)-len(strings.TrimLeft(v, "0123456789"))]
		tail := v[len(digits):]
		return digits != "" && (tail == "" || tail[0] == '-')
	}
	digits, _, found := strings.Cut(rest, "-")
	return found && digits != "" && strings.Trim(digits, "0123456789") == ""
}

// cleanupTimeout bounds DeleteWritten, which runs even when the caller's
// context is already cancelled.
const cleanupTimeout = time.Minute

// DeleteWritten deletes files that a change wrote and that no committed
// metadata references (its commit definitely failed, or it was abandoned
// before committing): inside md's scope, never a file md references by
// itself. It runs after the outcome is known, so a cancelled ctx does not
// stop it (a minute bounds it instead).
func DeleteWritten(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	referenced := MetadataReferences(md)
	d := Deleter{IO: fio, Scope: TableScope(md), Keep: func(p string) bool { return referenced[p] }}
	if err := d.Delete(ctx, paths).Err(); err != nil {
		return fmt.Errorf("remove files no commit references: %w", err)
	}
	return nil
}
