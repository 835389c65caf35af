package caturi

import (
	"regexp"
	"slices"
	"strings"
)

// Redacted replaces a secret in printed text.
const Redacted = "****"

// IsSecret reports whether a property or parameter name holds a secret: a
// key, token, password or credential. Unknown names that look like
// secrets count as secrets, because printing one is worse than hiding a
// harmless value.
func IsSecret(key string) bool {
	k := strings.ToLower(key)
	for _, s := range []string{"secret", "password", "passwd", "pwd", "token", "credential"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	last := k[strings.LastIndexAny(k, ".")+1:]
	return last == "key" || strings.HasSuffix(last, "-key") || strings.HasSuffix(last, "_key")
}

// param matches one name=value pair of a query string or of a key=value
// DSN (host=h password='a b'): the name after a start, ?, &, ; or space,
// the value up to the next separator or, quoted, to its closing quote.
var param = regexp.MustCompile(`(^|[?&;\s])([A-Za-z0-9_.\-]+)=('(?:[^'\\]|\\.)*'?|[^&;\s#]*)`)

// Redact returns s, a URI, DSN or any text holding one, with every secret
// replaced by "****": the password of the user info (everything between the
// first colon after "://" and the last "@") and the value of every
// parameter whose name looks secret (password=, sslpassword=, token=, ...),
// in a query or a key=value DSN. It works on the text, not on a parsed URL,
// so a URI that does not parse loses its secret too.
func Redact(s string) string {
	out, _ := redact(s)
	return out
}

// Secrets returns the secret values Redact hides in s, longest first, so
// that text echoing them (a driver's error message) can be scrubbed.
func Secrets(s string) []string {
	_, secrets := redact(s)
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	return secrets
}

func redact(s string) (string, []string) {
	var secrets []string
	s = param.ReplaceAllStringFunc(s, func(m string) string {
		sub := param.FindStringSubmatch(m)
		if !IsSecret(sub[2]) || sub[3] == "" {
			return m
		}
		secrets = append(secrets, strings.Trim(sub[3], "'"))
		return sub[1] + sub[2] + "=" + Redacted
	})
	// The user info, after the parameters so that an @ inside a secret
	// parameter value is gone already.
	i := strings.Index(s, "://")
	if i < 0 {
		return s, secrets
	}
	rest := s[i+3:]
	at := strings.LastIndex(rest, "@")
	if at < 0 || strings.HasPrefix(rest, "/") {
		return s, secrets
	}
	user, pass, ok := strings.Cut(rest[:at], ":")
	if !ok || pass == "" || pass == Redacted {
		return s, secrets
	}
	secrets = append(secrets, pass)
	return s[:i+3] + user + ":" + Redacted + rest[at:], secrets
}
