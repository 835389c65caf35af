package maintain

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/colstats"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/shared/verbrun"
)

// StatsColumnsDebt is what stats-columns would write on the current
// snapshot: the asked columns its statistics file has no sketch of, or
// why they cannot be sketched (a column the table lacks or of a type
// without sketches), which refuses the verb with that reason.
type StatsColumnsDebt struct {
	Missing []string
	Err     error
}

// statsColumnsMissing returns the names of the columns of names (empty:
// every top-level primitive column) that md's current snapshot has no
// sketch of, reading metadata only (colstats' own rules: Columns,
// Registered, Missing). A table without snapshots misses none.
func statsColumnsMissing(md *spec.TableMetadata, names []string) ([]string, error) {
	snap := md.CurrentSnapshot()
	if snap == nil {
		return nil, nil
	}
	cols, err := colstats.Columns(colstats.Schema(md, snap), names)
	if err != nil {
		return nil, err
	}
	if prev, ok := colstats.Registered(md, snap.SnapshotID); ok {
		cols = colstats.Missing(prev, snap.SnapshotID, cols)
	}
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out, nil
}

// snapshotVerbs are the verbs whose commits make a new snapshot: after
// any of them the current snapshot's statistics are gone.
var snapshotVerbs = []string{VerbRetention, VerbDVMerge, VerbRewriteEqualityDeletes, VerbCompact, VerbRewritePositionDeletes, VerbRewriteManifests}

// statsColumnsDue says whether stats-columns is due on st's table, given
// the verbs due before it: when the policy enables it and the current
// snapshot lacks a sketch of an asked column, or a verb before it will
// commit a new snapshot (its run then finds whether that one lacks them).
func statsColumnsDue(st *TableState, before []Due) (string, bool) {
	if !st.Policy.Enabled[VerbStatsColumns] {
		return "", false
	}
	sc := st.StatsColumns
	switch {
	case sc.Err != nil:
		return "column statistics cannot be computed: " + sc.Err.Error(), true
	case len(sc.Missing) > 0:
		return fmt.Sprintf("snapshot %d has no sketch of %s", st.SnapshotID, strings.Join(sc.Missing, ", ")), true
	}
	for _, d := range before {
		if slices.Contains(snapshotVerbs, d.Verb) {
			return fmt.Sprintf("%s commits a new snapshot, which has no column statistics yet", d.Verb), true
		}
	}
	return "", false
}

// statsColumnsVerb is icectl stats columns with the table's columns.
func (r *runner) statsColumnsVerb(tp *TablePlan) verbrun.Verb[*colstats.Plan, *colstats.Report] {
	return colstats.Verb(r.cat, colstats.RunOptions{Columns: tp.state.Policy.StatsColumns, CreatedBy: r.o.CreatedBy}, r.commitOptions)
}

// planStatsColumns is stats-columns' read-only check before the claim:
// from the metadata alone (its plan would compute the sketches).
func planStatsColumns(t *catalog.Table, tp *TablePlan) (idle bool, err error) {
	missing, err := statsColumnsMissing(t.Metadata, tp.state.Policy.StatsColumns)
	return len(missing) == 0, err
}

func (r *runner) statsColumns(ctx context.Context, t *catalog.Table, tp *TablePlan, vr *VerbReport) error {
	res := verbrun.Run(ctx, r.statsColumnsVerb(tp), t, verbrun.Options{})
	switch rep := res.Report; {
	case res.Idle:
		vr.Detail = "nothing to do: " + res.Plan.Idle
	case rep != nil && rep.Committed != nil:
		res := rep.Plan.Result
		names := make([]string, len(res.Columns))
		for i, c := range res.Columns {
			names[i] = c.Name
		}
		vr.Commits, vr.FilesIn, vr.FilesOut, vr.Rows, vr.BytesOut = 1, int64(res.DataFiles), 1, res.Rows, rep.File.FileSizeInBytes
		vr.Detail = fmt.Sprintf("sketches of %s for snapshot %d: %d data files read (%d rows)", strings.Join(names, ", "), rep.Plan.SnapshotID, res.DataFiles, res.Rows)
		if res.Base != nil {
			vr.Detail += fmt.Sprintf(", from snapshot %d's sketches", res.Base.SnapshotID)
		}
		vr.Detail += "; registered " + rep.File.StatisticsPath
	}
	return outcome(res.Outcome, res.Err, 0, vr)
}
