package puffin

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// DV is the deletion vector of one data file.
type DV struct {
	ReferencedDataFile string
	Positions          *roaring64.Bitmap
}

// DVBlob locates a written DV in its Puffin file: the values of the delete
// manifest entry's content_offset, content_size_in_bytes and record_count.
type DVBlob struct {
	ReferencedDataFile string
	Offset             int64
	Length             int64
	Cardinality        int64
}

// Blob property keys of a deletion vector.
const (
	PropReferencedDataFile = "referenced-data-file"
	PropCardinality        = "cardinality"
	PropCreatedBy          = "created-by"
)

// WriteDVs writes one Puffin file holding a deletion-vector-v1 blob per
// data file, as Java's BaseDVFileWriter does (fields [_pos], snapshot id and
// sequence number -1, no compression), ordered by referenced data file so
// the output is deterministic. props are the file properties, normally
// created-by "icectl <version>". It returns the blobs in file order and the
// file size.
func WriteDVs(w io.Writer, dvs []DV, props map[string]string) ([]DVBlob, int64, error) {
	sorted := slices.Clone(dvs)
	slices.SortFunc(sorted, func(a, b DV) int { return cmp.Compare(a.ReferencedDataFile, b.ReferencedDataFile) })
	for i, dv := range sorted {
		switch {
		case dv.ReferencedDataFile == "":
			return nil, 0, fmt.Errorf("write deletion vectors: DV without a referenced data file")
		case dv.Positions == nil || dv.Positions.IsEmpty():
			return nil, 0, fmt.Errorf("write deletion vectors: empty deletion vector for %s", dv.ReferencedDataFile)
		case i > 0 && sorted[i-1].ReferencedDataFile == dv.ReferencedDataFile:
			return nil, 0, fmt.Errorf("write deletion vectors: two deletion vectors for %s (merge them: one DV per data file)", dv.ReferencedDataFile)
		}
	}
	pw := NewWriter(w, props)
	out := make([]DVBlob, 0, len(sorted))
	for _, dv := range sorted {
		b, err := pw.AddDV(dv)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, b)
	}
	_, size, err := pw.Finish()
	if err != nil {
		return nil, 0, fmt.Errorf("write deletion vectors: %w", err)
	}
	return out, size, nil
}

// AddDV adds one deletion-vector-v1 blob for dv as Java's BaseDVFileWriter
// writes it (fields [_pos], snapshot id and sequence number -1, the
// referenced-data-file and cardinality properties, no compression) and
// returns where it went. Callers writing many DVs into one file keep one
// per data file and may watch Size to cap the file.
func (w *Writer) AddDV(dv DV) (DVBlob, error) {
	if dv.ReferencedDataFile == "" {
		return DVBlob{}, fmt.Errorf("write deletion vectors: DV without a referenced data file")
	}
	if dv.Positions == nil || dv.Positions.IsEmpty() {
		return DVBlob{}, fmt.Errorf("write deletion vectors: empty deletion vector for %s", dv.ReferencedDataFile)
	}
	blob, err := EncodeDV(dv.Positions)
	if err != nil {
		return DVBlob{}, fmt.Errorf("write deletion vector for %s: %w", dv.ReferencedDataFile, err)
	}
	card := int64(dv.Positions.GetCardinality())
	if w.dvFields == nil {
		w.dvFields, w.dvOrder = []int32{PosFieldID}, []string{PropReferencedDataFile, PropCardinality}
	}
	meta, err := w.addOwned(BlobMetadata{
		Type:           DVBlobType,
		Fields:         w.dvFields,
		SnapshotID:     -1,
		SequenceNumber: -1,
		Properties: map[string]string{
			PropReferencedDataFile: dv.ReferencedDataFile,
			PropCardinality:        strconv.FormatInt(card, 10),
		},
		PropertyOrder: w.dvOrder,
	}, blob)
	if err != nil {
		return DVBlob{}, fmt.Errorf("write deletion vector for %s: %w", dv.ReferencedDataFile, err)
	}
	return DVBlob{ReferencedDataFile: dv.ReferencedDataFile, Offset: meta.Offset, Length: meta.Length, Cardinality: card}, nil
}

// Size is the number of bytes written so far (blobs, without the footer).
func (w *Writer) Size() int64 { return w.offset }

// ReadDV reads a deletion-vector-v1 blob and checks it against its own
// footer metadata: the blob type, no compression, and the cardinality
// property when present.
func (r *Reader) ReadDV(b BlobMetadata) (*roaring64.Bitmap, error) {
	if b.Type != DVBlobType {
		return nil, fmt.Errorf("read deletion vector: blob type %q, want %q", b.Type, DVBlobType)
	}
	if b.CompressionCodec != CodecNone {
		return nil, fmt.Errorf("read deletion vector: blob is compressed with %q; DVs must not be compressed", b.CompressionCodec)
	}
	data, err := r.ReadBlob(b)
	if err != nil {
		return nil, err
	}
	c, ok := b.Properties[PropCardinality]
	if !ok {
		return DecodeDV(data)
	}
	want, err := strconv.ParseInt(c, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("read deletion vector: %w: cardinality property %q is not a number", ErrDVCardinality, c)
	}
	return DecodeDVWithCardinality(data, want)
}
