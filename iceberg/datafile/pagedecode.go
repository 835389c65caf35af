package datafile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// The Transcoder decodes the common pages of its columns itself: data
// pages with PLAIN or dictionary-encoded values and RLE repetition and
// definition levels, and their PLAIN dictionary page. arrow-go's column reader
// resolves dictionary indices through a converter that reallocates the
// decoded dictionary as higher indices appear, which allocated about 1.5 GB
// (and cost 13% of the CPU) compacting 8M rows; here the dictionary is
// decoded once per column chunk. Data pages v2 (iceberg-go writes them)
// are decoded only when read in place (pagesource.go). Any other page
// (other encodings, v2 through arrow-go's page reader) makes the caller
// go on with arrow-go's reader from that row.

// errPageUnsupported is returned for a page pageDecoder leaves to arrow-go.
var errPageUnsupported = errors.New("page left to arrow-go's reader")

// Parquet encodings, as the page header numbers them.
const (
	encPlain     = 0
	encPlainDict = 2
	encRLE       = 3
	encRLEDict   = 8
)

// plainDecoder decodes len(out) PLAIN values from the front of data and
// returns the rest. Byte arrays alias data.
type plainDecoder[T any] func(data []byte, out []T) ([]byte, error)

// pageDecoder reads one column chunk page by page.
type pageDecoder[T any] struct {
	pr pageSource
	// arrow and mem are the two page sources, kept for their buffers.
	arrow  arrowPages
	mem    memPages
	maxDef int16
	// maxRep is set by the caller of reset for a nested leaf: rep then
	// holds each data page's repetition levels.
	maxRep int16
	rep    []int16
	plain  plainDecoder[T]
	owned  func([]T) // copies byte-array dictionary values out of the page
	dict   []T
	// hasDict: dict holds this chunk's dictionary (its buffer may be
	// left from an earlier chunk).
	hasDict bool
	vals    []T
	def     []int16
	idx     []uint32
	rows    int64 // rows decoded so far
	pages   int   // data pages decoded so far
	// limit, when positive, declines every data page after the first
	// limit ones: tests hand chunks over to arrow-go mid-way with it.
	limit int
}

func newPageDecoder[T any](pr file.PageReader, maxDef int16, plain plainDecoder[T], owned func([]T)) *pageDecoder[T] {
	return new(pageDecoder[T]).reset(pr, maxDef, plain, owned)
}

// reset makes d read another column chunk through arrow-go's page reader
// pr, keeping its buffers: fresh ones for each of thousands of small
// inputs cost their zeroing.
func (d *pageDecoder[T]) reset(pr file.PageReader, maxDef int16, plain plainDecoder[T], owned func([]T)) *pageDecoder[T] {
	d.clear(maxDef, plain, owned)
	d.arrow.pr = pr
	d.pr = &d.arrow
	return d
}

// open makes d read column j of row group g of in: in place when in's
// bytes are in memory or its chunk can be read whole (memPages.open),
// through arrow-go's page reader otherwise.
func (d *pageDecoder[T]) open(in *tcInput, g, j int, maxDef int16, plain plainDecoder[T], owned func([]T)) (*pageDecoder[T], error) {
	d.clear(maxDef, plain, owned)
	ok, err := d.mem.open(in, g, j)
	if err != nil {
		return nil, err
	}
	if ok {
		d.pr = &d.mem
		return d, nil
	}
	pr, err := in.File.RowGroup(g).GetColumnPageReader(j)
	if err != nil {
		return nil, err
	}
	return d.reset(pr, maxDef, plain, owned), nil
}

func (d *pageDecoder[T]) clear(maxDef int16, plain plainDecoder[T], owned func([]T)) {
	*d = pageDecoder[T]{maxDef: maxDef, plain: plain, owned: owned, dict: d.dict, vals: d.vals, def: d.def, rep: d.rep, idx: d.idx,
		mem: memPages{buf: d.mem.buf, chunk: d.mem.chunk}}
}

// next decodes the next data page: its row count, its non-null values and
// its definition levels (all rows; meaningless for a required column).
// total is 0 at the end of the chunk. A page of more than maxRows values
// is corrupt (a flat column's values are its rows; a nested leaf's
// levels are not, and maxRows does not apply). errPageUnsupported leaves the rest, from row d.rows, to
// arrow-go.
func (d *pageDecoder[T]) next(maxRows int64) (total int64, vals []T, def []int16, err error) {
	for {
		p, ok, err := d.pr.next()
		if !ok || err != nil {
			return 0, nil, nil, err
		}
		switch p.typ {
		case pageDict:
			if err := d.readDict(p); err != nil {
				return 0, nil, nil, err
			}
		case pageData, pageDataV2:
			if d.limit > 0 && d.pages >= d.limit {
				return 0, nil, nil, errPageUnsupported
			}
			if d.maxRep == 0 && int64(p.numValues) > maxRows {
				return 0, nil, nil, fmt.Errorf("data page of %d values, %d rows left in the row group", p.numValues, maxRows)
			}
			n, vals, def, err := d.readData(p)
			if err != nil {
				return 0, nil, nil, err
			}
			if n == 0 {
				continue
			}
			d.pages++
			d.rows += n
			return n, vals, def, nil
		default:
			return 0, nil, nil, errPageUnsupported
		}
	}
}

func (d *pageDecoder[T]) readDict(p rawPage) error {
	if enc := p.encoding; enc != encPlain && enc != encPlainDict {
		return errPageUnsupported
	}
	n := int(p.numValues)
	if n < 0 || n > len(p.data) {
		return fmt.Errorf("dictionary page of %d values in %d bytes", n, len(p.data))
	}
	if cap(d.dict) < n {
		d.dict = make([]T, n)
	}
	d.dict = d.dict[:n]
	d.hasDict = true
	if _, err := d.plain(p.data, d.dict); err != nil {
		return fmt.Errorf("dictionary page: %w", err)
	}
	if d.owned != nil {
		d.owned(d.dict)
	}
	return nil
}

func (d *pageDecoder[T]) readData(p rawPage) (int64, []T, []int16, error) {
	n := int(p.numValues)
	data := p.data
	if n < 0 {
		return 0, nil, nil, fmt.Errorf("data page of %d values", n)
	}
	if n == 0 {
		return 0, nil, nil, nil
	}
	if cap(d.def) < n {
		d.def = make([]int16, n)
	}
	def := d.def[:n]
	nonNull := n
	v2 := p.typ == pageDataV2 // levels always RLE, without a length prefix
	if d.maxRep > 0 {
		if !v2 && p.repEnc != encRLE {
			return 0, nil, nil, errPageUnsupported
		}
		if cap(d.rep) < n {
			d.rep = make([]int16, n)
		}
		var err error
		if v2 {
			err = decodeLevelRuns(p.rep, d.maxRep, d.rep[:n], d.idxBuf(n))
		} else {
			data, err = decodeLevels(data, d.maxRep, d.rep[:n], d.idxBuf(n))
		}
		if err != nil {
			return 0, nil, nil, fmt.Errorf("repetition levels: %w", err)
		}
	}
	if d.maxDef > 0 {
		if !v2 && p.defEnc != encRLE {
			return 0, nil, nil, errPageUnsupported
		}
		var err error
		if v2 {
			err = decodeLevelRuns(p.def, d.maxDef, def, d.idxBuf(n))
		} else {
			data, err = decodeLevels(data, d.maxDef, def, d.idxBuf(n))
		}
		if err != nil {
			return 0, nil, nil, fmt.Errorf("definition levels: %w", err)
		}
		nonNull = 0
		for _, l := range def {
			if l == d.maxDef {
				nonNull++
			}
		}
	}
	if cap(d.vals) < nonNull {
		d.vals = make([]T, nonNull)
	}
	vals := d.vals[:nonNull]
	switch p.encoding {
	case encPlain:
		if _, err := d.plain(data, vals); err != nil {
			return 0, nil, nil, err
		}
	case encPlainDict, encRLEDict:
		if !d.hasDict {
			return 0, nil, nil, errors.New("dictionary-encoded page without a dictionary page")
		}
		if nonNull > 0 {
			if len(data) < 1 || data[0] > 32 {
				return 0, nil, nil, errors.New("dictionary-encoded page without a valid index bit width")
			}
			if cap(d.idx) < nonNull {
				d.idx = make([]uint32, nonNull)
			}
			idx := d.idx[:nonNull]
			if err := decodeHybrid(data[1:], int(data[0]), idx); err != nil {
				return 0, nil, nil, fmt.Errorf("dictionary indices: %w", err)
			}
			dict := d.dict
			for i, k := range idx {
				if int(k) >= len(dict) {
					return 0, nil, nil, fmt.Errorf("dictionary index %d of a dictionary of %d", k, len(dict))
				}
				vals[i] = dict[k]
			}
		}
	default:
		return 0, nil, nil, errPageUnsupported
	}
	return int64(n), vals, def, nil
}

func (d *pageDecoder[T]) idxBuf(n int) []uint32 {
	if cap(d.idx) < n {
		d.idx = make([]uint32, n)
	}
	return d.idx[:n]
}

// decodeLevels decodes len(out) levels of at most max, RLE-encoded after
// their 4-byte length at the front of data, and returns the rest of data.
func decodeLevels(data []byte, max int16, out []int16, scratch []uint32) ([]byte, error) {
	if len(data) < 4 {
		return nil, errors.New("data page too short for its levels")
	}
	size := int(binary.LittleEndian.Uint32(data))
	if size < 0 || size > len(data)-4 {
		return nil, fmt.Errorf("levels of %d bytes in a page of %d", size, len(data))
	}
	if err := decodeLevelRuns(data[4:4+size], max, out, scratch); err != nil {
		return nil, err
	}
	return data[4+size:], nil
}

// decodeLevelRuns decodes len(out) levels of at most max from RLE runs
// (a data page v2's levels, or v1's after their length).
func decodeLevelRuns(runs []byte, max int16, out []int16, scratch []uint32) error {
	if err := decodeHybrid(runs, bitWidth(uint64(max)), scratch); err != nil {
		return err
	}
	for i, l := range scratch {
		if l > uint32(max) {
			return fmt.Errorf("level %d above the maximum %d", l, max)
		}
		out[i] = int16(l)
	}
	return nil
}

func bitWidth(max uint64) int {
	w := 0
	for max > 0 {
		w++
		max >>= 1
	}
	return w
}

// decodeHybrid decodes len(out) values of the RLE / bit-packed hybrid
// encoding with the given bit width.
func decodeHybrid(data []byte, width int, out []uint32) error {
	if width < 0 || width > 32 {
		return fmt.Errorf("bit width %d", width)
	}
	byteWidth := (width + 7) / 8
	mask := uint64(1)<<width - 1
	for i := 0; i < len(out); {
		header, n := binary.Uvarint(data)
		if n <= 0 {
			return errors.New("truncated run header")
		}
		data = data[n:]
		if header&1 == 0 { // a run of one value
			count := header >> 1
			if len(data) < byteWidth {
				return errors.New("truncated run value")
			}
			var v uint64
			for b := 0; b < byteWidth; b++ {
				v |= uint64(data[b]) << (8 * b)
			}
			data = data[byteWidth:]
			if v > mask {
				return fmt.Errorf("run value %d wider than %d bits", v, width)
			}
			if count == 0 {
				return errors.New("empty run")
			}
			m := min(count, uint64(len(out)-i))
			for k := uint64(0); k < m; k++ {
				out[i] = uint32(v)
				i++
			}
			continue
		}
		groups := header >> 1
		if groups == 0 {
			return errors.New("empty bit-packed run")
		}
		left := uint64(len(out) - i)
		m := left
		if groups <= left {
			m = min(groups*8, left)
		}
		// A page's last run may stop at its last value instead of filling
		// its last group (parquet-java writes such pages; parquet-java and
		// arrow-go read what is there): only the bytes of the values still
		// wanted must be present.
		if need := (m*uint64(width) + 7) / 8; need > uint64(len(data)) {
			return errors.New("truncated bit-packed run")
		}
		size := uint64(len(data))
		if groups <= size || width == 0 {
			size = min(size, groups*uint64(width)) // 8 values of width bits per group
		}
		packed := data[:size]
		data = data[size:]
		if width == 0 {
			for k := uint64(0); k < m; k++ {
				out[i] = 0
				i++
			}
			continue
		}
		p, k := 0, uint64(0)
		if width <= 8 {
			// Whole groups: 8 values in width bytes, unpacked from one
			// word (levels and small dictionaries are 1 - 8 bits wide).
			for ; k+8 <= m && p+width <= len(packed); k += 8 {
				var g uint64
				for b := range width {
					g |= uint64(packed[p+b]) << (8 * b)
				}
				p += width
				o := out[i : i+8 : i+8]
				o[0] = uint32(g & mask)
				o[1] = uint32(g >> width & mask)
				o[2] = uint32(g >> (2 * width) & mask)
				o[3] = uint32(g >> (3 * width) & mask)
				o[4] = uint32(g >> (4 * width) & mask)
				o[5] = uint32(g >> (5 * width) & mask)
				o[6] = uint32(g >> (6 * width) & mask)
				o[7] = uint32(g >> (7 * width) & mask)
				i += 8
			}
		}
		// The rest (a last group cut short, wider values) bit by bit, from
		// the byte boundary where the whole groups ended.
		var acc uint64
		var bits int
		for ; k < m; k++ {
			for bits < width {
				acc |= uint64(packed[p]) << bits
				p++
				bits += 8
			}
			out[i] = uint32(acc & mask)
			acc >>= width
			bits -= width
			i++
		}
	}
	return nil
}

func plainFixed[T int32 | int64 | float32 | float64](data []byte, out []T, size int, get func([]byte) T) ([]byte, error) {
	need := len(out) * size
	if len(data) < need {
		return nil, fmt.Errorf("%d PLAIN values need %d bytes, the page has %d", len(out), need, len(data))
	}
	for i := range out {
		out[i] = get(data[i*size:])
	}
	return data[need:], nil
}

func plainInt32(data []byte, out []int32) ([]byte, error) {
	return plainFixed(data, out, 4, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) })
}

func plainInt64(data []byte, out []int64) ([]byte, error) {
	return plainFixed(data, out, 8, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })
}

func plainFloat32(data []byte, out []float32) ([]byte, error) {
	return plainFixed(data, out, 4, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) })
}

func plainFloat64(data []byte, out []float64) ([]byte, error) {
	return plainFixed(data, out, 8, func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) })
}

// plainBool decodes PLAIN booleans: one bit each, the first in the
// lowest bit.
func plainBool(data []byte, out []bool) ([]byte, error) {
	need := (len(out) + 7) / 8
	if len(data) < need {
		return nil, fmt.Errorf("%d PLAIN booleans need %d bytes, the page has %d", len(out), need, len(data))
	}
	for i := range out {
		out[i] = data[i/8]>>(i%8)&1 == 1
	}
	return data[need:], nil
}

func plainByteArray(data []byte, out []parquet.ByteArray) ([]byte, error) {
	for i := range out {
		if len(data) < 4 {
			return nil, errors.New("truncated PLAIN byte array")
		}
		n := binary.LittleEndian.Uint32(data)
		if uint64(n) > uint64(len(data)-4) {
			return nil, fmt.Errorf("PLAIN byte array of %d bytes, %d left", n, len(data)-4)
		}
		out[i] = parquet.ByteArray(data[4 : 4+n : 4+n])
		data = data[4+n:]
	}
	return data, nil
}

func plainFixedLen(size int) plainDecoder[parquet.FixedLenByteArray] {
	return func(data []byte, out []parquet.FixedLenByteArray) ([]byte, error) {
		need := len(out) * size
		if size <= 0 || len(data) < need {
			return nil, fmt.Errorf("%d PLAIN values of %d bytes, the page has %d", len(out), size, len(data))
		}
		for i := range out {
			out[i] = parquet.FixedLenByteArray(data[i*size : (i+1)*size : (i+1)*size])
		}
		return data[need:], nil
	}
}

// ownBytes copies byte-array values into one buffer of their own, so that
// they outlive the page they were decoded from.
func ownBytes[T ~[]byte](vals []T) {
	total := 0
	for _, v := range vals {
		total += len(v)
	}
	buf := make([]byte, 0, total)
	for i, v := range vals {
		start := len(buf)
		buf = append(buf, v...)
		vals[i] = T(buf[start:len(buf):len(buf)])
	}
}
