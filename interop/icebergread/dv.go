package icebergread

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/puffin"
	"github.com/apache/iceberg-go/table/dv"
)

// DV is a deletion vector as iceberg-go's table/dv reads it.
type DV struct {
	ReferencedDataFile string   `json:"referenced_data_file"`
	Offset             int64    `json:"offset"`
	Length             int64    `json:"length"`
	Cardinality        int64    `json:"cardinality"`
	Positions          []uint64 `json:"positions"`
}

// DVRequest names a deletion vector the way a delete manifest entry does.
// Empty ReferencedDataFile and negative RecordCount are taken from the
// blob's own properties.
type DVRequest struct {
	Path               string
	Offset, Length     int64
	ReferencedDataFile string
	RecordCount        int64
}

// ReadDV reads a deletion vector from a local Puffin file with dv.ReadDV,
// which checks the blob type, codec, referenced data file and cardinality
// against the (synthesised) manifest entry before decoding.
func ReadDV(req DVRequest) (*DV, error) {
	abs, err := filepath.Abs(req.Path)
	if err != nil {
		return nil, fmt.Errorf("read DV %s: %w", req.Path, err)
	}
	ref, count := req.ReferencedDataFile, req.RecordCount
	if ref == "" || count < 0 {
		blob, err := blobAt(abs, req.Offset)
		if err != nil {
			return nil, fmt.Errorf("read DV %s: %w", req.Path, err)
		}
		if ref == "" {
			ref = blob.Properties["referenced-data-file"]
		}
		if count < 0 {
			c, ok := blob.Properties["cardinality"]
			if !ok {
				return nil, fmt.Errorf("read DV %s: blob at %d has no cardinality property; give the record count", req.Path, req.Offset)
			}
			if count, err = strconv.ParseInt(c, 10, 64); err != nil {
				return nil, fmt.Errorf("read DV %s: cardinality %q: %w", req.Path, c, err)
			}
		}
	}
	b, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentPosDeletes,
		abs, iceberg.PuffinFile, nil, nil, nil, count, fileSize(abs))
	if err != nil {
		return nil, fmt.Errorf("read DV %s: %w", req.Path, err)
	}
	df := b.ReferencedDataFile(ref).ContentOffset(req.Offset).ContentSizeInBytes(req.Length).Build()
	bm, err := dv.ReadDV(iceio.LocalFS{}, df)
	if err != nil {
		return nil, fmt.Errorf("read DV %s at %d: %w", req.Path, req.Offset, err)
	}
	out := &DV{ReferencedDataFile: ref, Offset: req.Offset, Length: req.Length, Cardinality: bm.Cardinality(), Positions: []uint64{}}
	for p := range bm.Positions() {
		out.Positions = append(out.Positions, p)
	}
	return out, nil
}

func blobAt(path string, offset int64) (puffin.BlobMetadata, error) {
	f, err := os.Open(path)
	if err != nil {
		return puffin.BlobMetadata{}, err
	}
	defer f.Close()
	r, err := puffin.NewReader(f)
	if err != nil {
		return puffin.BlobMetadata{}, err
	}
	for _, b := range r.Blobs() {
		if b.Offset == offset {
			return b, nil
		}
	}
	return puffin.BlobMetadata{}, fmt.Errorf("no blob at offset %d", offset)
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}
