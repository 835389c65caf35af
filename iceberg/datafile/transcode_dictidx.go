package datafile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/icectl/icectl/iceberg/spec"
)

// A string or binary column whose inputs are all dictionary-encoded is
// transcoded as dictionary indices (issue 33 §6): the output chunk's
// dictionary is the union of the inputs' dictionaries, put into the column
// writer before any value, and each input dictionary page becomes a table
// from its indices to the union's. A data page's indices are then
// translated and filtered by deletes like any value, and handed to the
// column writer as indices (WriteDictIndices), so that no value is hashed
// again and no string compared: the statistics and the Iceberg bounds of
// a batch come from the union's sort order (each entry's rank), computed
// once per row group. Values are the same as the value path writes; the
// dictionary may hold entries that only deleted rows used (a dictionary
// need not be minimal). A column whose inputs are not all dictionary
// pages (a dictionary that fell back to PLAIN, a column the file lacks or
// a partition constant) or whose union would pass the dictionary page
// size limit takes the value path.

// tcDictIndex is one column chunk's output dictionary.
type tcDictIndex struct {
	vals  []parquet.ByteArray // by output index
	index map[string]int32
	rank  []int32 // rank[k]: vals[k]'s place in byte order
	byRk  []int32 // byRk[r]: the index of rank r
	size  int64   // the dictionary's PLAIN size

	cw     *file.ByteArrayColumnChunkWriter
	raw    interface{ AddRawSize(int64) }
	stats  *metadata.ByteArrayStatistics // nil: the column keeps none
	info   file.LevelInfo
	batch  int
	spaced []int32
	bits   []byte
	dec    []parquet.ByteArray // the arrow-go fallback's values
}

// dictIndexPlan returns the dictionary plan of column c for the inputs of
// one row group, having put the union into cw's encoder; nil when the
// column takes the value path.
func (t *Transcoder) dictIndexPlan(c *tcColumn, cw *file.ByteArrayColumnChunkWriter, n int, get func(int) (*tcInput, error)) (*tcDictIndex, error) {
	switch c.typ.(type) {
	case spec.StringType, spec.BinaryType:
	default:
		return nil, nil
	}
	if t.noDictIndex {
		return nil, nil
	}
	props := cw.Properties()
	path := c.desc.Path()
	enc, ok := cw.CurrentEncoder().(interface {
		NumEntries() int
		PutDictionary(arrow.Array) error
		AddRawSize(int64)
	})
	if c.kind != tcData || c.desc.SortOrder() != schema.SortUNSIGNED || !ok || enc.NumEntries() != 0 ||
		cw.CurrentEncoder().Encoding() != parquet.Encodings.PlainDict ||
		props.DictionaryCostFallbackEnabledFor(path) || cw.GetBloomFilter() != nil {
		return nil, nil
	}
	p := &tcDictIndex{index: map[string]int32{}, cw: cw, raw: enc, info: cw.LevelInfo(), batch: int(props.WriteBatchSize())}
	var arena []byte
	limit := props.DictionaryPageSizeLimit()
	for k := range n {
		in, err := get(k)
		if err != nil {
			return nil, err
		}
		j := in.src[c.idx]
		if j < 0 || in.hasFill != nil && in.hasFill[c.idx] {
			return nil, nil
		}
		md := in.File.MetaData()
		if !sameForm(md.Schema.Column(j), c.desc) {
			return nil, nil
		}
		for g := range md.NumRowGroups() {
			dict, ok, err := chunkDictionary(in, g, j)
			if err != nil || !ok {
				return nil, err
			}
			for _, v := range dict {
				if _, ok := p.index[string(v)]; ok {
					continue
				}
				if p.size += int64(len(v)) + 4; p.size >= limit {
					return nil, nil // the value path falls back to PLAIN
				}
				start := len(arena)
				arena = append(arena, v...)
				p.index[string(v)] = int32(len(p.vals))
				// The arena may move: offsets now, slices below.
				p.vals = append(p.vals, parquet.ByteArray(arena[start:len(arena):len(arena)]))
			}
		}
	}
	// Re-slice every entry from the final arena.
	offsets := make([]int32, len(p.vals)+1)
	for i, v := range p.vals {
		offsets[i+1] = offsets[i] + int32(len(v))
	}
	if arena == nil {
		arena = []byte{}
	}
	for i := range p.vals {
		p.vals[i] = parquet.ByteArray(arena[offsets[i]:offsets[i+1]:offsets[i+1]])
	}
	dict := array.NewBinaryData(array.NewData(arrow.BinaryTypes.Binary, len(p.vals),
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(arena)}, nil, 0, 0))
	defer dict.Release()
	if err := enc.PutDictionary(dict); err != nil {
		return nil, fmt.Errorf("column %s: %w", c.name, err)
	}
	if enc.NumEntries() != len(p.vals) {
		return nil, fmt.Errorf("column %s: a dictionary of %d entries took %d", c.name, len(p.vals), enc.NumEntries())
	}
	p.byRk = make([]int32, len(p.vals))
	for i := range p.byRk {
		p.byRk[i] = int32(i)
	}
	slices.SortFunc(p.byRk, func(a, b int32) int { return bytes.Compare(p.vals[a], p.vals[b]) })
	p.rank = make([]int32, len(p.vals))
	for r, k := range p.byRk {
		p.rank[k] = int32(r)
	}
	if st, ok := cw.PageStatistics().(*metadata.ByteArrayStatistics); ok && st != nil {
		p.stats = st
	}
	return p, nil
}

// chunkDictionary is the dictionary of column j in row group g of in; ok
// is false when the chunk has data pages that are not dictionary-encoded
// (or does not say), or no dictionary page. The values alias a buffer the
// next call may reuse.
func chunkDictionary(in *tcInput, g, j int) (vals []parquet.ByteArray, ok bool, err error) {
	defer recoverError(&err, "read the dictionary of "+in.Path)
	cc, err := in.File.MetaData().RowGroup(g).ColumnChunk(j)
	if err != nil {
		return nil, false, err
	}
	if cc.NumValues() == 0 {
		return nil, true, nil
	}
	st := cc.EncodingStats()
	if !cc.HasDictionaryPage() || len(st) == 0 {
		return nil, false, nil
	}
	for _, s := range st {
		if pt := int32(s.PageType); (pt == pageData || pt == pageDataV2) &&
			s.Encoding != parquet.Encodings.RLEDict && s.Encoding != parquet.Encodings.PlainDict {
			return nil, false, nil
		}
	}
	var p rawPage
	var m memPages
	if in.Data != nil {
		if ok, err := m.open(in, g, j); err != nil || !ok {
			return nil, false, err
		}
		if p, ok, err = m.next(); err != nil || !ok {
			return nil, false, err
		}
	} else {
		pr, err := in.File.RowGroup(g).GetColumnPageReader(j)
		if err != nil {
			return nil, false, err
		}
		a := arrowPages{pr: pr}
		if p, ok, err = a.next(); err != nil || !ok {
			return nil, false, err
		}
	}
	if p.typ != pageDict || p.encoding != encPlain && p.encoding != encPlainDict {
		return nil, false, nil
	}
	if p.numValues < 0 || int(p.numValues) > len(p.data) {
		return nil, false, fmt.Errorf("dictionary page of %d values in %d bytes", p.numValues, len(p.data))
	}
	vals = make([]parquet.ByteArray, p.numValues)
	if _, err := plainByteArray(p.data, vals); err != nil {
		return nil, false, fmt.Errorf("dictionary page: %w", err)
	}
	return vals, true, nil
}

var errNotInDictionary = errors.New("a value missing from the dictionaries of the inputs' column chunks")

// plain decodes PLAIN byte arrays as their output indices: a dictionary
// page becomes the table from its indices to the output's.
func (p *tcDictIndex) plain(data []byte, out []int32) ([]byte, error) {
	for i := range out {
		if len(data) < 4 {
			return nil, errors.New("truncated PLAIN byte array")
		}
		n := binary.LittleEndian.Uint32(data)
		if uint64(n) > uint64(len(data)-4) {
			return nil, fmt.Errorf("PLAIN byte array of %d bytes, %d left", n, len(data)-4)
		}
		k, ok := p.index[string(data[4:4+n])]
		if !ok {
			return nil, errNotInDictionary
		}
		out[i] = k
		data = data[4+n:]
	}
	return data, nil
}

// open reads the rest of a chunk through arrow-go's reader, as indices.
func (p *tcDictIndex) open(cr file.ColumnChunkReader) (pageReader[int32], error) {
	r, ok := cr.(*file.ByteArrayColumnChunkReader)
	if !ok {
		return nil, fmt.Errorf("unexpected column reader %T", cr)
	}
	return &dictIndexReader{r: r, p: p}, nil
}

type dictIndexReader struct {
	r *file.ByteArrayColumnChunkReader
	p *tcDictIndex
}

func (d *dictIndexReader) HasNext() bool { return d.r.HasNext() }

func (d *dictIndexReader) Skip(n int64) (int64, error) { return d.r.Skip(n) }

func (d *dictIndexReader) ReadBatchInPage(n int64, out []int32, def, rep []int16) (int64, int, error) {
	if len(d.p.dec) < len(out) {
		d.p.dec = make([]parquet.ByteArray, len(out))
	}
	total, nv, err := d.r.ReadBatchInPage(n, d.p.dec[:len(out)], def, rep)
	for i, v := range d.p.dec[:nv] {
		k, ok := d.p.index[string(v)]
		if !ok {
			return 0, 0, errNotInDictionary
		}
		out[i] = k
	}
	return total, nv, err
}

// write hands kept indices and their levels to the column writer, one
// write batch at a time so that each page's statistics are its own, with
// the statistics and Iceberg bounds of their values.
func (p *tcDictIndex) write(c *tcColumn) func(idx []int32, def, rep []int16) (int64, error) {
	return func(idx []int32, def, rep []int16) (int64, error) {
		levels := len(idx)
		if def != nil {
			levels = len(def)
		}
		vi := 0
		for lo := 0; lo < levels; {
			hi := min(lo+p.batch, levels)
			var d, r []int16
			nv := hi - lo
			if def != nil {
				d = def[lo:hi]
				nv = 0
				for _, l := range d {
					if l == c.maxDef {
						nv++
					}
				}
			}
			if rep != nil {
				r = rep[lo:hi]
			}
			if vi+nv > len(idx) {
				return 0, fmt.Errorf("%d indices for more levels at the maximum definition level", len(idx))
			}
			if err := p.writeBatch(c, idx[vi:vi+nv], d, r, hi-lo); err != nil {
				return 0, err
			}
			vi += nv
			lo = hi
		}
		return int64(vi), nil
	}
}

func (p *tcDictIndex) writeBatch(c *tcColumn, idx []int32, def, rep []int16, levels int) error {
	if len(idx) > 0 {
		lo, hi := int32(len(p.rank)), int32(-1)
		var raw int64
		for _, k := range idx {
			if uint32(k) >= uint32(len(p.rank)) {
				return fmt.Errorf("dictionary index %d of %d", k, len(p.rank))
			}
			r := p.rank[k]
			lo, hi = min(lo, r), max(hi, r)
			raw += int64(len(p.vals[k])) + 4
		}
		mn, mx := p.vals[p.byRk[lo]], p.vals[p.byRk[hi]]
		if p.stats != nil {
			p.stats.SetMinMax(mn, mx)
		}
		if l := c.leaf; l != nil {
			if a, ok := l.acc.(*metricsBytesAcc); ok {
				a.observe(mn)
				a.observe(mx)
			}
		}
		p.raw.AddRawSize(raw)
	}
	if p.stats != nil {
		p.stats.IncNulls(int64(levels - len(idx)))
		p.stats.IncNumValues(int64(len(idx)))
	}
	// WriteDictIndices takes the indices spaced as an Arrow array: a slot,
	// null unless at the maximum level, for each level at or above the
	// nearest repeated ancestor's.
	spaced, nulls := idx, 0
	var valid []byte
	if def != nil {
		n := 0
		for _, l := range def {
			if l >= p.info.RepeatedAncestorDefLevel {
				n++
			}
		}
		if n != len(idx) {
			if cap(p.spaced) < n {
				p.spaced = make([]int32, n)
			}
			spaced = p.spaced[:n]
			nb := int(bitutil.BytesForBits(int64(n)))
			if cap(p.bits) < nb {
				p.bits = make([]byte, nb)
			}
			valid = p.bits[:nb]
			clear(valid)
			s, v := 0, 0
			for _, l := range def {
				switch {
				case l == c.maxDef:
					spaced[s] = idx[v]
					bitutil.SetBit(valid, s)
					v++
					s++
				case l >= p.info.RepeatedAncestorDefLevel:
					spaced[s] = 0
					s++
				}
			}
			nulls = n - len(idx)
		}
	}
	bufs := []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(spaced))}
	if valid != nil {
		bufs[0] = memory.NewBufferBytes(valid)
	}
	arr := array.NewInt32Data(array.NewData(arrow.PrimitiveTypes.Int32, len(spaced), bufs, nil, nulls, 0))
	defer arr.Release()
	return p.cw.WriteDictIndices(arr, def, rep)
}
