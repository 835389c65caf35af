package table

import (
	"github.com/google/uuid"
	"github.com/icectl/icectl/iceberg/spec"
)

// Table properties naming where new files go.
const (
	PropDataPath     = spec.PropDataPath
	PropMetadataPath = spec.PropMetadataPath
)

// NewSnapshotID returns a positive snapshot id the way Java does: the two
// halves of a random UUID XORed, with the sign bit cleared.
func NewSnapshotID() int64 {
	for {
		u := uuid.New()
		var hi, lo uint64
		for i := range 8 {
			hi = hi<<8 | uint64(u[i])
			lo = lo<<8 | uint64(u[8+i])
		}
		if id := int64((hi ^ lo) & (1<<63 - 1)); id != 0 {
			return id
		}
	}
}

// DataLocation is the directory new data files go to: write.data.path, or
// <location>/data.
func DataLocation(md *spec.TableMetadata) string { return md.DataDir() }

// MetadataLocation is the directory new metadata files go to:
// write.metadata.path, or <location>/metadata.
func MetadataLocation(md *spec.TableMetadata) string { return md.MetadataDir() }
