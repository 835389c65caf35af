package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/expire"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/plan"
)

// hiveBackend is the test Hive Metastore (testenv.HiveMetastore), with a
// database of this test and a warehouse in a temp dir.
func hiveBackend(t *testing.T) backend {
	uri := testenv.Need(t, testenv.HiveMetastore, "a Hive Metastore (scripts/install-hms)")
	wh := "file://" + t.TempDir()
	return backend{
		cfg:    catalog.Config{Name: "hms", URI: uri, Warehouse: wh},
		goArgs: nil, // iceberg-go v0.7.0 has no Hive catalog
		ns:     uniqueName(t, "e2e_"),
		// The metastore stores a database location as Hadoop's Path
		// prints it: file:/dir, and new tables go under it.
		scheme: "file:/",
	}
}

// TestHiveCompactExpire: icectl compacts and expires a table in the Hive
// Metastore; the rows and every column's values read the same before and
// after, and the metastore points at icectl's last metadata file.
func TestHiveCompactExpire(t *testing.T) {
	t.Parallel()
	b := hiveBackend(t)
	cat := b.open(t)
	ctx := context.Background()
	const name = "hive_maint"
	w := newWriter(t, b, cat, name, 3)
	for i := range 4 {
		w.commit(t, []manifest.DataFile{w.data(t, mkRows("eu", span(int64(10*i), int64(10*i+10))...))})
	}
	us := w.data(t, mkRows("us", span(100, 110)...))
	w.commit(t, []manifest.DataFile{us})
	w.commit(t, nil, w.dv(t, us, 2, 5))
	rows, sum := icectlScan(t, b, cat, name, false)

	tbl, err := cat.LoadTable(ctx, w.tbl.Ident)
	if err != nil {
		t.Fatal(err)
	}
	opts := compact.Options{Plan: plan.Options{RewriteAll: true}, Commit: noWait()}
	p, err := compact.PlanTable(ctx, tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := compact.Execute(ctx, cat, tbl, p, opts)
	if err != nil || rep.Commits == 0 {
		t.Fatalf("compact: %v (%+v)", err, rep)
	}
	afterRows, afterSum := icectlScan(t, b, cat, name, false)
	if afterSum != sum || len(afterRows) != len(rows) {
		t.Fatalf("after compaction: %d rows %+v, before %d rows %+v", len(afterRows), afterSum, len(rows), sum)
	}

	tbl, err = cat.LoadTable(ctx, w.tbl.Ident)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(time.Hour)
	xr, err := expire.Run(ctx, cat, tbl, expire.Options{Policy: expire.Policy{Now: now, OlderThan: &now}, Commit: noWait()})
	if err != nil || !xr.Committed || xr.Deletion.Deleted == 0 {
		t.Fatalf("expire: %v (committed %v, deleted %d)", err, xr != nil && xr.Committed, xr.Deletion.Deleted)
	}
	finalRows, finalSum := icectlScan(t, b, cat, name, false)
	if finalSum != sum || len(finalRows) != len(rows) {
		t.Fatalf("after expire: %d rows %+v, before %d rows %+v", len(finalRows), finalSum, len(rows), sum)
	}
	got, err := cat.LoadTable(ctx, w.tbl.Ident)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.Metadata.Snapshots); n != 1 {
		t.Errorf("%d snapshots after expire, want 1", n)
	}
}

// TestHiveRefusal: an unreachable metastore and a port that is not a
// metastore's are refused with one line, exit non-zero, and nothing in
// the warehouse changes.
func TestHiveRefusal(t *testing.T) {
	t.Parallel()
	b := hiveBackend(t)
	cat := b.open(t)
	w := newWriter(t, b, cat, "refused", 2)
	w.commit(t, []manifest.DataFile{w.data(t, mkRows("eu", span(0, 10)...))})
	wh := strings.TrimPrefix(b.cfg.Warehouse, "file://")
	before := digestTree(t, wh)

	// A closed port, and a listener that answers garbage (not Thrift).
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	junk, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer junk.Close()
	go func() {
		for {
			c, err := junk.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
			c.Close()
		}
	}()
	bin := testenv.Icectl(t)
	table := b.ns + "." + "refused"
	for _, uri := range []string{"thrift://" + closedAddr, "thrift://" + junk.Addr().String()} {
		for _, args := range [][]string{
			{"compact", "--catalog-uri", uri, "--warehouse", b.cfg.Warehouse, table},
			{"expire", "--catalog-uri", uri, "--warehouse", b.cfg.Warehouse, "--older-than", "1s", table},
		} {
			out, errOut, code := testenv.Run(t, exec.Command(bin, args...))
			if code == 0 {
				t.Errorf("%v: exit 0, stdout %q", args, out)
			}
			if lines := strings.Split(strings.TrimSpace(errOut), "\n"); len(lines) != 1 || !strings.Contains(errOut, "metastore") {
				t.Errorf("%v: stderr %q, want one line naming the metastore", args, errOut)
			}
			if strings.Contains(errOut, "panic") {
				t.Errorf("%v: %s", args, errOut)
			}
		}
	}
	if after := digestTree(t, wh); !maps.Equal(after, before) {
		t.Errorf("the warehouse changed under refused commands")
	}
}

// TestHiveProcessesContend: three icectl processes compact one table in
// the Hive Metastore at once. Their claim commits ask the metastore for
// the table's lock together, so all but one wait for it (or lose the
// location check after it) and retry: one run compacts, each other either
// finds the claim held (exit 4, one line) or compacts after it was
// released; none ends "commit state unknown" or with a second line on
// stderr. The rows and every column's values read the same afterwards,
// and a later run commits at once (no lock left behind).
func TestHiveProcessesContend(t *testing.T) {
	t.Parallel()
	b := hiveBackend(t)
	cat := b.open(t)
	const name = "contend"
	w := newWriter(t, b, cat, name, 2)
	for i := range 4 {
		w.commit(t, []manifest.DataFile{w.data(t, mkRows("eu", span(int64(10*i), int64(10*i+10))...))})
	}
	rows, sum := icectlScan(t, b, cat, name, false)
	bin := testenv.Icectl(t)
	args := []string{"compact", "--rewrite-all", "--catalog-uri", b.cfg.URI, "--warehouse", b.cfg.Warehouse, b.ns + "." + name}
	type result struct {
		code   int
		stderr string
		err    error
	}
	const procs = 3
	results := make(chan result, procs)
	start := make(chan struct{})
	for range procs {
		go func() {
			<-start
			var errOut strings.Builder
			cmd := exec.Command(bin, args...)
			cmd.Stderr = &errOut
			err := cmd.Run()
			r := result{stderr: errOut.String()}
			var ee *exec.ExitError
			switch {
			case errors.As(err, &ee):
				r.code = ee.ExitCode()
			case err != nil:
				r.err = err
			}
			results <- r
		}()
	}
	close(start)
	compacted := 0
	var codes []int
	for range procs {
		r := <-results
		codes = append(codes, r.code)
		switch {
		case r.err != nil:
			t.Errorf("icectl compact: %v", r.err)
		case r.code == 0:
			compacted++
		case r.code == 4:
			if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 {
				t.Errorf("exit 4 with stderr %q, want one line", r.stderr)
			}
		default:
			t.Errorf("icectl compact: exit %d, stderr %q; want 0, or 4 for a held claim", r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "panic") {
			t.Errorf("stderr: %s", r.stderr)
		}
	}
	t.Logf("exit codes of the concurrent compactions: %v", codes)
	if compacted == 0 {
		t.Errorf("none of %d concurrent compactions committed", procs)
	}
	afterRows, afterSum := icectlScan(t, b, cat, name, false)
	if afterSum != sum || len(afterRows) != len(rows) {
		t.Fatalf("after concurrent compactions: %d rows %+v, before %d rows %+v", len(afterRows), afterSum, len(rows), sum)
	}
	if out, errOut, code := testenv.Run(t, exec.Command(bin, args...)); code != 0 {
		t.Errorf("a later compaction: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// digestTree maps every file under dir to its SHA-256.
func digestTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[p] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
