package config

import "strings"

// Env prefixes. ICECTL_ variables win over PYICEBERG_ ones.
const (
	prefixPyIceberg = "pyiceberg_"
	prefixIcectl    = "icectl_"
)

// ParseEnv reads the variables of environ (KEY=VALUE) that start with
// prefix ("pyiceberg_" or "icectl_", matched case-insensitively) the way
// PyIceberg does: lower-case the rest, split it on "__" into at most three
// parts, and in each part turn "__" into "." and "_" into "-". Only
// default-catalog and catalog.<name>.<key> mean something to icectl; empty
// values are ignored, as PyIceberg's merge ignores them.
func ParseEnv(environ []string, prefix string) *File {
	f := &File{Path: "$" + strings.ToUpper(prefix) + "*", Catalogs: map[string]map[string]string{}}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			continue
		}
		k = strings.ToLower(k)
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		parts := strings.SplitN(k[len(prefix):], "__", 3)
		for i, p := range parts {
			parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "__", "."), "_", "-")
		}
		switch {
		case len(parts) == 1 && parts[0] == "default-catalog":
			f.DefaultCatalog = strings.ToLower(v)
		case len(parts) == 3 && parts[0] == "catalog" && parts[1] != "" && parts[2] != "":
			props := f.Catalogs[parts[1]]
			if props == nil {
				props = map[string]string{}
				f.Catalogs[parts[1]] = props
			}
			props[parts[2]] = v
			if parts[2] == "uri" {
				if f.URIVars == nil {
					f.URIVars = map[string]string{}
				}
				f.URIVars[parts[1]] = "$" + strings.ToUpper(kv[:len(k)])
			}
		}
	}
	return f
}
