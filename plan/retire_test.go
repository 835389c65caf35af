package plan

import (
	"slices"
	"testing"

	"github.com/icectl/icectl/iceberg/table"
)

func retiredPaths(p *Plan) map[string]string {
	out := map[string]string{}
	for _, g := range p.Groups {
		for _, r := range g.Retire {
			out[r.Path] = g.ID
		}
	}
	return out
}

func fiveSmall(part []any, specID int32, seq int64, from int) []table.FileEntry {
	var data []table.FileEntry
	for i := range 5 {
		data = append(data, dataFile(path(from+i), specID, part, mib, 100, seq))
	}
	return data
}

func TestRetireFileScopedAndDVs(t *testing.T) {
	data := fiveSmall(partA(), 0, 1, 0)
	deletes := []table.FileEntry{
		dv("s3://d/dvs.puffin", 4, 0, partA(), 3, 5, path(0)),
		dv("s3://d/dvs.puffin", 60, 0, partA(), 3, 5, path(1)),
		posDelete("s3://d/fs.parquet", 0, partA(), 2, 3, path(2)),
		// References a file that stays live (not in partition a's group).
		posDelete("s3://d/other.parquet", 0, []any{"b"}, 2, 3, path(99)),
	}
	data = append(data, dataFile(path(99), 0, []any{"b"}, 100*mib, 100, 1))
	p := mustPlan(t, testInput(data, deletes), smallOptions())
	if len(p.Groups) != 1 {
		t.Fatalf("groups = %d", len(p.Groups))
	}
	g := p.Groups[0]
	if len(g.Retire) != 3 {
		t.Fatalf("retire = %+v", g.Retire)
	}
	var dvs int
	for _, r := range g.Retire {
		if r.Content == ContentDV {
			dvs++
			if r.Reason != RetireDV || r.ContentOffset == nil {
				t.Errorf("dv retire = %+v", r)
			}
		}
		if r.Path == "s3://d/other.parquet" {
			t.Errorf("retired a delete of a live file")
		}
	}
	if dvs != 2 {
		t.Errorf("retired %d DVs, want 2 (two blobs of one Puffin)", dvs)
	}
}

func TestRetirePartitionScoped(t *testing.T) {
	data := fiveSmall(partA(), 0, 1, 0)
	deletes := []table.FileEntry{
		posDelete("s3://d/ps.parquet", 0, partA(), 2, 3, ""),
		eqDelete("s3://d/eq.parquet", 0, partA(), 2, 3),
		// Applies to nothing (older than every data file): left alone.
		posDelete("s3://d/stale.parquet", 0, partA(), 2, 0, ""),
	}
	p := mustPlan(t, testInput(data, deletes), smallOptions())
	got := retiredPaths(p)
	if _, ok := got["s3://d/ps.parquet"]; !ok {
		t.Errorf("partition-scoped pos delete not retired: %v", got)
	}
	if _, ok := got["s3://d/eq.parquet"]; !ok {
		t.Errorf("dead equality delete not retired: %v", got)
	}
	if _, ok := got["s3://d/stale.parquet"]; ok {
		t.Errorf("retired a delete the plan did not make dangling")
	}

	// A right-sized file in the partition that stays live keeps them.
	kept := append(slices.Clone(data), dataFile(path(50), 0, partA(), 100*mib, 100, 2))
	p = mustPlan(t, testInput(kept, deletes), smallOptions())
	if got := retiredPaths(p); len(got) != 0 {
		t.Errorf("retired deletes that still apply to a live file: %v", got)
	}

	// A live file newer than the position delete does not keep it, but it
	// keeps an equality delete only when older than the delete.
	newer := append(slices.Clone(data), dataFile(path(51), 0, partA(), 100*mib, 100, 3))
	p = mustPlan(t, testInput(newer, deletes), smallOptions())
	got = retiredPaths(p)
	if _, ok := got["s3://d/ps.parquet"]; ok {
		t.Errorf("pos delete at seq 3 still applies to a live file at seq 3")
	}
	if _, ok := got["s3://d/eq.parquet"]; !ok {
		t.Errorf("equality delete at seq 3 cannot apply to a file at seq 3, should be retired")
	}
}

func TestRetireAcrossGroups(t *testing.T) {
	var data []table.FileEntry
	for i := range 10 {
		data = append(data, dataFile(path(i), 0, partA(), 30*mib, 100, 1))
	}
	deletes := []table.FileEntry{posDelete("s3://d/ps.parquet", 0, partA(), 2, 3, "")}
	o := smallOptions()
	o.MaxFileGroupSize = 150 * mib
	p := mustPlan(t, testInput(data, deletes), o)
	if len(p.Groups) != 2 {
		t.Fatalf("groups = %d", len(p.Groups))
	}
	if len(retiredPaths(p)) != 0 || len(p.RetireAfterGroups) != 1 {
		t.Fatalf("retire = %v, after = %+v", retiredPaths(p), p.RetireAfterGroups)
	}
	c := p.RetireAfterGroups[0]
	if !slices.Equal(c.Groups, []string{p.Groups[0].ID, p.Groups[1].ID}) {
		t.Errorf("conditional groups = %v", c.Groups)
	}
	if p.Totals.DeleteFilesRetired != 1 {
		t.Errorf("totals retired = %d", p.Totals.DeleteFilesRetired)
	}
}

func TestRetireGlobalEquality(t *testing.T) {
	data := fiveSmall(partA(), 0, 1, 0)
	global := eqDelete("s3://d/geq.parquet", 2, []any{}, 2, 3)
	p := mustPlan(t, testInput(data, []table.FileEntry{global}), smallOptions())
	if _, ok := retiredPaths(p)["s3://d/geq.parquet"]; !ok {
		t.Errorf("global equality delete not retired")
	}
	if n := len(p.Groups[0].Inputs[0].Deletes.Equality); n != 1 {
		t.Errorf("global equality delete applies to %d", n)
	}
	// An older file elsewhere in the table keeps it.
	more := append(slices.Clone(data), dataFile(path(70), 0, []any{"z"}, 100*mib, 100, 2))
	p = mustPlan(t, testInput(more, []table.FileEntry{global}), smallOptions())
	if _, ok := retiredPaths(p)["s3://d/geq.parquet"]; ok {
		t.Errorf("global equality delete retired while it applies to a live file")
	}
}

func TestMaxFilesToRewriteDoesNotRetireForDroppedFiles(t *testing.T) {
	data := fiveSmall(partA(), 0, 1, 0)
	deletes := []table.FileEntry{
		posDelete("s3://d/ps.parquet", 0, partA(), 2, 3, ""),
		dv("s3://d/dvs.puffin", 4, 0, partA(), 3, 5, path(4)),
	}
	limit := 4
	o := smallOptions()
	o.MaxFilesToRewrite = &limit
	p := mustPlan(t, testInput(data, deletes), o)
	if got := retiredPaths(p); len(got) != 0 {
		t.Errorf("retired %v although %s stays live", got, path(4))
	}
}
