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
	w        io.Writer
	props    map[string]string
	blobs    []BlobMetadata
	offset   int64
	finished bool
	err      error // sticky: after a failed write the file is unusable
}

// NewWriter returns a Writer whose footer carries properties (conventionally
// "created-by"). Properties are written sorted by key.
func NewWriter(w io.Writer, properties map[string]string) *Writer {
	return &Writer{w: w, props: maps.Clone(properties)}
}

// AddBlob compresses payload with b.CompressionCodec, writes it and returns
// b with Offset and Length filled in. The payload is written immediately;
// its metadata goes into the footer.
func (w *Writer) AddBlob(b BlobMetadata, payload []byte) (BlobMetadata, error) {
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
	b.Fields = slices.Clone(b.Fields)
	b.Properties = maps.Clone(b.Properties)
	b.PropertyOrder = slices.Clone(b.PropertyOrder)
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
	payload, err := marshalFooter(FileMetadata{Blobs: w.blobs, Properties: w.props})
	if err != nil {
		return 0, 0, fmt.Errorf("puffin: footer: %w", err)
	}
	if len(payload) > math.MaxInt32 {
		return 0, 0, fmt.Errorf("puffin: footer payload of %d bytes exceeds the format's limit", len(payload))
	}
	if err := w.start(); err != nil {
		return 0, 0, err
	}
	footer := make([]byte, 0, len(payload)+footerOverhead)
	footer = append(footer, magic[:]...)
	footer = append(footer, payload...)
	footer = binary.LittleEndian.AppendUint32(footer, uint32(len(payload)))
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
