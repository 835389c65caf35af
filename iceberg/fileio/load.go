package fileio

import (
	"context"
	"fmt"
	"strings"
)

// Load returns the FileIO for a location, chosen by its URI scheme: none or
// file: for local files, s3:, s3a: and s3n: for S3 (configured by props, see
// NewS3), gs: for Google Cloud Storage (NewGCS), abfs:, abfss:, wasb: and
// wasbs: for Azure Blob Storage and ADLS Gen2 (NewAzure), mem: for a new,
// empty in-memory store.
func Load(ctx context.Context, location string, props map[string]string) (FileIO, error) {
	switch scheme := schemeOf(location); scheme {
	case "", "file":
		return NewLocal(), nil
	case "s3", "s3a", "s3n":
		return NewS3(ctx, props)
	case "gs":
		return NewGCS(ctx, props)
	case "abfs", "abfss", "wasb", "wasbs":
		return NewAzure(ctx, props)
	case "mem":
		return NewMem(), nil
	default:
		return nil, fmt.Errorf("load file IO for %q: unsupported scheme %q", location, scheme)
	}
}

// schemeOf returns the lower-cased URI scheme of location, or "" for a plain
// path. A single letter before the colon is a Windows drive, not a scheme.
func schemeOf(location string) string {
	i := strings.IndexByte(location, ':')
	if i < 2 {
		return ""
	}
	for j := 0; j < i; j++ {
		c := location[j]
		isAlpha := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !isAlpha && !(j > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return ""
		}
	}
	return strings.ToLower(location[:i])
}
