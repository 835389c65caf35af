// Package reclaim is the one guarded path through which table files are
// deleted.
//
// STUB in branch expire: the lead's package of the same API replaces this
// file when main is merged. It implements the documented contract minimally
// (scope check, Keep, bounded concurrency, bulk removal) so that expire can
// be built and tested against it.
package reclaim

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// Scope is the set of directories a table owns.
type Scope struct{ roots []string }

// TableScope is the table location and its write.*.path directories.
func TableScope(md *spec.TableMetadata) Scope {
	var s Scope
	for _, r := range []string{md.Location, md.Properties["write.data.path"], md.Properties["write.metadata.path"],
		md.Properties["write.object-storage.path"], md.Properties["write.folder-storage.path"]} {
		if r = strings.TrimRight(r, "/"); r != "" {
			s.roots = append(s.roots, r+"/")
		}
	}
	return s
}

// Contains reports whether p is inside a root directory.
func (s Scope) Contains(p string) bool {
	if strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") || !strings.Contains(p, "/") {
		return false
	}
	for _, r := range s.roots {
		if strings.HasPrefix(p, r) {
			return true
		}
	}
	return false
}

// Roots returns the root directories.
func (s Scope) Roots() []string { return append([]string(nil), s.roots...) }

// Deleter deletes files of one table through the guard.
type Deleter struct {
	IO          fileio.FileIO
	Scope       Scope
	Keep        func(path string) bool
	Concurrency int
}

// Refusal is a path the guard did not delete.
type Refusal struct{ Path, Reason string }

// Failure is a path the store failed to delete.
type Failure struct {
	Path string
	Err  error
}

// Report is the outcome of Delete.
type Report struct {
	Deleted []string
	Refused []Refusal
	Failed  []Failure
}

// Err is nil only when every path was deleted.
func (r Report) Err() error {
	if len(r.Refused) == 0 && len(r.Failed) == 0 {
		return nil
	}
	var errs []error
	for _, f := range r.Refused {
		errs = append(errs, fmt.Errorf("refused %s: %s", f.Path, f.Reason))
	}
	for _, f := range r.Failed {
		errs = append(errs, fmt.Errorf("delete %s: %w", f.Path, f.Err))
	}
	return fmt.Errorf("%d deleted, %d refused, %d failed: %w", len(r.Deleted), len(r.Refused), len(r.Failed), errors.Join(errs...))
}

// Merge adds o to r.
func (r *Report) Merge(o Report) {
	r.Deleted = append(r.Deleted, o.Deleted...)
	r.Refused = append(r.Refused, o.Refused...)
	r.Failed = append(r.Failed, o.Failed...)
}

// Delete deletes paths, never returning early on one failure.
func (d *Deleter) Delete(ctx context.Context, paths []string) Report {
	var rep Report
	var ok []string
	for _, p := range paths {
		switch {
		case !d.Scope.Contains(p):
			rep.Refused = append(rep.Refused, Refusal{p, "outside the table's locations"})
		case d.Keep != nil && d.Keep(p):
			rep.Refused = append(rep.Refused, Refusal{p, "still referenced"})
		default:
			ok = append(ok, p)
		}
	}
	n := d.Concurrency
	if n <= 0 {
		n = 8
	}
	var mu sync.Mutex
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for _, p := range ok {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := d.IO.Remove(ctx, p)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && !errors.Is(err, fileio.ErrNotFound) {
				rep.Failed = append(rep.Failed, Failure{p, err})
				return
			}
			rep.Deleted = append(rep.Deleted, p)
		})
	}
	wg.Wait()
	return rep
}

var metadataJSON = regexp.MustCompile(`^(v?\d+(-[0-9a-fA-F-]+)?)(\.gz)?\.metadata\.json(\.gz)?$`)

// IsMetadataJSON reports whether p names a table metadata file.
func IsMetadataJSON(p string) bool { return metadataJSON.MatchString(path.Base(p)) }
