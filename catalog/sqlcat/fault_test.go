package sqlcat

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogtest"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/internal/testing/lostconn"
	"github.com/icectl/icectl/internal/testing/testenv"
)

func TestCommitStateUnknownKeepsFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	armed := &atomic.Bool{}
	createSQLite(t, filepath.Join(dir, "c.db"), "").Close()
	db := sql.OpenDB(lostconn.Connector{DSN: "file:" + filepath.Join(dir, "c.db") + "?_pragma=busy_timeout(5000)", Armed: armed})
	c, err := New(ctx, db, SQLite, catalog.Config{Name: "test", Warehouse: "file://" + dir + "/wh"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id := catalog.Ident{Namespace: []string{"db"}, Name: "t"}
	tbl := catalogtest.NewTable(t, c, id, nil)
	before := catalogtest.MetadataFiles(t, tbl)

	armed.Store(true)
	reqs, ups := catalogtest.AppendSnapshot(tbl.Metadata, 42)
	_, err = c.CommitTable(ctx, tbl, reqs, ups)
	if !errors.Is(err, catalog.ErrCommitStateUnknown) || !errors.Is(err, lostconn.ErrLost) {
		t.Fatalf("commit with the connection lost: %v, want ErrCommitStateUnknown wrapping the driver error", err)
	}
	if errors.Is(err, catalog.ErrCommitConflict) {
		t.Error("an unknown outcome must not be reported as a retryable conflict")
	}
	after := catalogtest.MetadataFiles(t, tbl)
	if len(after) != len(before)+1 {
		t.Fatalf("metadata files %v -> %v: the written file must stay", before, after)
	}
	// The UPDATE did run: the kept file is the table's current metadata.
	loaded, err := c.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fileio.ReadFile(ctx, loaded.IO, loaded.MetadataLocation); err != nil {
		t.Errorf("current metadata %s unreadable: %v", loaded.MetadataLocation, err)
	}
	if cur := loaded.Metadata.CurrentSnapshot(); cur == nil || cur.SnapshotID != 42 {
		t.Errorf("current snapshot = %v, want 42", cur)
	}
}

func TestLostCASRemovesOnlyItsFile(t *testing.T) {
	ctx := context.Background()
	c := newSQLite(t).(*Catalog)
	id := catalog.Ident{Namespace: []string{"db"}, Name: "t"}
	tbl := catalogtest.NewTable(t, c, id, nil)
	// Move the row behind the commit's back between its read and its
	// UPDATE by pointing it at a copy of the same metadata: requirements
	// pass, the swap finds another location.
	other := strings.Replace(tbl.MetadataLocation, "00000-", "00000-other-", 1)
	data, err := fileio.ReadFile(ctx, tbl.IO, tbl.MetadataLocation)
	if err != nil {
		t.Fatal(err)
	}
	if err := fileio.WriteFile(ctx, tbl.IO, other, data); err != nil {
		t.Fatal(err)
	}
	swapped := &atomic.Bool{}
	c.beforeSwap = func() {
		if swapped.CompareAndSwap(false, true) {
			if _, err := c.exec(ctx, `UPDATE iceberg_tables SET metadata_location = ?`, other); err != nil {
				t.Error(err)
			}
		}
	}
	before := catalogtest.MetadataFiles(t, tbl)
	reqs, ups := catalogtest.AppendSnapshot(tbl.Metadata, 9)
	if _, err := c.CommitTable(ctx, tbl, reqs, ups); !errors.Is(err, catalog.ErrCommitConflict) {
		t.Fatalf("commit that lost the swap: %v, want ErrCommitConflict", err)
	}
	if after := catalogtest.MetadataFiles(t, tbl); len(after) != len(before) {
		t.Errorf("metadata files %v -> %v: the losing file must be removed, no other", before, after)
	}
}

// A database SQLite opened read-only (a write-protected file, as for a user
// without write permission) refuses the UPDATE before running it: the
// commit definitely failed, and the metadata file it wrote is removed.
func TestReadOnlyDatabaseCommitFails(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	rw := createSQLite(t, path, "file://"+dir+"/wh")
	id := catalog.Ident{Namespace: []string{"db"}, Name: "t"}
	catalogtest.NewTable(t, rw, id, nil)
	rw.Close()

	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(ctx, db, SQLite, catalog.Config{Name: "test", Warehouse: "file://" + dir + "/wh"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	commitFailsCleanly(t, c, id, "read-only")
}

// commitFailsCleanly commits to id through c, which must refuse it as a
// definite failure (ErrCommitFailed only) saying why (says), remove the
// metadata file it wrote and leave the table where it was.
func commitFailsCleanly(t *testing.T, c *Catalog, id catalog.Ident, says string) {
	t.Helper()
	ctx := context.Background()
	tbl, err := c.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	before := catalogtest.MetadataFiles(t, tbl)
	reqs, ups := catalogtest.AppendSnapshot(tbl.Metadata, 7)
	_, err = c.CommitTable(ctx, tbl, reqs, ups)
	if !errors.Is(err, catalog.ErrCommitFailed) || errors.Is(err, catalog.ErrCommitStateUnknown) || errors.Is(err, catalog.ErrCommitConflict) {
		t.Fatalf("commit: %v, want ErrCommitFailed only", err)
	}
	if !strings.Contains(err.Error(), says) {
		t.Errorf("error does not say %q: %v", says, err)
	}
	if after := catalogtest.MetadataFiles(t, tbl); len(after) != len(before) {
		t.Errorf("metadata files %v -> %v: the refused commit's file must be removed", before, after)
	}
	if cur, err := c.LoadTable(ctx, id); err != nil || cur.MetadataLocation != tbl.MetadataLocation {
		t.Errorf("table moved to %v (%v)", cur, err)
	}
}

// A commit PostgreSQL refuses before running the UPDATE, in a database made
// read-only (default_transaction_read_only) or for a role that may only
// read, definitely failed: ErrCommitFailed, not commit state unknown, and
// the metadata file it wrote is removed. The test makes its own database
// (and role) on the test server, never the shared one read-only.
func TestPostgresReadOnlyCommitFails(t *testing.T) {
	base := testenv.Need(t, testenv.PostgresURL, "PostgreSQL database")
	ctx := context.Background()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	suffix := fmt.Sprintf("%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	dbName, role := "icectl_ro_"+suffix, "icectl_reader_"+suffix
	exec := func(q string) {
		t.Helper()
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE DATABASE " + dbName)
	t.Cleanup(func() {
		for _, q := range []string{"DROP DATABASE IF EXISTS " + dbName + " WITH (FORCE)", "DROP ROLE IF EXISTS " + role} {
			if _, err := admin.ExecContext(ctx, q); err != nil {
				t.Errorf("clean up: %s: %v", q, err)
			}
		}
		admin.Close()
	})
	dbURL := *u
	dbURL.Path = "/" + dbName
	dir := t.TempDir()
	cfg := catalog.Config{Name: "ro", URI: dbURL.String(), Warehouse: "file://" + dir + "/wh"}
	rw, err := Create(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	id := catalog.Ident{Namespace: []string{"db"}, Name: "t"}
	catalogtest.NewTable(t, rw, id, nil)
	if _, err := rw.db.ExecContext(ctx, "CREATE ROLE "+role+" LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO "+role); err != nil {
		t.Fatal(err)
	}
	rw.Close()

	commitRefused := func(t *testing.T, uri string) {
		t.Helper()
		c, err := Open(ctx, catalog.Config{Name: "ro", URI: uri, Warehouse: cfg.Warehouse})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		commitFailsCleanly(t, c, id, "refuses writes")
	}
	t.Run("role", func(t *testing.T) {
		ru := dbURL
		ru.User = url.User(role)
		commitRefused(t, ru.String())
	})
	t.Run("database", func(t *testing.T) {
		exec("ALTER DATABASE " + dbName + " SET default_transaction_read_only = on")
		commitRefused(t, dbURL.String())
	})
}
