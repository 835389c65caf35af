// Package tabletest holds checks that tests of several verbs make on a
// table after a race or a kill. It is for tests only and never changes a
// table.
package tabletest

import (
	"context"
	"fmt"
	"slices"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// MissingReachable walks every snapshot of md and returns, sorted, the
// files a snapshot reaches that fio cannot open: after a kill or a lost
// race that list must be empty, whatever the verb. An error means the walk
// itself failed (an unreadable manifest list or manifest).
func MissingReachable(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata) ([]string, error) {
	ids := make([]int64, len(md.Snapshots))
	for i, s := range md.Snapshots {
		ids[i] = s.SnapshotID
	}
	seen := map[string]bool{}
	err := table.WalkReachable(ctx, fio, md, ids, func(f table.ReachableFile) error {
		seen[f.Path] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk reachable files: %w", err)
	}
	var missing []string
	for p := range seen {
		f, err := fio.Open(ctx, p)
		if err != nil {
			missing = append(missing, p)
			continue
		}
		f.Close()
	}
	slices.Sort(missing)
	return missing, nil
}
