// Package catalogs opens a catalog.Catalog from its configuration,
// choosing the implementation by the kind of catalog its URI names
// (package caturi). It exists apart from package catalog so that the
// interface does not import every implementation.
package catalogs

import (
	"context"
	"fmt"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/catalog/filecat"
	"github.com/icectl/icectl/catalog/hive"
	"github.com/icectl/icectl/catalog/rest"
	"github.com/icectl/icectl/catalog/sqlcat"
)

// Open opens the existing catalog cfg.URI names (see package caturi for
// the forms), changing nothing: no database file, table or directory is
// created. A malformed URI is a *caturi.Error.
func Open(ctx context.Context, cfg catalog.Config) (catalog.Catalog, error) {
	return open(ctx, cfg, false)
}

// Create opens the catalog cfg.URI names, creating it when missing: the
// SQLite database file and the catalog tables of a SQL catalog, the
// warehouse directory of a file catalog. A REST catalog or a Hive
// Metastore is the server's to create; Create only opens it.
func Create(ctx context.Context, cfg catalog.Config) (catalog.Catalog, error) {
	return open(ctx, cfg, true)
}

func open(ctx context.Context, cfg catalog.Config, create bool) (catalog.Catalog, error) {
	if cfg.URI == "" {
		return nil, fmt.Errorf("catalog %q: no URI", cfg.Name)
	}
	u, err := caturi.Parse(cfg.URI)
	if err != nil {
		return nil, err
	}
	switch u.Kind {
	case caturi.SQLite, caturi.Postgres:
		if create {
			return sqlcat.Create(ctx, cfg)
		}
		return sqlcat.Open(ctx, cfg)
	case caturi.File:
		if create {
			return filecat.Create(ctx, cfg)
		}
		return filecat.Open(ctx, cfg)
	case caturi.REST:
		return rest.OpenCatalog(ctx, cfg)
	case caturi.Hive:
		return hive.Open(ctx, cfg)
	}
	return nil, fmt.Errorf("catalog %q: unsupported catalog URI %s", cfg.Name, caturi.Redact(cfg.URI))
}
