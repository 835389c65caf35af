package expire

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// The spill path (a budget of one byte, so every set goes to disk in many
// runs) finds exactly the files the in-memory path finds, in the same
// order, on random histories; and a run with it deletes exactly those.
func TestExpireSpillSameAsMemory(t *testing.T) {
	for seed := range 4 {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 11))
			e, tbl := newEnv(t)
			tbl = e.randomHistory(t, tbl, r)
			snaps := tbl.Metadata.Snapshots
			pol := Policy{Now: time.UnixMilli(snaps[len(snaps)-1].TimestampMS + 1), RetainLast: ptr(1)}
			ot := time.UnixMilli(snaps[len(snaps)-1].TimestampMS)
			pol.OlderThan = &ot
			plan, err := NewPlan(tbl.Metadata, pol)
			if err != nil {
				t.Fatal(err)
			}
			after, err := applyPlan(tbl.Metadata, plan)
			if err != nil {
				t.Fatal(err)
			}
			diffFiles := func(budget int) []File {
				d, err := unreferenced(e.Ctx, tbl.IO, tbl.Metadata, plan.RemovedIDs(), after, CleanupAll, spill{dir: t.TempDir(), budget: budget})
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				if budget == 1 && d.Len() > 1 && !d.del.Spilled() {
					t.Error("a one-byte budget did not spill")
				}
				fs, err := diffFiles(d)
				if err != nil {
					t.Fatal(err)
				}
				if len(fs) != d.Len() {
					t.Errorf("Len %d, %d files", d.Len(), len(fs))
				}
				// The guard keeps exactly what is not to be deleted.
				k := &keeper{d: d}
				for _, f := range fs {
					if k.keep(f.Path) {
						t.Errorf("guard keeps %s, a file to delete", f.Path)
					}
					if !k.keep(f.Path + "x") {
						t.Errorf("guard would delete %sx, not a candidate", f.Path)
					}
				}
				return fs
			}
			mem, disk := diffFiles(0), diffFiles(1)
			if len(mem) == 0 {
				t.Fatal("nothing to delete: the history does not exercise the diff")
			}
			// WalkReachable names any one snapshot of a shared file, so
			// the comparison leaves that (and the reason naming it) out.
			strip := func(fs []File) []File {
				out := make([]File, len(fs))
				for i, f := range fs {
					out[i] = File{Path: f.Path, Kind: f.Kind, Size: f.Size}
				}
				return out
			}
			if !slices.Equal(strip(mem), strip(disk)) {
				t.Fatalf("spilled diff differs:\n%v\n%v", mem, disk)
			}
			if !slices.IsSortedFunc(mem, func(a, b File) int { return strings.Compare(a.Path, b.Path) }) {
				t.Error("files not in path order")
			}

			rep, err := Run(e.Ctx, e.Cat, tbl, Options{Policy: pol, Commit: e.Opts, BatchSize: 2, SpillDir: t.TempDir(), SpillBudget: 1})
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, f := range mem {
				paths = append(paths, f.Path)
			}
			var deleted []string
			for _, f := range reportFiles(t, rep) {
				deleted = append(deleted, f.Path)
			}
			if !slices.Equal(deleted, paths) || rep.Deletion.Deleted != len(paths) || len(rep.Deletion.Refused)+len(rep.Deletion.Failed) > 0 {
				t.Errorf("deleted %d of %v (refused %v, failed %v), want %v", rep.Deletion.Deleted, deleted, rep.Deletion.Refused, rep.Deletion.Failed, paths)
			}
		})
	}
}
