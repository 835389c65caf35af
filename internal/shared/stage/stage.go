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
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/icectl/icectl/iceberg/fileio"
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
		name := strings.TrimPrefix(fi.Path, dir)
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
