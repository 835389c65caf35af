package rest

import "strings"

// longestPrefix returns the credential whose prefix is the longest prefix
// of location, nil when none matches.
func longestPrefix(creds []storageCredential, location string) *storageCredential {
	var best *storageCredential
	for i := range creds {
		cr := &creds[i]
		if !strings.HasPrefix(location, cr.Prefix) {
			continue
		}
		if best == nil || len(cr.Prefix) > len(best.Prefix) {
			best = cr
		}
	}
	return best
}
