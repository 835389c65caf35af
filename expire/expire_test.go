package expire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/refs"
)

// Property: on random histories with branches, tags, retention policies,
// shared manifests and DVs in shared Puffin files, expiry with random
// options keeps every file a retained snapshot reaches byte for byte,
// every retained snapshot lists the same live files, it removes exactly
// what the plan says, the removed snapshots' files that no retained
// snapshot reaches are gone, and a second run with the same options does
// nothing.
func TestExpireProperty(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			e, tbl := newEnv(t)
			tbl = e.randomHistory(t, tbl, r)
			snaps := tbl.Metadata.Snapshots
			first, last := snaps[0].TimestampMS, snaps[len(snaps)-1].TimestampMS
			pol := Policy{Now: time.UnixMilli(last + int64(r.IntN(30)))}
			if r.IntN(4) > 0 {
				ot := time.UnixMilli(first + int64(r.IntN(int(last-first+2))))
				pol.OlderThan = &ot
			}
			if r.IntN(2) == 0 {
				pol.RetainLast = ptr(1 + r.IntN(3))
			}
			before := capture(t, tbl, nil)
			allBefore := reachableAll(t, tbl)

			rep, err := Run(e.Ctx, e.Cat, tbl, Options{Policy: pol, Commit: e.Opts, BatchSize: 3})
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Cat.LoadTable(e.Ctx, e.ID)
			if err != nil {
				t.Fatal(err)
			}
			var retained []int64
			for _, s := range got.Metadata.Snapshots {
				retained = append(retained, s.SnapshotID)
			}
			if !slices.Equal(sorted(retained), sorted(rep.Plan.RetainedIDs())) {
				t.Fatalf("retained %v, plan %v", retained, rep.Plan.RetainedIDs())
			}
			if main, ok := got.Metadata.Refs[spec.MainBranch]; !ok || main.SnapshotID != tbl.Metadata.Refs[spec.MainBranch].SnapshotID {
				t.Errorf("main moved or went: %v", got.Metadata.Refs)
			}
			for name, ref := range got.Metadata.Refs {
				if _, ok := got.Metadata.SnapshotByID(ref.SnapshotID); !ok {
					t.Errorf("ref %s points at removed snapshot %d", name, ref.SnapshotID)
				}
			}
			after := capture(t, got, retained)
			for _, id := range retained {
				if !slices.Equal(after.live[id], before.live[id]) {
					t.Errorf("snapshot %d reads differently:\n%v\n%v", id, after.live[id], before.live[id])
				}
			}
			for p, h := range after.files {
				if before.files[p] != h {
					t.Errorf("%s changed", p)
				}
			}
			// Everything the removed snapshots reached and no retained one
			// does is gone; everything else is still there.
			for p := range allBefore {
				_, live := after.files[p]
				_, statErr := os.Stat(strings.TrimPrefix(p, "file://"))
				exists := statErr == nil
				switch {
				case live && !exists:
					t.Errorf("%s is reachable from a retained snapshot but was deleted", p)
				case !live && exists && !stillReached(t, got, p):
					t.Errorf("%s is reachable from no retained snapshot but was kept", p)
				}
			}
			t.Logf("%d snapshots, %d removed, %d refs removed, %d files deleted", len(snaps), len(rep.Plan.Remove), len(rep.Plan.RemoveRefs), rep.Deletion.Deleted)
			if len(rep.Deletion.Failed) > 0 || len(rep.Deletion.Refused) > 0 {
				t.Errorf("deletion: %+v", rep.Deletion)
			}

			// Again with the same options: nothing to do.
			snapshot := tree(t, e.Cat.Dir)
			rep2, err := Run(e.Ctx, e.Cat, got, Options{Policy: pol, Commit: e.Opts})
			if err != nil {
				t.Fatal(err)
			}
			if rep2.Committed || len(rep2.Plan.Remove) > 0 || rep2.Files.Len() > 0 {
				t.Errorf("second run: committed %v, removed %d, files %d", rep2.Committed, len(rep2.Plan.Remove), rep2.Files.Len())
			}
			if !mapsEqual(snapshot, tree(t, e.Cat.Dir)) {
				t.Error("second run changed files")
			}
		})
	}
}

func sorted(ids []int64) []int64 { s := slices.Clone(ids); slices.Sort(s); return s }

func mapsEqual(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// reachableAll is every path reachable from any snapshot of tbl.
func reachableAll(t *testing.T, tbl *catalog.Table) map[string]bool {
	t.Helper()
	var ids []int64
	for _, s := range tbl.Metadata.Snapshots {
		ids = append(ids, s.SnapshotID)
	}
	out := map[string]bool{}
	if err := table.WalkReachable(t.Context(), tbl.IO, tbl.Metadata, ids, func(f table.ReachableFile) error {
		out[f.Path] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// stillReached reports whether a retained snapshot of tbl lists p at all
// (a DELETED entry is no reference, but a file listed only so may stay
// when no removed snapshot listed it).
func stillReached(t *testing.T, tbl *catalog.Table, p string) bool {
	all := reachableAll(t, tbl)
	return all[p]
}

// linearTable is a table with n appends on main, each adding a file, and
// a DV file shared by two data files in the middle.
func linearTable(t *testing.T, n int) (*env, *catalog.Table) {
	e, tbl := newEnv(t)
	var files []string
	for i := range n {
		time.Sleep(2 * time.Millisecond)
		d := e.dataFile(t, tbl, fmt.Sprint("lin", i))
		files = append(files, d.FilePath)
		tbl = e.Commit(t, tbl, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{d}})
		if i == n/2 {
			tbl = e.Commit(t, tbl, table.Change{Operation: spec.OperationOverwrite, AddDeletes: e.dvs(t, tbl, "shared", files[:2])})
		}
	}
	return e, tbl
}

func expireAllButLast(tbl *catalog.Table) Policy {
	snaps := tbl.Metadata.Snapshots
	ot := time.UnixMilli(snaps[len(snaps)-1].TimestampMS)
	return Policy{Now: ot.Add(time.Hour), OlderThan: &ot}
}

// Bad input: a missing manifest list of an old snapshot, a corrupt
// manifest of a retained one: a clear error, no commit, nothing deleted.
func TestExpireBadInputChangesNothing(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, tbl *catalog.Table) string
	}{
		{"missing manifest list", func(t *testing.T, tbl *catalog.Table) string {
			p := tbl.Metadata.Snapshots[1].ManifestList
			if err := os.Remove(strings.TrimPrefix(p, "file://")); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"corrupt manifest", func(t *testing.T, tbl *catalog.Table) string {
			mfs, err := table.ManifestFiles(t.Context(), tbl.IO, tbl.Metadata.CurrentSnapshot())
			if err != nil {
				t.Fatal(err)
			}
			p := mfs[len(mfs)-1].Path
			data, err := os.ReadFile(strings.TrimPrefix(p, "file://"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(strings.TrimPrefix(p, "file://"), data[:len(data)-30], 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, tbl := linearTable(t, 6)
			bad := c.damage(t, tbl)
			before := tree(t, e.Cat.Dir)
			_, err := Run(e.Ctx, e.Cat, tbl, Options{Policy: expireAllButLast(tbl), Commit: e.Opts})
			if err == nil || !strings.Contains(err.Error(), bad) {
				t.Fatalf("error %v, want one naming %s", err, bad)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			got, err2 := e.Cat.LoadTable(e.Ctx, e.ID)
			if err2 != nil {
				t.Fatal(err2)
			}
			if got.MetadataLocation != tbl.MetadataLocation {
				t.Errorf("committed %s after %v", got.MetadataLocation, err)
			}
			if !mapsEqual(before, tree(t, e.Cat.Dir)) {
				t.Error("files changed")
			}
		})
	}
}

// unknownCatalog commits, then reports the commit state as unknown.
type unknownCatalog struct{ catalog.Catalog }

func (u unknownCatalog) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	if _, err := u.Catalog.CommitTable(ctx, t, reqs, ups); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("injected: %w", catalog.ErrCommitStateUnknown)
}

// An unknown commit state deletes nothing (even though the commit landed);
// the next run then deletes the files of what it removes, and the dry run
// before it changes nothing.
func TestExpireUnknownCommitStateDeletesNothing(t *testing.T) {
	e, tbl := linearTable(t, 5)
	before := tree(t, e.Cat.Dir)
	pol := expireAllButLast(tbl)
	_, err := Run(e.Ctx, unknownCatalog{e.Cat}, tbl, Options{Policy: pol, Commit: e.Opts})
	if !errors.Is(err, catalog.ErrCommitStateUnknown) || !strings.Contains(err.Error(), "no file was deleted") {
		t.Fatalf("error %v", err)
	}
	after := tree(t, e.Cat.Dir)
	for p, h := range before {
		if after[p] != h {
			t.Errorf("%s deleted or changed after an unknown commit state", p)
		}
	}
}

// A dry run changes zero bytes and lists what a real run then deletes.
func TestExpireDryRun(t *testing.T) {
	e, tbl := linearTable(t, 6)
	tbl = e.ref(t, tbl, refs.Create(spec.RefTypeTag, "month-end", &tbl.Metadata.Snapshots[2].SnapshotID, refs.Retention{}))
	pol := expireAllButLast(tbl)
	before := tree(t, e.Cat.Dir)
	ro := *tbl
	ro.IO = fileio.ReadOnly(tbl.IO)
	dry, err := Run(e.Ctx, e.Cat, &ro, Options{Policy: pol, Commit: e.Opts, DryRun: true, CleanMetadataFiles: true})
	if err != nil {
		t.Fatal(err)
	}
	if !mapsEqual(before, tree(t, e.Cat.Dir)) {
		t.Fatal("dry run changed files")
	}
	if got, _ := e.Cat.LoadTable(e.Ctx, e.ID); got.MetadataLocation != tbl.MetadataLocation {
		t.Fatal("dry run committed")
	}
	if len(dry.Plan.Remove) == 0 || dry.Files.Len() == 0 {
		t.Fatalf("dry run plans nothing: %+v", dry.Plan)
	}
	for _, s := range dry.Plan.Remove {
		if s.SnapshotID == tbl.Metadata.Snapshots[2].SnapshotID {
			t.Error("the tagged snapshot is expired")
		}
	}
	rep, err := Run(e.Ctx, e.Cat, tbl, Options{Policy: pol, Commit: e.Opts})
	if err != nil {
		t.Fatal(err)
	}
	var dryPaths, paths []string
	for _, f := range reportFiles(t, dry) {
		if f.Kind != KindMetadataJSON {
			dryPaths = append(dryPaths, f.Path)
		}
	}
	for _, f := range reportFiles(t, rep) {
		paths = append(paths, f.Path)
		if f.Reason == "" {
			t.Errorf("%s has no reason", f.Path)
		}
	}
	if !slices.Equal(dryPaths, paths) || rep.Deletion.Deleted != len(paths) {
		t.Errorf("dry run listed %v, run deleted %d of %v", dryPaths, rep.Deletion.Deleted, paths)
	}
	for _, p := range paths {
		if _, err := os.Stat(strings.TrimPrefix(p, "file://")); err == nil {
			t.Errorf("%s reported deleted, still there", p)
		}
	}
	// The shared Puffin file is still used by the retained snapshots.
	for _, p := range paths {
		if strings.HasSuffix(p, "shared.puffin") {
			t.Errorf("deleted the shared Puffin file a retained DV points into")
		}
	}
}

func sortedStrings(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// gc.enabled=false refuses deletion before anything changes; --cleanup none
// still expires.
func TestExpireGCDisabled(t *testing.T) {
	e, tbl := linearTable(t, 4)
	res, err := e.Cat.CommitTable(e.Ctx, tbl, nil, []spec.Update{spec.SetProperties{Updates: map[string]string{PropGCEnabled: "false"}}})
	if err != nil {
		t.Fatal(err)
	}
	res.IO = tbl.IO
	tbl = res
	before := tree(t, e.Cat.Dir)
	_, err = Run(e.Ctx, e.Cat, tbl, Options{Policy: expireAllButLast(tbl), Commit: e.Opts})
	if !errors.Is(err, ErrGCDisabled) || !strings.Contains(err.Error(), "--cleanup none") {
		t.Fatalf("error %v", err)
	}
	rep, err := Run(e.Ctx, e.Cat, tbl, Options{Policy: expireAllButLast(tbl), Commit: e.Opts, Cleanup: CleanupNone})
	if err != nil || !rep.Committed || rep.Files.Len() > 0 {
		t.Fatalf("cleanup none: %v %+v", err, rep)
	}
	after := tree(t, e.Cat.Dir)
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s deleted with gc.enabled=false", p)
		}
	}
}

// TestExpireKeepsImportedFiles: a data file outside the table's location
// (the input of an add_files or a Hive migration) that only expired
// snapshots reference is kept and reported, and the run succeeds: no
// rerun would delete it, so failing would only fail every cron run.
func TestExpireKeepsImportedFiles(t *testing.T) {
	e, tbl := newEnv(t)
	imported := "file://" + filepath.Join(e.Cat.Dir, "hive", "part-0.parquet")
	if err := fileio.WriteFile(e.Ctx, tbl.IO, imported, []byte("imported")); err != nil {
		t.Fatal(err)
	}
	df := manifest.DataFile{Content: manifest.ContentData, FileFormat: "PARQUET", FilePath: imported, Partition: []any{},
		RecordCount: 10, FileSizeInBytes: 8}
	tbl = e.Commit(t, tbl, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{df}})
	time.Sleep(2 * time.Millisecond)
	own := e.dataFile(t, tbl, "own")
	tbl = e.Commit(t, tbl, table.Change{Operation: spec.OperationOverwrite, AddData: []manifest.DataFile{own}, Remove: []table.FileKey{table.PathKey(imported)}})
	var log bytes.Buffer
	rep, err := Run(e.Ctx, e.Cat, tbl, Options{Policy: expireAllButLast(tbl), Commit: e.Opts, Log: &log})
	if err != nil {
		t.Fatalf("expire: %v", err)
	}
	if !rep.Committed || len(rep.Deletion.Refused) != 1 || rep.Deletion.Refused[0].Path != imported {
		t.Fatalf("committed %v, refused %+v; want the imported file refused", rep.Committed, rep.Deletion.Refused)
	}
	if _, err := os.Stat(filepath.Join(e.Cat.Dir, "hive", "part-0.parquet")); err != nil {
		t.Fatalf("the imported file: %v", err)
	}
	if !strings.Contains(log.String(), "kept "+imported) {
		t.Errorf("the kept file is not reported:\n%s", log.String())
	}
}

// TestExpireReportsManifestListSizes: the manifest lists an expiry deletes
// are reported with their sizes (snapshot metadata has none; they were
// once reported as 0 bytes).
func TestExpireReportsManifestListSizes(t *testing.T) {
	e, tbl := linearTable(t, 4)
	rep, err := Run(e.Ctx, e.Cat, tbl, Options{Policy: expireAllButLast(tbl), Commit: e.Opts, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	lists := 0
	for _, f := range reportFiles(t, rep) {
		if f.Kind != table.KindManifestList {
			continue
		}
		lists++
		st, err := os.Stat(strings.TrimPrefix(f.Path, "file://"))
		if err != nil {
			t.Fatal(err)
		}
		if f.Size != st.Size() {
			t.Errorf("%s: size %d reported, %d on disk", f.Path, f.Size, st.Size())
		}
	}
	if lists == 0 {
		t.Fatal("no manifest list to expire")
	}
}

// Expiry under a claim (as `maintain` runs it, after a compaction moved
// main on): the snapshot the claim's tags point at is expired and its
// files deleted, and the claim survives on main's head, still renewable.
func TestExpireUnderClaim(t *testing.T) {
	e, tbl := linearTable(t, 2)
	c, err := claim.Take(e.Ctx, e.Cat, e.ID, claim.Options{Owner: "maintain"})
	if err != nil {
		t.Fatal(err)
	}
	claimed := tbl.Metadata.CurrentSnapshotID
	tbl, _ = e.Cat.LoadTable(e.Ctx, e.ID)
	for i := range 2 {
		time.Sleep(2 * time.Millisecond)
		tbl = e.Commit(t, tbl, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{e.dataFile(t, tbl, fmt.Sprint("after", i))}})
	}
	rep, err := Run(e.Ctx, e.Cat, tbl, Options{Policy: expireAllButLast(tbl), Commit: e.Opts})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Plan.RemovedIDs(), *claimed) {
		t.Fatalf("expired %v: the claim kept snapshot %d", rep.Plan.RemovedIDs(), *claimed)
	}
	got, _ := e.Cat.LoadTable(e.Ctx, e.ID)
	for name, r := range got.Metadata.Refs {
		if claim.IsRef(name) && r.SnapshotID != *got.Metadata.CurrentSnapshotID {
			t.Errorf("claim tag %s on %d, want main's head %d", name, r.SnapshotID, *got.Metadata.CurrentSnapshotID)
		}
	}
	if info, err := claim.Show(e.Ctx, e.Cat, e.ID); err != nil || info == nil || info.Token != c.Info().Token || !info.Until.Equal(c.Info().Until) {
		t.Fatalf("claim after expiry: %+v, %v; want the holder's, lease unchanged", info, err)
	}
	if err := c.Renew(e.Ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(e.Ctx); err != nil {
		t.Fatal(err)
	}
}
