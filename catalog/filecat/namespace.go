package filecat

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/icectl/icectl/catalog"
)

// isDir reports whether p is a directory.
func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// isTableDir reports whether dir holds a table: a metadata directory with
// a version hint or a vN.metadata.json file.
func isTableDir(dir string) bool {
	md := filepath.Join(dir, "metadata")
	if _, err := os.Stat(filepath.Join(md, versionHintFile)); err == nil {
		return true
	}
	entries, err := os.ReadDir(md)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, ok := hadoopVersion(e.Name()); ok {
			return true
		}
	}
	return false
}

func (c *Catalog) requireNamespace(ns []string) error {
	if err := catalog.ValidateNamespace(ns); err != nil {
		return err
	}
	dir := c.nsDir(ns)
	if !isDir(dir) || isTableDir(dir) {
		return fmt.Errorf("namespace %s: %w", strings.Join(ns, "."), catalog.ErrNoSuchNamespace)
	}
	return nil
}

// children lists the sub-directories of dir that are (tables=true) or are
// not (tables=false) tables, sorted.
func children(dir string, tables bool) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if isTableDir(filepath.Join(dir, e.Name())) == tables {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// ListNamespaces returns the namespace directories directly under parent.
func (c *Catalog) ListNamespaces(ctx context.Context, parent []string) ([][]string, error) {
	if len(parent) > 0 {
		if err := c.requireNamespace(parent); err != nil {
			return nil, fmt.Errorf("list namespaces: %w", err)
		}
	} else if err := c.foreignLayout(); err != nil {
		return nil, err
	}
	names, err := children(c.nsDir(parent), false)
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	out := make([][]string, len(names))
	for i, n := range names {
		out[i] = append(append([]string{}, parent...), n)
	}
	return out, nil
}

// CreateNamespace creates the namespace directory. Like Java's Hadoop
// catalog it stores no namespace properties, so props must be empty.
func (c *Catalog) CreateNamespace(ctx context.Context, ns []string, props map[string]string) error {
	if err := catalog.ValidateNamespace(ns); err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	key := strings.Join(ns, ".")
	if len(props) > 0 {
		return fmt.Errorf("create namespace %s: the file catalog does not store namespace properties", key)
	}
	if len(ns) > 1 {
		if err := os.MkdirAll(c.nsDir(ns[:len(ns)-1]), 0o755); err != nil {
			return fmt.Errorf("create namespace %s: %w", key, err)
		}
	}
	if err := os.Mkdir(c.nsDir(ns), 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create namespace %s: %w", key, catalog.ErrAlreadyExists)
		}
		return fmt.Errorf("create namespace %s: %w", key, err)
	}
	return nil
}

// DropNamespace removes the namespace directory when it holds nothing at
// all, as Java's HadoopCatalog does: a file of any kind (even a hidden
// one) makes it not empty, since removing the directory would take it.
func (c *Catalog) DropNamespace(ctx context.Context, ns []string) error {
	if err := c.requireNamespace(ns); err != nil {
		return fmt.Errorf("drop namespace: %w", err)
	}
	key := strings.Join(ns, ".")
	dir := c.nsDir(ns)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("drop namespace %s: %w", key, err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("drop namespace %s: %w (%s holds %s)", key, catalog.ErrNamespaceNotEmpty, dir, entries[0].Name())
	}
	// Not recursive: whatever appeared meanwhile stays, and the removal
	// fails.
	if err := os.Remove(dir); err != nil {
		if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
			return fmt.Errorf("drop namespace %s: %w", key, catalog.ErrNamespaceNotEmpty)
		}
		return fmt.Errorf("drop namespace %s: %w", key, err)
	}
	return nil
}

// ListTables returns the table directories of ns.
func (c *Catalog) ListTables(ctx context.Context, ns []string) ([]catalog.Ident, error) {
	if err := c.requireNamespace(ns); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	names, err := children(c.nsDir(ns), true)
	if err != nil {
		return nil, fmt.Errorf("list tables of %s: %w", strings.Join(ns, "."), err)
	}
	out := make([]catalog.Ident, len(names))
	for i, n := range names {
		out[i] = catalog.Ident{Namespace: append([]string{}, ns...), Name: n}
	}
	return out, nil
}

// foreignLayout returns an error saying so when the warehouse holds tables
// laid out by a SQL, Hive, JDBC or REST catalog (namespace.db/table, with
// metadata files named NNNNN-uuid.metadata.json), which a file catalog
// neither lists nor commits to: pointed at another catalog's warehouse, a
// user should hear that, not that a namespace has a dot.
func (c *Catalog) foreignLayout() error {
	nss, err := os.ReadDir(c.root)
	if err != nil {
		return nil // the listing itself reports it
	}
	for _, ns := range nss {
		if !ns.IsDir() || !strings.HasSuffix(ns.Name(), ".db") {
			continue
		}
		if t, ok := foreignTable(filepath.Join(c.root, ns.Name())); ok {
			return foreignErr(c.root, t)
		}
	}
	return nil
}

// foreignTable returns a table directory under nsDir whose metadata files
// are named as other catalogs name them.
func foreignTable(nsDir string) (string, bool) {
	tables, err := os.ReadDir(nsDir)
	if err != nil {
		return "", false
	}
	for _, t := range tables {
		dir := filepath.Join(nsDir, t.Name())
		if !t.IsDir() || isTableDir(dir) {
			continue
		}
		files, err := os.ReadDir(filepath.Join(dir, "metadata"))
		if err != nil {
			continue
		}
		for _, f := range files {
			if strings.HasSuffix(f.Name(), ".metadata.json") {
				return dir, true
			}
		}
	}
	return "", false
}

func foreignErr(root, table string) error {
	rel, err := filepath.Rel(root, table)
	if err != nil {
		rel = table
	}
	return fmt.Errorf("%w: %s holds another catalog's tables (%s: namespace.db/table, as SQL, Hive and REST catalogs lay them out); open it with the catalog that owns it (--catalog-uri of its database or server), or a table read-only by its metadata file (icectl health %s/metadata/<newest>.metadata.json)",
		ErrForeignWarehouse, root, rel, table)
}

// ErrForeignWarehouse: the warehouse belongs to another kind of catalog.
var ErrForeignWarehouse = errors.New("not a file catalog's warehouse")
