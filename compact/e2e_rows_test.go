package compact_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/plan"
)

// before is what a table reads as before compaction.
type before struct {
	g       *goScan
	lineage map[int64]lineage
	md      *spec.TableMetadata
}

func snapshotBefore(t *testing.T, f *fixture, withLineage bool) before {
	t.Helper()
	b := before{g: icebergGo(t, f, false), md: f.reload().Metadata}
	checkModel(t, f, b.g)
	if withLineage {
		b.lineage = icebergGo(t, f, true).lineageByID(t)
	}
	return b
}

// checkUnchanged checks, through iceberg-go, that the table reads exactly
// as before (rows and checksum), that icectl's scan agrees, and for v3
// tables that lineage is unchanged and next-row-id accounted as the spec
// says.
func checkUnchanged(t *testing.T, f *fixture, b before, withLineage bool) {
	t.Helper()
	after := icebergGo(t, f, false)
	if after.RowCount != b.g.RowCount || after.Checksum != b.g.Checksum {
		t.Errorf("iceberg-go after compaction: %d rows %s; before: %d rows %s", after.RowCount, after.Checksum, b.g.RowCount, b.g.Checksum)
	}
	if !slices.EqualFunc(after.Rows, b.g.Rows, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) }) {
		t.Error("iceberg-go rows differ before and after compaction")
	}
	checkModel(t, f, after)
	own := icectlChecksum(t, f)
	if own.RowCount != after.RowCount || own.Checksum != after.Checksum {
		t.Errorf("icectl scan after: %d rows %s; iceberg-go: %d rows %s", own.RowCount, own.Checksum, after.RowCount, after.Checksum)
	}
	checkConsistent(t, f)
	if withLineage {
		checkLineage(t, f, b)
		checkNextRowID(t, f, b.md)
	}
}

// checkLineage matches rows by id: a non-null _row_id and
// _last_updated_sequence_number are unchanged; a row without lineage before
// (the table's first v3 commit is the compaction) gets one; no two rows
// share a _row_id.
func checkLineage(t *testing.T, f *fixture, b before) {
	t.Helper()
	after := icebergGo(t, f, true).lineageByID(t)
	seen := map[int64]int64{}
	bad := 0
	for id, was := range b.lineage {
		now, ok := after[id]
		if !ok {
			t.Errorf("row %d is gone", id)
			continue
		}
		if now.rowID == nil || now.seq == nil {
			t.Errorf("row %d: lineage %s after compaction, want non-null", id, now)
			continue
		}
		if other, dup := seen[*now.rowID]; dup {
			t.Errorf("rows %d and %d share _row_id %d", other, id, *now.rowID)
		}
		seen[*now.rowID] = id
		if was.rowID == nil {
			continue
		}
		if *was.rowID != *now.rowID || was.seq == nil || *was.seq != *now.seq {
			if bad < 10 {
				t.Errorf("row %d: lineage %s before compaction, %s after", id, was, now)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d rows changed lineage", bad, len(b.lineage))
	}
}

// checkNextRowID walks the snapshots committed since base and checks each
// one's row-id accounting against its manifest list: first-row-id is the
// table's next-row-id at the commit, the data manifests that got a
// first_row_id in it hold contiguous ranges from there, added-rows is the
// sum of their added and existing rows, and next-row-id grows by exactly
// the added-rows of each snapshot.
func checkNextRowID(t *testing.T, f *fixture, base *spec.TableMetadata) {
	t.Helper()
	md := f.tbl.Metadata
	if md.NextRowID == nil || base.NextRowID == nil {
		t.Fatalf("v3 table without next-row-id (before %v, after %v)", base.NextRowID, md.NextRowID)
	}
	var chain []*spec.Snapshot
	for s := md.CurrentSnapshot(); s != nil; {
		if _, old := base.SnapshotByID(s.SnapshotID); old {
			break
		}
		chain = append(chain, s)
		if s.ParentSnapshotID == nil {
			break
		}
		s, _ = md.SnapshotByID(*s.ParentSnapshotID)
	}
	if len(chain) == 0 {
		t.Fatal("compaction committed no snapshot")
	}
	next := *base.NextRowID
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		if s.FirstRowID == nil || s.AddedRows == nil {
			t.Errorf("snapshot %d: first-row-id %v, added-rows %v; both are required in v3", s.SnapshotID, s.FirstRowID, s.AddedRows)
			return
		}
		if *s.FirstRowID != next {
			t.Errorf("snapshot %d: first-row-id %d, table next-row-id was %d", s.SnapshotID, *s.FirstRowID, next)
		}
		mfs, err := table.ManifestFiles(f.ctx, f.tbl.IO, s)
		if err != nil {
			t.Fatal(err)
		}
		var assigned []manifest.ManifestFile
		for _, mf := range mfs {
			if mf.Content == manifest.ManifestContentData && mf.FirstRowID != nil && *mf.FirstRowID >= *s.FirstRowID {
				assigned = append(assigned, mf)
			}
		}
		slices.SortFunc(assigned, func(a, b manifest.ManifestFile) int { return int(*a.FirstRowID - *b.FirstRowID) })
		at := *s.FirstRowID
		for _, mf := range assigned {
			if *mf.FirstRowID != at {
				t.Errorf("snapshot %d: manifest %s first_row_id %d, want %d (contiguous from first-row-id)", s.SnapshotID, mf.Path, *mf.FirstRowID, at)
			}
			at = *mf.FirstRowID + deref(mf.AddedRowsCount) + deref(mf.ExistingRowsCount)
		}
		if got := at - *s.FirstRowID; *s.AddedRows != got {
			t.Errorf("snapshot %d: added-rows %d, its newly assigned manifests hold %d rows", s.SnapshotID, *s.AddedRows, got)
		}
		next += *s.AddedRows
	}
	if *md.NextRowID != next {
		t.Errorf("next-row-id %d after compaction, want %d (%d + added-rows of %d snapshots)", *md.NextRowID, next, *base.NextRowID, len(chain))
	}
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func rewriteAll(f *fixture) compact.Options {
	return compact.Options{Plan: plan.Options{RewriteAll: true}, MaxConcurrentGroups: 2, Commit: f.copts}
}

// TestCompactRowsUnchanged compacts every fixture with compact.Execute and
// checks through iceberg-go that no row, checksum or lineage changed.
func TestCompactRowsUnchanged(t *testing.T) {
	for _, sc := range scenarios() {
		for _, partial := range []bool{false, true} {
			name := sc.name
			if partial {
				name += "/partial-progress"
			}
			t.Run(name, func(t *testing.T) {
				f := sc.build(t, 11)
				b := snapshotBefore(t, f, sc.lineage)
				opts := rewriteAll(f)
				opts.PartialProgress = partial
				p, err := compact.PlanTable(f.ctx, f.tbl, opts)
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Groups) == 0 {
					t.Fatal("nothing planned")
				}
				rep, err := compact.Execute(f.ctx, f.cat, f.tbl, p, opts)
				if err != nil {
					t.Fatalf("execute: %v", err)
				}
				for _, g := range rep.Groups {
					// The first v3 commit gives the pre-upgrade files row ids;
					// later groups of a partial-progress run must carry those
					// ids, so they are rewritten again.
					if partial && !sc.lineageBefore && sc.lineage && g.Status == compact.StatusRebased && strings.Contains(g.Reason, "row ids") {
						continue
					}
					if g.Status != compact.StatusCommitted {
						t.Errorf("group %s: %s (%s), want committed", g.ID, g.Status, g.Reason)
					}
				}
				if rep.Commits == 0 || rep.FilesIn == 0 || rep.FilesOut == 0 {
					t.Errorf("report: %d commits, %d files in, %d out", rep.Commits, rep.FilesIn, rep.FilesOut)
				}
				checkUnchanged(t, f, b, sc.lineage)
				checkFewerFiles(t, f, b.md, p)
			})
		}
	}
}

// checkFewerFiles checks the compaction did something: the planned inputs
// are gone from the table and there are fewer data files than before.
func checkFewerFiles(t *testing.T, f *fixture, base *spec.TableMetadata, p *plan.Plan) {
	t.Helper()
	fsBefore, err := table.LiveFiles(f.ctx, f.tbl.IO, base.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	fsAfter, err := table.LiveFiles(f.ctx, f.tbl.IO, f.tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{}
	for _, e := range fsAfter.Data {
		live[e.Entry.DataFile.FilePath] = true
	}
	for _, g := range p.Groups {
		for _, in := range g.Inputs {
			if live[in.Path] {
				t.Errorf("input %s is still live", in.Path)
			}
		}
	}
	if len(fsAfter.Data) >= len(fsBefore.Data) {
		t.Errorf("%d data files after compaction, %d before", len(fsAfter.Data), len(fsBefore.Data))
	}
}

// TestCompactCLIRowsUnchanged runs the built `icectl compact` binary on the
// upgraded table (mixed lineage, both kinds of delete) and the two-spec
// table.
func TestCompactCLIRowsUnchanged(t *testing.T) {
	bin := testenv.Icectl(t)
	for _, sc := range scenarios() {
		if sc.name != "v2-upgraded-to-v3" && sc.name != "two-partition-specs" {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			f := sc.build(t, 12)
			b := snapshotBefore(t, f, sc.lineage)
			compactJSON(t, bin, f, "--rewrite-all")
			checkUnchanged(t, f, b, sc.lineage)
		})
	}
}
