package puffin

// FileMetadata is the footer of a Puffin file.
type FileMetadata struct {
	Blobs      []BlobMetadata
	Properties map[string]string
	// PropertyOrder lists keys of Properties in footer order. The reader
	// fills it; the writer writes these keys first, then any others sorted.
	PropertyOrder []string
}

// BlobMetadata describes one blob in a Puffin footer.
type BlobMetadata struct {
	Type             string
	Fields           []int32
	SnapshotID       int64
	SequenceNumber   int64
	Offset           int64
	Length           int64
	CompressionCodec string // "", "lz4" or "zstd"
	Properties       map[string]string
	// PropertyOrder lists keys of Properties in footer order, as for
	// FileMetadata. Java writes DV properties as referenced-data-file,
	// cardinality; byte-identical output needs that order.
	PropertyOrder []string
}

// Compression codec names of blobs and the footer.
const (
	CodecNone = ""
	CodecLZ4  = "lz4"
	CodecZstd = "zstd"
)
