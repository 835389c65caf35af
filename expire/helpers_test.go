package expire

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/refs"
)

// env is a test table, ns.t in a SQLite catalog (internal/testing/fixture).
type env struct{ *fixture.Table }

// newEnv creates table ns.t (format v3, unpartitioned) in a SQLite catalog.
func newEnv(t *testing.T) (*env, *catalog.Table) {
	t.Helper()
	c := fixture.NewSQLite(t)
	tb := c.Table(t, fixture.TableOptions{FormatVersion: 3})
	return &env{tb}, tb.Load(t)
}

// writeFile writes arbitrary bytes: expiry never reads data files, so
// their content only has to survive byte for byte.
func (e *env) writeFile(t *testing.T, tbl *catalog.Table, name string) (string, int64) {
	t.Helper()
	p := table.DataLocation(tbl.Metadata) + "/" + name
	data := []byte("content of " + name)
	if err := fileio.WriteFile(e.Ctx, tbl.IO, p, data); err != nil {
		t.Fatal(err)
	}
	return p, int64(len(data))
}

func (e *env) dataFile(t *testing.T, tbl *catalog.Table, name string) manifest.DataFile {
	p, n := e.writeFile(t, tbl, name+".parquet")
	return fixture.Listed(p, nil, 10, n)
}

// dvs returns DV entries for the data files, all in one Puffin file.
func (e *env) dvs(t *testing.T, tbl *catalog.Table, name string, data []string) []manifest.DataFile {
	t.Helper()
	p, n := e.writeFile(t, tbl, name+".puffin")
	var out []manifest.DataFile
	for i, d := range data {
		out = append(out, manifest.DataFile{Content: manifest.ContentPositionDeletes, FileFormat: "PUFFIN", FilePath: p,
			Partition: []any{}, RecordCount: 1, FileSizeInBytes: n, ReferencedDataFile: &d,
			ContentOffset: ptr(int64(4 + 10*i)), ContentSizeInBytes: ptr(int64(10))})
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func (e *env) ref(t *testing.T, tbl *catalog.Table, ch refs.Change) *catalog.Table {
	t.Helper()
	res, err := refs.Commit(e.Ctx, e.Cat, tbl, ch, e.Opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// randomHistory builds a history of appends, deletes and DVs (several in
// one Puffin file, some replaced) on main and branches, with tags,
// branch retention policies, a rollback that forks main, and snapshots a
// few milliseconds apart.
func (e *env) randomHistory(t *testing.T, tbl *catalog.Table, r *rand.Rand) *catalog.Table {
	t.Helper()
	n := 0
	name := func(p string) string { n++; return fmt.Sprintf("%s%03d", p, n) }
	tbl = e.Commit(t, tbl, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{e.dataFile(t, tbl, name("d")), e.dataFile(t, tbl, name("d"))}})
	for range 6 + r.IntN(10) {
		time.Sleep(2 * time.Millisecond) // distinct timestamps for the cutoffs
		branches := []string{spec.MainBranch}
		for nm, ref := range tbl.Metadata.Refs {
			if ref.Type == spec.RefTypeBranch && nm != spec.MainBranch {
				branches = append(branches, nm)
			}
		}
		slices.Sort(branches)
		br := branches[r.IntN(len(branches))]
		head, _ := tbl.Metadata.SnapshotByID(tbl.Metadata.Refs[br].SnapshotID)
		live, err := table.LiveFiles(e.Ctx, tbl.IO, head)
		if err != nil {
			t.Fatal(err)
		}
		hasDV := map[string]table.FileKey{}
		for _, d := range live.Deletes {
			hasDV[*d.Entry.DataFile.ReferencedDataFile] = d.Key()
		}
		ch := table.Change{Branch: br}
		switch op := r.IntN(10); {
		case op < 4 || len(live.Data) < 2:
			ch.Operation = spec.OperationAppend
			for range 1 + r.IntN(3) {
				ch.AddData = append(ch.AddData, e.dataFile(t, tbl, name("d")))
			}
		case op < 6:
			ch.Operation = spec.OperationDelete
			f := live.Data[r.IntN(len(live.Data))].Entry.DataFile.FilePath
			ch.Remove = append(ch.Remove, table.PathKey(f))
			if k, ok := hasDV[f]; ok {
				ch.Remove = append(ch.Remove, k)
			}
		case op < 8:
			// DVs for a few data files in one shared Puffin file; a data
			// file's old DV is replaced.
			ch.Operation = spec.OperationOverwrite
			var targets []string
			for _, d := range live.Data {
				if r.IntN(2) == 0 {
					targets = append(targets, d.Entry.DataFile.FilePath)
				}
			}
			if len(targets) == 0 {
				targets = append(targets, live.Data[0].Entry.DataFile.FilePath)
			}
			ch.AddDeletes = e.dvs(t, tbl, name("dv"), targets)
			for _, d := range targets {
				if k, ok := hasDV[d]; ok {
					ch.Remove = append(ch.Remove, k)
				}
			}
		case op == 8:
			nm := name("tag")
			rt := refs.Retention{}
			if r.IntN(2) == 0 {
				rt.MaxRefAgeMS = ptr(int64(1 + r.IntN(40)))
			}
			snap := tbl.Metadata.Snapshots[r.IntN(len(tbl.Metadata.Snapshots))].SnapshotID
			tbl = e.ref(t, tbl, refs.Create(spec.RefTypeTag, nm, &snap, rt))
			continue
		default:
			if r.IntN(3) == 0 && len(refs.Ancestors(tbl.Metadata, *tbl.Metadata.CurrentSnapshotID)) > 2 {
				anc := refs.Ancestors(tbl.Metadata, *tbl.Metadata.CurrentSnapshotID)
				tbl = e.ref(t, tbl, refs.Rollback(anc[1+r.IntN(len(anc)-1)].SnapshotID, false))
				continue
			}
			nm := name("branch")
			rt := refs.Retention{}
			if r.IntN(2) == 0 {
				rt.MinSnapshotsToKeep = ptr(1 + r.IntN(3))
			}
			if r.IntN(2) == 0 {
				rt.MaxSnapshotAgeMS = ptr(int64(1 + r.IntN(40)))
			}
			if r.IntN(3) == 0 {
				rt.MaxRefAgeMS = ptr(int64(1 + r.IntN(40)))
			}
			snap := tbl.Metadata.Snapshots[r.IntN(len(tbl.Metadata.Snapshots))].SnapshotID
			tbl = e.ref(t, tbl, refs.Create(spec.RefTypeBranch, nm, &snap, rt))
			continue
		}
		tbl = e.Commit(t, tbl, ch)
	}
	return tbl
}

// state is what readers of a table's snapshots depend on: per snapshot,
// its live entries; per file reachable from any snapshot, its bytes.
type state struct {
	live  map[int64][]string
	files map[string][32]byte
}

// capture reads every snapshot of tbl (or only ids) and hashes every file
// live in them, manifests and manifest lists included.
func capture(t *testing.T, tbl *catalog.Table, ids []int64) state {
	t.Helper()
	s := state{live: map[int64][]string{}, files: map[string][32]byte{}}
	if ids == nil {
		for _, sn := range tbl.Metadata.Snapshots {
			ids = append(ids, sn.SnapshotID)
		}
	}
	for _, id := range ids {
		sn, ok := tbl.Metadata.SnapshotByID(id)
		if !ok {
			t.Fatalf("no snapshot %d", id)
		}
		fs, err := table.LiveFiles(context.Background(), tbl.IO, sn)
		if err != nil {
			t.Fatalf("snapshot %d: %v", id, err)
		}
		var keys []string
		for _, f := range append(fs.Data, fs.Deletes...) {
			keys = append(keys, fmt.Sprintf("%s seq=%d", f.Key(), f.DataSequenceNumber()))
		}
		slices.Sort(keys)
		s.live[id] = keys
	}
	err := table.WalkReachable(context.Background(), tbl.IO, tbl.Metadata, ids, func(f table.ReachableFile) error {
		if !f.Live() {
			return nil
		}
		data, err := fileio.ReadFile(context.Background(), tbl.IO, f.Path)
		if err != nil {
			return fmt.Errorf("%s %s: %w", f.Kind, f.Path, err)
		}
		s.files[f.Path] = sha256.Sum256(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tree hashes every file under dir (catalog database excluded).
func tree(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, "catalog.db") || strings.Contains(p, "catalog.db-") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = sha256.Sum256(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// reportFiles is every file of rep's list; the report's list is closed
// with the test.
func reportFiles(t *testing.T, rep *Report) []File {
	t.Helper()
	t.Cleanup(func() { rep.Close() })
	var out []File
	if err := rep.Files.Each(func(f File) error { out = append(out, f); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// diffFiles is every file of d, in path order.
func diffFiles(d *diff) ([]File, error) {
	var out []File
	err := d.each(func(f File) error { out = append(out, f); return nil })
	return out, err
}
