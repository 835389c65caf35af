package orphan

import (
	"bytes"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
)

func TestTrashAndRestore(t *testing.T) {
	f := newFixture(t, "")
	id, orphans := localTable(t, f)
	tbl := f.load(t, id)
	loc := tbl.Metadata.Location
	wh := f.Warehouse + "/"
	before := files(t, tbl.IO, wh)

	o := opts()
	o.Trash = ".icectl-trash"
	var s sink
	sum, err := Run(f.Ctx, f.loader(id), o, &s)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.byStatus(); !sameStrings(got[StatusTrashed], orphans) || len(got) != 1 {
		t.Fatalf("trash run reports %v", got)
	}
	runDir := sum.TrashDir
	if !strings.HasPrefix(runDir, loc+"/.icectl-trash/") {
		t.Fatalf("trash run directory %s", runDir)
	}
	// Each orphan is in the trash at its path relative to the table
	// location, with the same bytes, and gone from its place.
	after := files(t, tbl.IO, wh)
	for _, r := range s.results {
		want := runDir + "/files/" + strings.TrimPrefix(r.Path, loc+"/")
		if r.TrashPath != want {
			t.Errorf("trash path %s, want %s", r.TrashPath, want)
		}
		if !bytes.Equal(after[want], before[r.Path]) {
			t.Errorf("trashed copy of %s differs", r.Path)
		}
		if _, ok := after[r.Path]; ok {
			t.Errorf("%s is still in place", r.Path)
		}
	}
	if _, ok := after[runDir+"/run.json"]; !ok {
		t.Error("no run.json in the trash run")
	}
	checkReferencedExist(t, f.load(t, id))

	// A later run leaves the trash alone (it is skipped, and hidden).
	var again sink
	sum2, err := Run(f.Ctx, f.loader(id), opts(), &again)
	if err != nil || len(again.results) != 0 || sum2.Hidden+sum2.InTrash < int64(len(orphans)) {
		t.Fatalf("run after trashing: %+v %v %v", sum2, again.results, err)
	}

	// A dry-run restore changes nothing.
	mid := files(t, tbl.IO, wh)
	var dry []Restored
	rsum, err := Restore(f.Ctx, f.loader(id), RestoreOptions{Trash: ".icectl-trash", DryRun: true}, func(r Restored) error {
		dry = append(dry, r)
		return nil
	})
	if err != nil || rsum.Restored != int64(len(orphans)) {
		t.Fatalf("dry restore: %+v %v", rsum, err)
	}
	if d := diff(mid, files(t, tbl.IO, wh)); len(d) != 0 {
		t.Fatalf("dry-run restore changed %v", d)
	}

	// Restore puts every file back byte for byte and empties the run.
	var restored []Restored
	rsum, err = Restore(f.Ctx, f.loader(id), RestoreOptions{Trash: loc + "/.icectl-trash/"}, func(r Restored) error {
		restored = append(restored, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rsum.Restored != int64(len(orphans)) || len(rsum.Runs) != 1 {
		t.Errorf("restore summary %+v", rsum)
	}
	if d := diff(before, files(t, tbl.IO, wh)); len(d) != 0 {
		t.Errorf("after restore the warehouse differs from before the run: %v", d)
	}
	// Nothing left to restore.
	if _, err := Restore(f.Ctx, f.loader(id), RestoreOptions{Trash: ".icectl-trash"}, func(Restored) error { return nil }); !isErr(err, ErrNoTrashRun) {
		t.Errorf("second restore: %v, want ErrNoTrashRun", err)
	}
}

func TestRestoreNeverOverwrites(t *testing.T) {
	f := newFixture(t, "")
	id, orphans := localTable(t, f)
	tbl := f.load(t, id)
	o := opts()
	o.Trash = ".icectl-trash"
	sum, err := Run(f.Ctx, f.loader(id), o, &sink{})
	if err != nil {
		t.Fatal(err)
	}
	// Someone wrote a new file where an orphan was; another orphan's
	// copy was already put back by an interrupted restore.
	newer := f.put(t, tbl.IO, orphans[0])
	loc := tbl.Metadata.Location
	copy1, err := fileio.ReadFile(f.Ctx, tbl.IO, sum.TrashDir+"/files/"+strings.TrimPrefix(orphans[1], loc+"/"))
	if err != nil {
		t.Fatal(err)
	}
	if err := fileio.WriteFile(f.Ctx, tbl.IO, orphans[1], copy1); err != nil {
		t.Fatal(err)
	}
	got := map[string]RestoreStatus{}
	rsum, err := Restore(f.Ctx, f.loader(id), RestoreOptions{Trash: ".icectl-trash"}, func(r Restored) error {
		got[r.Path] = r.Status
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got[orphans[0]] != StatusSkipped || got[orphans[1]] != StatusRestored || rsum.Skipped != 1 {
		t.Errorf("statuses %v, summary %+v", got, rsum)
	}
	if data, _ := fileio.ReadFile(f.Ctx, tbl.IO, orphans[0]); !bytes.Equal(data, newer) {
		t.Error("restore overwrote a newer file")
	}
	// The skipped copy and the run stay, so nothing is lost.
	left := files(t, tbl.IO, sum.TrashDir+"/")
	if len(left) != 2 {
		t.Errorf("trash run holds %d files, want the skipped copy and run.json", len(left))
	}
}

func TestTrashMustBeInsideTheTable(t *testing.T) {
	f := newFixture(t, "")
	id, _ := localTable(t, f)
	tbl := f.load(t, id)
	before := files(t, tbl.IO, f.Warehouse+"/")
	for _, trash := range []string{f.Warehouse + "/ns/t2/.trash", f.Warehouse + "/ns/.trash", tbl.Metadata.Location + "-trash/.t", tbl.Metadata.Location + "/trash"} {
		o := opts()
		o.Trash = trash
		if _, err := Run(f.Ctx, f.loader(id), o, &sink{}); !isErr(err, ErrInvalidOptions) {
			t.Errorf("trash %s: %v, want ErrInvalidOptions", trash, err)
		}
		if _, err := Restore(f.Ctx, f.loader(id), RestoreOptions{Trash: trash}, func(Restored) error { return nil }); !isErr(err, ErrInvalidOptions) {
			t.Errorf("restore from %s: %v, want ErrInvalidOptions", trash, err)
		}
	}
	// A listing root inside the trash is refused too.
	o := opts()
	o.Trash, o.Location = tbl.Metadata.Location+"/data/_t", tbl.Metadata.Location+"/data/_t/deep"
	if _, err := Run(f.Ctx, f.loader(id), o, &sink{}); !isErr(err, ErrInvalidOptions) {
		t.Errorf("root inside the trash: %v", err)
	}
	if d := diff(before, files(t, tbl.IO, f.Warehouse+"/")); len(d) != 0 {
		t.Errorf("refused runs changed %v", d)
	}
}
