package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/icectl/icectl/catalog/caturi"
)

// DefaultCatalogName is the catalog name used when nothing names one: the
// name PyIceberg's load_catalog and iceberg-go default to, and so the
// catalog_name their SQL catalogs write.
const DefaultCatalogName = "default"

// Flags are the catalog flags of a command.
type Flags struct {
	Catalog     string // --catalog NAME: a catalog of the config file
	URI         string // --catalog-uri
	CatalogName string // --catalog-name: catalog_name in SQL catalogs
	Warehouse   string // --warehouse
	// Timeout (--catalog-timeout) bounds each request to a REST catalog:
	// rest.client.socket-timeout-ms, which it overrides; 0 leaves that.
	Timeout time.Duration
}

// Sources are the configuration a catalog is resolved from, lowest
// precedence first within each kind.
type Sources struct {
	Files []*File // configuration files, later files win
	Env   []*File // environment, later entries win
}

// LoadSources reads the configuration files and the environment: the
// PyIceberg file, then icectl's (which wins), then PYICEBERG_ variables,
// then ICECTL_ ones (which win).
func LoadSources(l Lookup) (Sources, error) {
	var s Sources
	py, err := PyIcebergFile(l)
	if err != nil {
		return s, err
	}
	ic, err := IcectlFile(l)
	if err != nil {
		return s, err
	}
	for _, f := range []*File{py, ic} {
		if f != nil {
			s.Files = append(s.Files, f)
		}
	}
	s.Env = []*File{ParseEnv(l.Environ, prefixPyIceberg), ParseEnv(l.Environ, prefixIcectl)}
	return s, nil
}

// Resolve picks the catalog to open. Precedence: flags, then environment,
// then configuration files.
//
//   - --catalog NAME selects a configured catalog; without it the
//     default-catalog setting (environment, then files) or "default".
//   - --catalog-uri without --catalog names a complete catalog on its own:
//     configured properties are not merged into it, so credentials meant
//     for one server are never sent to another.
//   - Within a file layer a catalog entry is taken whole from the
//     highest-precedence file that defines it; environment variables then
//     override single properties, and flags override those.
func Resolve(flags Flags, s Sources) (*Catalog, error) {
	c := &Catalog{Props: map[string]string{}}
	name := strings.ToLower(flags.Catalog)
	standalone := name == "" && flags.URI != ""
	if name == "" && !standalone {
		name = defaultName(s)
	}
	if standalone {
		name = DefaultCatalogName
	}
	c.Name = name

	uriSource := ""
	found := false
	if !standalone {
		for i := len(s.Files) - 1; i >= 0; i-- {
			if props, ok := s.Files[i].Catalogs[name]; ok {
				found = true
				c.Sources = append(c.Sources, s.Files[i].Path)
				for k, v := range props {
					c.Props[k] = v
				}
				if _, ok := props["uri"]; ok {
					uriSource = s.Files[i].Path
				}
				break
			}
		}
		for _, e := range s.Env {
			props, ok := e.Catalogs[name]
			if !ok {
				continue
			}
			found = true
			c.Sources = append(c.Sources, e.Path)
			for k, v := range props {
				c.Props[k] = v
			}
			if _, ok := props["uri"]; ok {
				uriSource = e.Path
				if v := e.URIVars[name]; v != "" {
					uriSource = v
				}
			}
		}
	}
	if flags.URI != "" {
		c.Props["uri"] = flags.URI
		uriSource = "--catalog-uri"
		c.Sources = append(c.Sources, "--catalog-uri")
	}
	if flags.Warehouse != "" {
		c.Props["warehouse"] = flags.Warehouse
		c.Sources = append(c.Sources, "--warehouse")
	}
	if flags.CatalogName != "" {
		c.Name = flags.CatalogName
	}

	c.URI, c.Warehouse, c.Type = c.Props["uri"], c.Props["warehouse"], strings.ToLower(c.Props["type"])
	delete(c.Props, "uri")
	delete(c.Props, "warehouse")
	delete(c.Props, "type")

	if c.URI == "" && c.Warehouse == "" {
		switch {
		case flags.Catalog != "" && !found:
			return nil, fmt.Errorf("catalog %q is not configured (looked in %s)", flags.Catalog, describe(s))
		case found:
			return nil, fmt.Errorf("catalog %q has no uri", name)
		}
		return nil, fmt.Errorf("no catalog: give --catalog-uri URI, --warehouse file:///path, or --catalog NAME of a catalog configured in ~/.icectl.yaml or .pyiceberg.yaml")
	}
	if err := c.checkType(); err != nil {
		return nil, err
	}
	if c.URI == "" {
		// Only a warehouse: the file catalog rooted there.
		u, err := fileWarehouse(c.Warehouse)
		if err != nil {
			return nil, fmt.Errorf("catalog %q: %w", name, err)
		}
		c.URI, uriSource = u, "--warehouse"
	}
	// Every source goes through the one grammar. The URI is kept as
	// written: the catalog parses it again, and an error about a missing
	// SQLite file can then name the other reading of its slashes.
	u, err := caturi.Parse(c.URI)
	if err != nil {
		return nil, fmt.Errorf("catalog %q (uri from %s): %w", name, uriSource, err)
	}
	if c.Type == "hive" && u.Kind != caturi.Hive {
		return nil, fmt.Errorf("catalog %q: type hive needs a metastore uri thrift://host:9083, not %s", name, caturi.Redact(c.URI))
	}
	c.Kind = u.Kind
	return c, nil
}

// checkType refuses catalog types icectl does not implement, instead of
// guessing from the URI.
func (c *Catalog) checkType() error {
	switch c.Type {
	case "", "sql", "rest", "file", "hadoop", "hive":
		return nil
	}
	return fmt.Errorf("catalog %q: type %q is not supported (icectl supports sql, rest, file and hive catalogs)", c.Name, c.Type)
}

// fileWarehouse turns a local warehouse location into a file catalog URI.
func fileWarehouse(wh string) (string, error) {
	if strings.HasPrefix(wh, "file:") {
		return wh, nil
	}
	if strings.Contains(wh, "://") {
		return "", fmt.Errorf("warehouse %s without a catalog uri: only a local warehouse (file:///path) is a catalog by itself", caturi.Redact(wh))
	}
	abs, err := filepath.Abs(wh)
	if err != nil {
		return "", fmt.Errorf("warehouse %s: %w", wh, err)
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(), nil
}

// defaultName is the default-catalog setting, environment first.
func defaultName(s Sources) string {
	for i := len(s.Env) - 1; i >= 0; i-- {
		if n := s.Env[i].DefaultCatalog; n != "" {
			return n
		}
	}
	for i := len(s.Files) - 1; i >= 0; i-- {
		if n := s.Files[i].DefaultCatalog; n != "" {
			return n
		}
	}
	return DefaultCatalogName
}

func describe(s Sources) string {
	var where []string
	for _, f := range s.Files {
		where = append(where, fmt.Sprintf("%s (catalogs: %s)", f.Path, strings.Join(f.Names(), ", ")))
	}
	where = append(where, "$ICECTL_CATALOG__* and $PYICEBERG_CATALOG__*")
	return strings.Join(where, ", ")
}
