// Package reclaim is the one guarded path that deletes a table's files.
//
// STUB on branch dvmerge: the lead writes the real package on main with
// this API (/work/brief/reclaim-api.md); delete this file when merging it.
// It implements only what dv merge uses: the table scope and a Deleter
// that refuses paths outside it.
package reclaim

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// Scope is the set of directories a table owns.
type Scope struct{ roots []string }

// TableScope is md's location and its write.*.path directories.
func TableScope(md *spec.TableMetadata) Scope {
	var s Scope
	add := func(p string) {
		if p = strings.TrimSuffix(p, "/"); p != "" {
			s.roots = append(s.roots, p+"/")
		}
	}
	add(md.Location)
	for _, k := range []string{"write.data.path", "write.metadata.path", "write.object-storage.path", "write.folder-storage.path"} {
		add(md.Properties[k])
	}
	return s
}

// Contains reports whether path is inside a root directory.
func (s Scope) Contains(path string) bool {
	if strings.Contains(path, "/../") || strings.HasSuffix(path, "/..") || strings.Contains(path, "/./") {
		return false
	}
	for _, r := range s.roots {
		if strings.HasPrefix(path, r) {
			return true
		}
	}
	return false
}

// Roots returns the root directories.
func (s Scope) Roots() []string { return s.roots }

// Deleter deletes files of one table through the guard.
type Deleter struct {
	IO          fileio.FileIO
	Scope       Scope
	Keep        func(path string) bool
	Concurrency int
}

// Refusal is a path the deleter would not delete.
type Refusal struct{ Path, Reason string }

// Failure is a path the store failed to delete.
type Failure struct {
	Path string
	Err  error
}

// Report is what Delete did.
type Report struct {
	Deleted []string
	Refused []Refusal
	Failed  []Failure
}

// Delete deletes paths, never stopping early on one failure.
func (d *Deleter) Delete(ctx context.Context, paths []string) Report {
	var r Report
	for _, p := range paths {
		switch {
		case !d.Scope.Contains(p):
			r.Refused = append(r.Refused, Refusal{p, "outside the table's directories"})
		case d.Keep != nil && d.Keep(p):
			r.Refused = append(r.Refused, Refusal{p, "still referenced"})
		default:
			if err := d.IO.Remove(ctx, p); err != nil && !errors.Is(err, fileio.ErrNotFound) {
				r.Failed = append(r.Failed, Failure{p, err})
			} else {
				r.Deleted = append(r.Deleted, p)
			}
		}
	}
	return r
}

// Err is nil only when every path was deleted.
func (r Report) Err() error {
	var errs []error
	for _, f := range r.Refused {
		errs = append(errs, fmt.Errorf("refused to delete %s: %s", f.Path, f.Reason))
	}
	for _, f := range r.Failed {
		errs = append(errs, fmt.Errorf("delete %s: %w", f.Path, f.Err))
	}
	return errors.Join(errs...)
}

// Merge adds o to r.
func (r *Report) Merge(o Report) {
	r.Deleted = append(r.Deleted, o.Deleted...)
	r.Refused = append(r.Refused, o.Refused...)
	r.Failed = append(r.Failed, o.Failed...)
}
