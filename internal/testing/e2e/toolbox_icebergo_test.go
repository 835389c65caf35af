package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
)

// The toolbox verbs on tables iceberg-go wrote (write-fixture: three
// appends, then merge-on-read deletes; position-delete files in v2,
// deletion vectors in v3): branches moved by fast-forward and rollback
// --branch, iceberg-go's appends cherrypicked onto a main rolled back
// before them, main fast-forwarded back to the original head, position
// deletes rewritten (v2), and the table moved by rewrite-table-path and
// registered by table register. iceberg-go reads main after each as
// expected: the rows main had plus the picked ones, on v3 the rows main
// had with their row ids and the picked ones with new distinct ids; the
// original head with its lineage exactly; the moved table at every
// snapshot as the original.

func TestToolboxIcebergGoTableSQLite(t *testing.T) {
	t.Parallel()
	toolboxIcebergGoTable(t, sqliteBackend)
}

func TestToolboxIcebergGoTableREST(t *testing.T) {
	t.Parallel()
	toolboxIcebergGoTable(t, restBackend)
}

func toolboxIcebergGoTable(t *testing.T, mk func(*testing.T) backend) {
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			readerBin(t)
			ctx := context.Background()
			b := mk(t)
			name := fmt.Sprintf("igo_toolbox_v%d", v)
			ident := b.ns + "." + name
			icebergRead(t, append([]string{"write-fixture", "--table", ident, "--format-version", strconv.Itoa(v),
				"--rows", "60", "--delete-every", "7", "--partitioned"}, b.goArgs...)...)
			cat := b.open(t)
			id := catalog.Ident{Namespace: []string{b.ns}, Name: name}
			load := func() *catalog.Table {
				t.Helper()
				tbl, err := cat.LoadTable(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				return tbl
			}
			md := load().Metadata
			var s []int64
			for _, sn := range md.Snapshots {
				s = append(s, sn.SnapshotID)
			}
			if len(s) != 4 || md.Snapshots[2].Summary["operation"] != "append" || md.Snapshots[3].Summary["operation"] != "delete" {
				t.Fatalf("iceberg-go's fixture has snapshots %+v, want three appends and a delete", md.Snapshots)
			}
			lineage := v >= 3
			original := goScanTable(t, b, name, lineage)
			run := func(args ...string) {
				t.Helper()
				if out, stderr, code := runICECTLOn(t, b, args...); code != 0 {
					t.Fatalf("icectl %s: exit %d: %s%s", strings.Join(args, " "), code, out, stderr)
				}
			}
			refAt := func(ref string) int64 {
				t.Helper()
				r, ok := load().Metadata.Refs[ref]
				if !ok {
					t.Fatalf("no ref %s", ref)
				}
				return r.SnapshotID
			}
			sid := func(i int) string { return strconv.FormatInt(s[i], 10) }

			// Branches over iceberg-go's snapshots.
			run("branch", "create", ident, "orig")
			run("branch", "create", ident, "audit", "--snapshot", sid(0))
			run("fast-forward", ident, "--branch", "audit", "--to", "main")
			if got := refAt("audit"); got != s[3] {
				t.Errorf("audit at %d after the fast-forward, want main's head %d", got, s[3])
			}
			run("rollback", ident, "--branch", "audit", "--to-snapshot", sid(1))
			if got := refAt("audit"); got != s[1] || refAt("main") != s[3] {
				t.Errorf("after rollback --branch audit: audit at %d (want %d), main at %d (want %d)", got, s[1], refAt("main"), s[3])
			}

			// Main back to the first append; iceberg-go's third, then
			// second append picked onto it.
			run("rollback", ident, "--to-snapshot", sid(0))
			scans := map[int]goScan{}
			for _, i := range []int{0, 1, 2} {
				scans[i] = scanSnapshot(t, b, name, s[i])
			}
			before := goScanTable(t, b, name, lineage)
			run("cherrypick", ident, "--snapshot", sid(2))
			checkMainReads(t, b, cat, name, before, minus(scans[2].Rows, scans[1].Rows), v)
			before = goScanTable(t, b, name, lineage)
			run("cherrypick", ident, "--snapshot", sid(1))
			checkMainReads(t, b, cat, name, before, minus(scans[1].Rows, scans[0].Rows), v)
			if g := goScanTable(t, b, name, false); g.Checksum != scans[2].Checksum {
				t.Errorf("main after picking both appends reads %s, iceberg-go's third append %s", g.Checksum, scans[2].Checksum)
			}

			// Back to the original head: exactly the rows and lineage
			// iceberg-go wrote.
			run("rollback", ident, "--to-snapshot", sid(0))
			run("fast-forward", ident, "--branch", "main", "--to", "orig")
			if g := goScanTable(t, b, name, lineage); g.Checksum != original.Checksum {
				t.Errorf("main fast-forwarded to the original head reads %d rows (%s), iceberg-go wrote %d (%s)", g.RowCount, g.Checksum, original.RowCount, original.Checksum)
			}

			if v == 2 {
				// iceberg-go deletes again: a second position-delete file
				// in the partitions it deleted from.
				var ids []string
				for i := 1; i < 60; i += 3 {
					if i%7 != 0 {
						ids = append(ids, strconv.Itoa(i))
					}
				}
				want := icebergRead(t, append([]string{"append-delete", "--table", ident, "--delete-ids", strings.Join(ids, ",")}, b.goArgs...)...)
				out, stderr, code := runICECTLOn(t, b, "rewrite-position-deletes", ident, "--min-input-files", "2", "--output", "json")
				var r posRewriteResult
				if code != 0 || json.Unmarshal([]byte(out), &r) != nil || !r.Committed || r.Removed <= r.Added {
					t.Fatalf("rewrite-position-deletes: exit %d: %s%s", code, out, stderr)
				}
				if g := goScanTable(t, b, name, false); g.Checksum != want.Checksum || g.RowCount != want.RowCount {
					t.Errorf("after rewrite-position-deletes iceberg-go reads %d rows (%s), before %d (%s)", g.RowCount, g.Checksum, want.RowCount, want.Checksum)
				}
			}

			moveAndCompare(t, b, mk, cat, name, lineage)
		})
	}
}

// posRewriteResult is the part of rewrite-position-deletes' JSON the
// tests check.
type posRewriteResult struct {
	Committed bool `json:"committed"`
	Removed   int  `json:"delete_files_removed"`
	Added     int  `json:"delete_files_added"`
}

// moveAndCompare moves b's table name with rewrite-table-path, copies the
// file list and registers the newest metadata file in another namespace:
// iceberg-go reads every snapshot of the copy as of the original (with
// lineage when asked).
func moveAndCompare(t *testing.T, b backend, mk func(*testing.T) backend, cat catalog.Catalog, name string, lineage bool) {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, catalog.Ident{Namespace: []string{b.ns}, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	scanAt := func(b backend, id int64) goScan {
		t.Helper()
		args := append([]string{"scan", "--table", b.ns + "." + name, "--snapshot", strconv.FormatInt(id, 10)}, b.goArgs...)
		if lineage {
			args = append(args, "--lineage")
		}
		return icebergRead(t, args...)
	}
	before := map[int64]goScan{}
	for _, s := range tbl.Metadata.Snapshots {
		before[s.SnapshotID] = scanAt(b, s.SnapshotID)
	}
	src := tbl.Metadata.Location
	dst := moveTarget(t, b, name)
	stage := filepath.Join(t.TempDir(), "stage")
	out, stderr, code := runICECTLOn(t, b, "rewrite-table-path", b.ns+"."+name, "--from", src, "--to", dst, "--stage", stage, "--output", "json")
	if code != 0 {
		t.Fatalf("rewrite-table-path: exit %d: %s", code, stderr)
	}
	var res struct {
		LatestVersion    string `json:"latest_version"`
		FileListLocation string `json:"file_list_location"`
		Deletes          int    `json:"rewritten_delete_file_paths_count"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Deletes == 0 {
		t.Fatalf("rewrite-table-path output %s (%v)", out, err)
	}
	copyFileList(t, tbl.IO, res.FileListLocation)
	b2 := mk(t)
	if b2.ns == b.ns {
		b2.ns += "_moved"
	}
	cat2 := b2.open(t)
	if err := cat2.CreateNamespace(ctx, []string{b2.ns}, nil); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runICECTLOn(t, b2, "table", "register", b2.ns+"."+name, dst+"/metadata/"+res.LatestVersion); code != 0 {
		t.Fatalf("table register: exit %d: %s", code, stderr)
	}
	moved, err := cat2.LoadTable(ctx, catalog.Ident{Namespace: []string{b2.ns}, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	checkNoOldPaths(t, moved, src)
	if b.scheme == "file://" {
		// Every read below is of the copy.
		if err := os.RemoveAll(strings.TrimPrefix(src, "file://")); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range before {
		if got := scanAt(b2, id); got.Checksum != want.Checksum || got.RowCount != want.RowCount {
			t.Errorf("snapshot %d of the moved table reads %d rows (%s), of the original %d (%s)", id, got.RowCount, got.Checksum, want.RowCount, want.Checksum)
		}
	}
}
