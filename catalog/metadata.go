package catalog

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
)

// Table properties read by metastore catalogs (Java TableProperties).
const (
	PropMetadataCompression = "write.metadata.compression-codec"
	PropMetadataPath        = spec.PropMetadataPath
	PropDeleteAfterCommit   = reclaim.PropDeleteAfterCommit
)

// ReadMetadata reads and parses the metadata file at location. A file that
// cannot be parsed gives an error wrapping ErrCorruptMetadata and naming
// the file; a missing file wraps fileio.ErrNotFound.
func ReadMetadata(ctx context.Context, fio fileio.FileIO, location string) (*spec.TableMetadata, error) {
	data, err := fileio.ReadFile(ctx, fio, location)
	if err != nil {
		return nil, fmt.Errorf("read table metadata: %w", err) // err names the file
	}
	md, err := spec.ParseMetadata(data)
	if err != nil {
		if errors.Is(err, spec.ErrUnsupportedFormatVersion) {
			return nil, fmt.Errorf("table metadata %s: %w", location, err)
		}
		return nil, fmt.Errorf("table metadata %s: %w: %w", location, ErrCorruptMetadata, err)
	}
	return md, nil
}

// MetadataVersion parses the version number from a metadata file name:
// "00012-<uuid>.metadata.json" (metastore naming, optionally with a codec
// such as ".gz" before ".metadata.json") or "v12.metadata.json" (Hadoop).
func MetadataVersion(location string) (int, bool) {
	name := path.Base(location)
	rest, ok := strings.CutSuffix(name, ".metadata.json")
	if !ok {
		return 0, false
	}
	var digits string
	if v, ok := strings.CutPrefix(rest, "v"); ok {
		// vN.metadata.json (Hadoop), vN.gz.metadata.json, and vN-<uuid>
		// as weed's REST catalog names files written by racing commits.
		digits = v[:len(v)-len(strings.TrimLeft(v, "0123456789"))]
		if tail := v[len(digits):]; tail != "" && tail[0] != '.' && tail[0] != '-' {
			return 0, false
		}
	} else {
		var found bool
		digits, _, found = strings.Cut(rest, "-")
		if !found {
			return 0, false
		}
	}
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	return n, true
}

// NextMetadataVersion is the version number of the metadata file that
// follows the one at location. When the name carries no version (written
// by a catalog with other naming), the metadata-log length stands in, so
// numbers still grow.
func NextMetadataVersion(location string, md *spec.TableMetadata) int {
	if v, ok := MetadataVersion(location); ok {
		return v + 1
	}
	return len(md.MetadataLog) + 1
}

// MetadataGzip reports whether md asks for gzip-compressed metadata files.
func MetadataGzip(md *spec.TableMetadata) bool {
	return strings.EqualFold(md.Property(PropMetadataCompression, "none"), "gzip")
}

// MetadataDir is where md's metadata files go: write.metadata.path, or
// <location>/metadata.
func MetadataDir(md *spec.TableMetadata) string { return md.MetadataDir() }

// NewMetadataLocation names a new metastore metadata file for md, Java
// style: <metadata dir>/NNNNN-<uuid>.metadata.json, or .gz.metadata.json
// when the table asks for gzip.
func NewMetadataLocation(md *spec.TableMetadata, version int) string {
	ext := ".metadata.json"
	if MetadataGzip(md) {
		ext = ".gz.metadata.json"
	}
	return fmt.Sprintf("%s/%05d-%s%s", MetadataDir(md), version, uuid.NewString(), ext)
}

// WriteMetadata writes md to location, gzip-compressed when the name ends
// in .gz.metadata.json.
func WriteMetadata(ctx context.Context, fio fileio.FileIO, location string, md *spec.TableMetadata) error {
	data, err := md.Marshal(strings.HasSuffix(location, ".gz.metadata.json"))
	if err != nil {
		return fmt.Errorf("encode table metadata %s: %w", location, err)
	}
	if err := fileio.WriteFile(ctx, fio, location, data); err != nil {
		return fmt.Errorf("write table metadata: %w", err) // err names location
	}
	return nil
}
