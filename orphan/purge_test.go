package orphan

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/fileio"
)

// TestPurgeTrash: two trash runs, ten and thirty days from now; a purge
// at day 30 of runs older than 10 days deletes the first run (every file
// and its run.json) and keeps the second, which still restores byte for
// byte. A dry run changes nothing; a run holding a file the table
// references (committed after the run, at its trashed path) is refused
// by the guard and stays, run.json included.
func TestPurgeTrash(t *testing.T) {
	f := newFixture(t, "")
	id, orphans := localTable(t, f)
	tbl := f.load(t, id)
	loc := tbl.Metadata.Location
	wh := f.Warehouse + "/"
	day := func(n int) func() time.Time {
		return func() time.Time { return time.Now().Add(time.Duration(n) * 24 * time.Hour) }
	}
	trashRun := func(now func() time.Time) *Summary {
		t.Helper()
		o := opts()
		o.Now, o.Trash = now, ".icectl-trash"
		sum, err := Run(f.Ctx, f.loader(id), o, &sink{})
		if err != nil || sum.Trashed == 0 {
			t.Fatalf("trash run: %+v, %v", sum, err)
		}
		return sum
	}
	old := trashRun(day(10))
	newer := []string{loc + "/data/late-1.parquet", loc + "/data/late-2.parquet"}
	content := map[string][]byte{}
	for _, p := range newer {
		content[p] = f.put(t, tbl.IO, p)
	}
	young := trashRun(day(30))
	purge := func(o PurgeOptions) (*PurgeSummary, map[string]PurgedRun, error) {
		t.Helper()
		runs := map[string]PurgedRun{}
		o.Trash, o.MemoryBudget = ".icectl-trash", 1<<10
		if o.Now == nil {
			o.Now = day(30)
		}
		sum, err := PurgeTrash(f.Ctx, f.loader(id), o, func(r PurgedRun) error { runs[r.Run] = r; return nil })
		return sum, runs, err
	}
	oldRun := old.TrashDir[strings.LastIndexByte(old.TrashDir, '/')+1:]
	youngRun := young.TrashDir[strings.LastIndexByte(young.TrashDir, '/')+1:]

	before := files(t, tbl.IO, wh)
	sum, runs, err := purge(PurgeOptions{OlderThan: 10 * 24 * time.Hour, DryRun: true})
	if err != nil || sum.Purged != 1 || sum.Kept != 1 || runs[oldRun].Status != StatusWouldPurge || runs[youngRun].Status != StatusRunKept {
		t.Fatalf("dry run: %+v %v, %v", sum, runs, err)
	}
	// The old run holds the orphans and its run.json.
	if n := runs[oldRun].Files; n != int64(len(orphans))+1 {
		t.Errorf("old run counts %d files, want %d", n, len(orphans)+1)
	}
	if d := diff(before, files(t, tbl.IO, wh)); len(d) != 0 {
		t.Fatalf("dry run changed %v", d)
	}

	sum, runs, err = purge(PurgeOptions{OlderThan: 10 * 24 * time.Hour})
	if err != nil || sum.Purged != 1 || sum.Kept != 1 || runs[oldRun].Status != StatusPurged || sum.PurgedFiles != int64(len(orphans))+1 {
		t.Fatalf("purge: %+v %v, %v", sum, runs, err)
	}
	after := files(t, tbl.IO, wh)
	for p := range before {
		_, still := after[p]
		inOld := strings.HasPrefix(p, old.TrashDir+"/")
		if inOld == still {
			t.Errorf("%s: in the old run %v, still there %v", p, inOld, still)
		}
	}
	checkReferencedExist(t, f.load(t, id))

	// The kept run restores.
	if _, err := Restore(f.Ctx, f.loader(id), RestoreOptions{Trash: ".icectl-trash"}, func(Restored) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for p, want := range content {
		got := files(t, tbl.IO, p)[p]
		if !bytes.Equal(got, want) {
			t.Errorf("%s not restored", p)
		}
	}

	// A file the table references inside a trash run is never deleted:
	// the run fails and stays whole enough to list.
	trashRun(day(40))
	runs2, err := trashRuns(f.Ctx, tbl.IO.(fileio.Lister), loc+"/.icectl-trash")
	if err != nil || len(runs2) != 1 {
		t.Fatalf("trash runs %v, %v", runs2, err)
	}
	last := loc + "/.icectl-trash/" + runs2[len(runs2)-1]
	ref := last + "/files/data/referenced.parquet"
	f.appendFiles(t, id, true, ref)
	sum, runs, err = purge(PurgeOptions{Now: day(50)})
	if !isErr(err, ErrIncomplete) || sum.Failed != 1 || runs[runs2[len(runs2)-1]].Status != StatusPurgeFailed {
		t.Fatalf("purge of a run holding a referenced file: %+v %v, %v", sum, runs, err)
	}
	if d := runs[runs2[len(runs2)-1]].Detail; !strings.Contains(d, "refused") {
		t.Errorf("detail %q does not say the guard refused", d)
	}
	left := files(t, tbl.IO, last+"/")
	if _, ok := left[ref]; !ok {
		t.Error("the referenced file was deleted")
	}
	if _, ok := left[last+"/run.json"]; !ok {
		t.Error("run.json of a run not wholly purged was deleted")
	}
	checkReferencedExist(t, f.load(t, id))
}
