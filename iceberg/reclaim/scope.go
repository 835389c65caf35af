package reclaim

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/icectl/icectl/iceberg/spec"
)

// Table properties that name directories a table writes into (Java
// TableProperties); each is a root of the table's scope.
const (
	PropDataPath          = "write.data.path"
	PropMetadataPath      = "write.metadata.path"
	PropObjectStoragePath = "write.object-storage.path"
	PropFolderStoragePath = "write.folder-storage.path" // deprecated name of the object-storage path
)

// Scope is the set of directories a table owns. Nothing outside it is ever
// deleted. A root is always a directory: the root s3://b/t covers
// s3://b/t/x but never s3://b/t2/x.
type Scope struct {
	roots []string // canonical, without a trailing slash, sorted, unique
}

// TableScope is the scope of a table: its location and every write path its
// properties name. A property naming a root that is too broad to own (a
// bucket, a file system root) or not a full URI/absolute path is left out,
// so such a table can delete only inside its location.
func TableScope(md *spec.TableMetadata) Scope {
	var s Scope
	s.add(md.Location)
	for _, p := range []string{PropDataPath, PropMetadataPath, PropObjectStoragePath, PropFolderStoragePath} {
		if v := md.Properties[p]; v != "" {
			s.add(v)
		}
	}
	return s
}

// NewScope returns a scope of the given root directories, with the same
// rules as TableScope. It is for callers that narrow a table's scope (the
// metadata directory alone, an orphan run's --location).
func NewScope(roots ...string) Scope {
	var s Scope
	for _, r := range roots {
		s.add(r)
	}
	return s
}

func (s *Scope) add(root string) {
	c, err := canonical(root)
	if err != nil || !ownable(c) {
		return
	}
	c = strings.TrimSuffix(c, "/")
	if i, found := slices.BinarySearch(s.roots, c); !found {
		s.roots = slices.Insert(s.roots, i, c)
	}
}

// Roots returns the scope's root directories in canonical form, sorted.
func (s Scope) Roots() []string { return slices.Clone(s.roots) }

// Contains reports whether p lies strictly inside one of the scope's root
// directories. Relative paths and paths with "." or ".." segments are never
// contained, whatever they would resolve to.
func (s Scope) Contains(p string) bool {
	return s.check(p) == nil
}

// check explains why p is outside the scope, or returns nil.
func (s Scope) check(p string) error {
	c, err := canonical(p)
	if err != nil {
		return err
	}
	for _, r := range s.roots {
		if strings.HasPrefix(c, r+"/") && len(c) > len(r)+1 {
			return nil
		}
	}
	if len(s.roots) == 0 {
		return fmt.Errorf("the table has no location to delete inside")
	}
	return fmt.Errorf("outside the table's locations (%s)", strings.Join(s.roots, ", "))
}

// canonical returns the form of a location used to compare it with roots:
// local paths as file:///abs/path (plain, file:/ and file:/// forms are one
// file), s3a:// and s3n:// as s3:// (the same object), abfss://, wasb://
// and wasbs:// as abfs:// on the account's dfs host. It refuses what a
// table never legitimately names: relative paths, "." and ".." segments,
// hosts in file URIs, and empty segments on local paths are folded (the
// kernel does the same).
func canonical(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty path")
	}
	scheme, rest, hasScheme := strings.Cut(p, "://")
	if !hasScheme {
		if r, ok := strings.CutPrefix(p, "file:"); ok {
			scheme, rest = "file", r
		} else {
			scheme, rest = "file", p
		}
		if !strings.HasPrefix(rest, "/") {
			return "", fmt.Errorf("relative path %q: table files are named by absolute paths or URIs", p)
		}
	} else if scheme == "file" {
		rest = strings.TrimPrefix(rest, "localhost")
		if !strings.HasPrefix(rest, "/") {
			return "", fmt.Errorf("file URI %q names a host", p)
		}
	}
	scheme = strings.ToLower(scheme)
	switch scheme {
	case "s3a", "s3n":
		scheme = "s3"
	case "abfss", "wasb", "wasbs":
		// One blob through the account's dfs or blob endpoint, with or
		// without TLS: container@acct.blob.SUFFIX is container@acct.dfs.SUFFIX.
		scheme = "abfs"
	}
	if scheme == "abfs" {
		auth, path, _ := strings.Cut(rest, "/")
		if ctr, host, ok := strings.Cut(auth, "@"); ok {
			if acct, suffix, ok := strings.Cut(host, "."); ok {
				if r, isBlob := strings.CutPrefix(suffix, "blob."); isBlob {
					rest = ctr + "@" + acct + ".dfs." + r + "/" + path
				}
			}
		}
	}
	for seg := range strings.SplitSeq(rest, "/") { // no slice: called for every path a delete file names
		if seg == "." || seg == ".." {
			return "", fmt.Errorf("path %q has a %q segment", p, seg)
		}
	}
	if scheme == "file" {
		cleaned := path.Clean(rest)
		if strings.HasSuffix(rest, "/") && cleaned != "/" {
			cleaned += "/"
		}
		return "file://" + cleaned, nil
	}
	if rest == "" || strings.HasPrefix(rest, "/") {
		return "", fmt.Errorf("URI %q has no bucket or host", p)
	}
	return scheme + "://" + rest, nil
}

// ownable reports whether a canonical root is narrow enough to be a table's:
// at least one directory below a file system root or a bucket.
func ownable(c string) bool {
	_, rest, _ := strings.Cut(c, "://")
	rest = strings.Trim(rest, "/")
	if strings.HasPrefix(c, "file://") {
		return rest != ""
	}
	_, key, _ := strings.Cut(rest, "/")
	return strings.Trim(key, "/") != ""
}
