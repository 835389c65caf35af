package sqlcat

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/caturi"
)

// sqliteBusyTimeoutMS is how long a SQLite statement waits for another
// process's lock before failing: long enough for 20 committers. It is a
// setting of the connection and changes nothing in the file.
const sqliteBusyTimeoutMS = 30000

// Open opens an existing catalog database named by cfg.URI (any SQL form of
// package caturi) and changes nothing in it: no file is created, no DDL is
// run and a SQLite database keeps its journal mode, so read-only commands
// leave the database and its side files byte-identical. A SQLite database
// that does not exist is an error naming its absolute path.
func Open(ctx context.Context, cfg catalog.Config) (*Catalog, error) {
	u, err := parseSQL(cfg.URI)
	if err != nil {
		return nil, err
	}
	if u.Kind == caturi.SQLite {
		if err := requireFile(u); err != nil {
			return nil, err
		}
	}
	db, dialect, err := openDB(u, false, false)
	if err != nil {
		return nil, err
	}
	c, err := New(ctx, db, dialect, cfg)
	if err != nil {
		db.Close()
		return nil, err
	}
	return c, nil
}

// CreateOption changes how Create makes a new database.
type CreateOption func(*createOptions)

type createOptions struct{ wal bool }

// WAL puts a SQLite database that Create makes in write-ahead-log mode (the
// demo's catalog, written by one machine). A database that exists already
// keeps its journal mode.
func WAL() CreateOption { return func(o *createOptions) { o.wal = true } }

// Create opens the catalog database named by cfg.URI, creating the SQLite
// file (not its directory) and the catalog tables when missing. Only
// explicit creation (icectl catalog init, the demo, test fixtures) calls it.
func Create(ctx context.Context, cfg catalog.Config, opts ...CreateOption) (*Catalog, error) {
	var o createOptions
	for _, opt := range opts {
		opt(&o)
	}
	u, err := parseSQL(cfg.URI)
	if err != nil {
		return nil, err
	}
	wal := false
	if u.Kind == caturi.SQLite {
		_, err := os.Stat(u.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			wal = o.wal
			if st, err := os.Stat(filepath.Dir(u.Path)); err != nil || !st.IsDir() {
				return nil, fmt.Errorf("create SQLite catalog database %s: directory %s does not exist", u.Path, filepath.Dir(u.Path))
			}
		case err != nil:
			return nil, fmt.Errorf("SQLite catalog database %s: %w", u.Path, err)
		}
	}
	db, dialect, err := openDB(u, true, wal)
	if err != nil {
		return nil, err
	}
	c, err := newCatalog(ctx, db, dialect, cfg)
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := c.createSchema(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s catalog %q: %w", dialect, c.name, err)
	}
	if err := c.detectSchema(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s catalog %q: %w", dialect, c.name, err)
	}
	return c, nil
}

func parseSQL(uri string) (caturi.URI, error) {
	u, err := caturi.Parse(uri)
	if err != nil {
		return u, err
	}
	if u.Kind != caturi.SQLite && u.Kind != caturi.Postgres {
		return u, fmt.Errorf("catalog URI %s: not a SQL catalog", caturi.Redact(uri))
	}
	return u, nil
}

// requireFile refuses a SQLite database that does not exist, naming the
// path and, when the other reading of the URI's slashes names a file, that
// one.
func requireFile(u caturi.URI) error {
	st, err := os.Stat(u.Path)
	switch {
	case err == nil && st.Mode().IsRegular():
		return nil
	case err == nil:
		return fmt.Errorf("SQLite catalog database %s is not a file", u.Path)
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("SQLite catalog database %s: %w", u.Path, err)
	}
	msg := fmt.Sprintf("SQLite catalog database %s does not exist (nothing was created; `icectl catalog init` creates a catalog)", u.Path)
	if u.Alt != "" {
		if st, err := os.Stat(u.Alt); err == nil && st.Mode().IsRegular() {
			msg += fmt.Sprintf("; %s exists: write %s (sqlite://// for an absolute path, sqlite:/// for a relative one)", u.Alt, caturi.SQLiteURI(u.Alt))
		}
	}
	return errors.New(msg)
}

// openDB opens the database of u. SQLite is opened read-write without
// create (mode=rw) unless create is set: mode=ro would leave -wal and -shm
// files behind on a WAL database. Only wal (for a new file) sets a journal
// mode.
func openDB(u caturi.URI, create, wal bool) (*sql.DB, Dialect, error) {
	if u.Kind == caturi.Postgres {
		db, err := sql.Open("pgx", u.URL)
		if err != nil {
			return nil, 0, fmt.Errorf("open PostgreSQL catalog %s: %w", caturi.Redact(u.URL), err)
		}
		return db, Postgres, nil
	}
	q := url.Values{}
	q.Set("mode", "rw")
	if create {
		q.Set("mode", "rwc")
	}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeoutMS))
	if wal {
		q.Add("_pragma", "journal_mode(WAL)")
	}
	dsn := "file:" + (&url.URL{Path: filepath.ToSlash(u.Path)}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, 0, fmt.Errorf("open SQLite catalog %s: %w", u.Path, err)
	}
	return db, SQLite, nil
}
