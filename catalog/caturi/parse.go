package caturi

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Kind is the kind of catalog a URI names.
type Kind int

const (
	SQLite Kind = iota + 1
	Postgres
	REST
	File
	Hive
)

func (k Kind) String() string {
	switch k {
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	case REST:
		return "rest"
	case File:
		return "file"
	case Hive:
		return "hive"
	}
	return "unknown"
}

// Forms lists the accepted forms, for error messages and help.
const Forms = "sqlite:////abs/path.db, sqlite:///relative/path.db, file:/abs/path.db, path.db, " +
	"postgresql://user@host:5432/db (postgres://, postgresql+psycopg2://), " +
	"http(s)://host/path (REST), file:///warehouse (file catalog), thrift://host:9083 (Hive); see `icectl help catalogs`"

// URI is a parsed catalog URI.
type URI struct {
	Kind Kind
	// Path is, for SQLite, the database file as an absolute path and, for
	// a file catalog, the warehouse directory (absolute).
	Path string
	// Alt is, for SQLite, the absolute path the other reading of the
	// slashes names (sqlite:///x.db read as /x.db and the reverse), or "".
	Alt string
	// URL is, for PostgreSQL, the URL for the driver (postgresql://..., any
	// +driver suffix dropped) and, for REST and Hive, the URI as given.
	URL string
}

// String returns the URI in canonical form: sqlite:////abs/path.db,
// postgresql://..., http(s)://..., file:///warehouse. It may hold a
// password: print only Redact(u.String()).
func (u URI) String() string {
	switch u.Kind {
	case SQLite:
		return SQLiteURI(u.Path)
	case File:
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(u.Path)}).String()
	}
	return u.URL
}

// SQLiteURI is the catalog URI of the SQLite database at path:
// sqlite:////abs/path.db for an absolute path, sqlite:///rel/path.db for
// a relative one.
func SQLiteURI(path string) string {
	return "sqlite:///" + (&url.URL{Path: filepath.ToSlash(path)}).EscapedPath()
}

// Error is a malformed catalog URI: a usage error. Its message holds the
// URI redacted, never a driver's or parser's text (which may quote a
// password), and the accepted forms.
type Error struct {
	URI    string // redacted
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("catalog URI %q: %s (accepted: %s)", e.URI, e.Reason, Forms)
}

func malformed(s, reason string, args ...any) error {
	return &Error{URI: Redact(s), Reason: fmt.Sprintf(reason, args...)}
}

// Parse parses a catalog URI in the grammar of the package comment. A
// relative SQLite path is resolved against the working directory. Every
// error is an *Error.
func Parse(s string) (URI, error) {
	if strings.TrimSpace(s) == "" {
		return URI{}, malformed(s, "empty")
	}
	if strings.ContainsAny(s, "\x00\r\n\t") {
		return URI{}, malformed(s, "holds a control character")
	}
	scheme, rest, ok := cutScheme(s)
	if !ok {
		if hasDBSuffix(s) {
			return sqlitePath(s, s, "")
		}
		return URI{}, malformed(s, "neither a URI nor a path ending in .db")
	}
	base, _, _ := strings.Cut(strings.ToLower(scheme), "+")
	switch base {
	case "sqlite":
		return parseSQLAlchemySQLite(s, rest)
	case "file":
		return parseFile(s, rest)
	case "postgres", "postgresql":
		return parsePostgres(s, rest)
	case "http", "https":
		return parseREST(s)
	case "thrift":
		return parseHive(s)
	}
	return URI{}, malformed(s, "unknown scheme %q", scheme)
}

// cutScheme splits s at the colon ending a URI scheme
// (ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
func cutScheme(s string) (scheme, rest string, ok bool) {
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return s[:i], s[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

func hasDBSuffix(p string) bool {
	p = strings.ToLower(p)
	return strings.HasSuffix(p, ".db") || strings.HasSuffix(p, ".sqlite") || strings.HasSuffix(p, ".sqlite3")
}

// parseSQLAlchemySQLite reads sqlite://<empty host>/<path>: three slashes
// and a relative path, or four and an absolute one.
func parseSQLAlchemySQLite(s, rest string) (URI, error) {
	after, ok := strings.CutPrefix(rest, "//")
	if !ok {
		return URI{}, malformed(s, "a SQLite URI starts sqlite:/// (relative path) or sqlite://// (absolute path)")
	}
	host, p, _ := strings.Cut(after, "/")
	if host != "" {
		return URI{}, malformed(s, "a SQLite URI has no host (write sqlite:////abs/path.db for an absolute path)")
	}
	if strings.ContainsAny(p, "?#") {
		return URI{}, malformed(s, "a SQLite URI takes no query parameters")
	}
	if p == "" || p == ":memory:" {
		return URI{}, malformed(s, "no database path (an in-memory catalog would vanish when icectl exits)")
	}
	dec, err := url.PathUnescape(p)
	if err != nil {
		return URI{}, malformed(s, "bad percent escape in the path")
	}
	// The other reading of the slashes: one more or one fewer.
	alt := "/" + dec
	if strings.HasPrefix(dec, "/") {
		alt = strings.TrimLeft(dec, "/")
	}
	return sqlitePath(s, dec, alt)
}

// parseFile reads a file: URI: a SQLite database when the path ends in
// .db (iceberg-go's DSN), else a file catalog's warehouse.
func parseFile(s, rest string) (URI, error) {
	p := rest
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		host, path, _ := strings.Cut(after, "/")
		if host != "" && !strings.EqualFold(host, "localhost") {
			return URI{}, malformed(s, "a file: URI names no host (write file:///abs/path)")
		}
		p = "/" + path
	}
	if strings.ContainsAny(p, "?#") {
		return URI{}, malformed(s, "a file: URI takes no query parameters")
	}
	dec, err := url.PathUnescape(p)
	if err != nil {
		return URI{}, malformed(s, "bad percent escape in the path")
	}
	if hasDBSuffix(dec) {
		return sqlitePath(s, dec, "")
	}
	if !strings.HasPrefix(dec, "/") {
		return URI{}, malformed(s, "a file catalog's warehouse is an absolute path (file:///abs/warehouse); a SQLite database path ends in .db")
	}
	if strings.Trim(dec, "/") == "" {
		return URI{}, malformed(s, "the file system root is not a warehouse")
	}
	return URI{Kind: File, Path: filepath.Clean(filepath.FromSlash(dec))}, nil
}

func sqlitePath(s, p, alt string) (URI, error) {
	abs, err := filepath.Abs(filepath.FromSlash(p))
	if err != nil {
		return URI{}, malformed(s, "cannot resolve the path: %v", err)
	}
	u := URI{Kind: SQLite, Path: abs}
	if alt != "" {
		if a, err := filepath.Abs(filepath.FromSlash(alt)); err == nil && a != abs {
			u.Alt = a
		}
	}
	return u, nil
}

func parsePostgres(s, rest string) (URI, error) {
	if !strings.HasPrefix(rest, "//") {
		return URI{}, malformed(s, "a PostgreSQL URI starts postgresql://")
	}
	if badEscape(s) {
		return URI{}, malformed(s, "bad percent escape (a %% in a password is written %%25)")
	}
	full := "postgresql:" + rest
	// url.Parse's errors quote parts of the URI, which may be the
	// password: never show them.
	if _, err := url.Parse(full); err != nil {
		return URI{}, malformed(s, "malformed URL (check the host and port, and percent-encode @ : / ? # in the user name and password)")
	}
	return URI{Kind: Postgres, URL: full}, nil
}

func parseREST(s string) (URI, error) {
	if badEscape(s) {
		return URI{}, malformed(s, "bad percent escape")
	}
	u, err := url.Parse(s)
	if err != nil {
		return URI{}, malformed(s, "malformed URL (check the host and port)")
	}
	if u.Host == "" {
		return URI{}, malformed(s, "a REST catalog URI names a host: http(s)://host[:port][/path]")
	}
	return URI{Kind: REST, URL: s}, nil
}

// parseHive reads a Hive Metastore URI as hive.metastore.uris has it:
// thrift://host[:port], several comma-separated (tried in order).
func parseHive(s string) (URI, error) {
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		u, err := url.Parse(part)
		if err != nil || !strings.EqualFold(u.Scheme, "thrift") || u.Hostname() == "" {
			return URI{}, malformed(s, "a Hive Metastore URI is thrift://host[:port] (several comma-separated)")
		}
		if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return URI{}, malformed(s, "a Hive Metastore URI has only a host and port: thrift://host[:port]")
		}
	}
	return URI{Kind: Hive, URL: s}, nil
}

// badEscape reports whether s holds a % not followed by two hex digits.
func badEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return true
		}
		i += 2
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
