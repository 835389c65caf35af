package hive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogtest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// The tests run against the real Hive Metastore scripts/test starts
// (scripts/install-hms), shared with other packages: every test works in
// databases of its own, named with a unique prefix.

// openHMS opens the test metastore with a fresh local warehouse.
func openHMS(t *testing.T, props map[string]string) *Catalog {
	t.Helper()
	uri := testenv.Need(t, testenv.HiveMetastore, "a Hive Metastore (scripts/install-hms)")
	c, err := Open(context.Background(), catalog.Config{Name: "hms", URI: uri, Warehouse: "file://" + t.TempDir(), Props: props})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var dbSeq atomic.Int64

// prefix returns a database-name prefix no other test or run uses.
func prefix(t *testing.T) string {
	return fmt.Sprintf("t%d_%d_", os.Getpid(), dbSeq.Add(1))
}

// prefixed is the catalog seen through a renaming of its databases: the
// suite's namespace "db" is database <prefix>db, and only the databases
// with the prefix are listed. It lets the suite, which wants an empty
// catalog, share one metastore; every call is the real catalog's.
type prefixed struct {
	*Catalog
	p string
}

func (c *prefixed) in(ns []string) []string {
	if len(ns) == 0 {
		return ns
	}
	return append([]string{c.p + ns[0]}, ns[1:]...)
}

func (c *prefixed) out(ns []string) []string {
	if len(ns) == 0 {
		return ns
	}
	return append([]string{strings.TrimPrefix(ns[0], c.p)}, ns[1:]...)
}

func (c *prefixed) inID(id catalog.Ident) catalog.Ident {
	return catalog.Ident{Namespace: c.in(id.Namespace), Name: id.Name}
}

func (c *prefixed) outTable(t *catalog.Table, err error) (*catalog.Table, error) {
	if t != nil {
		cp := *t
		cp.Ident = catalog.Ident{Namespace: c.out(t.Ident.Namespace), Name: t.Ident.Name}
		t = &cp
	}
	return t, err
}

func (c *prefixed) ListNamespaces(ctx context.Context, parent []string) ([][]string, error) {
	all, err := c.Catalog.ListNamespaces(ctx, c.in(parent))
	var out [][]string
	for _, ns := range all {
		if strings.HasPrefix(ns[0], c.p) {
			out = append(out, c.out(ns))
		}
	}
	return out, err
}

func (c *prefixed) CreateNamespace(ctx context.Context, ns []string, props map[string]string) error {
	return c.Catalog.CreateNamespace(ctx, c.in(ns), props)
}

func (c *prefixed) DropNamespace(ctx context.Context, ns []string) error {
	return c.Catalog.DropNamespace(ctx, c.in(ns))
}

func (c *prefixed) ListTables(ctx context.Context, ns []string) ([]catalog.Ident, error) {
	ids, err := c.Catalog.ListTables(ctx, c.in(ns))
	for i := range ids {
		ids[i].Namespace = c.out(ids[i].Namespace)
	}
	return ids, err
}

func (c *prefixed) LoadTable(ctx context.Context, id catalog.Ident) (*catalog.Table, error) {
	return c.outTable(c.Catalog.LoadTable(ctx, c.inID(id)))
}

func (c *prefixed) CreateTable(ctx context.Context, id catalog.Ident, md *spec.TableMetadata) (*catalog.Table, error) {
	return c.outTable(c.Catalog.CreateTable(ctx, c.inID(id), md))
}

func (c *prefixed) DropTable(ctx context.Context, id catalog.Ident) error {
	return c.Catalog.DropTable(ctx, c.inID(id))
}

func (c *prefixed) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	cp := *t
	cp.Ident = c.inID(t.Ident)
	return c.outTable(c.Catalog.CommitTable(ctx, &cp, reqs, ups))
}

func (c *prefixed) DefaultLocation(ctx context.Context, id catalog.Ident) (string, error) {
	return c.Catalog.DefaultLocation(ctx, c.inID(id))
}

// TestContract runs the shared catalog suite against the metastore, with
// the metastore lock (Java's default) and lock-free (the conditional
// alter of Hive 4, which the test metastore runs on PostgreSQL).
func TestContract(t *testing.T) {
	for _, mode := range []struct {
		name  string
		props map[string]string
	}{
		{"Locked", nil},
		{"LockFree", map[string]string{PropLockEnabled: "false"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			catalogtest.RunWith(t, catalogtest.Options{FlatNamespaces: true}, func(t *testing.T) catalog.Catalog {
				return &prefixed{Catalog: openHMS(t, mode.props), p: prefix(t)}
			})
		})
	}
}

// newRacers opens two catalogs on the metastore, as two processes would
// (each has its own connections and process-level locks), and a table in
// a database of this test.
func newRacers(t *testing.T, props map[string]string) (a, b *Catalog, id catalog.Ident) {
	t.Helper()
	a, b = openHMS(t, props), openHMS(t, props)
	id = catalog.Ident{Namespace: []string{prefix(t) + "race"}, Name: "t"}
	catalogtest.NewTable(t, a, id, nil)
	return a, b, id
}

// TestRaceDetected: a commit that lands between another writer's load and
// its swap is detected, the late writer gets ErrCommitConflict, its file
// is removed, and the first commit stands. Under the lock the other
// commit lands before the late writer takes the lock, and the check of
// the location under the lock catches it; lock-free it lands after that
// check, just before the alter, which only the metastore's conditional
// alter (expected_parameter_key) can refuse.
func TestRaceDetected(t *testing.T) {
	for _, mode := range []struct {
		name  string
		props map[string]string
	}{
		{"Locked", nil},
		{"LockFree", map[string]string{PropLockEnabled: "false"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			a, b, id := newRacers(t, mode.props)
			base, err := a.LoadTable(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			var bErr error
			race := func() { bErr = catalogtest.CommitWithRetry(ctx, b, id, 2) }
			if mode.props == nil {
				a.beforeLock = func() { a.beforeLock = nil; race() }
			} else {
				a.beforeSwap = func() { a.beforeSwap = nil; race() }
			}
			_, ups := catalogtest.AppendSnapshot(base.Metadata, 1)
			// No requirement: only the metastore's location check can catch it.
			_, err = a.CommitTable(ctx, base, nil, ups)
			if bErr != nil {
				t.Fatalf("the other writer's commit: %v", bErr)
			}
			if !errors.Is(err, catalog.ErrCommitConflict) {
				t.Fatalf("late commit: %v, want ErrCommitConflict", err)
			}
			got, err := b.LoadTable(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(got.Metadata.Snapshots); n != 1 || got.Metadata.CurrentSnapshot().SnapshotID != 2 {
				t.Errorf("after the race: %d snapshots, current %v; want only the first commit's (2)", n, got.Metadata.CurrentSnapshot())
			}
			if files := catalogtest.MetadataFiles(t, got); len(files) != 2 {
				t.Errorf("metadata files %v: want the first and the winner's (the loser's removed)", files)
			}
		})
	}
}

// TestLockExcludes: while one writer holds the metastore lock, another
// writer's commit waits and, past iceberg.hive.lock-timeout-ms, gives up
// with ErrCommitConflict, changing nothing; the holder's commit lands.
func TestLockExcludes(t *testing.T) {
	ctx := context.Background()
	a, b, id := newRacers(t, map[string]string{PropLockTimeoutMS: "1500", PropLockCheckMaxMS: "200"})
	var bErr error
	var bFiles int
	a.beforeSwap = func() {
		a.beforeSwap = nil
		tbl, err := b.LoadTable(ctx, id)
		if err != nil {
			bErr = err
			return
		}
		_, ups := catalogtest.AppendSnapshot(tbl.Metadata, 2)
		_, bErr = b.CommitTable(ctx, tbl, nil, ups)
		bFiles = len(catalogtest.MetadataFiles(t, tbl))
	}
	tbl, err := a.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	_, ups := catalogtest.AppendSnapshot(tbl.Metadata, 1)
	next, err := a.CommitTable(ctx, tbl, nil, ups)
	if err != nil {
		t.Fatalf("lock holder's commit: %v", err)
	}
	if !errors.Is(bErr, catalog.ErrCommitConflict) || !strings.Contains(bErr.Error(), "lock") {
		t.Fatalf("commit while another holds the lock: %v, want a lock timeout (ErrCommitConflict)", bErr)
	}
	if bFiles != 2 {
		t.Errorf("the refused commit left %d metadata files, want 2 (the first and the lock holder's)", bFiles)
	}
	got, err := b.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.MetadataLocation != next.MetadataLocation || got.Metadata.CurrentSnapshot().SnapshotID != 1 {
		t.Errorf("table at %s (snapshot %v), want the lock holder's %s", got.MetadataLocation, got.Metadata.CurrentSnapshot(), next.MetadataLocation)
	}
}

func TestParseAddrs(t *testing.T) {
	for in, want := range map[string]string{
		"thrift://h:9083":            "[h:9083]",
		"thrift://h":                 "[h:9083]",
		"thrift://a:1, thrift://b:2": "[a:1 b:2]",
		"thrift://[::1]:9083":        "[[::1]:9083]",
	} {
		got, err := Addrs(in)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("Addrs(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"http://h:9083", "thrift://", "thrift://u:p@h:9083", "thrift://h:9083/db"} {
		if _, err := Addrs(bad); err == nil {
			t.Errorf("Addrs(%q): no error", bad)
		}
	}
}

// TestLockContention: two clients of the metastore (two catalogs, each
// with its own connections, as two processes have) commit to one table
// at once, several writers each, under the metastore lock: their lock
// requests meet in the metastore, which grants one at a time while the
// others wait (check_lock) or time out and retry. Every commit lands,
// once, in one chain.
func TestLockContention(t *testing.T) {
	ctx := context.Background()
	props := map[string]string{PropLockCheckMinMS: "20", PropLockCheckMaxMS: "200"}
	a, b, id := newRacers(t, props)
	var waits atomic.Int64
	a.lockWaiting = func() { waits.Add(1) }
	b.lockWaiting = a.lockWaiting
	const perClient = 4
	errs := make(chan error, 2*perClient)
	var ids []int64
	for i := range 2 * perClient {
		c := a
		if i%2 == 1 {
			c = b
		}
		sid := int64(100 + i)
		ids = append(ids, sid)
		go func() { errs <- catalogtest.CommitWithRetry(ctx, c, id, sid) }()
	}
	for range 2 * perClient {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	catalogtest.CheckAllCommitted(t, a, id, ids)
	t.Logf("%d lock requests waited for the other client's lock", waits.Load())
}
