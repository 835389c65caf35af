package config

import (
	"net/url"
	"sort"
	"strings"

	"github.com/icectl/icectl/catalog"
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
	// Props holds every other property (s3.*, credential, token, ...).
	// It may hold secrets: print only Redacted().Props.
	Props map[string]string
	// Sources lists, for people, where the settings came from.
	Sources []string
}

// redactedValue replaces secret values in printed output.
const redactedValue = "****"

// IsSecret reports whether a property holds a secret: a key, token,
// password or credential. Unknown keys that look like secrets count as
// secrets, because printing one is worse than hiding a harmless value.
func IsSecret(key string) bool {
	k := strings.ToLower(key)
	for _, s := range []string{"secret", "password", "passwd", "token", "credential"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	last := k[strings.LastIndexAny(k, ".")+1:]
	return last == "key" || strings.HasSuffix(last, "-key") || strings.HasSuffix(last, "_key")
}

// Config returns the catalog.Config that opens c.
func (c *Catalog) Config() catalog.Config {
	props := make(map[string]string, len(c.Props))
	for k, v := range c.Props {
		props[k] = v
	}
	return catalog.Config{Name: c.Name, URI: c.URI, Warehouse: c.Warehouse, Props: props}
}

// Redacted returns a copy of c that is safe to print: secret properties and
// any password in the URI or warehouse are replaced by "****".
func (c *Catalog) Redacted() *Catalog {
	r := *c
	r.URI = redactURL(c.URI)
	r.Warehouse = redactURL(c.Warehouse)
	r.Props = make(map[string]string, len(c.Props))
	for k, v := range c.Props {
		if IsSecret(k) {
			v = redactedValue
		} else {
			v = redactURL(v)
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
		if p := urlPassword(u); p != "" {
			add(p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// Scrub replaces every secret value of c that occurs in s.
func (c *Catalog) Scrub(s string) string {
	for _, secret := range c.Secrets() {
		s = strings.ReplaceAll(s, secret, redactedValue)
	}
	return s
}

// redactURL hides the password of a URL; anything else is returned as is.
func redactURL(s string) string {
	if urlPassword(s) == "" {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	u.User = url.UserPassword(u.User.Username(), redactedValue)
	// url.String would escape the stars; build the text by hand.
	return strings.Replace(u.String(), url.QueryEscape(redactedValue), redactedValue, 1)
}

func urlPassword(s string) string {
	if !strings.Contains(s, "://") || !strings.Contains(s, "@") {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}
