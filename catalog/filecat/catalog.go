package filecat

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/iceberg/fileio"
)

// Catalog is a file catalog rooted at a local warehouse directory.
type Catalog struct {
	name string
	// base is the warehouse as given (file:///wh or /wh): table locations
	// are written in this form.
	base string
	root string // OS path of the warehouse
	io   fileio.FileIO
}

var _ catalog.Catalog = (*Catalog)(nil)

// Open opens the warehouse named by cfg.URI (file:///abs/dir), or by
// cfg.Warehouse when URI is empty. It creates nothing: a warehouse
// directory that does not exist is an error, so reading never runs mkdir.
func Open(ctx context.Context, cfg catalog.Config) (*Catalog, error) {
	return open(cfg, false)
}

// Create is Open, creating the warehouse directory when missing (icectl
// catalog init, test fixtures).
func Create(ctx context.Context, cfg catalog.Config) (*Catalog, error) {
	return open(cfg, true)
}

func open(cfg catalog.Config, create bool) (*Catalog, error) {
	loc := cfg.URI
	if loc == "" {
		loc = cfg.Warehouse
	}
	base, root, err := localPath(loc)
	if err != nil {
		return nil, fmt.Errorf("file catalog: %w", err)
	}
	if create {
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, fmt.Errorf("file catalog: create warehouse %s: %w", root, err)
		}
	}
	st, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("file catalog: warehouse %s does not exist (nothing was created; `icectl catalog init` creates it)", root)
	case err != nil:
		return nil, fmt.Errorf("file catalog: warehouse %s: %w", root, err)
	case !st.IsDir():
		return nil, fmt.Errorf("file catalog: warehouse %s is not a directory", root)
	}
	name := cfg.Name
	if name == "" {
		name = "default"
	}
	return &Catalog{name: name, base: base, root: root, io: fileio.NewLocal()}, nil
}

// localPath turns a file: URI (the grammar of package caturi) or a plain
// path into the location table paths are written in and an OS path,
// refusing remote storage, where the exclusive create is not atomic.
func localPath(loc string) (base, root string, err error) {
	lower := strings.ToLower(loc)
	switch {
	case strings.HasPrefix(lower, "file:"):
		u, err := caturi.Parse(loc)
		if err != nil {
			return "", "", err
		}
		if u.Kind != caturi.File {
			return "", "", fmt.Errorf("location %s: not a warehouse directory", caturi.Redact(loc))
		}
		return u.String(), u.Path, nil
	case strings.Contains(loc, "://"):
		return "", "", fmt.Errorf("location %s: the file catalog works on local storage only (its commits are not atomic on object stores)", caturi.Redact(loc))
	case loc == "":
		return "", "", fmt.Errorf("empty warehouse location")
	}
	p := filepath.Clean(filepath.FromSlash(loc))
	return strings.TrimSuffix(loc, "/"), p, nil
}

// Name returns the catalog name.
func (c *Catalog) Name() string { return c.name }

// OwnsMetadataFiles reports that this catalog writes the table's metadata
// files, so the committer deletes those that fall off the metadata log
// (write.metadata.delete-after-commit.enabled) through iceberg/reclaim.
func (c *Catalog) OwnsMetadataFiles() bool { return true }

// Close releases nothing: the catalog holds no open resources.
func (c *Catalog) Close() error { return nil }

func (c *Catalog) nsDir(ns []string) string {
	return filepath.Join(append([]string{c.root}, ns...)...)
}

func (c *Catalog) tableDir(id catalog.Ident) string {
	return filepath.Join(c.nsDir(id.Namespace), id.Name)
}

func (c *Catalog) tableLocation(id catalog.Ident) string {
	return c.base + "/" + strings.Join(append(append([]string{}, id.Namespace...), id.Name), "/")
}

// metadataLocation is the location (in the warehouse's form) of a file of
// the table's metadata directory.
func (c *Catalog) metadataLocation(id catalog.Ident, file string) string {
	return c.tableLocation(id) + "/metadata/" + file
}

// DefaultLocation is the only location the Hadoop layout allows:
// <warehouse>/<ns...>/<name>.
func (c *Catalog) DefaultLocation(_ context.Context, id catalog.Ident) (string, error) {
	if err := id.Validate(); err != nil {
		return "", err
	}
	return c.tableLocation(id), nil
}
