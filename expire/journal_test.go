package expire

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/fileio/faultio"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/orphan"
)

func journalFiles(t *testing.T, e *env) []string {
	t.Helper()
	var out []string
	for p := range tree(t, e.Cat.Dir) {
		if strings.HasSuffix(p, journalSuffix) {
			out = append(out, p)
		}
	}
	return out
}

// An expiry whose deletions fail after the commit (as one killed there)
// leaves its journal; the next run, which has nothing to expire, finishes
// the deletions and removes the journal, and never deletes a file a
// snapshot reaches as a live file.
func TestJournalFinishesInterruptedRun(t *testing.T) {
	e, tbl := linearTable(t, 6)
	pol := expireAllButLast(tbl)
	dry, err := Run(e.Ctx, e.Cat, tbl, Options{Policy: pol, DryRun: true, Commit: e.Opts})
	if err != nil || dry.Files.Len() == 0 {
		t.Fatalf("dry run: %d files, %v", dry.Files.Len(), err)
	}
	fio := faultio.New(tbl.IO)
	fio.FailPath(faultio.Remove, "/snap-")
	fio.FailPath(faultio.RemoveMany, "/snap-")
	broken := *tbl
	broken.IO = fio
	rep, err := Run(e.Ctx, e.Cat, &broken, Options{Policy: pol, Commit: e.Opts})
	if err == nil || !rep.Committed {
		t.Fatalf("first run: committed %v, error %v; want committed with failed deletions", rep.Committed, err)
	}
	if js := journalFiles(t, e); len(js) != 1 {
		t.Fatalf("journals after the failed deletions: %v", js)
	}
	got, err := e.Cat.LoadTable(e.Ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	live := capture(t, got, nil)

	rep, err = Run(e.Ctx, e.Cat, got, Options{Policy: pol, Commit: e.Opts})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Committed || len(rep.Plan.Remove) != 0 {
		t.Errorf("second run expired again: %+v", rep.Plan)
	}
	if js := journalFiles(t, e); len(js) != 0 {
		t.Errorf("journals left: %v", js)
	}
	for _, f := range reportFiles(t, dry) {
		if _, err := os.Stat(strings.TrimPrefix(f.Path, "file://")); err == nil {
			t.Errorf("%s, reachable only from expired snapshots, is still there", f.Path)
		}
	}
	after := capture(t, got, nil)
	for p, h := range live.files {
		if after.files[p] != h {
			t.Errorf("%s, live in a retained snapshot, changed or went", p)
		}
	}
}

// A journal cut short, or listing a file a snapshot reaches as live:
// the first is refused with nothing deleted, the second file is kept.
func TestJournalNeverTrusted(t *testing.T) {
	e, tbl := linearTable(t, 3)
	before := tree(t, e.Cat.Dir)
	dir := table.MetadataLocation(tbl.Metadata)
	live := tbl.Metadata.Snapshots[len(tbl.Metadata.Snapshots)-1].ManifestList
	// No end line: refused, nothing deleted.
	cut := dir + "/" + journalPrefix + "cut" + journalSuffix
	if err := fileio.WriteFile(e.Ctx, tbl.IO, cut, []byte("0 1 "+live+"\n")); err != nil {
		t.Fatal(err)
	}
	_, err := Run(e.Ctx, e.Cat, tbl, Options{Commit: e.Opts})
	if err == nil || !strings.Contains(err.Error(), "cut short") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line about a journal cut short", err)
	}
	after := tree(t, e.Cat.Dir)
	delete(after, strings.TrimPrefix(cut, "file://"))
	if !mapsEqual(before, after) {
		t.Error("files changed")
	}
	if err := tbl.IO.Remove(e.Ctx, cut); err != nil {
		t.Fatal(err)
	}
	// A complete journal naming a live manifest list: kept, journal gone.
	whole := dir + "/" + journalPrefix + "whole" + journalSuffix
	if err := fileio.WriteFile(e.Ctx, tbl.IO, whole, []byte("0 1 "+live+"\nend 1\n")); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(e.Ctx, e.Cat, tbl, Options{Commit: e.Opts})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(reportFiles(t, rep), func(f File) bool { return f.Path == live }) {
		t.Error("deleted a live manifest list")
	}
	if !mapsEqual(before, tree(t, e.Cat.Dir)) {
		t.Error("files changed")
	}
}

// orphanSink counts what orphan removal reports.
type orphanSink struct{ results []orphan.Result }

func (s *orphanSink) Begin(orphan.Summary) error         { return nil }
func (s *orphanSink) Conflict(orphan.ConflictFile) error { return nil }
func (s *orphanSink) Orphan(r orphan.Result) error       { s.results = append(s.results, r); return nil }

// Orphan removal between an interrupted expiry and the next one keeps the
// pending journal (and says so), however old it is, so that the next
// expiry still finishes the job.
func TestOrphanKeepsPendingJournal(t *testing.T) {
	e, tbl := linearTable(t, 6)
	pol := expireAllButLast(tbl)
	fio := faultio.New(tbl.IO)
	fio.FailPath(faultio.Remove, "/snap-")
	fio.FailPath(faultio.RemoveMany, "/snap-")
	broken := *tbl
	broken.IO = fio
	if rep, err := Run(e.Ctx, e.Cat, &broken, Options{Policy: pol, Commit: e.Opts}); err == nil || !rep.Committed {
		t.Fatalf("first run: error %v; want committed with failed deletions", err)
	}
	js := journalFiles(t, e)
	if len(js) != 1 {
		t.Fatalf("journals after the failed deletions: %v", js)
	}
	load := func(ctx context.Context) (*catalog.Table, error) { return e.Cat.LoadTable(ctx, e.ID) }
	// Ten days on, everything is older than the cutoff, the journal too.
	later := func() time.Time { return time.Now().Add(10 * 24 * time.Hour) }
	for _, dry := range []bool{true, false} {
		var s orphanSink
		sum, err := orphan.Run(e.Ctx, load, orphan.Options{Now: later, DryRun: dry}, &s)
		if err != nil {
			t.Fatalf("orphan (dry run %v): %v", dry, err)
		}
		if sum.Journals != 1 {
			t.Errorf("orphan (dry run %v) counted %d journals, want 1", dry, sum.Journals)
		}
		for _, r := range s.results {
			if strings.HasSuffix(r.Path, journalSuffix) {
				t.Errorf("orphan (dry run %v) took the journal for an orphan: %+v", dry, r)
			}
		}
		if got := journalFiles(t, e); !slices.Equal(got, js) {
			t.Fatalf("journals after orphan (dry run %v): %v, want %v", dry, got, js)
		}
	}
	got, err := e.Cat.LoadTable(e.Ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(e.Ctx, e.Cat, got, Options{Policy: pol, Commit: e.Opts}); err != nil {
		t.Fatal(err)
	}
	if js := journalFiles(t, e); len(js) != 0 {
		t.Errorf("journals left after the next expiry: %v", js)
	}
}
