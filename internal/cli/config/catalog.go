package config

import (
	"net/url"
	"sort"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/caturi"
)

// Catalog is a resolved catalog: what catalogs.Open needs, plus where it
// came from.
type Catalog struct {
	// Name is the catalog's name: the key in the configuration file, and
	// the catalog_name of SQL catalogs.
	Name      string
	URI       string
	Warehouse string
	// Type is the "type" property when one was given (sql, rest, file).
	Type string
	// Kind is the kind of catalog URI names.
	Kind caturi.Kind
	// Props holds every other property (s3.*, credential, token, ...).
	// It may hold secrets: print only Redacted().Props.
	Props map[string]string
	// Sources lists, for people, where the settings came from.
	Sources []string
}

// IsSecret reports whether a property holds a secret (caturi.IsSecret).
func IsSecret(key string) bool { return caturi.IsSecret(key) }

// Config returns the catalog.Config that opens c.
func (c *Catalog) Config() catalog.Config {
	props := make(map[string]string, len(c.Props))
	for k, v := range c.Props {
		props[k] = v
	}
	return catalog.Config{Name: c.Name, URI: c.URI, Warehouse: c.Warehouse, Props: props}
}

// Redacted returns a copy of c that is safe to print: secret properties and
// any secret in the URI or warehouse (caturi.Redact) are replaced by "****".
func (c *Catalog) Redacted() *Catalog {
	r := *c
	r.URI = caturi.Redact(c.URI)
	r.Warehouse = caturi.Redact(c.Warehouse)
	r.Props = make(map[string]string, len(c.Props))
	for k, v := range c.Props {
		if IsSecret(k) {
			v = caturi.Redacted
		} else {
			v = caturi.Redact(v)
		}
		r.Props[k] = v
	}
	r.Sources = append([]string(nil), c.Sources...)
	return &r
}

// Secrets returns the secret values of c (longest first), for scrubbing
// text that might echo them.
func (c *Catalog) Secrets() []string {
	var out []string
	add := func(s string) {
		if len(s) >= 3 {
			out = append(out, s, url.QueryEscape(s), url.PathEscape(s))
		}
	}
	for k, v := range c.Props {
		if IsSecret(k) {
			add(v)
			// A credential is "client-id:client-secret": the secret half
			// alone is also a secret.
			if _, after, ok := strings.Cut(v, ":"); ok {
				add(after)
			}
		}
	}
	for _, u := range []string{c.URI, c.Warehouse} {
		for _, p := range caturi.Secrets(u) {
			add(p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// Scrub replaces every secret value of c that occurs in s.
func (c *Catalog) Scrub(s string) string {
	for _, secret := range c.Secrets() {
		s = strings.ReplaceAll(s, secret, caturi.Redacted)
	}
	return s
}
