// Package catalogs opens a catalog.Catalog from its configuration,
// choosing the implementation by URI scheme. It exists apart from package
// catalog so that the interface does not import every implementation.
package catalogs

import (
	"context"
	"fmt"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/filecat"
	"github.com/icectl/icectl/catalog/rest"
	"github.com/icectl/icectl/catalog/sqlcat"
)

// Open opens the catalog cfg.URI names:
//
//	sqlite:///abs/path.db, sqlite:rel/path.db   SQL catalog on SQLite
//	postgres://..., postgresql://...            SQL catalog on PostgreSQL
//	file:///warehouse                           file (Hadoop layout) catalog
//	http://..., https://...                     REST catalog
func Open(ctx context.Context, cfg catalog.Config) (catalog.Catalog, error) {
	uri := cfg.URI
	switch scheme, _, _ := strings.Cut(uri, ":"); strings.ToLower(scheme) {
	case "sqlite", "postgres", "postgresql":
		return sqlcat.Open(ctx, cfg)
	case "file":
		return filecat.Open(ctx, cfg)
	case "http", "https":
		return rest.OpenCatalog(ctx, cfg)
	case "":
		return nil, fmt.Errorf("catalog %q: no URI", cfg.Name)
	default:
		return nil, fmt.Errorf("catalog %q: unsupported catalog URI scheme %q (want sqlite:, postgres://, file:// or http(s)://)", cfg.Name, scheme)
	}
}
