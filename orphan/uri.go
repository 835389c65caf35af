package orphan

import (
	"fmt"
	"strings"
)

// uriParts is a path split without decoding: S3 keys may hold '%', '?'
// and '#', which URL parsers would interpret.
type uriParts struct {
	scheme    string // lower-cased; "" for a plain path
	authority string // "" when there is none
	path      string // from the first '/' after the authority, as written
}

// splitURI splits p into scheme, authority and path. A single letter
// before ':' is a Windows drive, not a scheme.
func splitURI(p string) uriParts {
	i := strings.IndexByte(p, ':')
	if i < 2 || !isScheme(p[:i]) {
		return uriParts{path: p}
	}
	u := uriParts{scheme: strings.ToLower(p[:i])}
	rest := p[i+1:]
	if a, ok := strings.CutPrefix(rest, "//"); ok {
		j := strings.IndexByte(a, '/')
		if j < 0 {
			j = len(a)
		}
		u.authority, rest = a[:j], a[j:]
	}
	u.path = rest
	return u
}

func isScheme(s string) bool {
	for j := 0; j < len(s); j++ {
		c := s[j]
		alpha := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !alpha && !(j > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// pathKey is the key both sides are sorted and joined on: the path part
// with every run of slashes collapsed to one and no trailing slash. Two
// paths with the same key are treated as possibly the same file: a listed
// file whose key a reference shares is never an orphan unless the
// reference's scheme or authority differs (see Matcher). Collapsing only
// ever adds matches, so it can keep an orphan but never lose a live file
// (on S3 "a//b" and "a/b" are different objects; a writer that joined a
// location ending in '/' with "/data" wrote the former).
func pathKey(path string) string {
	var b strings.Builder
	b.Grow(len(path))
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && i > 0 && path[i-1] == '/' {
			continue
		}
		b.WriteByte(path[i])
	}
	k := b.String()
	if len(k) > 1 {
		k = strings.TrimSuffix(k, "/")
	}
	return k
}

// Matcher decides whether a listed file and a reference with the same key
// name the same file: their schemes and authorities must be equal after
// mapping through the equivalences. An empty scheme or authority on either
// side (a plain local path) matches anything, as in Java's action.
type Matcher struct {
	schemes     map[string]string
	authorities map[string]string
}

// DefaultEqualSchemes are Java's defaults, s3a and s3n are s3, and
// Azure's: abfss, wasb and wasbs are abfs (the same blob through the dfs
// or blob endpoint, with or without TLS), whose authorities are compared
// with the endpoint's label folded (see sameAzureAuthority).
var DefaultEqualSchemes = map[string]string{"s3a": "s3", "s3n": "s3", "abfss": "abfs", "wasb": "abfs", "wasbs": "abfs"}

// NewMatcher returns a Matcher with the given equivalences (from ->
// canonical) added to DefaultEqualSchemes. "file" is always a plain path.
func NewMatcher(equalSchemes, equalAuthorities map[string]string) Matcher {
	m := Matcher{schemes: map[string]string{"file": ""}, authorities: map[string]string{}}
	for k, v := range DefaultEqualSchemes {
		m.schemes[k] = v
	}
	for k, v := range equalSchemes {
		m.schemes[strings.ToLower(k)] = strings.ToLower(v)
	}
	for k, v := range equalAuthorities {
		m.authorities[strings.ToLower(k)] = strings.ToLower(v)
	}
	return m
}

func (m Matcher) scheme(s string) string {
	s = strings.ToLower(s)
	if c, ok := m.schemes[s]; ok {
		return c
	}
	return s
}

func (m Matcher) authority(a string) string {
	a = strings.ToLower(a)
	if c, ok := m.authorities[a]; ok {
		return c
	}
	return a
}

// Same reports whether a and b (with equal keys) name the same file.
func (m Matcher) Same(a, b string) bool {
	return m.mismatch(splitURI(a), splitURI(b)) == ""
}

// mismatch says how a and b differ ("" when they match).
func (m Matcher) mismatch(a, b uriParts) string {
	sa, sb := m.scheme(a.scheme), m.scheme(b.scheme)
	if sa != "" && sb != "" && sa != sb {
		return fmt.Sprintf("scheme %q vs %q", a.scheme, b.scheme)
	}
	aa, ab := m.authority(a.authority), m.authority(b.authority)
	if sa == "abfs" && sb == "abfs" {
		aa, ab = azureAuthority(aa), azureAuthority(ab)
	}
	if aa != "" && ab != "" && aa != ab {
		return fmt.Sprintf("authority %q vs %q", a.authority, b.authority)
	}
	return ""
}

// azureAuthority folds container@acct.blob.SUFFIX into
// container@acct.dfs.SUFFIX: wasb:// and abfs:// name one blob through the
// account's two endpoints.
func azureAuthority(a string) string {
	ctr, host, ok := strings.Cut(a, "@")
	if !ok {
		return a
	}
	acct, suffix, ok := strings.Cut(host, ".")
	if rest, isBlob := strings.CutPrefix(suffix, "blob."); ok && isBlob {
		return ctr + "@" + acct + ".dfs." + rest
	}
	return a
}

// ParseEquivalences parses "FROM[,FROM...]=TO" values (repeatable flags)
// into a map from each FROM to TO.
func ParseEquivalences(vals []string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range vals {
		from, to, ok := strings.Cut(v, "=")
		to = strings.TrimSpace(to)
		if !ok || to == "" || strings.TrimSpace(from) == "" {
			return nil, fmt.Errorf("%q: want FROM[,FROM...]=TO", v)
		}
		for _, f := range strings.Split(from, ",") {
			if f = strings.TrimSpace(f); f == "" {
				return nil, fmt.Errorf("%q: empty name before '='", v)
			}
			out[f] = to
		}
	}
	return out, nil
}

// listingRoot is the directory a location names, with exactly one
// trailing slash: listing "s3://b/t" as a plain prefix would also list a
// sibling table "s3://b/t2".
func listingRoot(location string) (string, error) {
	root := strings.TrimRight(location, "/")
	u := splitURI(root)
	if root == "" || (u.scheme != "" && u.authority == "" && u.path == "") {
		return "", fmt.Errorf("location %q names no directory", location)
	}
	if u.scheme != "" && u.scheme != "file" && u.authority == "" {
		return "", fmt.Errorf("location %q has no bucket or authority", location)
	}
	return root + "/", nil
}
