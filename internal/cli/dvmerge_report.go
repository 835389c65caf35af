package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/dvmerge"
	"github.com/icectl/icectl/internal/shared/bytesize"
)

// The report of a dv merge run, as dv merge (sharded or not) and
// upgrade --merge-deletes print it, and its exit code.

type dvMergeReportView struct {
	Table          string `json:"table"`
	Branch         string `json:"branch"`
	BaseSnapshotID *int64 `json:"base_snapshot_id"`
	*dvmerge.Report
	DurationMS int64 `json:"duration_ms"`
}

func writeDVMergeReport(f *Factory, t *catalog.Table, rep *dvmerge.Report) error {
	v := dvMergeView(t.Ident.String(), rep)
	if f.Output == outputJSON {
		return writeJSON(f.Out, v)
	}
	return writeDVMergeText(f.Out, v)
}

func dvMergeView(table string, rep *dvmerge.Report) dvMergeReportView {
	v := dvMergeReportView{Table: table, Report: rep, DurationMS: rep.Duration.Milliseconds()}
	if p := rep.Plan; p != nil {
		v.Branch, v.BaseSnapshotID = p.Branch, p.BaseSnapshotID
	}
	return v
}

// dvMergeNothing is what dv merge says, dry run or not, when nothing is
// to merge: a table of zeros reads like a failure.
const dvMergeNothing = "nothing to merge: no partition has position deletes, several DVs for a data file or dangling deletes"

func writeDVMergeText(w io.Writer, v dvMergeReportView) error {
	r := v.Report
	if len(r.Partitions) == 0 && r.Commits == 0 && r.FailedCommits == 0 && len(r.Kept) == 0 {
		_, err := printf(w, "%s: %s\n", v.Table, dvMergeNothing)
		return err
	}
	counts := map[string]int{}
	for _, p := range r.Partitions {
		counts[p.Status]++
	}
	t := newTable(w)
	t.row("partitions", fmt.Sprintf("%d committed, %d rebuilt, %d failed, %d not started",
		counts[dvmerge.StatusCommitted], counts[dvmerge.StatusRebuilt], counts[dvmerge.StatusFailed], counts[dvmerge.StatusNotStarted]))
	if n := counts[dvmerge.StatusAlreadyCommitted]; n > 0 {
		t.row("already committed", fmt.Sprintf("%d partition(s), by an earlier commit of this plan", n))
	}
	t.row("data files merged", r.DataFiles)
	t.row("DVs written", fmt.Sprintf("%d in %d Puffin file(s), %s", r.DVsWritten, r.PuffinFiles, bytesize.Format(r.PuffinBytes)))
	t.row("DVs replaced", r.DVsRemoved)
	t.row("position delete files retired", r.PositionDeleteFilesRetired)
	if r.EqualityDeleteFilesRetired > 0 {
		t.row("equality delete files retired", r.EqualityDeleteFilesRetired)
	}
	t.row("dangling deletes removed", r.DanglingDeletesRemoved)
	t.row("commits", fmt.Sprintf("%d (%d failed) %s", r.Commits, r.FailedCommits, strings.Join(r.Operations, ", ")))
	if r.LeftForNextRun > 0 {
		t.row("left for next run", fmt.Sprintf("%d partition(s)", r.LeftForNextRun))
	}
	t.row("time", (time.Duration(v.DurationMS) * time.Millisecond).String())
	if err := t.flush(); err != nil {
		return err
	}
	for _, k := range r.Kept {
		why := "partly replaced"
		if k.Resurrected {
			why = "its positions are missing from an existing DV (resurrected rows; --repair-resurrected retires it)"
		}
		printf(w, "kept %s: %s; held by %s\n", k.DeleteFile, why, strings.Join(k.HeldBy, ", "))
	}
	for _, f := range r.Resurrected {
		printf(w, "resurrected: %s shows %d deleted row(s) again (positions %v) deleted by %s\n",
			f.DataFile, f.Positions, f.FirstPositions, strings.Join(f.DeleteFiles, ", "))
	}
	for _, f := range r.Repaired {
		for i, row := range f.Rows {
			printf(w, "deleted again: %s pos %d: %s\n", f.DataFile, f.Positions[i], row)
		}
	}
	for _, f := range r.OutOfRange {
		printf(w, "left out: %d position(s) of %s at or beyond its %d rows (first %v) from %s\n",
			f.Positions, f.DataFile, f.RecordCount, f.FirstPositions, strings.Join(f.DeleteFiles, ", "))
	}
	for _, m := range r.MultipleDVs {
		printf(w, "merged %d DVs of %s (another writer left more than one): %s\n", len(m.DVs), m.DataFile, strings.Join(m.DVs, ", "))
	}
	for _, p := range r.Partitions {
		if p.Reason != "" && p.Status != dvmerge.StatusCommitted {
			printf(w, "partition %s %s: %s\n", p.ID, p.Status, p.Reason)
		}
	}
	return nil
}

// dvMergeExit maps the outcome of a dv merge run to the exit code.
func dvMergeExit(mo dvmerge.Options, rep *dvmerge.Report, err error) error {
	return outcomeExit(dvmerge.Outcome(mo, rep, err))
}
