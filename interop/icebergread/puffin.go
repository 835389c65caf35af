package icebergread

import (
	"bytes"
	"fmt"

	"github.com/apache/iceberg-go/puffin"
)

// Puffin is a Puffin file's footer as iceberg-go's reader decodes it.
type Puffin struct {
	Properties map[string]string `json:"properties"`
	Blobs      []Blob            `json:"blobs"`
}

// Blob is one blob's metadata.
type Blob struct {
	Type             string            `json:"type"`
	Fields           []int32           `json:"fields"`
	SnapshotID       int64             `json:"snapshot_id"`
	SequenceNumber   int64             `json:"sequence_number"`
	Offset           int64             `json:"offset"`
	Length           int64             `json:"length"`
	CompressionCodec *string           `json:"compression_codec"`
	Properties       map[string]string `json:"properties"`
}

// ReadPuffin decodes a Puffin file's footer with puffin.NewReader, which
// also validates the magic, footer layout and blob ranges.
func ReadPuffin(data []byte) (*Puffin, error) {
	r, err := puffin.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("read puffin: %w", err)
	}
	out := &Puffin{Properties: r.Properties(), Blobs: []Blob{}}
	for _, b := range r.Blobs() {
		out.Blobs = append(out.Blobs, Blob{
			Type: string(b.Type), Fields: b.Fields, SnapshotID: b.SnapshotID, SequenceNumber: b.SequenceNumber,
			Offset: b.Offset, Length: b.Length, CompressionCodec: b.CompressionCodec, Properties: b.Properties,
		})
	}
	return out, nil
}
