package rest

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/icectl/icectl/catalog"
)

// v1 returns the escaped path "v1/<prefix>/<rest...>", each rest segment
// already escaped.
func (c *Catalog) v1(segments ...string) string {
	parts := []string{"v1"}
	if c.prefix != "" {
		parts = append(parts, escapePrefix(c.prefix))
	}
	return strings.Join(append(parts, segments...), "/")
}

// escapePrefix escapes each segment of a prefix, which may contain "/".
func escapePrefix(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// namespacePath encodes a namespace as one path segment: levels escaped
// and joined by the (already URL-encoded) separator, %1F by default.
func (c *Catalog) namespacePath(ns []string) (string, error) {
	if len(ns) == 0 {
		return "", fmt.Errorf("empty namespace")
	}
	levels := make([]string, len(ns))
	for i, l := range ns {
		if l == "" {
			return "", fmt.Errorf("namespace %q: empty level", strings.Join(ns, "."))
		}
		levels[i] = url.PathEscape(l)
	}
	return strings.Join(levels, c.separator), nil
}

// namespaceQuery encodes a namespace for the "parent" query parameter:
// levels joined by the decoded separator (query encoding happens later).
func (c *Catalog) namespaceQuery(ns []string) string {
	sep, err := url.PathUnescape(c.separator)
	if err != nil {
		sep = c.separator
	}
	return strings.Join(ns, sep)
}

func (c *Catalog) tablesPath(ns []string) (string, error) {
	nsp, err := c.namespacePath(ns)
	if err != nil {
		return "", err
	}
	return c.v1("namespaces", nsp, "tables"), nil
}

func (c *Catalog) tablePath(id catalog.Ident) (string, error) {
	if id.Name == "" {
		return "", fmt.Errorf("table %s: empty table name", id)
	}
	tp, err := c.tablesPath(id.Namespace)
	if err != nil {
		return "", fmt.Errorf("table %s: %w", id, err)
	}
	return tp + "/" + url.PathEscape(id.Name), nil
}

// identJSON is the REST TableIdentifier.
type identJSON struct {
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
}

func toIdentJSON(id catalog.Ident) identJSON {
	ns := id.Namespace
	if ns == nil {
		ns = []string{}
	}
	return identJSON{Namespace: ns, Name: id.Name}
}
