package compact_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// TestCompactRewritePaths: the Arrow path (ArrowOnly) leaves every
// scenario's rows and lineage unchanged, as the default does
// (TestCompactRowsUnchanged); by default groups are transcoded column by
// column, equality deletes included, and a group that goes through Arrow
// says why; a column the files predate sends every group to Arrow, with
// rows unchanged.
func TestCompactRewritePaths(t *testing.T) {
	run := func(t *testing.T, f *fixture, lineage bool, arrowOnly bool) []compact.GroupResult {
		t.Helper()
		b := snapshotBefore(t, f, lineage)
		opts := rewriteAll(f)
		opts.ArrowOnly = arrowOnly
		p, err := compact.PlanTable(f.ctx, f.tbl, opts)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := compact.Execute(f.ctx, f.cat, f.tbl, p, opts)
		if err != nil {
			t.Fatalf("execute: %v", err)
		}
		if len(rep.Groups) == 0 {
			t.Fatal("nothing compacted")
		}
		for _, g := range rep.Groups {
			if g.Status != compact.StatusCommitted {
				t.Errorf("group %s: %s (%s), want committed", g.ID, g.Status, g.Reason)
			}
		}
		checkUnchanged(t, f, b, lineage)
		return rep.Groups
	}
	for _, sc := range scenarios() {
		t.Run(sc.name+"/arrow-only", func(t *testing.T) {
			for _, g := range run(t, sc.build(t, 5), sc.lineage, true) {
				if g.Rewrite != compact.RewriteArrow || g.RewriteNote != "asked for" {
					t.Errorf("group %s: rewrite %q (%s), want arrow (asked for)", g.ID, g.Rewrite, g.RewriteNote)
				}
			}
		})
	}
	// Tables with only position deletes and DVs: every group is
	// transcoded, lineage included.
	for _, sc := range positionOnlyScenarios() {
		t.Run(sc.name+"/transcoded", func(t *testing.T) {
			for _, g := range run(t, sc.build(t, 5), sc.lineage, false) {
				if g.Rewrite != compact.RewriteTranscode {
					t.Errorf("group %s: rewrite %q (%s), want %s", g.ID, g.Rewrite, g.RewriteNote, compact.RewriteTranscode)
				}
			}
		})
	}
	t.Run("v2-equality-deletes-transcoded", func(t *testing.T) {
		f := buildV2Deletes(t, 5)
		if !hasEqualityDeletes(t, f) {
			t.Fatal("the fixture has no equality deletes")
		}
		for _, g := range run(t, f, false, false) {
			if g.Rewrite != compact.RewriteTranscode {
				t.Errorf("group %s: rewrite %q (%s), want %s", g.ID, g.Rewrite, g.RewriteNote, compact.RewriteTranscode)
			}
		}
	})
	// Many small row groups: each chunk of inputs is a row group, the
	// next chunk is read ahead while one is written, and outputs roll
	// between row groups; lineage and deletes still hold.
	t.Run("many-row-groups", func(t *testing.T) {
		props := map[string]string{"write.parquet.row-group-size-bytes": "4096"}
		for k, v := range smallFiles {
			props[k] = v
		}
		f := newFixture(t, 3, 5, props)
		parts := f.partitions(1)
		f.must(f.appendFiles(parts, 8, 40))
		f.must(f.appendFiles(parts, 8, 40))
		f.must(f.deleteIDs(delDV, f.pickLive(20)))
		b := snapshotBefore(t, f, true)
		opts := rewriteAll(f)
		opts.Plan.TargetFileSize = 16 << 10
		p, err := compact.PlanTable(f.ctx, f.tbl, opts)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := compact.Execute(f.ctx, f.cat, f.tbl, p, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range rep.Groups {
			if g.Status != compact.StatusCommitted || g.Rewrite != compact.RewriteTranscode {
				t.Errorf("group %s: %s, rewrite %q (%s)", g.ID, g.Status, g.Rewrite, g.RewriteNote)
			}
		}
		checkUnchanged(t, f, b, true)
		rowGroups, files := 0, 0
		for _, d := range mustLive(t, f).Data {
			files++
			rowGroups += len(d.Entry.DataFile.SplitOffsets)
		}
		if rowGroups <= files || files < 2 {
			t.Errorf("%d output files with %d row groups: want several of each", files, rowGroups)
		}
	})
	// Inputs larger than an output file go through Arrow, which splits
	// them row by row; the rows are unchanged and the outputs are cut.
	t.Run("oversized-inputs-split", func(t *testing.T) {
		f := positionOnlyScenarios()[0].build(t, 5)
		b := snapshotBefore(t, f, false)
		opts := rewriteAll(f)
		opts.Plan.TargetFileSize = 1 << 10
		p, err := compact.PlanTable(f.ctx, f.tbl, opts)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := compact.Execute(f.ctx, f.cat, f.tbl, p, opts)
		if err != nil {
			t.Fatal(err)
		}
		split := 0
		for _, g := range rep.Groups {
			if g.Status != compact.StatusCommitted {
				t.Errorf("group %s: %s (%s)", g.ID, g.Status, g.Reason)
			}
			if g.Rewrite == compact.RewriteArrow && strings.Contains(g.RewriteNote, "split") {
				split++
			}
		}
		if split == 0 || rep.FilesOut <= len(rep.Groups) {
			t.Errorf("%d groups split into %d files from %d: want oversized inputs split by the Arrow path", split, rep.FilesOut, rep.FilesIn)
		}
		checkUnchanged(t, f, b, false)
	})
	// A column added after the files were written is transcoded, as
	// nulls or as its initial-default (v3).
	for _, withDefault := range []bool{false, true} {
		t.Run(fmt.Sprintf("added-column/default=%v", withDefault), func(t *testing.T) {
			f := positionOnlyScenarios()[1].build(t, 5)
			s := *f.tbl.Metadata.CurrentSchema()
			added := spec.NestedField{ID: f.tbl.Metadata.LastColumnID + 1, Name: "added", Type: spec.StringType{}}
			if withDefault {
				added.InitialDefault = []byte(`"x"`)
			}
			s.Fields = append(append([]spec.NestedField(nil), s.Fields...), added)
			s.ID = 0
			tbl, err := f.cat.CommitTable(f.ctx, f.tbl, []spec.Requirement{spec.AssertTableUUID{UUID: f.tbl.Metadata.TableUUID}},
				[]spec.Update{spec.AddSchema{Schema: s}, spec.SetCurrentSchema{SchemaID: spec.LastAdded}})
			f.must(err)
			f.tbl = tbl
			for _, g := range run(t, f, true, false) {
				if g.Rewrite != compact.RewriteTranscode {
					t.Errorf("group %s: rewrite %q (%s), want %s", g.ID, g.Rewrite, g.RewriteNote, compact.RewriteTranscode)
				}
			}
		})
	}
}

// positionOnlyScenarios are tables whose deletes are all positional.
func positionOnlyScenarios() []scenario {
	v2 := func(tb testing.TB, seed uint64) *fixture {
		f := newFixture(tb, 2, seed, smallFiles)
		v2HistoryWith(f, false)
		return f
	}
	upgraded := func(commitAfter bool) func(tb testing.TB, seed uint64) *fixture {
		return func(tb testing.TB, seed uint64) *fixture {
			f := v2(tb, seed)
			f.upgradeToV3()
			if commitAfter {
				f.must(f.appendFiles(f.partitions(3), 3, 30))
				f.must(f.deleteIDs(delDV, f.pickLive(12)))
			}
			return f
		}
	}
	return []scenario{
		{name: "v2-position-deletes", build: v2},
		{name: "v3-dvs-only", lineage: true, lineageBefore: true, build: func(tb testing.TB, seed uint64) *fixture {
			return buildV3With(tb, seed, false)
		}},
		{name: "v2-position-upgraded-to-v3", lineage: true, lineageBefore: true, build: upgraded(true)},
		{name: "v2-position-upgraded-compaction-first-v3-commit", lineage: true, build: upgraded(false)},
	}
}

func hasEqualityDeletes(t *testing.T, f *fixture) bool {
	t.Helper()
	for _, d := range mustLive(t, f).Deletes {
		if d.Entry.DataFile.Content == manifest.ContentEqualityDeletes {
			return true
		}
	}
	return false
}
