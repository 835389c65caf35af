package metastore

import (
	"fmt"
	"strings"
)

// Ident names a table: its namespace levels and its name.
type Ident struct {
	Namespace []string
	Name      string
}

// ParseIdent parses a dotted table name: "db.orders" is table orders in
// namespace db, "a.b.t" is table t in namespace a.b. A table needs a
// namespace, and no level may be empty.
func ParseIdent(s string) (Ident, error) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return Ident{}, fmt.Errorf("table name %q: want namespace.table", s)
	}
	for _, p := range parts {
		if p == "" {
			return Ident{}, fmt.Errorf("table name %q: empty name level", s)
		}
	}
	return Ident{Namespace: parts[:len(parts)-1], Name: parts[len(parts)-1]}, nil
}

// String returns the dotted form ParseIdent reads.
func (id Ident) String() string {
	if len(id.Namespace) == 0 {
		return id.Name
	}
	return strings.Join(id.Namespace, ".") + "." + id.Name
}

// ValidateNamespace checks that ns has at least one level, none empty, and
// none containing a dot: metastore catalogs store namespaces dot-joined, so
// a dotted level could not be told apart from two levels.
func ValidateNamespace(ns []string) error {
	if len(ns) == 0 {
		return fmt.Errorf("empty namespace")
	}
	for _, l := range ns {
		if l == "" {
			return fmt.Errorf("namespace %q: empty level", strings.Join(ns, "."))
		}
		if strings.Contains(l, ".") {
			return fmt.Errorf("namespace level %q: dots are not allowed in a level", l)
		}
	}
	return nil
}

// Validate checks the namespace (see ValidateNamespace) and the name.
func (id Ident) Validate() error {
	if err := ValidateNamespace(id.Namespace); err != nil {
		return fmt.Errorf("table %s: %w", id, err)
	}
	if id.Name == "" {
		return fmt.Errorf("table %s: empty table name", id)
	}
	return nil
}
