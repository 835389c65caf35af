package manifest

import (
	"bufio"
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
	// MaxInflateRatio times the compressed bytes read so far. Manifests
	// and manifest lists with column metrics compress 3 to 7 times, but a
	// manifest of many files without metrics and with regular paths
	// compresses far more: 40 times for 100,000 files under one 70-byte
	// prefix (at the old limit of 32 it could not be read), and the ratio
	// grows with the prefix, about 100 times at 250 bytes. A deflate bomb
	// compresses a thousand times. The allowance covers small files,
	// whose ratios say nothing.
	MaxInflateRatio  = 256
	InflateAllowance = 1 << 20
	// DefaultBudget is the decompressed block memory the readers of one
	// walk over a table's manifests may hold at once (see Budget).
	DefaultBudget = 256 << 20
)

var avroMagic = [4]byte{'O', 'b', 'j', 1}

// ocfReader reads the framing of an Avro object container file: the header
// (magic, metadata, sync marker), then one block after another,
// decompressed. The manifest and manifest-list readers (container) and the
// EntryScanner share it. It replaces ocf.Decoder because that one
// allocates whatever block size a file claims and cannot be made to fail
// cleanly on hostile input.
type ocfReader struct {
	br   *bufio.Reader
	sync [16]byte
	// fields is the header metadata in file order; keys and values alias
	// buf, which the next file's header reuses.
	fields []headerField
	buf    []byte
	raw    []byte // the current block, compressed
	blockCodec
}

// headerField is one key and value of a container's header metadata.
type headerField struct{ key, val []byte }

// reset starts reading the container in r.
func (o *ocfReader) reset(r io.Reader) {
	if o.br == nil {
		o.br = bufio.NewReaderSize(r, containerBufSize)
	} else {
		o.br.Reset(r)
	}
	o.startFile()
}

// readHeader reads the header: magic, metadata and sync marker, and
// selects the codec the metadata names.
func (o *ocfReader) readHeader() error {
	var magic [4]byte
	if _, err := io.ReadFull(o.br, magic[:]); err != nil {
		return fmt.Errorf("read avro header: %w", truncated(err))
	}
	if magic != avroMagic {
		return fmt.Errorf("not an avro object container file (magic %x)", magic[:])
	}
	// Offsets first: buf moves as it grows.
	type span struct{ k0, k1, v1 int }
	var spans [16]span
	at := spans[:0]
	o.buf = o.buf[:0]
	for {
		n, err := readVarint(o.br)
		if err != nil {
			return fmt.Errorf("read avro header metadata: %w", truncated(err))
		}
		if n == 0 {
			break
		}
		if n < 0 {
			n = -n
			if _, err := readVarint(o.br); err != nil { // block size in bytes
				return fmt.Errorf("read avro header metadata: %w", truncated(err))
			}
		}
		if n > maxMetaEntries || int64(len(at))+n > maxMetaEntries {
			return fmt.Errorf("avro header metadata has too many entries (%d)", n)
		}
		for range n {
			k0 := len(o.buf)
			if err := o.readBytes(); err != nil {
				return fmt.Errorf("read avro header metadata: %w", truncated(err))
			}
			k1 := len(o.buf)
			if err := o.readBytes(); err != nil {
				return fmt.Errorf("read avro header metadata: %w", truncated(err))
			}
			at = append(at, span{k0, k1, len(o.buf)})
		}
	}
	if _, err := io.ReadFull(o.br, o.sync[:]); err != nil {
		return fmt.Errorf("read avro header sync marker: %w", truncated(err))
	}
	o.fields = o.fields[:0]
	for _, s := range at {
		o.fields = append(o.fields, headerField{key: o.buf[s.k0:s.k1:s.k1], val: o.buf[s.k1:s.v1:s.v1]})
	}
	codec, _ := o.field("avro.codec")
	return o.setCodec(codec)
}

// readBytes appends the next Avro bytes value to buf, growing it no faster
// than the file delivers, so a crafted length costs no more memory than
// the file has bytes.
func (o *ocfReader) readBytes() error {
	n, err := readVarint(o.br)
	if err != nil {
		return err
	}
	if n < 0 || n > maxBytesValue {
		return fmt.Errorf("invalid length %d", n)
	}
	for end := int64(len(o.buf)) + n; int64(len(o.buf)) < end; {
		m := min(end-int64(len(o.buf)), readChunk)
		o.buf = append(o.buf, make([]byte, m)...)
		if _, err := io.ReadFull(o.br, o.buf[int64(len(o.buf))-m:]); err != nil {
			return err
		}
	}
	return nil
}

// field returns the value of the header's key: its last, when a crafted
// header repeats it, as in metaMap.
func (o *ocfReader) field(key string) ([]byte, bool) {
	for i := len(o.fields) - 1; i >= 0; i-- {
		if string(o.fields[i].key) == key {
			return o.fields[i].val, true
		}
	}
	return nil, false
}

// metaMap returns the header metadata as a map; the values alias buf.
func (o *ocfReader) metaMap() map[string][]byte {
	m := make(map[string][]byte, len(o.fields))
	for _, f := range o.fields {
		m[string(f.key)] = f.val
	}
	return m
}

// readBlock reads and decompresses the next block, returning its record
// count and bytes (valid until the next call); io.EOF, bare, at the end of
// the file.
func (o *ocfReader) readBlock() (int64, []byte, error) {
	if _, err := o.br.Peek(1); err != nil {
		if errors.Is(err, io.EOF) {
			return 0, nil, io.EOF
		}
		return 0, nil, fmt.Errorf("read avro block: %w", err)
	}
	count, err := readVarint(o.br)
	if err != nil {
		return 0, nil, fmt.Errorf("read avro block header: %w", truncated(err))
	}
	size, err := readVarint(o.br)
	if err != nil {
		return 0, nil, fmt.Errorf("read avro block header: %w", truncated(err))
	}
	if count < 0 || size < 0 || size > maxBlockSize {
		return 0, nil, fmt.Errorf("corrupt avro block header (count %d, size %d)", count, size)
	}
	o.raw = o.raw[:0]
	for int64(len(o.raw)) < size {
		n := min(size-int64(len(o.raw)), readChunk)
		o.raw = append(o.raw, make([]byte, n)...)
		if _, err := io.ReadFull(o.br, o.raw[int64(len(o.raw))-n:]); err != nil {
			return 0, nil, fmt.Errorf("read avro block of %d bytes: %w", size, truncated(err))
		}
	}
	var sync [16]byte
	if _, err := io.ReadFull(o.br, sync[:]); err != nil {
		return 0, nil, fmt.Errorf("read avro block sync marker: %w", truncated(err))
	}
	if sync != o.sync {
		return 0, nil, errors.New("corrupt avro file: block sync marker does not match the header")
	}
	data, err := o.decompress(o.raw)
	if err != nil {
		return 0, nil, fmt.Errorf("decompress avro block (%s): %w", o.codec, err)
	}
	if count > 0 && len(data) == 0 {
		return 0, nil, fmt.Errorf("corrupt avro block: %d records in 0 bytes", count)
	}
	return count, data, nil
}

// readVarint reads one zig-zag encoded Avro long.
func readVarint(r io.ByteReader) (int64, error) {
	var u uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			return 0, errors.New("varint overflows a long")
		}
		c, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	return int64(u>>1) ^ -int64(u&1), nil
}

// container reads the records of a manifest or manifest list, one block
// at a time. Containers are lent by a SchemaCache (see SchemaCache.open)
// with their buffers and decompressor, and go back on close.
type container struct {
	ocfReader
	block  *avro.Reader // the current decompressed block
	left   int64        // records left in the current block
	cache  *SchemaCache // lends and takes back the container; may be nil
	closed bool         // it went back to its cache
}

// openContainer reads the header of the container in r.
func openContainer(r io.Reader, o readOptions) (*container, error) {
	c := o.schemas.container()
	c.reset(r)
	c.lend(o.budget)
	if err := c.readHeader(); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// header parses the container's Avro schema (through cache) and returns
// it with the metadata.
func (c *container) header(cache *SchemaCache) (*header, error) {
	sj, ok := c.field("avro.schema")
	if !ok {
		return nil, errors.New("avro header has no avro.schema")
	}
	schema, err := cache.parse(string(sj))
	if err != nil {
		return nil, fmt.Errorf("parse avro schema: %w", shortError(err))
	}
	return &header{meta: c.metaMap(), schema: schema}, nil
}

// header is a container's metadata with its parsed Avro schema: what a
// reader is compiled from.
type header struct {
	meta   map[string][]byte
	schema avro.Schema
}

func (h *header) metaString(k string) (string, bool) {
	v, ok := h.meta[k]
	return string(v), ok
}

func (h *header) metadata() map[string]string {
	m := make(map[string]string, len(h.meta))
	for k, v := range h.meta {
		m[k] = string(v)
	}
	return m
}

// errClosed is returned by a reader used after Close.
var errClosed = errors.New("reader is closed")

// next positions c.block on the next record; it returns io.EOF after the
// last one, and closes c then.
func (c *container) next() error {
	for c.left == 0 {
		count, data, err := c.readBlock()
		if errors.Is(err, io.EOF) {
			c.close()
			return io.EOF
		}
		if err != nil {
			return err
		}
		c.block.Reset(data)
		c.block.Error = nil
		c.left = count
	}
	c.left--
	return nil
}

// lease is a reader's hold on its container. Once the reader is done
// with the container, which may then be another reader's, the lease
// forgets it: a reader used after Close cannot touch it.
type lease struct {
	c   *container
	eof bool
}

// next returns the decoder positioned on the next record, or io.EOF after
// the last one (the container then goes back to its cache).
func (l *lease) next() (*avro.Reader, error) {
	if l.c == nil {
		if l.eof {
			return nil, io.EOF
		}
		return nil, errClosed
	}
	if err := l.c.next(); err != nil {
		if errors.Is(err, io.EOF) {
			l.c, l.eof = nil, true
		}
		return nil, err
	}
	return l.c.block, nil
}

func (l *lease) close() {
	if l.c != nil {
		l.c.close()
		l.c = nil
	}
}

// close gives c's budget back and c itself to the cache that lent it.
// Once closed, a container is another reader's: the reader drops it.
func (c *container) close() {
	if c.closed {
		return
	}
	c.closed = true
	c.release()
	c.br.Reset(nil)
	c.block.Reset(nil)
	c.cache.putContainer(c)
}

// blockCodec decompresses the blocks of one codec, keeping its decoder and
// output buffer from block to block (and from file to file, in an
// EntryScanner or a container lent by a SchemaCache).
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

// lend charges the output buffer a pooled codec kept to budget, which
// the codec's blocks are charged to from now on; when the budget cannot
// take it, the buffer is dropped.
func (c *blockCodec) lend(budget *Budget) {
	c.budget = budget
	if n := int64(cap(c.out)); n > 0 {
		if c.budget.take(n) != nil {
			c.out = nil
			return
		}
		c.charged = n
	}
}

// maxKeptBlock is the largest output buffer a codec keeps for the next
// file once released: manifests' blocks are mostly smaller, and a pool
// of large buffers would hold memory no budget counts.
const maxKeptBlock = 1 << 20

// release gives the codec's budget back, keeping its decompressors and
// (up to maxKeptBlock) its output buffer for the next file.
func (c *blockCodec) release() {
	c.budget.give(c.charged)
	c.charged, c.budget = 0, nil
	if cap(c.out) > maxKeptBlock {
		c.out = nil
	}
}

// close releases the codec for good.
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
