package expire

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/fileio/faultio"
	"github.com/icectl/icectl/iceberg/table"
)

func journalFiles(t *testing.T, e *env) []string {
	t.Helper()
	var out []string
	for p := range tree(t, e.dir) {
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
	dry, err := Run(e.ctx, e.cat, tbl, Options{Policy: pol, DryRun: true, Commit: e.noWait})
	if err != nil || len(dry.Files) == 0 {
		t.Fatalf("dry run: %d files, %v", len(dry.Files), err)
	}
	fio := faultio.New(tbl.IO)
	fio.FailPath(faultio.Remove, "/snap-")
	fio.FailPath(faultio.RemoveMany, "/snap-")
	broken := *tbl
	broken.IO = fio
	rep, err := Run(e.ctx, e.cat, &broken, Options{Policy: pol, Commit: e.noWait})
	if err == nil || !rep.Committed {
		t.Fatalf("first run: committed %v, error %v; want committed with failed deletions", rep.Committed, err)
	}
	if js := journalFiles(t, e); len(js) != 1 {
		t.Fatalf("journals after the failed deletions: %v", js)
	}
	got, err := e.cat.LoadTable(e.ctx, e.id)
	if err != nil {
		t.Fatal(err)
	}
	live := capture(t, got, nil)

	rep, err = Run(e.ctx, e.cat, got, Options{Policy: pol, Commit: e.noWait})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Committed || len(rep.Plan.Remove) != 0 {
		t.Errorf("second run expired again: %+v", rep.Plan)
	}
	if js := journalFiles(t, e); len(js) != 0 {
		t.Errorf("journals left: %v", js)
	}
	for _, f := range dry.Files {
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
	before := tree(t, e.dir)
	dir := table.MetadataLocation(tbl.Metadata)
	live := tbl.Metadata.Snapshots[len(tbl.Metadata.Snapshots)-1].ManifestList
	// No end line: refused, nothing deleted.
	cut := dir + "/" + journalPrefix + "cut" + journalSuffix
	if err := fileio.WriteFile(e.ctx, tbl.IO, cut, []byte("0 1 "+live+"\n")); err != nil {
		t.Fatal(err)
	}
	_, err := Run(e.ctx, e.cat, tbl, Options{Commit: e.noWait})
	if err == nil || !strings.Contains(err.Error(), "cut short") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line about a journal cut short", err)
	}
	after := tree(t, e.dir)
	delete(after, strings.TrimPrefix(cut, "file://"))
	if !mapsEqual(before, after) {
		t.Error("files changed")
	}
	if err := tbl.IO.Remove(e.ctx, cut); err != nil {
		t.Fatal(err)
	}
	// A complete journal naming a live manifest list: kept, journal gone.
	whole := dir + "/" + journalPrefix + "whole" + journalSuffix
	if err := fileio.WriteFile(e.ctx, tbl.IO, whole, []byte("0 1 "+live+"\nend 1\n")); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(e.ctx, e.cat, tbl, Options{Commit: e.noWait})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(rep.Deletion.Deleted, live) {
		t.Error("deleted a live manifest list")
	}
	if !mapsEqual(before, tree(t, e.dir)) {
		t.Error("files changed")
	}
}
