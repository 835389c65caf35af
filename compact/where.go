package compact

import (
	"context"
	"fmt"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan/where"
)

// unmatchedByMetrics returns the live data files of snap whose column
// metrics rule out every row of the where filter f. The planner's scan
// skips metrics to stay fast, so a filtered run reads the data manifests
// once more with them; only the paths of ruled-out files are kept.
func unmatchedByMetrics(ctx context.Context, t *catalog.Table, snap *spec.Snapshot, f *where.Filter) (map[string]bool, error) {
	out := map[string]bool{}
	err := table.WalkEntries(ctx, t.IO, snap, table.WalkOptions{Content: table.DataOnly}, func(e table.FileEntry) error {
		ps, _ := t.Metadata.SpecByID(int(e.Entry.DataFile.SpecID))
		if !f.MatchMetricsIn(&e.Entry.DataFile, ps) {
			out[e.Entry.DataFile.FilePath] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("where: read column metrics: %w", err)
	}
	return out, nil
}
