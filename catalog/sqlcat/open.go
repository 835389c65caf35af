package sqlcat

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"

	"github.com/icectl/icectl/catalog"
)

// sqliteBusyTimeoutMS is how long a SQLite statement waits for another
// process's write lock before failing: long enough for 20 committers.
const sqliteBusyTimeoutMS = 30000

// Open opens the catalog database named by cfg.URI: sqlite:///abs/path.db,
// sqlite:rel/path.db, or postgres:// / postgresql:// URLs. The catalog
// tables are created when missing.
func Open(ctx context.Context, cfg catalog.Config) (*Catalog, error) {
	db, dialect, err := openDB(cfg.URI)
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

func openDB(uri string) (*sql.DB, Dialect, error) {
	switch {
	case strings.HasPrefix(uri, "sqlite:"):
		p := strings.TrimPrefix(uri, "sqlite:")
		if strings.HasPrefix(p, "//") {
			p = strings.TrimPrefix(p, "//")
			if !strings.HasPrefix(p, "/") {
				return nil, 0, fmt.Errorf("catalog URI %q: want sqlite:///absolute/path.db or sqlite:relative/path.db", uri)
			}
		}
		if p == "" {
			return nil, 0, fmt.Errorf("catalog URI %q: no database path", uri)
		}
		// busy_timeout first, so switching to WAL waits for other processes
		// instead of failing.
		dsn := "file:" + p + fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)", sqliteBusyTimeoutMS)
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, 0, fmt.Errorf("open SQLite catalog %s: %w", p, err)
		}
		return db, SQLite, nil
	case strings.HasPrefix(uri, "postgres://"), strings.HasPrefix(uri, "postgresql://"):
		db, err := sql.Open("pgx", uri)
		if err != nil {
			return nil, 0, fmt.Errorf("open PostgreSQL catalog %s: %w", redact(uri), err)
		}
		return db, Postgres, nil
	default:
		return nil, 0, fmt.Errorf("catalog URI %s: not a SQL catalog (want sqlite: or postgres://)", redact(uri))
	}
}

// redact hides the password of a database URL.
func redact(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}
