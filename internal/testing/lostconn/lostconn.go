// Package lostconn is a database/sql driver seam around the real SQLite
// driver for fault tests of the SQL catalog: once armed, the next UPDATE
// of iceberg_tables runs and then reports the connection lost, as a
// network failure after the database committed would. Tests only.
package lostconn

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"sync/atomic"

	"modernc.org/sqlite"
)

// ErrLost is what the armed UPDATE returns after it ran.
var ErrLost = errors.New("connection reset by peer")

type conn struct {
	driver.Conn
	armed *atomic.Bool
}

func (c conn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	res, err := c.Conn.(driver.ExecerContext).ExecContext(ctx, q, args)
	if err == nil && strings.HasPrefix(q, "UPDATE iceberg_tables") && c.armed.CompareAndSwap(true, false) {
		return nil, ErrLost
	}
	return res, err
}

func (c conn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, q, args)
}

func (c conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

// Connector opens SQLite's dsn; for sql.OpenDB.
type Connector struct {
	DSN   string
	Armed *atomic.Bool
}

// Connect opens a connection whose next UPDATE of iceberg_tables, while
// Armed, commits and then fails with ErrLost.
func (l Connector) Connect(context.Context) (driver.Conn, error) {
	c, err := (&sqlite.Driver{}).Open(l.DSN)
	if err != nil {
		return nil, err
	}
	return conn{Conn: c, armed: l.Armed}, nil
}

// Driver is SQLite's.
func (Connector) Driver() driver.Driver { return &sqlite.Driver{} }
