package datafile

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// The page decoder takes its pages from one of two sources: arrow-go's
// page reader, or, when the caller holds the whole file in memory
// (TranscodeInput.Data) or can read each column chunk whole
// (TranscodeInput.Source), memPages, which reads the pages where they lie.
// arrow-go's reader first copies each column chunk out of its source into
// a fresh buffer (ReaderProperties.GetStream), then each compressed page
// into another, and decodes every page header with its statistics into
// new objects; for inputs already in memory that was a third of the
// transcoder's memory traffic.

// pageDict is the page type of a dictionary page, as the page header
// numbers it (pageData and pageDataV2 are in transcode_dict.go).
const pageDict = 2

// rawPage is one page as the decoder needs it: its type, value count,
// encodings and uncompressed bytes. For a data page v1, data holds the
// levels (each after its 4-byte length) and the values; for a v2 one
// (typ pageDataV2), rep and def hold the RLE levels and data the values.
// The bytes stay valid until the next page is read.
type rawPage struct {
	typ            int32
	numValues      int32
	encoding       int32
	defEnc, repEnc int32
	rep, def       []byte
	data           []byte
}

// pageSource gives the pages of one column chunk in order; ok is false at
// its end.
type pageSource interface {
	next() (p rawPage, ok bool, err error)
}

// arrowPages adapts arrow-go's page reader.
type arrowPages struct{ pr file.PageReader }

func (a *arrowPages) next() (rawPage, bool, error) {
	if !a.pr.Next() {
		return rawPage{}, false, a.pr.Err()
	}
	switch p := a.pr.Page().(type) {
	case *file.DictionaryPage:
		return rawPage{typ: pageDict, numValues: p.NumValues(), encoding: int32(p.Encoding()), data: p.Data()}, true, nil
	case *file.DataPageV1:
		return rawPage{typ: pageData, numValues: p.NumValues(), encoding: int32(p.Encoding()),
			defEnc: int32(p.DefinitionLevelEncoding()), repEnc: int32(p.RepetitionLevelEncoding()), data: p.Data()}, true, nil
	}
	return rawPage{typ: -1}, true, nil
}

// memPages reads a column chunk held in memory: uncompressed pages are
// used in place, compressed ones are decoded into one buffer reused for
// every page (and, through the pageDecoder that owns it, every chunk).
type memPages struct {
	rest   []byte         // the chunk's bytes not read yet
	codec  compress.Codec // nil: uncompressed
	values int64          // data-page values the chunk has left
	buf    []byte
	// chunk holds the chunk read from TranscodeInput.Source.
	chunk []byte
}

// maxPageBytes bounds a page's uncompressed size, so that a corrupt header
// cannot ask for an absurd buffer.
const maxPageBytes = 1 << 30

func (m *memPages) next() (rawPage, bool, error) {
	if m.values <= 0 || len(m.rest) == 0 {
		// Some writers pad a chunk past its last page: the value count
		// says where it ends, as it does for arrow-go's reader.
		return rawPage{}, false, nil
	}
	h, n, err := parsePageHeader(m.rest)
	if err != nil {
		return rawPage{}, false, fmt.Errorf("page header: %w", err)
	}
	m.rest = m.rest[n:]
	if h.compressed < 0 || int(h.compressed) > len(m.rest) {
		return rawPage{}, false, fmt.Errorf("page of %d compressed bytes, %d left in the column chunk", h.compressed, len(m.rest))
	}
	if h.uncompressed < 0 || h.uncompressed > maxPageBytes {
		return rawPage{}, false, fmt.Errorf("page of %d uncompressed bytes", h.uncompressed)
	}
	body := m.rest[:h.compressed]
	m.rest = m.rest[h.compressed:]
	p := rawPage{typ: h.typ, numValues: h.numValues, encoding: h.encoding, defEnc: h.defEnc, repEnc: h.repEnc}
	switch h.typ {
	case pageData:
		if !h.hasData {
			return rawPage{}, false, errors.New("data page without a data page header")
		}
		m.values -= int64(h.numValues)
	case pageDataV2:
		if !h.hasDataV2 {
			return rawPage{}, false, errors.New("data page v2 without its header")
		}
		m.values -= int64(h.numValues)
		// The levels come first, never compressed; then the values,
		// compressed unless the header says otherwise.
		if h.defLen < 0 || h.repLen < 0 || int64(h.defLen)+int64(h.repLen) > int64(min(h.compressed, h.uncompressed)) {
			return rawPage{}, false, fmt.Errorf("data page v2 with %d + %d bytes of levels in %d", h.repLen, h.defLen, h.compressed)
		}
		p.rep = body[:h.repLen]
		p.def = body[h.repLen : h.repLen+h.defLen]
		body = body[h.repLen+h.defLen:]
		h.uncompressed -= h.repLen + h.defLen
		h.compressed -= h.repLen + h.defLen
		if !h.v2Compressed {
			if h.compressed != h.uncompressed {
				return rawPage{}, false, fmt.Errorf("uncompressed page of %d bytes says %d", h.compressed, h.uncompressed)
			}
			p.data = body
			return p, true, nil
		}
	case pageDict:
		if !h.hasDict {
			return rawPage{}, false, errors.New("dictionary page without a dictionary page header")
		}
	default:
		return rawPage{typ: -1}, true, nil // the decoder leaves it to arrow-go
	}
	if h.numValues < 0 {
		return rawPage{}, false, fmt.Errorf("page of %d values", h.numValues)
	}
	if m.codec == nil {
		if h.compressed != h.uncompressed {
			return rawPage{}, false, fmt.Errorf("uncompressed page of %d bytes says %d", h.compressed, h.uncompressed)
		}
		p.data = body
		return p, true, nil
	}
	if cap(m.buf) < int(h.uncompressed) {
		m.buf = make([]byte, h.uncompressed)
	}
	out, err := compress.Decode(m.codec, m.buf[:h.uncompressed], body)
	if err != nil {
		return rawPage{}, false, fmt.Errorf("decompress page: %w", err)
	}
	if len(out) != int(h.uncompressed) {
		return rawPage{}, false, fmt.Errorf("page decompressed to %d bytes, its header says %d", len(out), h.uncompressed)
	}
	if cap(out) > cap(m.buf) {
		m.buf = out[:cap(out)] // a codec that allocated: keep its buffer
	}
	p.data = out
	return p, true, nil
}

// maxChunkRead bounds the column chunk a decoder reads from
// TranscodeInput.Source into its buffer; a larger one goes through
// arrow-go's page reader.
const maxChunkRead = 64 << 20

// open makes m read column j of row group g of in in place: a slice of
// in.Data, or the chunk read whole from in.Source into m.chunk, which the
// column reuses across chunks and inputs (arrow-go's reader reads the
// chunk whole too, into a fresh buffer each time). ok is false when the
// chunk is left to arrow-go's reader: no bytes to read it from, an
// encrypted chunk, a codec arrow-go does not decode into a caller's
// buffer, or a range outside the file (arrow-go reports it).
func (m *memPages) open(in *tcInput, g, j int) (ok bool, err error) {
	start, size, codec, values, ok := chunkRange(in, g, j)
	if !ok {
		return false, nil
	}
	*m = memPages{codec: codec, values: values, buf: m.buf, chunk: m.chunk}
	if in.Data != nil {
		if start > int64(len(in.Data)) || size > int64(len(in.Data))-start {
			return false, nil
		}
		m.rest = in.Data[start : start+size : start+size]
		return true, nil
	}
	if s, ok := in.Source.(interface{ Size() int64 }); ok && (start > s.Size() || size > s.Size()-start) {
		return false, nil
	}
	if size > maxChunkRead {
		return false, nil
	}
	if int64(cap(m.chunk)) < size {
		m.chunk = make([]byte, size)
	}
	chunk := m.chunk[:size]
	n, err := in.Source.ReadAt(chunk, start)
	if n == len(chunk) {
		err = nil // io.ReaderAt may report io.EOF with the last byte
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return false, fmt.Errorf("read column chunk %d of row group %d (%d bytes at %d): %w", j, g, size, start, err)
	}
	m.rest = chunk
	return true, nil
}

// chunkRange gives the byte range, codec and data-page value count of
// column j of row group g of in when the chunk can be read in place (see
// memPages.open).
func chunkRange(in *tcInput, g, j int) (start, size int64, codec compress.Codec, values int64, ok bool) {
	if in.Data == nil && in.Source == nil {
		return 0, 0, nil, 0, false
	}
	cc, err := in.File.MetaData().RowGroup(g).ColumnChunk(j)
	if err != nil || cc.CryptoMetadata() != nil {
		return 0, 0, nil, 0, false
	}
	switch cc.Compression() {
	case compress.Codecs.Uncompressed:
	case compress.Codecs.Zstd, compress.Codecs.Snappy, compress.Codecs.Gzip, compress.Codecs.Lz4Raw:
		if codec, err = compress.GetCodec(cc.Compression()); err != nil {
			return 0, 0, nil, 0, false
		}
	default:
		return 0, 0, nil, 0, false
	}
	start = cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
		start = cc.DictionaryPageOffset()
	}
	size = cc.TotalCompressedSize()
	if start < 0 || size < 0 {
		return 0, 0, nil, 0, false
	}
	return start, size, codec, cc.NumValues(), true
}

// pageHeader is what the decoder uses of a Parquet page header.
type pageHeader struct {
	typ                      int32
	uncompressed, compressed int32
	numValues                int32
	encoding, defEnc, repEnc int32
	hasData, hasDict         bool
	// data page v2: the levels' lengths and whether the values are
	// compressed.
	hasDataV2      bool
	defLen, repLen int32
	v2Compressed   bool
}

// parsePageHeader decodes the Thrift compact encoding of a PageHeader at
// the front of b and returns it with its length. Fields the decoder does
// not use (statistics, CRC, index page headers) are skipped.
func parsePageHeader(b []byte) (pageHeader, int, error) {
	r := thriftReader{b: b}
	var h pageHeader
	r.readStruct([]i32Field{{1, &h.typ}, {2, &h.uncompressed}, {3, &h.compressed}}, func(id int16, typ byte) bool {
		if typ != thriftStruct {
			return false
		}
		switch id {
		case 5: // DataPageHeader
			h.hasData = true
			r.readStruct([]i32Field{{1, &h.numValues}, {2, &h.encoding}, {3, &h.defEnc}, {4, &h.repEnc}}, nil)
		case 7: // DictionaryPageHeader
			h.hasDict = true
			r.readStruct([]i32Field{{1, &h.numValues}, {2, &h.encoding}}, nil)
		case 8: // DataPageHeaderV2
			h.hasDataV2, h.v2Compressed = true, true
			r.readStruct([]i32Field{{1, &h.numValues}, {4, &h.encoding}, {5, &h.defLen}, {6, &h.repLen}}, func(id int16, typ byte) bool {
				if id != 7 || typ != thriftTrue && typ != thriftFalse {
					return false
				}
				h.v2Compressed = typ == thriftTrue // is_compressed
				return true
			})
		default:
			return false
		}
		return true
	})
	if r.err != nil {
		return pageHeader{}, 0, r.err
	}
	return h, r.pos, nil
}

// i32Field is an i32 field of a struct and where its value goes.
type i32Field struct {
	id  int16
	dst *int32
}

// readStruct reads a struct whose i32 fields listed go to their places;
// other, when not nil, may read any other field (true), and what it does
// not read is skipped.
func (r *thriftReader) readStruct(fields []i32Field, other func(id int16, typ byte) bool) {
	r.structFields(func(id int16, typ byte) bool {
		if typ == thriftI32 {
			for _, f := range fields {
				if f.id == id {
					*f.dst = r.i32()
					return true
				}
			}
		}
		return other != nil && other(id, typ)
	})
}

// Thrift compact protocol types.
const (
	thriftStop   = 0
	thriftTrue   = 1
	thriftFalse  = 2
	thriftByte   = 3
	thriftI16    = 4
	thriftI32    = 5
	thriftI64    = 6
	thriftDouble = 7
	thriftBinary = 8
	thriftList   = 9
	thriftSet    = 10
	thriftMap    = 11
	thriftStruct = 12
)

// thriftMaxDepth bounds the nesting of skipped values.
const thriftMaxDepth = 16

// thriftReader reads the Thrift compact protocol; the first error sticks
// and makes every later read return zero.
type thriftReader struct {
	b     []byte
	pos   int
	err   error
	depth int
}

func (r *thriftReader) fail(msg string) {
	if r.err == nil {
		r.err = errors.New(msg)
	}
}

func (r *thriftReader) byte1() byte {
	if r.err != nil {
		return 0
	}
	if r.pos >= len(r.b) {
		r.fail("truncated page header")
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

func (r *thriftReader) uvarint() uint64 {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		c := r.byte1()
		if r.err != nil {
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	r.fail("varint too long in page header")
	return 0
}

func (r *thriftReader) varint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (r *thriftReader) i32() int32 {
	v := r.varint()
	if v != int64(int32(v)) {
		r.fail("i32 out of range in page header")
		return 0
	}
	return int32(v)
}

// structFields reads the fields of a struct up to its stop field, calling
// field for each; a field it does not read (false) is skipped.
func (r *thriftReader) structFields(field func(id int16, typ byte) bool) {
	r.depth++
	defer func() { r.depth-- }()
	if r.depth > thriftMaxDepth {
		r.fail("page header nested too deep")
		return
	}
	var last int16
	for r.err == nil {
		h := r.byte1()
		if r.err != nil || h == thriftStop {
			return
		}
		typ := h & 0x0f
		id := last + int16(h>>4)
		if h>>4 == 0 {
			id = int16(r.varint())
		}
		last = id
		if !field(id, typ) {
			r.skip(typ, false)
		}
	}
}

// skip passes a value of type typ; inList says it is an element of a
// list, set or map, where booleans take a byte.
func (r *thriftReader) skip(typ byte, inList bool) {
	switch typ {
	case thriftTrue, thriftFalse:
		if inList {
			r.byte1()
		}
	case thriftByte:
		r.byte1()
	case thriftI16, thriftI32, thriftI64:
		r.uvarint()
	case thriftDouble:
		r.bytes(8)
	case thriftBinary:
		r.bytes(r.uvarint())
	case thriftList, thriftSet:
		h := r.byte1()
		n := uint64(h >> 4)
		if n == 15 {
			n = r.uvarint()
		}
		r.elements(n, h&0x0f, 0)
	case thriftMap:
		n := r.uvarint()
		if n > 0 {
			kv := r.byte1()
			r.elements(n, kv>>4, kv&0x0f)
		}
	case thriftStruct:
		r.structFields(func(int16, byte) bool { return false })
	default:
		r.fail(fmt.Sprintf("unknown type %d in page header", typ))
	}
}

// elements skips n elements of type a (pairs of a and b when b is not 0).
func (r *thriftReader) elements(n uint64, a, b byte) {
	r.depth++
	defer func() { r.depth-- }()
	if r.depth > thriftMaxDepth {
		r.fail("page header nested too deep")
		return
	}
	if n > uint64(len(r.b)-r.pos) {
		r.fail("container larger than the page header")
		return
	}
	for range n {
		if r.err != nil {
			return
		}
		r.skip(a, true)
		if b != 0 {
			r.skip(b, true)
		}
	}
}

func (r *thriftReader) bytes(n uint64) {
	if r.err != nil {
		return
	}
	if n > uint64(len(r.b)-r.pos) {
		r.fail("truncated page header")
		return
	}
	r.pos += int(n)
}
