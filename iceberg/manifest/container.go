package manifest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/hamba/avro/v2"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// Limits that keep a corrupt or crafted file from turning into a huge
// allocation or a long decompression.
const (
	maxMetaEntries   = 1 << 12
	maxBlockSize     = 256 << 20 // compressed bytes of one block
	maxDecodedBlock  = 256 << 20 // decompressed bytes of one block
	maxBytesValue    = 64 << 20  // one string or bytes value
	readChunk        = 1 << 20
	containerBufSize = 64 << 10

	// MaxInflateRatio and InflateAllowance bound what a file's blocks may
	// decompress to, together: at most InflateAllowance plus
	// MaxInflateRatio times the compressed bytes read so far. Manifests and
	// manifest lists written by Java, Spark and icectl compress 3 to 7
	// times; a deflate bomb compresses a thousand times. The allowance
	// covers small files, whose ratios say nothing.
	MaxInflateRatio  = 32
	InflateAllowance = 1 << 20
	// DefaultBudget is the decompressed block memory the readers of one
	// walk over a table's manifests may hold at once (see Budget).
	DefaultBudget = 256 << 20
)

var avroMagic = [4]byte{'O', 'b', 'j', 1}

// container reads an Avro object container file block by block. It replaces
// ocf.Decoder because that one allocates whatever block size a file claims
// and cannot be made to fail cleanly on hostile input.
type container struct {
	in     *avro.Reader // the file
	block  *avro.Reader // the current decompressed block
	meta   map[string][]byte
	schema avro.Schema
	sync   [16]byte

	left int64 // records left in the current block
	raw  []byte
	blockCodec
}

// blockCodec decompresses the blocks of one codec, keeping its decoder and
// output buffer from block to block (and, in an EntryScanner, from file to
// file).
type blockCodec struct {
	codec string
	out   []byte
	fl    io.ReadCloser
	zstd  *zstd.Decoder

	budget  *Budget // shared with other readers; nil: none
	charged int64   // bytes of budget held for out's capacity
	// compressed and inflated count the bytes of the current file's blocks
	// so far, for the proportion rule (MaxInflateRatio).
	compressed, inflated int64
}

func openContainer(r io.Reader, o readOptions) (*container, error) {
	cfg := avro.Config{MaxByteSliceSize: maxBytesValue}.Freeze()
	c := &container{
		in:    avro.NewReader(r, containerBufSize, avro.WithReaderConfig(cfg)),
		block: avro.NewReader(nil, 0, avro.WithReaderConfig(cfg)),
	}
	c.budget = o.budget
	var magic [4]byte
	c.in.Read(magic[:])
	if c.in.Error != nil {
		return nil, fmt.Errorf("read avro header: %w", truncated(c.in.Error))
	}
	if magic != avroMagic {
		return nil, fmt.Errorf("not an avro object container file (magic %x)", magic[:])
	}
	meta, err := readMeta(c.in)
	if err != nil {
		return nil, err
	}
	c.in.Read(c.sync[:])
	if c.in.Error != nil {
		return nil, fmt.Errorf("read avro header sync marker: %w", truncated(c.in.Error))
	}
	c.meta = meta
	sj, ok := meta["avro.schema"]
	if !ok {
		return nil, errors.New("avro header has no avro.schema")
	}
	c.schema, err = o.schemas.parse(string(sj))
	if err != nil {
		return nil, fmt.Errorf("parse avro schema: %w", shortError(err))
	}
	if err := c.setCodec(meta["avro.codec"]); err != nil {
		return nil, err
	}
	return c, nil
}

// setCodec selects the codec named by a header's avro.codec value.
func (b *blockCodec) setCodec(name []byte) error {
	b.codec = "null"
	if len(name) > 0 {
		b.codec = string(name)
	}
	switch b.codec {
	case "null", "deflate", "snappy", "zstandard":
		return nil
	}
	return fmt.Errorf("unsupported avro codec %q", b.codec)
}

func readMeta(r *avro.Reader) (map[string][]byte, error) {
	meta := map[string][]byte{}
	for {
		n := r.ReadLong()
		if r.Error != nil {
			return nil, fmt.Errorf("read avro header metadata: %w", truncated(r.Error))
		}
		if n == 0 {
			return meta, nil
		}
		if n < 0 {
			n = -n
			r.ReadLong() // block size in bytes
		}
		if n > maxMetaEntries || int64(len(meta))+n > maxMetaEntries {
			return nil, fmt.Errorf("avro header metadata has too many entries (%d)", n)
		}
		for i := int64(0); i < n; i++ {
			k := r.ReadString()
			v := r.ReadBytes()
			if r.Error != nil {
				return nil, fmt.Errorf("read avro header metadata: %w", truncated(r.Error))
			}
			meta[k] = v
		}
	}
}

// next positions c.block on the next record; it returns io.EOF after the
// last one.
func (c *container) next() error {
	for c.left == 0 {
		if err := c.readBlock(); err != nil {
			return err
		}
	}
	c.left--
	return nil
}

func (c *container) readBlock() error {
	c.in.Peek()
	if c.in.Error != nil {
		if errors.Is(c.in.Error, io.EOF) {
			return io.EOF
		}
		return fmt.Errorf("read avro block: %w", c.in.Error)
	}
	count := c.in.ReadLong()
	size := c.in.ReadLong()
	if c.in.Error != nil {
		return fmt.Errorf("read avro block header: %w", truncated(c.in.Error))
	}
	if count < 0 || size < 0 || size > maxBlockSize {
		return fmt.Errorf("corrupt avro block header (count %d, size %d)", count, size)
	}
	c.raw = c.raw[:0]
	for int64(len(c.raw)) < size {
		n := min(size-int64(len(c.raw)), readChunk)
		c.raw = append(c.raw, make([]byte, n)...)
		c.in.Read(c.raw[int64(len(c.raw))-n:])
		if c.in.Error != nil {
			return fmt.Errorf("read avro block of %d bytes: %w", size, truncated(c.in.Error))
		}
	}
	var sync [16]byte
	c.in.Read(sync[:])
	if c.in.Error != nil {
		return fmt.Errorf("read avro block sync marker: %w", truncated(c.in.Error))
	}
	if sync != c.sync {
		return errors.New("corrupt avro file: block sync marker does not match the header")
	}
	data, err := c.decompress(c.raw)
	if err != nil {
		return fmt.Errorf("decompress avro block (%s): %w", c.codec, err)
	}
	if count > 0 && len(data) == 0 {
		return fmt.Errorf("corrupt avro block: %d records in 0 bytes", count)
	}
	c.block.Reset(data)
	c.block.Error = nil
	c.left = count
	return nil
}

// decompress returns the block b decompressed. Decompression stops as soon
// as the output passes what the file may inflate to (the proportion rule),
// the block limit or the shared budget, so a bomb costs at most that much
// memory and time.
func (c *blockCodec) decompress(b []byte) ([]byte, error) {
	if c.codec == "null" {
		return b, nil
	}
	c.compressed += int64(len(b))
	limit := min(InflateAllowance+MaxInflateRatio*c.compressed-c.inflated, maxDecodedBlock)
	var out []byte
	var err error
	switch c.codec {
	case "deflate":
		if c.fl == nil {
			c.fl = flate.NewReader(bytes.NewReader(b))
		} else if err := c.fl.(flate.Resetter).Reset(bytes.NewReader(b), nil); err != nil {
			return nil, err
		}
		out, err = c.readAll(c.fl, limit)
	case "snappy":
		if len(b) < 4 {
			return nil, errors.New("snappy block shorter than its checksum")
		}
		body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
		n, err := snappy.DecodedLen(body)
		if err != nil {
			return nil, err
		}
		if int64(n) > limit {
			return nil, c.tooLarge(int64(n), limit)
		}
		if err := c.reserve(c.out[:0], int64(n)); err != nil {
			return nil, err
		}
		if out, err = snappy.Decode(c.out[:cap(c.out)], body); err != nil {
			return nil, err
		}
		if crc32.ChecksumIEEE(out) != sum {
			return nil, errors.New("snappy block checksum mismatch")
		}
	case "zstandard":
		if c.zstd == nil {
			d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderMaxMemory(maxDecodedBlock), zstd.WithDecoderMaxWindow(maxZstdWindow))
			if err != nil {
				return nil, err
			}
			c.zstd = d
		}
		if err := c.zstd.Reset(bytes.NewReader(b)); err != nil {
			return nil, err
		}
		out, err = c.readAll(c.zstd, limit)
	default:
		return nil, fmt.Errorf("unsupported codec %q", c.codec)
	}
	if err != nil {
		return nil, err
	}
	c.out = out
	c.inflated += int64(len(out))
	return out, nil
}

// maxZstdWindow bounds the history a zstandard frame may ask the decoder
// to keep; Avro writers use windows of a few MiB at most.
const maxZstdWindow = 64 << 20

// readAll reads r into c.out until EOF, failing once the output passes
// limit.
func (c *blockCodec) readAll(r io.Reader, limit int64) ([]byte, error) {
	buf := c.out[:0]
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, c.tooLarge(int64(len(buf)), limit)
			}
			if err := c.reserve(buf, min(max(2*int64(cap(buf)), 64<<10), limit+1)); err != nil {
				return nil, err
			}
			buf = c.out[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(buf)) > limit {
		return nil, c.tooLarge(int64(len(buf)), limit)
	}
	return buf, nil
}

// tooLarge explains why a block of at least n bytes is refused.
func (c *blockCodec) tooLarge(n, limit int64) error {
	if limit == maxDecodedBlock {
		return fmt.Errorf("block decompresses to more than %d bytes", maxDecodedBlock)
	}
	return fmt.Errorf("blocks decompress to more than %d bytes from %d compressed: "+
		"refusing a file that inflates more than %d times its compressed size (plus %d bytes)",
		c.inflated+n, c.compressed, MaxInflateRatio, InflateAllowance)
}

// reserve makes c.out keep's contents with a capacity of at least n
// bytes, charging the growth to the shared budget.
func (c *blockCodec) reserve(keep []byte, n int64) error {
	if n <= int64(cap(keep)) {
		c.out = keep
		return nil
	}
	if grow := n - c.charged; grow > 0 {
		if err := c.budget.take(grow); err != nil {
			return err
		}
		c.charged += grow
	}
	c.out = slices.Grow(keep, int(n)-len(keep))
	return nil
}

// startFile resets the proportion rule for the next file.
func (c *blockCodec) startFile() { c.compressed, c.inflated = 0, 0 }

func (c *blockCodec) close() {
	if c.zstd != nil {
		c.zstd.Close()
		c.zstd = nil
	}
	if c.fl != nil {
		c.fl.Close()
		c.fl = nil
	}
	c.budget.give(c.charged)
	c.charged, c.out = 0, nil
}

// truncated turns the reader's bare EOF into an error that says what
// happened.
func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("file is truncated: %w", io.ErrUnexpectedEOF)
	}
	return err
}

func (c *container) metaString(k string) (string, bool) {
	v, ok := c.meta[k]
	return string(v), ok
}

func (c *container) metadata() map[string]string {
	m := make(map[string]string, len(c.meta))
	for k, v := range c.meta {
		m[k] = string(v)
	}
	return m
}

// maxErrorText bounds the text an error may take from the file: a schema
// error of the Avro library quotes the schema, which can be megabytes.
const maxErrorText = 200

// shortError keeps err's message to maxErrorText bytes.
func shortError(err error) error {
	if len(err.Error()) <= maxErrorText {
		return err
	}
	return errors.New(clip(err.Error()))
}

// clip cuts s to maxErrorText bytes, at a character boundary, marking the
// cut with an ellipsis.
func clip(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	n := maxErrorText
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
