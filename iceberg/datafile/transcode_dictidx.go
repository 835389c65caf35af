package datafile

import (
	"bytes"
	"cmp"
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

// tcDictIndex is one column chunk's output dictionary, of values V
// (parquet.ByteArray, int32 or int64).
type tcDictIndex[V any] struct {
	vals   []V // by output index
	lookup func(V) (int32, bool)
	rank   []int32 // rank[k]: vals[k]'s place in the statistics' order
	byRk   []int32 // byRk[r]: the index of rank r
	width  int64   // a value's PLAIN size; 0: a byte array's is 4 + its length
	decode plainDecoder[V]

	cw       file.ColumnChunkWriter
	raw      interface{ AddRawSize(int64) }
	setStats func(mn, mx V) // nil: the column keeps no statistics
	stats    metadata.TypedStatistics
	info     file.LevelInfo
	batch    int
	spaced   []int32
	bits     []byte
	dec      []V // decoded values, before lookup
}

// dictIndexEncoder is the part of arrow-go's dictionary encoder the plan
// uses.
type dictIndexEncoder interface {
	NumEntries() int
	PutDictionary(arrow.Array) error
	AddRawSize(int64)
}

// dictIndexWriter says whether column c of writer cw can take indices: a
// data column of strings, binary or integers (not decimals) whose writer
// is dictionary-encoding and has no dictionary yet, without the cost
// fallback (uncompressed pages) or bloom filters, whose statistics order
// its values as order does.
func (t *Transcoder) dictIndexWriter(c *tcColumn, cw file.ColumnChunkWriter, order schema.SortOrder) (dictIndexEncoder, bool) {
	if t.noDictIndex || c.kind != tcData || c.desc.SortOrder() != order {
		return nil, false
	}
	switch c.typ.(type) {
	case spec.StringType, spec.BinaryType, spec.IntType, spec.LongType, spec.DateType, spec.TimeType,
		spec.TimestampType, spec.TimestampTzType, spec.TimestampNsType, spec.TimestampTzNsType:
	default:
		return nil, false
	}
	enc, ok := cw.CurrentEncoder().(dictIndexEncoder)
	if !ok || enc.NumEntries() != 0 || cw.CurrentEncoder().Encoding() != parquet.Encodings.PlainDict ||
		cw.Properties().DictionaryCostFallbackEnabledFor(c.desc.Path()) || cw.GetBloomFilter() != nil {
		return nil, false
	}
	return enc, true
}

// dictIndexPlan returns the dictionary plan of column c for the inputs of
// one row group, having put the union into cw's encoder; nil when the
// column takes the value path. add adds a value to the union (copying
// it) and returns its index; dict is the union as an Arrow array.
func dictIndexPlan[V any](c *tcColumn, cw file.ColumnChunkWriter, enc dictIndexEncoder, n int, get func(int) (*tcInput, error),
	p *tcDictIndex[V], add func(V) int32, size func(V) int64, dict func() arrow.Array, cmp func(a, b V) int) (*tcDictIndex[V], error) {
	props := cw.Properties()
	limit := props.DictionaryPageSizeLimit()
	var total int64
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
			vals, ok, err := chunkDictionary(in, g, j, p.decode)
			if err != nil || !ok {
				return nil, err
			}
			for _, v := range vals {
				if _, ok := p.lookup(v); ok {
					continue
				}
				if total += size(v); total >= limit {
					return nil, nil // the value path falls back to PLAIN
				}
				add(v)
			}
		}
	}
	arr := dict()
	defer arr.Release()
	if err := enc.PutDictionary(arr); err != nil {
		return nil, fmt.Errorf("column %s: %w", c.name, err)
	}
	if enc.NumEntries() != len(p.vals) {
		return nil, fmt.Errorf("column %s: a dictionary of %d entries took %d", c.name, len(p.vals), enc.NumEntries())
	}
	p.byRk = make([]int32, len(p.vals))
	for i := range p.byRk {
		p.byRk[i] = int32(i)
	}
	slices.SortFunc(p.byRk, func(a, b int32) int { return cmp(p.vals[a], p.vals[b]) })
	p.rank = make([]int32, len(p.vals))
	for r, k := range p.byRk {
		p.rank[k] = int32(r)
	}
	p.cw, p.raw, p.info, p.batch = cw, enc, cw.LevelInfo(), int(props.WriteBatchSize())
	if p.stats = cw.PageStatistics(); p.stats == nil {
		p.setStats = nil
	}
	return p, nil
}

// byteArrayDictIndex is the plan of a string or binary column.
func (t *Transcoder) byteArrayDictIndex(c *tcColumn, cw *file.ByteArrayColumnChunkWriter, n int, get func(int) (*tcInput, error)) (*tcDictIndex[parquet.ByteArray], error) {
	enc, ok := t.dictIndexWriter(c, cw, schema.SortUNSIGNED)
	if !ok {
		return nil, nil
	}
	index := map[string]int32{}
	var arena []byte
	p := &tcDictIndex[parquet.ByteArray]{decode: plainByteArray,
		lookup: func(v parquet.ByteArray) (int32, bool) { k, ok := index[string(v)]; return k, ok }}
	if st, ok := cw.PageStatistics().(*metadata.ByteArrayStatistics); ok {
		p.setStats = st.SetMinMax
	}
	var offsets []int32
	add := func(v parquet.ByteArray) int32 {
		k := int32(len(p.vals))
		index[string(v)] = k
		offsets = append(offsets, int32(len(arena)))
		arena = append(arena, v...)
		p.vals = append(p.vals, nil) // sliced from the final arena below
		return k
	}
	dict := func() arrow.Array {
		offsets = append(offsets, int32(len(arena)))
		if arena == nil {
			arena = []byte{}
		}
		for i := range p.vals {
			p.vals[i] = parquet.ByteArray(arena[offsets[i]:offsets[i+1]:offsets[i+1]])
		}
		return array.NewBinaryData(array.NewData(arrow.BinaryTypes.Binary, len(p.vals),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(arena)}, nil, 0, 0))
	}
	size := func(v parquet.ByteArray) int64 { return int64(len(v)) + 4 }
	return dictIndexPlan(c, cw, enc, n, get, p, add, size, dict, func(a, b parquet.ByteArray) int { return bytes.Compare(a, b) })
}

// intDictIndex is the plan of an int or long column.
func intDictIndex[V int32 | int64](t *Transcoder, c *tcColumn, cw file.ColumnChunkWriter, n int, get func(int) (*tcInput, error),
	decode plainDecoder[V], setStats func(mn, mx V), width int64, dict func([]V) arrow.Array) (*tcDictIndex[V], error) {
	enc, ok := t.dictIndexWriter(c, cw, schema.SortSIGNED)
	if !ok {
		return nil, nil
	}
	index := map[V]int32{}
	p := &tcDictIndex[V]{decode: decode, width: width, setStats: setStats,
		lookup: func(v V) (int32, bool) { k, ok := index[v]; return k, ok }}
	add := func(v V) int32 {
		k := int32(len(p.vals))
		index[v] = k
		p.vals = append(p.vals, v)
		return k
	}
	size := func(V) int64 { return width }
	return dictIndexPlan(c, cw, enc, n, get, p, add, size, func() arrow.Array { return dict(p.vals) }, func(a, b V) int { return cmp.Compare(a, b) })
}

// chunkDictionary is the dictionary of column j in row group g of in; ok
// is false when the chunk has data pages that are not dictionary-encoded
// (or does not say), or no dictionary page. The values alias a buffer the
// next call may reuse.
func chunkDictionary[V any](in *tcInput, g, j int, decode plainDecoder[V]) (vals []V, ok bool, err error) {
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
	vals = make([]V, p.numValues)
	if _, err := decode(p.data, vals); err != nil {
		return nil, false, fmt.Errorf("dictionary page: %w", err)
	}
	return vals, true, nil
}

var errNotInDictionary = errors.New("a value missing from the dictionaries of the inputs' column chunks")

// plain decodes PLAIN values as their output indices: a dictionary page
// becomes the table from its indices to the output's.
func (p *tcDictIndex[V]) plain(data []byte, out []int32) ([]byte, error) {
	if cap(p.dec) < len(out) {
		p.dec = make([]V, len(out))
	}
	rest, err := p.decode(data, p.dec[:len(out)])
	if err != nil {
		return nil, err
	}
	for i, v := range p.dec[:len(out)] {
		k, ok := p.lookup(v)
		if !ok {
			return nil, errNotInDictionary
		}
		out[i] = k
	}
	return rest, nil
}

// open reads the rest of a chunk through arrow-go's reader, as indices.
func (p *tcDictIndex[V]) open(cr file.ColumnChunkReader) (pageReader[int32], error) {
	r, ok := cr.(pageReader[V])
	if !ok {
		return nil, fmt.Errorf("unexpected column reader %T", cr)
	}
	return &dictIndexReader[V]{r: r, p: p}, nil
}

type dictIndexReader[V any] struct {
	r pageReader[V]
	p *tcDictIndex[V]
}

func (d *dictIndexReader[V]) HasNext() bool { return d.r.HasNext() }

func (d *dictIndexReader[V]) Skip(n int64) (int64, error) { return d.r.Skip(n) }

func (d *dictIndexReader[V]) ReadBatchInPage(n int64, out []int32, def, rep []int16) (int64, int, error) {
	if cap(d.p.dec) < len(out) {
		d.p.dec = make([]V, len(out))
	}
	total, nv, err := d.r.ReadBatchInPage(n, d.p.dec[:len(out)], def, rep)
	for i, v := range d.p.dec[:nv] {
		k, ok := d.p.lookup(v)
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
func (p *tcDictIndex[V]) write(c *tcColumn) func(idx []int32, def, rep []int16) (int64, error) {
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

func (p *tcDictIndex[V]) writeBatch(c *tcColumn, idx []int32, def, rep []int16, levels int) error {
	if len(idx) > 0 {
		lo, hi := int32(len(p.rank)), int32(-1)
		raw := p.width * int64(len(idx))
		for _, k := range idx {
			if uint32(k) >= uint32(len(p.rank)) {
				return fmt.Errorf("dictionary index %d of %d", k, len(p.rank))
			}
			r := p.rank[k]
			lo, hi = min(lo, r), max(hi, r)
		}
		if p.width == 0 {
			for _, k := range idx {
				raw += int64(len(any(p.vals[k]).(parquet.ByteArray))) + 4
			}
		}
		mn, mx := p.vals[p.byRk[lo]], p.vals[p.byRk[hi]]
		if p.setStats != nil {
			p.setStats(mn, mx)
		}
		if c.leaf != nil {
			observeValues(c.leaf, []V{mn, mx})
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
