package sqlcat

import (
	"errors"
	"strconv"
	"strings"
)

// Dialect is the SQL flavour of the catalog database.
type Dialect int

const (
	SQLite Dialect = iota
	Postgres
)

func (d Dialect) String() string {
	if d == Postgres {
		return "postgres"
	}
	return "sqlite"
}

// bind rewrites the ? placeholders of q into the dialect's syntax. The
// package's queries hold no ? inside string literals.
func (d Dialect) bind(q string) string {
	if d != Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// isUniqueViolation reports whether err is a primary-key or unique
// violation: SQLSTATE 23505 on PostgreSQL, SQLITE_CONSTRAINT on SQLite.
func isUniqueViolation(err error) bool {
	var pg interface{ SQLState() string }
	if errors.As(err, &pg) {
		return pg.SQLState() == "23505"
	}
	var lite interface{ Code() int }
	if errors.As(err, &lite) {
		return lite.Code()&0xff == 19 // SQLITE_CONSTRAINT and its extended codes
	}
	return false
}

// isUndefined reports whether err is a missing table or column: SQLSTATE
// 42P01 or 42703 on PostgreSQL, SQLITE_ERROR ("no such table/column") on
// SQLite.
func isUndefined(err error) bool {
	var pg interface{ SQLState() string }
	if errors.As(err, &pg) {
		return pg.SQLState() == "42P01" || pg.SQLState() == "42703"
	}
	var lite interface{ Code() int }
	if errors.As(err, &lite) {
		return lite.Code()&0xff == 1
	}
	return false
}

// isSQLiteBusy reports whether err is SQLITE_BUSY or SQLITE_LOCKED: the
// statement did not run, so nothing changed.
func isSQLiteBusy(err error) bool {
	var lite interface{ Code() int }
	if errors.As(err, &lite) {
		c := lite.Code() & 0xff
		return c == 5 || c == 6
	}
	return false
}

// isSQLiteReadOnly reports whether err is SQLITE_READONLY or one of its
// extended codes ("attempt to write a readonly database": a write-protected
// file, a read-only open, a database moved or a hot journal it cannot roll
// back): SQLite refused the write before making it, so nothing changed.
func isSQLiteReadOnly(err error) bool {
	var lite interface{ Code() int }
	return errors.As(err, &lite) && lite.Code()&0xff == 8
}

// isPostgresReadOnly reports whether err is PostgreSQL refusing a write
// before running it: read_only_sql_transaction (25006: the database or
// role has default_transaction_read_only on, or a hot standby) or
// insufficient_privilege (42501: a role without UPDATE on the table). The
// statement failed whole, so nothing changed.
func isPostgresReadOnly(err error) bool {
	var pg interface{ SQLState() string }
	return errors.As(err, &pg) && (pg.SQLState() == "25006" || pg.SQLState() == "42501")
}

// likeEscape escapes s for a LIKE pattern with ESCAPE '!'.
func likeEscape(s string) string {
	r := strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")
	return r.Replace(s)
}
