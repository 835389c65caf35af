package puffin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Default limits on what a Reader allocates for untrusted files.
const (
	DefaultMaxFooterSize = 64 << 20 // 64 MiB, far above any real footer
	DefaultMaxBlobSize   = 1 << 30  // 1 GiB after decompression
)

// Proportion rules: what a compressed footer or blob may decompress to,
// as a multiple of its stored size plus an allowance for small ones. A
// JSON footer compresses a few times; an LZ4 bomb 255 times. Blobs get
// more room, since a sparse sketch or filter may compress very well.
const (
	MaxFooterInflateRatio = 32
	MaxBlobInflateRatio   = 256
	InflateAllowance      = 1 << 20
)

// inflateLimit is what n stored bytes may decompress to under ratio,
// never more than max.
func inflateLimit(n, ratio, max int64) int64 {
	return min(InflateAllowance+ratio*n, max)
}

// ReaderOption configures OpenReader.
type ReaderOption func(*readerConfig)

type readerConfig struct {
	footerSize    int64
	hasFooterSize bool // else read the size from the file's tail
	maxFooterSize int64
	maxBlobSize   int64
}

// WithFooterSize tells the reader the whole footer size (as recorded in
// table statistics' file-footer-size-in-bytes), saving a read. A wrong hint
// is an error, not a fallback.
func WithFooterSize(n int64) ReaderOption {
	return func(c *readerConfig) { c.footerSize, c.hasFooterSize = n, true }
}

// WithMaxFooterSize bounds the footer bytes the reader accepts, both stored
// and after decompression.
func WithMaxFooterSize(n int64) ReaderOption {
	return func(c *readerConfig) { c.maxFooterSize = n }
}

// WithMaxBlobSize bounds the bytes ReadBlob returns or reads.
func WithMaxBlobSize(n int64) ReaderOption {
	return func(c *readerConfig) { c.maxBlobSize = n }
}

// Reader reads a Puffin file whose footer has been validated.
type Reader struct {
	r           io.ReaderAt
	size        int64
	footerSize  int64
	maxBlobSize int64
	meta        FileMetadata
}

// OpenReader reads and validates the footer of the Puffin file r of size
// bytes: magic numbers, sizes, flags, the footer JSON, and that every blob
// lies between the header magic and the footer.
func OpenReader(r io.ReaderAt, size int64, opts ...ReaderOption) (*Reader, error) {
	cfg := readerConfig{maxFooterSize: DefaultMaxFooterSize, maxBlobSize: DefaultMaxBlobSize}
	for _, o := range opts {
		o(&cfg)
	}
	if size < magicLen+footerOverhead {
		return nil, fmt.Errorf("Invalid file: file length %d is less than the minimal Puffin file length %d", size, magicLen+footerOverhead)
	}
	footerSize := cfg.footerSize
	if cfg.hasFooterSize {
		if footerSize <= 0 || footerSize > size-magicLen {
			return nil, fmt.Errorf("Invalid footer size: %d", footerSize)
		}
	} else {
		tail, err := readAt(r, size-footerTailLen, footerTailLen)
		if err != nil {
			return nil, fmt.Errorf("read footer tail: %w", err)
		}
		if err := checkMagic(tail, 8, size-magicLen); err != nil {
			return nil, err
		}
		payload := int64(int32(binary.LittleEndian.Uint32(tail)))
		if payload < 0 {
			return nil, fmt.Errorf("Invalid footer size: payload size %d is negative", payload)
		}
		footerSize = payload + footerOverhead
		if footerSize > size-magicLen {
			return nil, fmt.Errorf("Invalid footer size: %d (payload %d) does not fit in a file of %d bytes", footerSize, payload, size)
		}
	}
	if footerSize < footerOverhead {
		return nil, fmt.Errorf("Invalid footer size: %d is below the minimum %d", footerSize, footerOverhead)
	}
	if footerSize > cfg.maxFooterSize {
		return nil, fmt.Errorf("footer of %d bytes exceeds the limit of %d bytes", footerSize, cfg.maxFooterSize)
	}
	footerStart := size - footerSize
	footer, err := readAt(r, footerStart, footerSize)
	if err != nil {
		return nil, fmt.Errorf("read footer: %w", err)
	}
	if err := checkMagic(footer, 0, footerStart); err != nil {
		return nil, err
	}
	tailAt := len(footer) - footerTailLen
	if err := checkMagic(footer, tailAt+8, footerStart+int64(tailAt+8)); err != nil {
		return nil, err
	}
	head, err := readAt(r, 0, magicLen)
	if err != nil {
		return nil, fmt.Errorf("read header magic: %w", err)
	}
	if err := checkMagic(head, 0, 0); err != nil {
		return nil, err
	}
	payloadSize := int64(int32(binary.LittleEndian.Uint32(footer[tailAt:])))
	if payloadSize != footerSize-footerOverhead {
		return nil, fmt.Errorf("Unexpected footer payload size value %d for footer size %d", payloadSize, footerSize)
	}
	flags := footer[tailAt+4 : tailAt+8]
	if flags[0]&^flagFooterCompressed != 0 || flags[1] != 0 || flags[2] != 0 || flags[3] != 0 {
		return nil, fmt.Errorf("unsupported footer flags % x: only bit 0 of byte 0 (LZ4 footer) is defined", flags)
	}
	payload := footer[magicLen:tailAt]
	if flags[0]&flagFooterCompressed != 0 {
		limit := inflateLimit(int64(len(payload)), MaxFooterInflateRatio, cfg.maxFooterSize)
		if payload, err = decompress(CodecLZ4, payload, limit); err != nil {
			if limit < cfg.maxFooterSize && errors.Is(err, errTooLarge) {
				return nil, fmt.Errorf("decompress footer: %d compressed bytes decompress to more than %d, "+
					"%d times their size (plus %d): refusing a footer out of proportion to the file",
					len(payload), limit, MaxFooterInflateRatio, InflateAllowance)
			}
			return nil, fmt.Errorf("decompress footer: %w", err)
		}
	}
	meta, err := parseFooter(payload)
	if err != nil {
		return nil, err
	}
	for i, b := range meta.Blobs {
		if err := checkBlobBounds(b, footerStart); err != nil {
			return nil, fmt.Errorf("blob %d (type %q): %w", i, b.Type, err)
		}
	}
	return &Reader{r: r, size: size, footerSize: footerSize, maxBlobSize: cfg.maxBlobSize, meta: meta}, nil
}

// Metadata returns the parsed footer.
func (r *Reader) Metadata() FileMetadata { return r.meta }

// FooterSize returns the whole footer size: payload plus 16 bytes, the value
// of file-footer-size-in-bytes in table statistics.
func (r *Reader) FooterSize() int64 { return r.footerSize }

// ReadBlob reads the blob b describes and returns it decompressed.
func (r *Reader) ReadBlob(b BlobMetadata) ([]byte, error) {
	if err := checkBlobBounds(b, r.size-r.footerSize); err != nil {
		return nil, fmt.Errorf("read blob (type %q): %w", b.Type, err)
	}
	if b.Length > r.maxBlobSize {
		return nil, fmt.Errorf("read blob (type %q): length %d exceeds the limit of %d bytes", b.Type, b.Length, r.maxBlobSize)
	}
	if b.CompressionCodec != CodecNone && b.CompressionCodec != CodecLZ4 && b.CompressionCodec != CodecZstd {
		return nil, fmt.Errorf("read blob (type %q): unsupported compression codec %q (want lz4, zstd or none)", b.Type, b.CompressionCodec)
	}
	data, err := readAt(r.r, b.Offset, b.Length)
	if err != nil {
		return nil, fmt.Errorf("read blob (type %q) at %d: %w", b.Type, b.Offset, err)
	}
	limit := r.maxBlobSize
	if b.CompressionCodec != CodecNone {
		limit = inflateLimit(b.Length, MaxBlobInflateRatio, r.maxBlobSize)
	}
	out, err := decompress(b.CompressionCodec, data, limit)
	if err != nil {
		return nil, fmt.Errorf("read blob (type %q) at %d: %w", b.Type, b.Offset, err)
	}
	return out, nil
}

// checkBlobBounds requires a blob to lie between the header magic and the
// footer start.
func checkBlobBounds(b BlobMetadata, footerStart int64) error {
	switch {
	case b.Offset < magicLen:
		return fmt.Errorf("offset %d is inside the header magic", b.Offset)
	case b.Length < 0:
		return fmt.Errorf("length %d is negative", b.Length)
	case b.Offset > footerStart || b.Length > footerStart-b.Offset:
		return fmt.Errorf("[%d, +%d) overlaps the footer starting at %d", b.Offset, b.Length, footerStart)
	}
	return nil
}

// checkMagic checks for the Puffin magic at buf[at:], reporting the file
// offset fileOff in Java's wording.
func checkMagic(buf []byte, at int, fileOff int64) error {
	got := buf[at : at+magicLen]
	if [4]byte(got) == magic {
		return nil
	}
	return fmt.Errorf("Invalid file: expected magic at offset %d: %s, but got %s", fileOff, javaBytes(magic[:]), javaBytes(got))
}

// javaBytes formats bytes as Java's Arrays.toString(byte[]) does (signed).
func javaBytes(b []byte) string {
	parts := make([]string, len(b))
	for i, v := range b {
		parts[i] = strconv.Itoa(int(int8(v)))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// readAt reads exactly n bytes at off; n is bounded by the caller.
func readAt(r io.ReaderAt, off, n int64) ([]byte, error) {
	buf := make([]byte, n)
	got, err := r.ReadAt(buf, off)
	if int64(got) == n {
		return buf, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return nil, err
}
