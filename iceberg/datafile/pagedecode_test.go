package datafile

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/icectl/icectl/iceberg/spec"
)

// decodeAll reads a column chunk with the Transcoder's page decoder:
// every row as its definition level and, for values, fmt's rendering.
func decodeAll[T any](t *testing.T, rg *file.RowGroupReader, j int, maxDef int16, plain plainDecoder[T], owned func([]T), rows int64) ([]string, int) {
	t.Helper()
	pr, err := rg.GetColumnPageReader(j)
	if err != nil {
		t.Fatal(err)
	}
	return decodePages(t, newPageDecoder(pr, maxDef, plain, owned), j, rows)
}

// decodeInPlace is decodeAll reading the pages where they lie in data
// (memPages), which it wants to be possible; it also reads the chunk from
// data as a TranscodeInput.Source, with a decoder whose buffers hold
// another chunk first, and wants the same rows.
func decodeInPlace[T any](t *testing.T, pf *file.Reader, data []byte, g, j int, maxDef int16, plain plainDecoder[T], owned func([]T), rows int64) ([]string, int) {
	t.Helper()
	open := func(d *pageDecoder[T], in TranscodeInput, j int) *pageDecoder[T] {
		t.Helper()
		d, err := d.open(&tcInput{TranscodeInput: in}, g, j, maxDef, plain, owned)
		if err != nil {
			t.Fatal(err)
		}
		if d.pr != &d.mem {
			t.Fatalf("column %d: not read in place", j)
		}
		return d
	}
	got, pages := decodePages(t, open(new(pageDecoder[T]), TranscodeInput{File: pf, Data: data}, j), j, rows)
	read := TranscodeInput{File: pf, Source: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data)))}
	d := new(pageDecoder[T])
	if j > 0 {
		// Leave the previous column's chunk in d's buffer. Its values
		// may not decode as T: only the buffer matters.
		open(d, read, j-1)
	}
	fromSource, _ := decodePages(t, open(d, read, j), j, rows)
	if !slices.Equal(got, fromSource) {
		t.Fatalf("column %d: read from Source differs from Data", j)
	}
	return got, pages
}

// decodeEachWay decodes column j of row group g of pf (whose bytes are
// data) with the page decoder through arrow-go's pages (got; v1 files
// only, since arrow-go's page reader hands v2 pages on; in place
// otherwise), in place (inPlace) and with arrow-go's typed reader (want).
func decodeEachWay[T any](t *testing.T, pf *file.Reader, data []byte, g, j int, v2 bool, plain plainDecoder[T], owned func([]T),
	open func(file.ColumnChunkReader) (pageReader[T], error)) (got, inPlace, want []string, pages int) {
	t.Helper()
	rg := pf.RowGroup(g)
	rows := pf.MetaData().RowGroup(g).NumRows()
	maxDef := pf.MetaData().Schema.Column(j).MaxDefinitionLevel()
	inPlace, pages = decodeInPlace(t, pf, data, g, j, maxDef, plain, owned, rows)
	got = inPlace
	if !v2 {
		got, pages = decodeAll(t, rg, j, maxDef, plain, owned, rows)
	}
	return got, inPlace, readAll(t, rg, j, maxDef, open), pages
}

func decodePages[T any](t *testing.T, d *pageDecoder[T], j int, rows int64) ([]string, int) {
	t.Helper()
	var out []string
	pages := 0
	for {
		total, vals, def, err := d.next(rows - int64(len(out)))
		if err != nil {
			t.Fatalf("column %d: %v", j, err)
		}
		if total == 0 {
			return out, pages
		}
		pages++
		out = appendRows(t, out, total, d.maxDef, def, vals)
	}
}

// appendRows renders total rows: nulls where def is below maxDef, else the
// next of vals, which must all be used.
func appendRows[T any](t *testing.T, out []string, total int64, maxDef int16, def []int16, vals []T) []string {
	t.Helper()
	vi := 0
	for i := range total {
		if maxDef > 0 && def[i] != maxDef {
			out = append(out, "null")
			continue
		}
		if vi >= len(vals) {
			t.Fatalf("more non-null rows than the %d values", len(vals))
		}
		out = append(out, render(vals[vi]))
		vi++
	}
	if vi != len(vals) {
		t.Fatalf("%d values for %d non-null rows", len(vals), vi)
	}
	return out
}

// render spells a value as fmt would (floats by their bits, bytes
// quoted), through strconv: fmt's reflection was half the test's CPU.
func render(v any) string {
	switch v := v.(type) {
	case bool:
		return strconv.FormatBool(v)
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case int64:
		return strconv.FormatInt(v, 10)
	case float32:
		return strconv.FormatUint(uint64(math.Float32bits(v)), 10)
	case float64:
		return strconv.FormatUint(math.Float64bits(v), 10)
	case parquet.ByteArray:
		return strconv.Quote(string(v))
	case parquet.FixedLenByteArray:
		return strconv.Quote(string(v))
	}
	return fmt.Sprint(v)
}

// readAll reads the same chunk with arrow-go's typed reader.
func readAll[T any](t *testing.T, rg *file.RowGroupReader, j int, maxDef int16, open func(file.ColumnChunkReader) (pageReader[T], error)) []string {
	t.Helper()
	cr, err := rg.Column(j)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := open(cr)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]T, 1000)
	def := make([]int16, 1000)
	var out []string
	for rd.HasNext() {
		total, nv, err := rd.ReadBatchInPage(1000, vals, def, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = appendRows(t, out, total, maxDef, def, vals[:nv])
	}
	return out
}

// TestPageDecoderMatchesArrowGo decodes every column chunk of files with
// every transcodable type, nulls, NaN and signed zeros, several pages per
// chunk, dictionaries that fall back to PLAIN and all-null pages, and wants
// the rows arrow-go's reader gives, page decoder never declining.
func TestPageDecoderMatchesArrowGo(t *testing.T) {
	s := transcodeSchema()
	var dictPages, plainPages, multiPage int
	for _, c := range []struct {
		pageSize, codec string
		v2              bool // data pages v2 (pqarrow), decoded in place only
	}{{"1024", "zstd", false}, {"65536", "zstd", false}, {"1024", "snappy", false}, {"1024", "gzip", false}, {"1024", "lz4", false},
		{"1024", "uncompressed", false}, {"1024", "zstd", true}, {"1024", "uncompressed", true}} {
		pageSize := fmt.Sprintf("%s %s v2=%v", c.pageSize, c.codec, c.v2)
		b := withSpecialFloats(t, genBatch(t, s, 20000, 3))
		var data []byte
		if c.v2 {
			codec := map[string]compress.Compression{"zstd": compress.Codecs.Zstd, "uncompressed": compress.Codecs.Uncompressed}[c.codec]
			data = writePqarrow(t, b, parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithCompression(codec), parquet.WithDataPageSize(1024),
				parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(2048), parquet.WithMaxRowGroupLength(7000))
		} else {
			data, _ = writeParquet(t, s, map[string]string{PropPageSizeBytes: c.pageSize, PropRowGroupSizeBytes: "262144", PropCompressionCodec: c.codec}, b)
		}
		b.Release()
		pf, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for g := 0; g < pf.NumRowGroups(); g++ {
			rows := pf.MetaData().RowGroup(g).NumRows()
			for j := 0; j < pf.MetaData().Schema.NumColumns(); j++ {
				col := pf.MetaData().Schema.Column(j)
				cc, _ := pf.MetaData().RowGroup(g).ColumnChunk(j)
				if cc.HasDictionaryPage() {
					dictPages++
				} else {
					plainPages++
				}
				var got, want, inPlace []string
				var pages int
				switch col.PhysicalType() {
				case parquet.Types.Boolean:
					got, inPlace, want, pages = decodeEachWay(t, pf, data, g, j, c.v2, plainBool, nil, readerOf[bool, *file.BooleanColumnChunkReader])
				case parquet.Types.Int32:
					got, inPlace, want, pages = decodeEachWay(t, pf, data, g, j, c.v2, plainInt32, nil, readerOf[int32, *file.Int32ColumnChunkReader])
				case parquet.Types.Int64:
					got, inPlace, want, pages = decodeEachWay(t, pf, data, g, j, c.v2, plainInt64, nil, readerOf[int64, *file.Int64ColumnChunkReader])
				case parquet.Types.Float:
					got, inPlace, want, pages = decodeEachWay(t, pf, data, g, j, c.v2, plainFloat32, nil, readerOf[float32, *file.Float32ColumnChunkReader])
				case parquet.Types.Double:
					got, inPlace, want, pages = decodeEachWay(t, pf, data, g, j, c.v2, plainFloat64, nil, readerOf[float64, *file.Float64ColumnChunkReader])
				case parquet.Types.ByteArray:
					got, inPlace, want, pages = decodeEachWay(t, pf, data, g, j, c.v2, plainByteArray, ownBytes[parquet.ByteArray], readerOf[parquet.ByteArray, *file.ByteArrayColumnChunkReader])
				case parquet.Types.FixedLenByteArray:
					got, inPlace, want, pages = decodeEachWay(t, pf, data, g, j, c.v2, plainFixedLen(col.TypeLength()), ownBytes[parquet.FixedLenByteArray], readerOf[parquet.FixedLenByteArray, *file.FixedLenByteArrayColumnChunkReader])
				default:
					continue
				}
				if int64(len(got)) != rows || len(got) != len(want) {
					t.Fatalf("page %s, row group %d, column %s: %d rows decoded, arrow-go %d, row group %d", pageSize, g, col.Name(), len(got), len(want), rows)
				}
				for i := range got {
					if got[i] != want[i] || inPlace[i] != want[i] {
						t.Fatalf("page %s, row group %d, column %s, row %d: %s, in place %s, arrow-go %s", pageSize, g, col.Name(), i, got[i], inPlace[i], want[i])
					}
				}
				if pages >= 2 {
					multiPage++
				}
			}
		}
	}
	if dictPages == 0 || plainPages == 0 || multiPage < 5 {
		t.Errorf("chunks with a dictionary %d, without %d, of several pages %d: the test wants each", dictPages, plainPages, multiPage)
	}
}

// TestDecodeHybridRejectsTruncation: cut or lying RLE / bit-packed input is
// an error, never a panic or a short read.
func TestDecodeHybridRejectsTruncation(t *testing.T) {
	out := make([]uint32, 16)
	for name, data := range map[string][]byte{
		"empty":             nil,
		"run without value": {0x04},
		"empty run":         {0x00, 0x01},
		"short packed":      {0x03, 0xff},
		"value too wide":    {0x20, 0xff},
	} {
		if err := decodeHybrid(data, 3, out); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A run of 16 threes, then nothing: enough for 16 values.
	if err := decodeHybrid([]byte{0x20, 0x03}, 3, out); err != nil || out[15] != 3 {
		t.Errorf("valid run: %v %v", err, out)
	}
	// Two bit-packed groups of width 3: values 0..15 mod 8.
	packed := make([]byte, 6)
	for i := range 16 {
		v := uint64(i % 8)
		bit := i * 3
		for b := 0; b < 3; b++ {
			if v>>b&1 == 1 {
				packed[(bit+b)/8] |= 1 << ((bit + b) % 8)
			}
		}
	}
	if err := decodeHybrid(append([]byte{0x05}, packed...), 3, out); err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if v != uint32(i%8) {
			t.Fatalf("bit-packed value %d = %d", i, v)
		}
	}
}

// TestTranscodeOtherPageKinds: sources whose pages the Transcoder's page
// decoder declines (delta encodings, data pages v2) are read by arrow-go,
// and transcode to what the Arrow path writes.
func TestTranscodeOtherPageKinds(t *testing.T) {
	s := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "v", Type: spec.LongType{}},
		{ID: 3, Name: "s", Type: spec.StringType{}},
		{ID: 4, Name: "d", Type: spec.DoubleType{}},
	}}
	r := rand.New(rand.NewPCG(5, 6))
	for name, opts := range map[string][]parquet.WriterProperty{
		"v1 delta encodings": {parquet.WithDictionaryFor("id", false), parquet.WithDictionaryFor("v", false), parquet.WithDictionaryFor("s", false),
			parquet.WithEncodingFor("id", parquet.Encodings.DeltaBinaryPacked),
			parquet.WithEncodingFor("v", parquet.Encodings.DeltaBinaryPacked), parquet.WithEncodingFor("s", parquet.Encodings.DeltaLengthByteArray)},
		"v2 pages": {parquet.WithDataPageVersion(parquet.DataPageV2)},
	} {
		t.Run(name, func(t *testing.T) {
			var srcs []tcSource
			for k := range 3 {
				b := withSpecialFloats(t, genBatch(t, s, 6000, 7*k))
				data := writePqarrow(t, b, append([]parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd),
					parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(2048), parquet.WithDataPageSize(1024)}, opts...)...)
				b.Release()
				srcs = append(srcs, tcSource{data: data, dataSeq: 1, deleted: randomDeletes(r, 6000, 0.1)})
			}
			want, wantM := arrowPath(t, s, s, nil, srcs)
			got, gotM := transcodePath(t, s, nil, srcs, 2)
			compareRows(t, storedRowKeys(t, got), storedRowKeys(t, want))
			compareMetrics(t, gotM, wantM)
		})
	}
}

// TestTranscodeHandsOverMidChunk: when the page decoder declines a page
// part way through a column chunk, arrow-go's reader skips the rows
// already decoded and goes on: the file is the same as without the hand
// over (dictionary and PLAIN pages, nulls, deletes, lineage).
func TestTranscodeHandsOverMidChunk(t *testing.T) {
	s := transcodeSchema()
	r := rand.New(rand.NewPCG(8, 9))
	var srcs []tcSource
	for k := range 3 {
		b := withSpecialFloats(t, genBatch(t, s, 9000, 11*k))
		data, _ := writeParquet(t, s, map[string]string{PropPageSizeBytes: "1024", PropRowGroupSizeBytes: "65536"}, b)
		b.Release()
		srcs = append(srcs, tcSource{data: data, dataSeq: int64(k + 1), deleted: randomDeletes(r, 9000, 0.05), firstRowID: ptr(int64(k * 10000))})
	}
	ws := SchemaWithLineage(s)
	want, wantM := transcodePath(t, ws, nil, srcs, 3)
	wantSameWithPageLimits(t, ws, srcs, want, wantM)
}

// wantSameWithPageLimits transcodes srcs into schema ws with the page
// decoder handing every chunk over to arrow-go after 1, 2 and 5 pages,
// and wants want's rows and wantM's metrics each time.
func wantSameWithPageLimits(t *testing.T, ws *spec.Schema, srcs []tcSource, want []byte, wantM Metrics) {
	t.Helper()
	for _, limit := range []int{1, 2, 5} {
		var buf bytes.Buffer
		tc, err := NewTranscoder(&buf, ws, nil)
		if err != nil {
			t.Fatal(err)
		}
		tc.pageLimit = limit
		var ins []TranscodeInput
		for i, src := range srcs {
			ins = append(ins, withBytes(TranscodeInput{Path: fmt.Sprint(i), File: openTc(t, src.data), Deleted: src.deleted,
				FirstRowID: src.firstRowID, DataSequenceNumber: src.dataSeq}, i, src.data))
		}
		if _, err := tc.WriteRowGroup(context.Background(), ins); err != nil {
			t.Fatal(err)
		}
		m, err := tc.Close()
		if err != nil {
			t.Fatal(err)
		}
		compareRows(t, storedRowKeys(t, buf.Bytes()), storedRowKeys(t, want))
		compareMetrics(t, m, wantM)
	}
}

// TestDecodeHybridShortLastRun: a page's last bit-packed run may stop at
// its last value (parquet-java writes such pages, Spark's dictionary
// indices among them); the values wanted decode, and a run short of them
// is still an error.
func TestDecodeHybridShortLastRun(t *testing.T) {
	// One group of eight 3-bit values 1..5 then padding; only the 15 bits
	// of the five values wanted are there (2 bytes, not 3).
	vals := []uint64{1, 2, 3, 4, 5}
	var acc uint64
	for k, v := range vals {
		acc |= v << (3 * k)
	}
	data := []byte{1<<1 | 1, byte(acc), byte(acc >> 8)}
	out := make([]uint32, 5)
	if err := decodeHybrid(data, 3, out); err != nil {
		t.Fatal(err)
	}
	for k, v := range vals {
		if out[k] != uint32(v) {
			t.Fatalf("value %d = %d, want %d (%v)", k, out[k], v, out)
		}
	}
	if err := decodeHybrid(data, 3, make([]uint32, 6)); err == nil {
		t.Fatal("six values from the bytes of five: no error")
	}
	// A run that claims more groups than there are bytes, but is the
	// page's last and holds the values wanted, decodes too.
	huge := append([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, data[1:]...)
	if err := decodeHybrid(huge, 3, make([]uint32, 5)); err != nil {
		t.Fatalf("a last run with a large group count: %v", err)
	}
}

// TestDecodeHybridWidths encodes random values of every bit width as
// bit-packed groups and RLE runs, by turns, with a bit writer of the
// test's own, and wants decodeHybrid to give them back, whole and cut
// short anywhere (the whole-group fast path for widths up to 8 and the
// value-by-value rest meet at every offset).
func TestDecodeHybridWidths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for width := 0; width <= 32; width++ {
		mask := uint64(1)<<width - 1
		var want []uint32
		var data []byte
		for run := range 6 {
			if run%2 == 1 { // an RLE run
				v := r.Uint64() & mask
				n := 1 + r.IntN(20)
				data = binary.AppendUvarint(data, uint64(n)<<1)
				for b := 0; b < (width+7)/8; b++ {
					data = append(data, byte(v>>(8*b)))
				}
				for range n {
					want = append(want, uint32(v))
				}
				continue
			}
			groups := 1 + r.IntN(5)
			data = binary.AppendUvarint(data, uint64(groups)<<1|1)
			var acc uint64
			bits := 0
			for range groups * 8 {
				v := r.Uint64() & mask
				want = append(want, uint32(v))
				acc |= v << bits
				bits += width
				for bits >= 8 {
					data = append(data, byte(acc))
					acc >>= 8
					bits -= 8
				}
			}
		}
		for n := len(want); n >= 0; n -= 1 + r.IntN(7) {
			out := make([]uint32, n)
			if err := decodeHybrid(data, width, out); err != nil {
				t.Fatalf("width %d, %d values: %v", width, n, err)
			}
			if !slices.Equal(out, want[:n]) {
				t.Fatalf("width %d, %d values: %v, want %v", width, n, out, want[:n])
			}
		}
	}
}
