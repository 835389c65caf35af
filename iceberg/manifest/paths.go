package manifest

import "fmt"

// checkPath refuses a path that is relative and climbs with ".."
// segments. The spec requires full URIs; a relative path would be
// resolved against the current directory, so "../../etc/passwd" in a
// crafted manifest would name a file outside any table. Absolute paths
// elsewhere stay allowed: tables may reference data in other locations.
func checkPath[S string | []byte](field string, p S) error {
	if !isRelative(p) || !hasDotDot(p) {
		return nil
	}
	return fmt.Errorf("%s %s is a relative path with \"..\" segments (Iceberg requires full URIs)", field, clip(fmt.Sprintf("%q", p)))
}

// isRelative reports whether p has neither a URI scheme nor a leading
// slash.
func isRelative[S string | []byte](p S) bool {
	if len(p) > 0 && p[0] == '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == ':':
			return i == 0
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return true
		}
	}
	return true
}

// hasDotDot reports whether a "/"-separated segment of p is "..".
func hasDotDot[S string | []byte](p S) bool {
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' || p[i] == '\\' {
			if i-start == 2 && p[start] == '.' && p[start+1] == '.' {
				return true
			}
			start = i + 1
		}
	}
	return false
}
