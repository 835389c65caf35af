package partstats

import (
	"context"
	"errors"
	"fmt"

	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/spec"
)

// ErrRegistered is returned by Commit when, on a reloaded table, another
// writer registered a file for the snapshot first: that one is kept, and
// the file this run wrote removed.
var ErrRegistered = errors.New("another writer registered partition statistics for the snapshot first")

// Commit registers f, a file Write wrote, with the set-partition-statistics
// update, retrying on conflicts. The snapshot must still be in the table
// and have no file registered (else ErrRegistered); the file is removed
// when the commit definitely failed.
func Commit(ctx context.Context, cat metastore.Committer, t *metastore.Table, f spec.PartitionStatisticsFile, opts commit.Options) (*metastore.Table, error) {
	build := func(ctx context.Context, base *metastore.Table, attempt int) (*commit.Attempt, error) {
		md := base.Metadata
		if _, ok := md.SnapshotByID(f.SnapshotID); !ok {
			return nil, fmt.Errorf("%w %d: it was removed (expired?) while its statistics were computed", ErrNoSnapshot, f.SnapshotID)
		}
		if _, ok := Registered(md, f.SnapshotID); ok {
			return nil, ErrRegistered
		}
		a := &commit.Attempt{
			Requirements: []spec.Requirement{spec.AssertTableUUID{UUID: md.TableUUID}},
			Updates:      []spec.Update{spec.SetPartitionStatistics{PartitionStatistics: f}},
		}
		if attempt == 0 {
			a.Written = []string{f.StatisticsPath}
		} else {
			a.Reused = []string{f.StatisticsPath}
		}
		return a, nil
	}
	return commit.Run(ctx, cat, t, build, opts)
}
