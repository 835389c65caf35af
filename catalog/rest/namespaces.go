package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/icectl/icectl/catalog"
)

// maxPages bounds a paginated listing, so a server that keeps returning
// page tokens cannot keep the client busy forever.
const maxPages = 100000

// ListNamespaces returns the namespaces directly under parent (all
// top-level namespaces when parent is empty), following page tokens.
func (c *Catalog) ListNamespaces(ctx context.Context, parent []string) ([][]string, error) {
	op := "rest catalog: list namespaces"
	q := url.Values{}
	if len(parent) > 0 {
		op += " under " + strings.Join(parent, ".")
		q.Set("parent", c.namespaceQuery(parent))
	}
	var out [][]string
	err := c.paginate(ctx, op, c.v1("namespaces"), q, catalog.ErrNoSuchNamespace, func(body []byte) (string, error) {
		var page struct {
			Namespaces    [][]string `json:"namespaces"`
			NextPageToken *string    `json:"next-page-token"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return "", err
		}
		for _, ns := range page.Namespaces {
			if isChild(parent, ns) {
				out = append(out, ns)
			}
		}
		return deref(page.NextPageToken), nil
	})
	return out, err
}

// isChild reports whether ns is a direct child of parent. The REST spec
// lists direct children only, but some servers (weed mini) list every
// descendant; the Catalog interface promises direct children.
func isChild(parent, ns []string) bool {
	return len(ns) == len(parent)+1 && slices.Equal(ns[:len(parent)], parent)
}

// CreateNamespace creates ns with the given properties. Levels must not
// contain dots, as in every icectl catalog: a dotted level could not be
// named in a dotted table name.
func (c *Catalog) CreateNamespace(ctx context.Context, ns []string, props map[string]string) error {
	op := "rest catalog: create namespace " + strings.Join(ns, ".")
	if err := catalog.ValidateNamespace(ns); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if props == nil {
		props = map[string]string{}
	}
	body, err := json.Marshal(struct {
		Namespace  []string          `json:"namespace"`
		Properties map[string]string `json:"properties"`
	}{ns, props})
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	status, resp, err := c.send(ctx, call{method: http.MethodPost, path: c.v1("namespaces"), body: body})
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if status != http.StatusOK && status != http.StatusNoContent {
		return c.responseError(op, opCreate, catalog.ErrNoSuchNamespace, status, resp)
	}
	return nil
}

// DropNamespace drops ns when it has no tables and no child namespaces,
// asked first: servers check only for tables (Java's catalogs), and one
// with children would be dropped from under them. The server still
// refuses a namespace that is not empty by then (409).
func (c *Catalog) DropNamespace(ctx context.Context, ns []string) error {
	key := strings.Join(ns, ".")
	op := "rest catalog: drop namespace " + key
	if err := catalog.ValidateNamespace(ns); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	tables, err := c.ListTables(ctx, ns)
	if err != nil {
		return err
	}
	children, err := c.ListNamespaces(ctx, ns)
	if err != nil {
		return err
	}
	if len(tables) > 0 || len(children) > 0 {
		return fmt.Errorf("%s: %w (%d tables, %d namespaces in it)", op, catalog.ErrNamespaceNotEmpty, len(tables), len(children))
	}
	p, err := c.namespacePath(ns)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	status, resp, err := c.send(ctx, call{method: http.MethodDelete, path: c.v1("namespaces", p)})
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if status != http.StatusNoContent && status != http.StatusOK {
		return c.responseError(op, opRead, catalog.ErrNoSuchNamespace, status, resp)
	}
	return nil
}

// ListTables returns the tables of ns, following page tokens.
func (c *Catalog) ListTables(ctx context.Context, ns []string) ([]catalog.Ident, error) {
	op := "rest catalog: list tables in " + strings.Join(ns, ".")
	p, err := c.tablesPath(ns)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var out []catalog.Ident
	err = c.paginate(ctx, op, p, url.Values{}, catalog.ErrNoSuchNamespace, func(body []byte) (string, error) {
		var page struct {
			Identifiers   []identJSON `json:"identifiers"`
			NextPageToken *string     `json:"next-page-token"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return "", err
		}
		for _, id := range page.Identifiers {
			out = append(out, catalog.Ident{Namespace: id.Namespace, Name: id.Name})
		}
		return deref(page.NextPageToken), nil
	})
	return out, err
}

// paginate GETs path page by page, passing each body to page, which
// returns the next page token ("" at the end).
func (c *Catalog) paginate(ctx context.Context, op, path string, q url.Values, notFound error, page func([]byte) (string, error)) error {
	if ps := c.props[PropPageSize]; ps != "" {
		q.Set("pageSize", ps)
	}
	seen := map[string]bool{}
	token := ""
	for n := 0; n < maxPages; n++ {
		if token != "" {
			q.Set("pageToken", token)
		} else {
			// An empty pageToken asks a server that paginates to start
			// paginating; servers that do not ignore it.
			q.Set("pageToken", "")
		}
		status, body, err := c.send(ctx, call{method: http.MethodGet, path: path, query: q})
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if status != http.StatusOK {
			return c.responseError(op, opRead, notFound, status, body)
		}
		next, err := page(body)
		if err != nil {
			return fmt.Errorf("%s: malformed response: %w", op, err)
		}
		if next == "" {
			return nil
		}
		if seen[next] {
			return fmt.Errorf("%s: server repeated page token: %w", op, ErrUnexpected)
		}
		seen[next] = true
		token = next
	}
	return fmt.Errorf("%s: more than %d pages: %w", op, maxPages, ErrUnexpected)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
