package table

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// A manifest rewrite whose entries do not fit its memory budget sorts
// them through spill files: every entry comes out once, in path order,
// with the sequence numbers, snapshot id and first_row_id it had, and the
// spill files are gone afterwards. The same rewrite in memory writes the
// same entries.
func TestManifestRewriteSpillsBeyondItsBudget(t *testing.T) {
	for _, budget := range []int64{1, 2000, 0} {
		t.Run(fmt.Sprint("budget_", budget), func(t *testing.T) {
			e, tbl := newEnv(t, 3)
			// Paths appended out of order, so the sort has work to do.
			for i := range 12 {
				a := unwritten(tbl, fmt.Sprintf("f%02d", (i*7)%12), int64(i+1))
				b := unwritten(tbl, fmt.Sprintf("g%02d", (i*5)%12), 2)
				tbl, _ = e.commit(t, tbl, appendFiles(a, b))
			}
			before := entriesOf(t, e, tbl, tbl.Metadata.CurrentSnapshot())
			tmp := t.TempDir()
			for _, target := range []int64{1 << 30, 2500} {
				var snap *spec.Snapshot
				tbl, snap = e.commit(t, tbl, Change{Operation: spec.OperationReplace,
					Rewrite: &ManifestRewrite{TargetSize: target, MemoryBudget: budget, TempDir: tmp}})
				mfs, err := ManifestFiles(e.ctx, tbl.IO, snap)
				if err != nil {
					t.Fatal(err)
				}
				if target > 1<<20 && len(mfs) != 1 {
					t.Errorf("target %d: %d manifests, want 1", target, len(mfs))
				}
				var paths []string
				for _, mf := range mfs {
					err := ReadManifest(e.ctx, tbl.IO, mf, true, func(fe FileEntry) error {
						paths = append(paths, fe.Entry.DataFile.FilePath)
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
				}
				if len(paths) != len(before) || !slices.IsSorted(paths) {
					t.Errorf("target %d: rewritten entries %v, want the %d files in path order", target, paths, len(before))
				}
				after := entriesOf(t, e, tbl, snap)
				if !reflect.DeepEqual(after, before) {
					t.Errorf("target %d: entries changed by the rewrite:\n got %+v\nwant %+v", target, after, before)
				}
				if left, _ := os.ReadDir(tmp); len(left) != 0 {
					t.Errorf("target %d: spill files left behind: %v", target, left)
				}
			}
		})
	}
}

// entriesOf maps the live data files of snap to their entries, status
// aside (a rewrite makes every entry EXISTING).
func entriesOf(t *testing.T, e *env, tbl *catalog.Table, snap *spec.Snapshot) map[string]manifest.Entry {
	t.Helper()
	fs, err := LiveFiles(e.ctx, tbl.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]manifest.Entry{}
	for _, fe := range fs.Data {
		en := fe.Entry
		if en.DataFile.FirstRowID == nil || en.SequenceNumber == nil || en.SnapshotID == nil {
			t.Fatalf("%s: entry %+v lacks lineage or sequence numbers", en.DataFile.FilePath, en)
		}
		en.Status = manifest.StatusExisting
		out[en.DataFile.FilePath] = en
	}
	return out
}
