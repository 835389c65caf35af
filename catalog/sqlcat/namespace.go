package sqlcat

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/icectl/icectl/catalog"
)

// namespaceExistsProp is the reserved property Java writes so that an
// empty namespace exists; it is hidden from readers.
const namespaceExistsProp = "exists"

// namespaceExists applies the Java rule: a table in the namespace or below
// it, or a property row for it or below it.
func (c *Catalog) namespaceExists(ctx context.Context, ns string) (bool, error) {
	like := likeEscape(ns) + ".%"
	queries := []string{`SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND (table_namespace = ? OR table_namespace LIKE ? ESCAPE '!')`}
	if c.nsProps {
		queries = append(queries, `SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ? AND (namespace = ? OR namespace LIKE ? ESCAPE '!')`)
	}
	for _, q := range queries {
		var one int
		err := c.queryRow(ctx, q+` LIMIT 1`, c.name, ns, like).Scan(&one)
		switch {
		case err == nil:
			return true, nil
		case !errors.Is(err, sql.ErrNoRows):
			return false, fmt.Errorf("look up namespace %s: %w", ns, err)
		}
	}
	return false, nil
}

func (c *Catalog) requireNamespace(ctx context.Context, ns []string) (string, error) {
	if err := catalog.ValidateNamespace(ns); err != nil {
		return "", err
	}
	key := strings.Join(ns, ".")
	ok, err := c.namespaceExists(ctx, key)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("namespace %s: %w", key, catalog.ErrNoSuchNamespace)
	}
	return key, nil
}

// ListNamespaces returns the direct children of parent (top-level
// namespaces for an empty parent), sorted.
func (c *Catalog) ListNamespaces(ctx context.Context, parent []string) ([][]string, error) {
	q := `SELECT table_namespace FROM iceberg_tables WHERE catalog_name = ?
UNION SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = ?`
	args := []any{c.name, c.name}
	if len(parent) > 0 {
		key, err := c.requireNamespace(ctx, parent)
		if err != nil {
			return nil, fmt.Errorf("list namespaces: %w", err)
		}
		like := likeEscape(key) + ".%"
		q = `SELECT table_namespace FROM iceberg_tables WHERE catalog_name = ? AND table_namespace LIKE ? ESCAPE '!'
UNION SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace LIKE ? ESCAPE '!'`
		args = []any{c.name, like, c.name, like}
	}
	if !c.nsProps {
		q, _, _ = strings.Cut(q, "\nUNION ")
		args = args[:len(args)/2]
	}
	rows, err := c.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var ns string
		if err := rows.Scan(&ns); err != nil {
			return nil, fmt.Errorf("list namespaces: %w", err)
		}
		levels := strings.Split(ns, ".")
		if len(levels) <= len(parent) || !slices.Equal(levels[:len(parent)], parent) {
			continue
		}
		seen[strings.Join(levels[:len(parent)+1], ".")] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][]string, len(keys))
	for i, k := range keys {
		out[i] = strings.Split(k, ".")
	}
	return out, nil
}

// CreateNamespace records ns with its properties and the reserved
// exists=true property.
func (c *Catalog) CreateNamespace(ctx context.Context, ns []string, props map[string]string) error {
	if err := catalog.ValidateNamespace(ns); err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	key := strings.Join(ns, ".")
	if _, reserved := props[namespaceExistsProp]; reserved {
		return fmt.Errorf("create namespace %s: property %q is reserved", key, namespaceExistsProp)
	}
	ok, err := c.namespaceExists(ctx, key)
	if err != nil {
		return fmt.Errorf("create namespace %s: %w", key, err)
	}
	if !c.nsProps {
		return fmt.Errorf("create namespace %s: the catalog database has no iceberg_namespace_properties table; `icectl catalog init` adds it", key)
	}
	if ok {
		return fmt.Errorf("create namespace %s: %w", key, catalog.ErrAlreadyExists)
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create namespace %s: %w", key, err)
	}
	defer tx.Rollback()
	all := map[string]string{namespaceExistsProp: "true"}
	for k, v := range props {
		all[k] = v
	}
	insert := c.dialect.bind(`INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value) VALUES (?, ?, ?, ?)`)
	for k, v := range all {
		if _, err := tx.ExecContext(ctx, insert, c.name, key, k, v); err != nil {
			if isUniqueViolation(err) {
				return fmt.Errorf("create namespace %s: %w", key, catalog.ErrAlreadyExists)
			}
			return fmt.Errorf("create namespace %s: %w", key, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create namespace %s: %w", key, err)
	}
	return nil
}

// namespaceProperty returns one property of a namespace, "" when unset.
func (c *Catalog) namespaceProperty(ctx context.Context, ns, key string) (string, error) {
	if !c.nsProps {
		return "", nil
	}
	var v sql.NullString
	err := c.queryRow(ctx, `SELECT property_value FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ? AND property_key = ?`,
		c.name, ns, key).Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("read property %s of namespace %s: %w", key, ns, err)
	}
	return v.String, nil
}

// DropNamespace deletes the property rows of an empty namespace. Unlike
// Java's JdbcCatalog, which looks only for tables of the namespace itself,
// a namespace with views or child namespaces is refused too: dropping its
// rows would not make it go (a child keeps it existing), and the refusal
// says why.
func (c *Catalog) DropNamespace(ctx context.Context, ns []string) error {
	key, err := c.requireNamespace(ctx, ns)
	if err != nil {
		return fmt.Errorf("drop namespace: %w", err)
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("drop namespace %s: %w", key, err)
	}
	defer tx.Rollback()
	like := likeEscape(key) + ".%"
	var tables, children int
	err = tx.QueryRowContext(ctx, c.dialect.bind(`SELECT COUNT(*) FROM iceberg_tables WHERE catalog_name = ? AND (table_namespace = ? OR table_namespace LIKE ? ESCAPE '!')`),
		c.name, key, like).Scan(&tables)
	if err == nil && c.nsProps {
		err = tx.QueryRowContext(ctx, c.dialect.bind(`SELECT COUNT(DISTINCT namespace) FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace LIKE ? ESCAPE '!'`),
			c.name, like).Scan(&children)
	}
	if err != nil {
		return fmt.Errorf("drop namespace %s: %w", key, err)
	}
	if tables > 0 || children > 0 {
		return fmt.Errorf("drop namespace %s: %w (%d tables or views in it or below it, %d namespaces below it)", key, catalog.ErrNamespaceNotEmpty, tables, children)
	}
	if _, err := tx.ExecContext(ctx, c.dialect.bind(`DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ?`), c.name, key); err != nil {
		return fmt.Errorf("drop namespace %s: %w", key, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("drop namespace %s: %w", key, err)
	}
	return nil
}
