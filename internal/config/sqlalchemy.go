package config

import (
	"fmt"
	"strings"
)

// FromSQLAlchemy translates the SQLAlchemy URL a PyIceberg SQL catalog is
// configured with into the URI icectl reads. SQLAlchemy writes an absolute
// SQLite path with four slashes (sqlite:////tmp/c.db) and a relative one
// with three (sqlite:///c.db); icectl writes sqlite:///tmp/c.db and
// sqlite:c.db. A driver suffix (postgresql+psycopg2://) is dropped. Other
// URIs are returned unchanged.
func FromSQLAlchemy(uri string) (string, error) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return uri, nil
	}
	base, _, _ := strings.Cut(strings.ToLower(scheme), "+")
	switch base {
	case "sqlite":
		switch {
		case rest == "/:memory:" || rest == ":memory:":
			return "", fmt.Errorf("SQL catalog URI %q: an in-memory SQLite catalog vanishes when icectl exits", uri)
		case strings.HasPrefix(rest, "//"):
			return "sqlite://" + rest[1:], nil
		case strings.HasPrefix(rest, "/"):
			return "sqlite:" + rest[1:], nil
		}
		return "", fmt.Errorf("SQL catalog URI %q: want sqlite:////absolute/path.db or sqlite:///relative/path.db", uri)
	case "postgresql", "postgres":
		return base + "://" + rest, nil
	}
	return uri, nil
}
