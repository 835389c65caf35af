// Package reclaim: STUB of the lead's guarded deletion path until it lands
// on main (same API, minimal rules). Deleted when main is merged.
package reclaim

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

type Scope struct{ roots []string }

func TableScope(md *spec.TableMetadata) Scope {
	var s Scope
	add := func(p string) {
		if p != "" {
			s.roots = append(s.roots, strings.TrimRight(p, "/")+"/")
		}
	}
	add(md.Location)
	for _, k := range []string{"write.data.path", "write.metadata.path", "write.object-storage.path", "write.folder-storage.path"} {
		add(md.Properties[k])
	}
	return s
}

func (s Scope) Contains(path string) bool {
	if strings.Contains(path, "/../") || strings.HasSuffix(path, "/..") {
		return false
	}
	for _, r := range s.roots {
		if strings.HasPrefix(path, r) && len(path) > len(r) {
			return true
		}
	}
	return false
}

func (s Scope) Roots() []string { return s.roots }

type Deleter struct {
	IO          fileio.FileIO
	Scope       Scope
	Keep        func(path string) bool
	Concurrency int
}

type Refusal struct{ Path, Reason string }
type Failure struct {
	Path string
	Err  error
}
type Report struct {
	Deleted []string
	Refused []Refusal
	Failed  []Failure
}

func (d *Deleter) Delete(ctx context.Context, paths []string) Report {
	var r Report
	for _, p := range paths {
		switch {
		case !d.Scope.Contains(p):
			r.Refused = append(r.Refused, Refusal{p, "outside the table's locations"})
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

func (r Report) Err() error {
	if len(r.Refused) == 0 && len(r.Failed) == 0 {
		return nil
	}
	return fmt.Errorf("%d refused, %d failed", len(r.Refused), len(r.Failed))
}

func (r *Report) Merge(o Report) {
	r.Deleted = append(r.Deleted, o.Deleted...)
	r.Refused = append(r.Refused, o.Refused...)
	r.Failed = append(r.Failed, o.Failed...)
}

var metadataJSON = regexp.MustCompile(`(^|/)(\d+-[0-9a-fA-F-]+|v\d+)\.metadata\.json(\.gz)?$`)

func IsMetadataJSON(path string) bool { return metadataJSON.MatchString(path) }
