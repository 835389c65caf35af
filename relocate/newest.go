// Package relocate moves tables between locations and catalogs: it checks
// that a metadata file is the newest of its directory before a catalog
// registers it (register_table), and writes a copy of a table's metadata
// with every path's prefix replaced, plus the list of files to copy
// (rewrite_table_path), as Iceberg Java's RewriteTablePathSparkAction
// does.
//
// It never changes the table it reads: everything it writes goes under
// a staging directory that was empty, and a run that fails removes what
// it wrote there. It never writes a path that does not start with the
// source prefix into the copy: such a table is refused whole.
package relocate

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
)

// ErrNotNewest is wrapped when a metadata file is not the newest of its
// directory, or when the directory cannot tell.
var ErrNotNewest = errors.New("not the newest metadata file")

// VersionHintFile is the Hadoop layout's pointer to the current version.
const VersionHintFile = "version-hint.text"

// CheckNewest checks that loc is the newest metadata file in its
// directory. Newest means, by the version number in the file names
// (NNNNN-<uuid>.metadata.json, vN.metadata.json): no other metadata file
// of the directory has a higher version, none has the same version (two
// commits raced; which one a catalog took cannot be told from the files),
// and version-hint.text, when there, names no higher version. A name
// without a version is newest when no other metadata file of the
// directory lists it in its metadata-log (read from each file).
func CheckNewest(ctx context.Context, fio fileio.FileIO, loc string) error {
	lister, ok := fio.(fileio.Lister)
	if !ok {
		return fmt.Errorf("cannot list %s to find its newest metadata file", path.Dir(loc))
	}
	dir := loc[:strings.LastIndex(loc, "/")+1]
	if dir == "" {
		return fmt.Errorf("metadata file %s: want a path with a directory", loc)
	}
	var others []string
	hint := false
	err := lister.List(ctx, dir, func(fi fileio.FileInfo) error {
		name := strings.TrimPrefix(fi.Path, dir)
		switch {
		case strings.Contains(name, "/"):
		case name == VersionHintFile:
			hint = true
		case fi.Path != loc && isMetadataName(name):
			others = append(others, fi.Path)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	slices.Sort(others)
	v, versioned := catalog.MetadataVersion(loc)
	if !versioned {
		return newestByLog(ctx, fio, loc, others)
	}
	for _, o := range others {
		ov, ok := catalog.MetadataVersion(o)
		switch {
		case !ok:
		case ov > v:
			return fmt.Errorf("%w: %s has version %d, higher than %d", ErrNotNewest, path.Base(o), ov, v)
		case ov == v:
			return fmt.Errorf("%w: %s has the same version %d, so which is newest cannot be told", ErrNotNewest, path.Base(o), v)
		}
	}
	if hint {
		data, err := fileio.ReadFile(ctx, fio, dir+VersionHintFile)
		if err != nil {
			return err
		}
		if hv, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && hv > v {
			return fmt.Errorf("%w: %s names version %d, higher than %d", ErrNotNewest, VersionHintFile, hv, v)
		}
	}
	return nil
}

func newestByLog(ctx context.Context, fio fileio.FileIO, loc string, others []string) error {
	for _, o := range others {
		md, err := catalog.ReadMetadata(ctx, fio, o)
		if err != nil {
			return fmt.Errorf("%w: %s carries no version and %v", ErrNotNewest, path.Base(loc), err)
		}
		for _, e := range md.MetadataLog {
			if e.MetadataFile == loc {
				return fmt.Errorf("%w: %s lists it in its metadata-log", ErrNotNewest, path.Base(o))
			}
		}
	}
	return nil
}

func isMetadataName(name string) bool {
	return strings.HasSuffix(name, ".metadata.json") || strings.HasSuffix(name, ".metadata.json.gz")
}
