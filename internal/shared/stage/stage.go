// Package stage is the directory a sharded run's workers write to and its
// committer reads, local or s3://, as the verbs share it:
//
//	DIR/plan.json       the plan, as the first worker found it
//	DIR/<kind>/<n>.json one staged result per unit of work
//
// It knows nothing of what a plan or a result holds: the verbs parse
// them. A result is written whole or not at all (a FileIO makes a file
// visible only when it is closed), under a name only its unit has.
package stage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/fanout"
)

// PlanFile is the name of the recorded plan in a stage directory.
const PlanFile = "plan.json"

// List lists the results in dir (a prefix ending in "/"): name without
// ".json" -> path. Files that are not results (a local writer's hidden
// temporary files, anything not ending in .json, anything deeper) are
// left out.
func List(ctx context.Context, fio fileio.FileIO, dir string) (map[string]string, error) {
	l, ok := fio.(fileio.Lister)
	if !ok {
		return nil, fmt.Errorf("list %s: the storage cannot list files", dir)
	}
	out := map[string]string{}
	err := l.List(ctx, dir, func(fi fileio.FileInfo) error {
		// A store lists its paths in its own case of scheme and host
		// (Azure's account host lower-cased): only the keys, which it
		// matched to the prefix exactly, are case-sensitive.
		if len(fi.Path) < len(dir) || !strings.EqualFold(fi.Path[:len(dir)], dir) {
			return nil
		}
		name := fi.Path[len(dir):]
		if strings.Contains(name, "/") || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			return nil
		}
		out[strings.TrimSuffix(name, ".json")] = fi.Path
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list staged results: %w", err)
	}
	return out, nil
}

// RecordedPlan reads the plan recorded at path: nil, nil when there is
// none.
func RecordedPlan(ctx context.Context, fio fileio.FileIO, path string) ([]byte, error) {
	data, err := fileio.ReadFile(ctx, fio, path)
	if errors.Is(err, fileio.ErrNotFound) {
		return nil, nil
	}
	return data, err
}

// ErrBad is wrapped by the errors about a stage directory that cannot be
// committed as it is: a result of another table or plan, or one that
// does not parse. The verbs export it as their ErrBadStage.
var ErrBad = errors.New("bad stage directory")

// storageWidth is how many results are read at once: the reads wait on
// the network, so more than there are cores.
const storageWidth = 16

// Decode decodes the staged result at name into v, refusing unknown
// fields and trailing data: a result is icectl's own, written whole.
func Decode(data []byte, name string, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: staged result %s does not parse (truncated or not written by icectl?): %v", ErrBad, name, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: staged result %s has trailing data", ErrBad, name)
	}
	return nil
}

// ReadAll reads and parses every result in paths (as List returns them),
// in parallel; the first error in path order is returned.
func ReadAll[T any](ctx context.Context, fio fileio.FileIO, paths map[string]string, parse func(data []byte, path string) (T, error)) ([]T, error) {
	names := make([]string, 0, len(paths))
	for _, p := range paths {
		names = append(names, p)
	}
	sort.Strings(names)
	out := make([]T, len(names))
	errs := make([]error, len(names))
	fanout.Each(len(names), storageWidth, func(i int) {
		data, err := fileio.ReadFile(ctx, fio, names[i])
		if err != nil {
			errs[i] = err
			return
		}
		out[i], errs[i] = parse(data, names[i])
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Committed lists the units of plan planID that snapshots of the branch
// committed since the snapshot base (nil: from the first): unit id ->
// snapshot id. A snapshot's summary names the plan under planKey and its
// units as ids reads them. Only snapshot summaries are read.
func Committed(md *spec.TableMetadata, branch string, base *int64, planKey, planID string, ids func(summary map[string]string) []string) map[string]int64 {
	out := map[string]int64{}
	snap, err := table.BranchHead(md, branch)
	for err == nil && snap != nil {
		if base != nil && snap.SnapshotID == *base {
			break
		}
		if snap.Summary[planKey] == planID {
			for _, id := range ids(snap.Summary) {
				if id != "" {
					out[id] = snap.SnapshotID
				}
			}
		}
		if snap.ParentSnapshotID == nil {
			break
		}
		snap, _ = md.SnapshotByID(*snap.ParentSnapshotID)
	}
	return out
}
