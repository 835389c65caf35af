package table

import (
	"fmt"

	"github.com/icectl/icectl/iceberg/manifest"
)

// FileKey identifies a live data file, delete file or deletion vector.
// DVs of many data files share one Puffin file, so the blob offset is part
// of the key.
type FileKey struct {
	Path string
	// ContentOffset is the DV blob offset, or -1 when the file is not a DV.
	ContentOffset int64
}

// KeyOf returns the key of df.
func KeyOf(df *manifest.DataFile) FileKey {
	k := FileKey{Path: df.FilePath, ContentOffset: -1}
	if df.ContentOffset != nil {
		k.ContentOffset = *df.ContentOffset
	}
	return k
}

// PathKey is the key of a file that is not a DV.
func PathKey(path string) FileKey { return FileKey{Path: path, ContentOffset: -1} }

func (k FileKey) String() string {
	if k.ContentOffset < 0 {
		return k.Path
	}
	return fmt.Sprintf("%s@%d", k.Path, k.ContentOffset)
}

// IsDV reports whether df is a deletion vector.
func IsDV(df *manifest.DataFile) bool {
	return df.Content == manifest.ContentPositionDeletes && df.ContentOffset != nil
}
