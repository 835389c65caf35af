package orphan

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/fileio/faultio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// hookIO runs a function when a listing delivers its first file: a writer
// acting while the run lists.
type hookIO struct {
	fileio.FileIO
	onList func()
}

func (h *hookIO) List(ctx context.Context, prefix string, fn func(fileio.FileInfo) error) error {
	first := true
	return h.FileIO.(fileio.Lister).List(ctx, prefix, func(fi fileio.FileInfo) error {
		if first && h.onList != nil {
			first = false
			h.onList()
		}
		return fn(fi)
	})
}

func age(t *testing.T, path string, d time.Duration) {
	t.Helper()
	mtime := time.Now().Add(-d)
	if err := os.Chtimes(strings.TrimPrefix(path, "file://"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// TestWriteDuringListing: with the real clock, a file a writer creates
// while the run lists is younger than the cutoff whether or not the
// listing sees it, and survives; an old orphan goes.
func TestWriteDuringListing(t *testing.T) {
	f := newFixture(t, "")
	id := f.create(t, "t", "", nil)
	loc := f.load(t, id).Metadata.Location
	tbl := f.appendFiles(t, id, true, loc+"/data/a.parquet")
	old := loc + "/data/old-orphan.parquet"
	f.put(t, tbl.IO, old)
	age(t, old, 5*24*time.Hour)
	for p := range files(t, tbl.IO, loc+"/") {
		if p != old {
			age(t, p, 4*24*time.Hour)
		}
	}
	inflight := []string{loc + "/data/0-in-flight.parquet", loc + "/data/zz-in-flight.parquet"}
	load := func(ctx context.Context) (*catalog.Table, error) {
		t, err := f.LoadTable(ctx, id)
		if err != nil {
			return nil, err
		}
		t.IO = &hookIO{FileIO: t.IO, onList: func() {
			for _, p := range inflight {
				fileio.WriteFile(ctx, t.IO, p, []byte("being written"))
			}
		}}
		return t, nil
	}
	var s sink
	sum, err := Run(f.Ctx, load, Options{}, &s)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.byStatus(); !sameStrings(got[StatusDeleted], []string{old}) || len(got) != 1 {
		t.Errorf("reports %v, want only %s deleted (summary %+v)", got, old, sum)
	}
	after := files(t, tbl.IO, loc+"/")
	for _, p := range inflight {
		if _, ok := after[p]; !ok {
			t.Errorf("in-flight file %s was deleted", p)
		}
	}
	checkReferencedExist(t, f.load(t, id))
}

// TestCommitDuringRun: a commit that lands between planning and deleting
// references a file the run took for an orphan (an imported file); the
// re-check against the re-loaded table keeps it.
func TestCommitDuringRun(t *testing.T) {
	f := newFixture(t, "")
	id, orphans := localTable(t, f)
	imported := orphans[0]
	loads := 0
	var fresh string
	load := func(ctx context.Context) (*catalog.Table, error) {
		loads++
		if loads == 2 {
			// Another writer commits right before the deletion phase.
			tbl := f.load(t, id)
			fresh = tbl.Metadata.Location + "/data/fresh.parquet"
			size := len(f.put(t, tbl.IO, fresh))
			f.commit(t, tbl, table.Change{Operation: spec.OperationAppend,
				AddData: []manifest.DataFile{dataFile(imported, 10), dataFile(fresh, size)}})
		}
		return f.LoadTable(ctx, id)
	}
	var s sink
	sum, err := Run(f.Ctx, load, opts(), &s)
	if err != nil {
		t.Fatal(err)
	}
	got := s.byStatus()
	if !sameStrings(got[StatusKept], []string{imported}) || !sameStrings(got[StatusDeleted], orphans[1:]) {
		t.Errorf("reports %v; want %s kept and the rest deleted", got, imported)
	}
	if !sum.TableChanged || sum.Kept != 1 {
		t.Errorf("summary %+v", sum)
	}
	tbl := f.load(t, id)
	checkReferencedExist(t, tbl)
	if _, err := tbl.IO.Open(f.Ctx, imported); err != nil {
		t.Errorf("imported file: %v", err)
	}
}

func TestBadInputDeletesNothing(t *testing.T) {
	for _, c := range []struct {
		name   string
		break_ func(t *testing.T, f *fixture, tbl *catalog.Table) Loader
		want   string
	}{
		{"unreadable listing", func(t *testing.T, f *fixture, tbl *catalog.Table) Loader {
			return func(ctx context.Context) (*catalog.Table, error) {
				t, err := f.LoadTable(ctx, tbl.Ident)
				if err == nil {
					fio := faultio.New(t.IO)
					fio.FailNth(faultio.List, 0)
					t.IO = fio
				}
				return t, err
			}
		}, "list"},
		{"corrupt manifest", func(t *testing.T, f *fixture, tbl *catalog.Table) Loader {
			mfs, err := table.ManifestFiles(f.Ctx, tbl.IO, &tbl.Metadata.Snapshots[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := fileio.WriteFile(f.Ctx, tbl.IO, mfs[0].Path, []byte("not avro")); err != nil {
				t.Fatal(err)
			}
			return f.loader(tbl.Ident)
		}, "manifest"},
		{"missing manifest list", func(t *testing.T, f *fixture, tbl *catalog.Table) Loader {
			if err := tbl.IO.Remove(f.Ctx, tbl.Metadata.Snapshots[0].ManifestList); err != nil {
				t.Fatal(err)
			}
			return f.loader(tbl.Ident)
		}, "manifest list"},
		{"re-load fails", func(t *testing.T, f *fixture, tbl *catalog.Table) Loader {
			n := 0
			return func(ctx context.Context) (*catalog.Table, error) {
				if n++; n > 1 {
					return nil, catalog.ErrNoSuchTable
				}
				return f.LoadTable(ctx, tbl.Ident)
			}
		}, "re-load"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, "")
			id, _ := localTable(t, f)
			tbl := f.load(t, id)
			load := c.break_(t, f, tbl)
			before := files(t, tbl.IO, f.Warehouse+"/")
			var s sink
			_, err := Run(f.Ctx, load, opts(), &s)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one about %q", err, c.want)
			}
			if d := diff(before, files(t, tbl.IO, f.Warehouse+"/")); len(d) != 0 {
				t.Errorf("failed run changed %v", d)
			}
			for _, r := range s.results {
				if r.Status == StatusDeleted {
					t.Errorf("reported %s deleted", r.Path)
				}
			}
		})
	}
}

func TestOptions(t *testing.T) {
	f := newFixture(t, "")
	id, orphans := localTable(t, f)
	tbl := f.load(t, id)
	loc := tbl.Metadata.Location
	before := files(t, tbl.IO, f.Warehouse+"/")
	for _, c := range []struct {
		name string
		o    func(*Options)
		want error
	}{
		{"cutoff under a day", func(o *Options) { o.OlderThan = 23 * time.Hour }, ErrInvalidOptions},
		{"negative cutoff", func(o *Options) { o.OlderThan = -time.Hour; o.AllowRecent = true }, ErrInvalidOptions},
		{"location outside the table", func(o *Options) { o.Location = f.Warehouse + "/ns" }, ErrInvalidOptions},
		{"sibling location", func(o *Options) { o.Location = loc + "2" }, ErrInvalidOptions},
		{"warehouse root", func(o *Options) { o.Location = f.Warehouse }, ErrInvalidOptions},
	} {
		o := opts()
		c.o(&o)
		if _, err := Run(f.Ctx, f.loader(id), o, &sink{}); !isErr(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if d := diff(before, files(t, tbl.IO, f.Warehouse+"/")); len(d) != 0 {
		t.Fatalf("refused runs changed %v", d)
	}

	// gc.enabled=false refuses deletion; a dry run still lists.
	if _, err := f.CommitTable(f.Ctx, tbl, nil, []spec.Update{spec.SetProperties{Updates: map[string]string{"gc.enabled": "false"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(f.Ctx, f.loader(id), opts(), &sink{}); !isErr(err, ErrGCDisabled) {
		t.Errorf("gc.enabled=false: %v", err)
	}
	o := opts()
	o.DryRun = true
	if sum, err := Run(f.Ctx, f.loader(id), o, &sink{}); err != nil || sum.Orphans != int64(len(orphans)) {
		t.Errorf("dry run with gc.enabled=false: %+v %v", sum, err)
	}
	if _, err := f.CommitTable(f.Ctx, f.load(t, id), nil, []spec.Update{spec.RemoveProperties{Removals: []string{"gc.enabled"}}}); err != nil {
		t.Fatal(err)
	}

	// --location below the table limits the run to that directory; with
	// a trailing slash or doubled slashes it is the same directory.
	for _, l := range []string{loc + "/data", loc + "/data/", loc + "/data//"} {
		o := opts()
		o.Location, o.DryRun = l, true
		var s sink
		if _, err := Run(f.Ctx, f.loader(id), o, &s); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, p := range orphans {
			if strings.HasPrefix(p, loc+"/data/") {
				want = append(want, p)
			}
		}
		if got := s.byStatus()[StatusWouldDelete]; !sameStrings(got, want) {
			t.Errorf("--location %s: %v, want %v", l, got, want)
		}
	}

	// A cutoff under a day runs with AllowRecent: the young file goes too.
	o = Options{OlderThan: time.Nanosecond, AllowRecent: true, DryRun: true, Now: later}
	var s sink
	if sum, err := Run(f.Ctx, f.loader(id), o, &s); err != nil || sum.Young != 0 || sum.Orphans != int64(len(orphans))+1 {
		t.Errorf("allow recent: %+v %v", sum, err)
	}
}
