package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/iceberg/table/tabletest"
	"github.com/icectl/icectl/refs"
)

// Moving a table: rewrite-table-path stages its metadata with a new
// prefix and lists the files to copy; copying every pair and registering
// the newest metadata file in another catalog (or namespace) gives a
// table iceberg-go reads exactly as the original, at every snapshot, with
// v3 lineage, though the original's files are gone (SQLite) or nothing of
// it is referenced (REST). Bad input writes and registers nothing.

func TestMoveTableSQLite(t *testing.T) {
	t.Parallel()
	moveTable(t, sqliteBackend)
}

func TestMoveTableREST(t *testing.T) {
	t.Parallel()
	moveTable(t, restBackend)
}

func moveTable(t *testing.T, mk func(*testing.T) backend) {
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			readerBin(t)
			ctx := context.Background()
			b := mk(t)
			cat := b.open(t)
			name := fmt.Sprintf("move_v%d", v)
			w := buildMoveTable(t, b, cat, name, v)
			src := w.tbl.Metadata.Location
			before := goScanTable(t, b, name, v >= 3)
			snaps := map[int64]goScan{}
			for _, s := range w.tbl.Metadata.Snapshots {
				snaps[s.SnapshotID] = scanSnapshot(t, b, name, s.SnapshotID)
			}
			dst := moveTarget(t, b, name)
			stage := filepath.Join(t.TempDir(), "stage")
			ident := b.ns + "." + name
			loc := w.reload(t).MetadataLocation

			// Bad input: nothing written, nothing changed.
			if _, stderr, code := runICECTLOn(t, b, "rewrite-table-path", ident, "--from", src+"x", "--to", dst, "--stage", stage); code != 1 || !strings.Contains(stderr, "does not start with") {
				t.Errorf("a prefix that matches nothing: exit %d: %s", code, stderr)
			}
			busy := t.TempDir()
			if err := os.WriteFile(filepath.Join(busy, "x"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, stderr, code := runICECTLOn(t, b, "rewrite-table-path", ident, "--from", src, "--to", dst, "--stage", busy); code != 1 || !strings.Contains(stderr, "not empty") {
				t.Errorf("a staging directory that is not empty: exit %d: %s", code, stderr)
			}
			out, stderr, code := runICECTLOn(t, b, "rewrite-table-path", ident, "--from", src, "--to", dst, "--stage", stage, "--dry-run", "--output", "json")
			if code != 0 {
				t.Fatalf("dry run: exit %d: %s", code, stderr)
			}
			var dry struct {
				FilesToCopy int `json:"files_to_copy"`
				FileList    []struct {
					Source, Target string
				} `json:"file_list"`
			}
			if err := json.Unmarshal([]byte(out), &dry); err != nil || dry.FilesToCopy == 0 || len(dry.FileList) != dry.FilesToCopy {
				t.Fatalf("dry run output %s (%v)", out, err)
			}
			if _, err := os.Stat(stage); !os.IsNotExist(err) {
				t.Fatalf("the dry run or a refused run wrote the staging directory (%v)", err)
			}
			if w.reload(t).MetadataLocation != loc {
				t.Fatal("rewrite-table-path changed the table")
			}

			out, stderr, code = runICECTLOn(t, b, "rewrite-table-path", ident, "--from", src, "--to", dst, "--stage", stage, "--output", "json")
			if code != 0 {
				t.Fatalf("rewrite-table-path: exit %d: %s", code, stderr)
			}
			var res struct {
				LatestVersion    string `json:"latest_version"`
				FileListLocation string `json:"file_list_location"`
				Manifests        int    `json:"rewritten_manifest_file_paths_count"`
				Deletes          int    `json:"rewritten_delete_file_paths_count"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil || res.Manifests == 0 || res.Deletes == 0 {
				t.Fatalf("output %s (%v)", out, err)
			}
			if want := loc[strings.LastIndex(loc, "/")+1:]; res.LatestVersion != want {
				t.Errorf("latest_version %s, want %s", res.LatestVersion, want)
			}
			lines := copyFileList(t, w.tbl.IO, res.FileListLocation)
			if len(lines) != dry.FilesToCopy {
				t.Errorf("file list has %d pairs, the dry run counted %d", len(lines), dry.FilesToCopy)
			}
			for _, l := range lines {
				if !strings.HasPrefix(l[1], dst+"/") {
					t.Errorf("target %s is not under %s", l[1], dst)
				}
			}

			// Register the copy elsewhere and read it there.
			b2 := mk(t)
			if b2.ns == b.ns {
				b2.ns += "_moved"
			}
			cat2 := b2.open(t)
			ident2 := b2.ns + "." + name
			newest := dst + "/metadata/" + res.LatestVersion
			// The namespace is missing: the refusal names the command
			// that creates it.
			if _, stderr, code := runICECTLOn(t, b2, "table", "register", ident2, newest); code != 1 || !strings.Contains(stderr, "icectl namespace create "+b2.ns+"\n") {
				t.Errorf("register into a missing namespace: exit %d: %s", code, stderr)
			}
			if _, stderr, code := runICECTLOn(t, b2, "namespace", "create", b2.ns); code != 0 {
				t.Fatalf("namespace create: exit %d: %s", code, stderr)
			}
			older := w.tbl.Metadata.MetadataLog[len(w.tbl.Metadata.MetadataLog)-1].MetadataFile
			older = dst + "/metadata/" + older[strings.LastIndex(older, "/")+1:]
			if _, stderr, code := runICECTLOn(t, b2, "table", "register", ident2, older); code != 1 || !strings.Contains(stderr, "not the newest") {
				t.Errorf("register an older metadata file: exit %d: %s", code, stderr)
			}
			if _, stderr, code := runICECTLOn(t, b2, "table", "register", ident2, newest, "--dry-run"); code != 0 {
				t.Fatalf("register --dry-run: exit %d: %s", code, stderr)
			}
			if _, err := cat2.LoadTable(ctx, catalog.Ident{Namespace: []string{b2.ns}, Name: name}); err == nil {
				t.Fatal("a refused or dry-run register registered the table")
			}
			if _, stderr, code := runICECTLOn(t, b2, "table", "register", ident2, newest); code != 0 {
				t.Fatalf("register: exit %d: %s", code, stderr)
			}
			if _, stderr, code := runICECTLOn(t, b2, "table", "register", ident2, newest); code != 1 || !strings.Contains(stderr, "exists") {
				t.Errorf("register over an existing table: exit %d: %s", code, stderr)
			}
			moved, err := cat2.LoadTable(ctx, catalog.Ident{Namespace: []string{b2.ns}, Name: name})
			if err != nil {
				t.Fatal(err)
			}
			if moved.Metadata.Location != dst || moved.Metadata.TableUUID != w.tbl.Metadata.TableUUID {
				t.Errorf("moved table at %s (uuid %s)", moved.Metadata.Location, moved.Metadata.TableUUID)
			}
			if b.scheme == "file://" {
				// The original's files are gone: every read below is of
				// the copy.
				if err := os.RemoveAll(strings.TrimPrefix(src, "file://")); err != nil {
					t.Fatal(err)
				}
			}
			checkNoOldPaths(t, moved, src)
			if missing, err := tabletest.MissingReachable(ctx, moved.IO, moved.Metadata); err != nil || len(missing) > 0 {
				t.Fatalf("moved table misses %v (%v)", missing, err)
			}
			after := goScanTable(t, b2, name, v >= 3)
			if after.Checksum != before.Checksum || after.RowCount != before.RowCount {
				t.Errorf("moved table reads %d rows (%s), the original %d (%s)", after.RowCount, after.Checksum, before.RowCount, before.Checksum)
			}
			rows, sum := icectlScan(t, b2, cat2, name, false)
			agree(t, goScanTable(t, b2, name, false), rows, sum)
			for id, g := range snaps {
				if got := scanSnapshot(t, b2, name, id); got.Checksum != g.Checksum {
					t.Errorf("snapshot %d of the moved table reads %s, the original %s", id, got.Checksum, g.Checksum)
				}
			}
		})
	}
}

// buildMoveTable is a table with every kind of file that holds or is
// named by a path: data in two partitions, position deletes (v2: a
// position-delete file; v3: DVs), equality deletes, an overwrite that
// removes a file, a tag, and metadata files in the log.
func buildMoveTable(t *testing.T, b backend, cat catalog.Catalog, name string, v int) *writer {
	t.Helper()
	w := newWriter(t, b, cat, name, v)
	d1 := w.data(t, mkRows("eu", span(0, 20)...))
	d2 := w.data(t, mkRows("us", span(20, 40)...))
	w.commit(t, []manifest.DataFile{d1, d2})
	if v >= 3 {
		w.commit(t, nil, w.dv(t, d1, 1, 3, 5), w.dv(t, d2, 0))
	} else {
		// Unsorted, as iceberg-go writes them: the move writes them
		// sorted.
		w.commit(t, nil, w.unsortedPositionDeletes(t, []any{"eu"}, d1.FilePath, 5, 1, 3))
	}
	tagged := *w.tbl.Metadata.CurrentSnapshotID
	w.commit(t, nil, w.equalityDeletes(t, []any{"us"}, 25, 26))
	d3 := w.data(t, mkRows("eu", span(40, 50)...))
	w.commit(t, []manifest.DataFile{d3})
	d4 := w.data(t, mkRows("us", span(50, 55)...))
	tbl, _, err := table.CommitChange(w.ctx, cat, w.tbl, table.Change{Operation: spec.OperationOverwrite,
		AddData: []manifest.DataFile{d4}, Remove: []table.FileKey{table.PathKey(d3.FilePath)}}, w.opts)
	if err != nil {
		t.Fatal(err)
	}
	if w.tbl, err = refs.Commit(w.ctx, cat, tbl, refs.Create(spec.RefTypeTag, "before-eq", &tagged, refs.Retention{}), w.opts); err != nil {
		t.Fatal(err)
	}
	return w
}

// moveTarget is a new place for table name of b: on the same S3 bucket
// or in a new local directory.
func moveTarget(t *testing.T, b backend, name string) string {
	if b.scheme == "s3://" {
		bucket, _, _ := strings.Cut(strings.TrimPrefix(b.cfg.Warehouse, "s3://"), "/")
		return "s3://" + bucket + "/" + uniqueName(t, "moved-") + "/" + name
	}
	return "file://" + filepath.Join(t.TempDir(), "moved", name)
}

// copyFileList copies every source,target pair of the file list (local
// paths or URIs of the table's storage) and returns the pairs.
func copyFileList(t *testing.T, tableIO fileio.FileIO, list string) [][2]string {
	t.Helper()
	ctx := context.Background()
	local := fileio.NewLocal()
	ioFor := func(p string) fileio.FileIO {
		if strings.HasPrefix(p, "s3://") {
			return tableIO
		}
		return local
	}
	data, err := os.ReadFile(strings.TrimPrefix(list, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		src, dst, ok := strings.Cut(line, ",")
		if !ok {
			t.Fatalf("file list line %q", line)
		}
		b, err := fileio.ReadFile(ctx, ioFor(src), src)
		if err != nil {
			t.Fatal(err)
		}
		if err := fileio.WriteFile(ctx, ioFor(dst), dst, b); err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]string{src, dst})
	}
	return out
}

// checkNoOldPaths fails for any path of the moved table's metadata,
// manifests or delete files' manifest entries that still starts with
// the old location.
func checkNoOldPaths(t *testing.T, tbl *catalog.Table, old string) {
	t.Helper()
	ctx := context.Background()
	md := tbl.Metadata
	var paths []string
	paths = append(paths, md.Location)
	for _, e := range md.MetadataLog {
		paths = append(paths, e.MetadataFile)
	}
	for i := range md.Snapshots {
		s := &md.Snapshots[i]
		paths = append(paths, s.ManifestList)
		mfs, err := table.ManifestFiles(ctx, tbl.IO, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			paths = append(paths, mf.Path)
			err := table.ReadManifest(ctx, tbl.IO, mf, true, func(e table.FileEntry) error {
				paths = append(paths, e.Entry.DataFile.FilePath)
				if r := e.Entry.DataFile.ReferencedDataFile; r != nil {
					paths = append(paths, *r)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range slices.Compact(slices.Sorted(slices.Values(paths))) {
		if strings.HasPrefix(p, old+"/") || p == old {
			t.Errorf("moved table still names %s", p)
		}
	}
}

// TestMoveTableIncrementalSQLite: a full copy, then commits on the
// source, then an incremental copy after the first copy's newest version
// (--start-version): the target registered from the second copy reads
// as the source does, and the second file list names no data file the
// first copy already moved. --end-version copies an older version.
func TestMoveTableIncrementalSQLite(t *testing.T) {
	t.Parallel()
	readerBin(t)
	ctx := context.Background()
	b := sqliteBackend(t)
	cat := b.open(t)
	const name = "incr"
	ident := b.ns + "." + name
	w := buildMoveTable(t, b, cat, name, 3)
	src := w.tbl.Metadata.Location
	dst := "file://" + filepath.Join(t.TempDir(), "moved", name)
	rewrite := func(stage string, flags ...string) (latest string, pairs [][2]string) {
		t.Helper()
		out, stderr, code := runICECTLOn(t, b, append([]string{"rewrite-table-path", ident, "--from", src, "--to", dst, "--stage", stage, "--output", "json"}, flags...)...)
		if code != 0 {
			t.Fatalf("rewrite-table-path %v: exit %d: %s", flags, code, stderr)
		}
		var res struct {
			LatestVersion    string `json:"latest_version"`
			FileListLocation string `json:"file_list_location"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		return res.LatestVersion, copyFileList(t, w.tbl.IO, res.FileListLocation)
	}
	first, _ := rewrite(filepath.Join(t.TempDir(), "s1"))
	old := w.reload(t)
	oldData := map[string]bool{}
	if err := table.WalkEntries(ctx, old.IO, old.Metadata.CurrentSnapshot(), table.WalkOptions{}, func(e table.FileEntry) error {
		oldData[e.Entry.DataFile.FilePath] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	d := w.data(t, mkRows("eu", span(900, 910)...))
	w.commit(t, []manifest.DataFile{d})
	w.commit(t, nil, w.dv(t, d, 2))
	want := goScanTable(t, b, name, true)
	latest, pairs := rewrite(filepath.Join(t.TempDir(), "s2"), "--start-version", first)
	for _, p := range pairs {
		if oldData[p[0]] {
			t.Errorf("the incremental copy lists %s, which the first copy moved", p[0])
		}
	}
	if !slices.ContainsFunc(pairs, func(p [2]string) bool { return p[0] == d.FilePath }) {
		t.Errorf("the incremental copy does not list the new data file %s", d.FilePath)
	}
	b2 := sqliteBackend(t)
	cat2 := b2.open(t)
	if err := cat2.CreateNamespace(ctx, []string{b2.ns}, nil); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runICECTLOn(t, b2, "table", "register", b2.ns+"."+name, dst+"/metadata/"+latest); code != 0 {
		t.Fatalf("register: %s", stderr)
	}
	if got := goScanTable(t, b2, name, true); got.Checksum != want.Checksum || got.RowCount != want.RowCount {
		t.Errorf("incrementally moved table reads %d rows (%s), the source %d (%s)", got.RowCount, got.Checksum, want.RowCount, want.Checksum)
	}

	// --end-version: the copy is of that version; an unknown one is refused.
	if latest, _ := rewrite(filepath.Join(t.TempDir(), "s3"), "--end-version", first); latest != first {
		t.Errorf("--end-version %s copied %s", first, latest)
	}
	if _, stderr, code := runICECTLOn(t, b, "rewrite-table-path", ident, "--from", src, "--to", dst, "--stage", t.TempDir(), "--start-version", "v99.metadata.json"); code != 1 || !strings.Contains(stderr, "v99.metadata.json") {
		t.Errorf("unknown start version: exit %d: %s", code, stderr)
	}
}
