package puffin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
)

// Writer writes a Puffin file: the header magic, blobs as they are added,
// and the footer on Finish. Its output for uncompressed blobs is
// byte-identical to Java's PuffinWriter.
type Writer struct {
	w     io.Writer
	props map[string]string
	blobs []BlobMetadata
	// dvFields and dvOrder are the fields and property order every DV
	// blob of this file has, shared by them (the footer only reads them).
	dvFields []int32
	dvOrder  []string
	offset   int64
	finished bool
	err      error // sticky: after a failed write the file is unusable
}

// NewWriter returns a Writer whose footer carries properties (conventionally
// "created-by"). Properties are written sorted by key.
func NewWriter(w io.Writer, properties map[string]string) *Writer {
	return &Writer{w: w, props: maps.Clone(properties)}
}

// Reserve makes room in the footer's metadata for n more blobs, so that
// a caller that knows how many it adds does not have it grown by appends.
func (w *Writer) Reserve(n int) {
	w.blobs = slices.Grow(w.blobs, n)
}

// AddBlob compresses payload with b.CompressionCodec, writes it and returns
// b with Offset and Length filled in. The payload is written immediately;
// its metadata goes into the footer.
func (w *Writer) AddBlob(b BlobMetadata, payload []byte) (BlobMetadata, error) {
	b.Fields = slices.Clone(b.Fields)
	b.Properties = maps.Clone(b.Properties)
	b.PropertyOrder = slices.Clone(b.PropertyOrder)
	return w.addOwned(b, payload)
}

// addOwned is AddBlob for metadata the writer may keep as it is: AddDV
// builds it for each blob, and copying it again was a fifth of what
// writing a DV allocated.
func (w *Writer) addOwned(b BlobMetadata, payload []byte) (BlobMetadata, error) {
	if err := w.usable(); err != nil {
		return BlobMetadata{}, err
	}
	if b.Type == "" {
		return BlobMetadata{}, errors.New("puffin: add blob: empty blob type")
	}
	data, err := compress(b.CompressionCodec, payload)
	if err != nil {
		return BlobMetadata{}, fmt.Errorf("puffin: add blob %q: %w", b.Type, err)
	}
	if err := w.start(); err != nil {
		return BlobMetadata{}, err
	}
	b.Offset = w.offset
	b.Length = int64(len(data))
	if err := w.write(data); err != nil {
		return BlobMetadata{}, fmt.Errorf("puffin: add blob %q: %w", b.Type, err)
	}
	w.blobs = append(w.blobs, b)
	return b, nil
}

// Finish writes the footer and returns the footer size (payload + 16, as
// recorded in table statistics) and the file size. It does not close the
// underlying writer.
func (w *Writer) Finish() (footerSize, fileSize int64, err error) {
	if err := w.usable(); err != nil {
		return 0, 0, err
	}
	// The footer is built in one buffer sized for it: grown by appends
	// from nothing, a footer of many DVs was copied several times over.
	footer := make([]byte, 0, footerSizeHint(w.blobs, w.props))
	footer = append(footer, magic[:]...)
	footer, err = appendFooter(footer, FileMetadata{Blobs: w.blobs, Properties: w.props})
	if err != nil {
		return 0, 0, fmt.Errorf("puffin: footer: %w", err)
	}
	n := len(footer) - len(magic)
	if n > math.MaxInt32 {
		return 0, 0, fmt.Errorf("puffin: footer payload of %d bytes exceeds the format's limit", n)
	}
	if err := w.start(); err != nil {
		return 0, 0, err
	}
	footer = binary.LittleEndian.AppendUint32(footer, uint32(n))
	footer = append(footer, 0, 0, 0, 0) // flags: footer not compressed
	footer = append(footer, magic[:]...)
	if err := w.write(footer); err != nil {
		return 0, 0, fmt.Errorf("puffin: write footer: %w", err)
	}
	w.finished = true
	return int64(len(footer)), w.offset, nil
}

func (w *Writer) usable() error {
	if w.err != nil {
		return fmt.Errorf("puffin: writer failed earlier: %w", w.err)
	}
	if w.finished {
		return errors.New("puffin: writer already finished")
	}
	return nil
}

// start writes the header magic before the first blob or the footer.
func (w *Writer) start() error {
	if w.offset > 0 {
		return nil
	}
	if err := w.write(magic[:]); err != nil {
		return fmt.Errorf("puffin: write header: %w", err)
	}
	return nil
}

func (w *Writer) write(p []byte) error {
	n, err := w.w.Write(p)
	w.offset += int64(n)
	if err == nil && n != len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = err
	}
	return err
}

// footerSizeHint is about the size of the footer of blobs and props: the
// JSON of each blob's fixed keys and numbers, its strings, and the frame.
func footerSizeHint(blobs []BlobMetadata, props map[string]string) int {
	n := footerOverhead + 64
	for k, v := range props {
		n += len(k) + len(v) + 8
	}
	for i := range blobs {
		n += 160 + len(blobs[i].Type) + 12*len(blobs[i].Fields)
		for k, v := range blobs[i].Properties {
			n += len(k) + len(v) + 8
		}
	}
	return n
}
