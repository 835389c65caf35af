package datafile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/icectl/icectl/iceberg/spec"
)

// transcodeSchema is every type a Transcoder copies, as top-level columns.
func transcodeSchema() *spec.Schema {
	var fields []spec.NestedField
	for _, f := range flatTypesSchema().Fields {
		if transcodableType(f.Type) {
			fields = append(fields, f)
		}
	}
	return &spec.Schema{Fields: fields}
}

// tcSource is one input file of a transcode test with what the Arrow
// path reads it with.
type tcSource struct {
	data       []byte
	deleted    *roaring64.Bitmap
	firstRowID *int64
	dataSeq    int64
	consts     Constants
}

// writePqarrow writes b with pqarrow and the given properties, as other
// writers would.
func writePqarrow(t testing.TB, b arrow.RecordBatch, props ...parquet.WriterProperty) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(b.Schema(), &buf, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// compareWithAndWithoutLineage transcodes srcs (files of schema cur or
// older) into cur, and into cur with lineage (giving each source a
// first_row_id), and wants the Arrow path's rows and metrics.
func compareWithAndWithoutLineage(t *testing.T, cur *spec.Schema, srcs []tcSource) (got, want []byte) {
	t.Helper()
	for _, lineage := range []bool{false, true} {
		writeSchema := cur
		if lineage {
			writeSchema = SchemaWithLineage(cur)
			for i := range srcs {
				srcs[i].firstRowID = ptr(int64(100000 * (i + 1)))
			}
		}
		var wantM, gotM Metrics
		want, wantM = arrowPath(t, cur, writeSchema, nil, srcs)
		got, gotM = transcodePath(t, writeSchema, nil, srcs, 2)
		compareRows(t, storedRowKeys(t, got), storedRowKeys(t, want))
		compareMetrics(t, gotM, wantM)
	}
	return got, want
}

func openTc(t testing.TB, data []byte) *file.Reader {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

// withBytes gives source i's bytes to in as TranscodeInput.Data, as
// Source, or not at all, by turns, so that each transcode test reads
// pages in place from memory, from column chunks read whole, and through
// arrow-go's page reader, in the same row group.
func withBytes(in TranscodeInput, i int, data []byte) TranscodeInput {
	switch i % 3 {
	case 0:
		in.Data = data
	case 1:
		in.Source = bytes.NewReader(data)
	}
	return in
}

// storedRows reads every stored column of a Parquet file as it is (lineage
// columns included, nulls kept), one JSON line per row.
func storedRows(t *testing.T, data []byte) []string {
	t.Helper()
	return storedRowsWith(t, data, rowsJSON)
}

// storedRowsWith is the rows of data spelled by enc.
func storedRowsWith(t *testing.T, data []byte, enc func(testing.TB, ...arrow.RecordBatch) []string) []string {
	t.Helper()
	pf := openTc(t, data)
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1000}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 1000)
	defer tr.Release()
	var out []string
	for tr.Next() {
		out = append(out, enc(t, tr.RecordBatch())...)
	}
	return out
}

// arrowPath is what compaction's Arrow path writes for the sources: each
// read with lineage inheritance, deleted positions dropped, a file
// without first_row_id given its data sequence number, written by Writer.
func arrowPath(t *testing.T, dataSchema, writeSchema *spec.Schema, props map[string]string, srcs []tcSource) ([]byte, Metrics) {
	t.Helper()
	lineage := writeSchema != dataSchema
	var buf bytes.Buffer
	w, err := NewWriter(&buf, writeSchema, props)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, s := range srcs {
		batches := readParquet(t, s.data, ReadOptions{Schema: dataSchema, WithLineage: lineage,
			FirstRowID: s.firstRowID, DataSequenceNumber: s.dataSeq, BatchSize: 700, Constants: s.consts})
		var pos int64
		for _, b := range batches {
			mb := array.NewBooleanBuilder(memory.DefaultAllocator)
			for i := range b.NumRows() {
				mb.Append(s.deleted == nil || !s.deleted.Contains(uint64(pos+i)))
			}
			mask := mb.NewBooleanArray()
			mb.Release()
			pos += b.NumRows()
			res, err := compute.FilterRecordBatch(ctx, b, mask, compute.DefaultFilterOptions())
			mask.Release()
			if err != nil {
				t.Fatal(err)
			}
			if lineage && s.firstRowID == nil {
				cols := slices.Clone(res.Columns())
				sb := array.NewInt64Builder(memory.DefaultAllocator)
				for range res.NumRows() {
					sb.Append(s.dataSeq)
				}
				cols[len(cols)-1] = sb.NewArray()
				sb.Release()
				filled := array.NewRecordBatch(res.Schema(), cols, res.NumRows())
				cols[len(cols)-1].Release()
				res.Release()
				res = filled
			}
			if err := w.Write(res); err != nil {
				t.Fatal(err)
			}
			res.Release()
		}
		release(batches)
	}
	m, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), m
}

// transcodePath writes the sources with a Transcoder, in row groups of
// chunk sources each.
func transcodePath(t *testing.T, writeSchema *spec.Schema, props map[string]string, srcs []tcSource, chunk int) ([]byte, Metrics) {
	t.Helper()
	return transcodePathWith(t, writeSchema, props, srcs, chunk, nil)
}

// transcodePathWith is transcodePath with set, when not nil, called on the
// Transcoder before it writes.
func transcodePathWith(t *testing.T, writeSchema *spec.Schema, props map[string]string, srcs []tcSource, chunk int, set func(*Transcoder)) ([]byte, Metrics) {
	t.Helper()
	var buf bytes.Buffer
	tc, err := NewTranscoder(&buf, writeSchema, props)
	if err != nil {
		t.Fatal(err)
	}
	if set != nil {
		set(tc)
	}
	var want int64
	for off := 0; off < len(srcs); off += chunk {
		var ins []TranscodeInput
		for i, s := range srcs[off:min(off+chunk, len(srcs))] {
			pf := openTc(t, s.data)
			n := pf.NumRows()
			if s.deleted != nil {
				n -= int64(s.deleted.GetCardinality())
			}
			want += n
			ins = append(ins, withBytes(TranscodeInput{Path: fmt.Sprintf("src%d", off+i), File: pf, Deleted: s.deleted,
				FirstRowID: s.firstRowID, DataSequenceNumber: s.dataSeq, Constants: s.consts}, off+i, s.data))
		}
		if _, err := tc.WriteRowGroup(context.Background(), ins); err != nil {
			t.Fatal(err)
		}
	}
	if tc.Rows() != want {
		t.Fatalf("transcoder wrote %d rows, want %d", tc.Rows(), want)
	}
	m, err := tc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if tc.BytesWritten() != int64(buf.Len()) {
		t.Fatalf("BytesWritten %d, file has %d bytes", tc.BytesWritten(), buf.Len())
	}
	return buf.Bytes(), m
}

// compareMetrics wants equal counts and bounds; column sizes and split
// offsets depend on where pages and row groups end, so only their
// presence is compared.
func compareMetrics(t *testing.T, got, want Metrics) {
	t.Helper()
	if got.RecordCount != want.RecordCount {
		t.Errorf("record count %d, want %d", got.RecordCount, want.RecordCount)
	}
	for name, pair := range map[string][2]map[int]int64{
		"value counts": {got.ValueCounts, want.ValueCounts}, "null counts": {got.NullValueCounts, want.NullValueCounts},
		"NaN counts": {got.NaNValueCounts, want.NaNValueCounts},
	} {
		if !maps.Equal(pair[0], pair[1]) {
			t.Errorf("%s %v, want %v", name, pair[0], pair[1])
		}
	}
	for name, pair := range map[string][2]map[int][]byte{
		"lower bounds": {got.LowerBounds, want.LowerBounds}, "upper bounds": {got.UpperBounds, want.UpperBounds},
	} {
		if !maps.EqualFunc(pair[0], pair[1], bytes.Equal) {
			t.Errorf("%s %v, want %v", name, pair[0], pair[1])
		}
	}
	if !slices.Equal(slices.Sorted(maps.Keys(got.ColumnSizes)), slices.Sorted(maps.Keys(want.ColumnSizes))) {
		t.Errorf("column sizes for %v, want %v", slices.Sorted(maps.Keys(got.ColumnSizes)), slices.Sorted(maps.Keys(want.ColumnSizes)))
	}
	if len(got.SplitOffsets) == 0 {
		t.Error("no split offsets")
	}
}

func randomDeletes(r *rand.Rand, rows int, p float64) *roaring64.Bitmap {
	if p == 0 {
		return nil
	}
	bm := roaring64.New()
	for i := range rows {
		if r.Float64() < p {
			bm.Add(uint64(i))
		}
	}
	// A run at the start and one at the end catch off-by-one row ranges.
	bm.AddRange(0, uint64(min(3, rows)))
	bm.Add(uint64(rows - 1))
	return bm
}

func ptr[T any](v T) *T { return &v }

// TestTranscodeMatchesArrowPath: the Transcoder writes the same rows, in
// the same order, with the same metrics as reading each source through
// Reader (lineage inheritance, deletes) and writing it with Writer — for
// every transcodable type, nulls, several row groups per source, deleted
// rows (none, some, all of a file), and lineage stored, partly null,
// inherited or absent (no first_row_id).
func TestTranscodeMatchesArrowPath(t *testing.T) {
	props := map[string]string{PropRowGroupSizeBytes: "65536", PropPageSizeBytes: "8192",
		"write.metadata.metrics.column.s": "truncate(4)", "write.metadata.metrics.column.bin": "counts",
		"write.metadata.metrics.column.d": "counts", "write.metadata.metrics.column.i": "none"}
	data := transcodeSchema()
	for _, tc := range []struct {
		name    string
		lineage bool
		// delta: every source has a first_row_id and _row_id is written
		// DELTA_BINARY_PACKED (Transcoder.DeltaRowIDs).
		delta bool
	}{{"v2", false, false}, {"v3 lineage", true, false}, {"v3 lineage, delta row ids", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 11))
			writeSchema := data
			if tc.lineage {
				writeSchema = SchemaWithLineage(data)
			}
			var srcs []tcSource
			for k := range 6 {
				rows := 9000 + 1700*k
				stored := tc.lineage && k%2 == 1 // odd files store lineage (some nulls)
				s := data
				if stored {
					s = SchemaWithLineage(data)
				}
				b := withSpecialFloats(t, genBatch(t, s, rows, 31*k))
				if stored {
					b = withLineageValues(t, b, r)
				}
				fileData, _ := writeParquet(t, s, map[string]string{PropRowGroupSizeBytes: "8192", PropPageSizeBytes: "1024"}, b)
				b.Release()
				src := tcSource{data: fileData, dataSeq: int64(10 + k)}
				switch k {
				case 1:
					src.deleted = roaring64.New()
					src.deleted.AddRange(0, uint64(rows)) // every row deleted
				case 2, 4, 5:
					src.deleted = randomDeletes(r, rows, 0.15)
				}
				if !tc.lineage || k != 4 || tc.delta {
					src.firstRowID = ptr(int64(1000 * (k + 1)))
				}
				if pf := openTc(t, fileData); pf.NumRowGroups() < 2 {
					t.Fatalf("source %d has %d row groups; the test wants several", k, pf.NumRowGroups())
				}
				srcs = append(srcs, src)
			}
			want, wantM := arrowPath(t, data, writeSchema, props, srcs)
			wantRows := storedRowKeys(t, want)
			var set func(*Transcoder)
			if tc.delta {
				set = (*Transcoder).DeltaRowIDs
			}
			for _, chunk := range []int{1, 4} {
				got, gotM := transcodePathWith(t, writeSchema, props, srcs, chunk, set)
				compareRows(t, storedRowKeys(t, got), wantRows)
				compareMetrics(t, gotM, wantM)
				if tc.lineage {
					wantEnc := parquet.Encodings.Plain
					if tc.delta {
						wantEnc = parquet.Encodings.DeltaBinaryPacked
					}
					if enc := dataEncodings(t, got, spec.RowIDColumnName); !slices.Equal(enc, []parquet.Encoding{wantEnc}) {
						t.Errorf("chunk %d: _row_id data pages %v, want %v", chunk, enc, wantEnc)
					}
				}
			}
			if tc.delta {
				// A source without a first_row_id would give null row ids,
				// which this column does not take: refused.
				srcs[3].firstRowID = nil
				var buf bytes.Buffer
				tr, err := NewTranscoder(&buf, writeSchema, props)
				if err != nil {
					t.Fatal(err)
				}
				tr.DeltaRowIDs()
				var ins []TranscodeInput
				for i, s := range srcs {
					ins = append(ins, TranscodeInput{Path: fmt.Sprintf("src%d", i), File: openTc(t, s.data), Deleted: s.deleted,
						FirstRowID: s.firstRowID, DataSequenceNumber: s.dataSeq})
				}
				if _, err := tr.WriteRowGroup(context.Background(), ins); !errors.Is(err, ErrNotTranscodable) || !strings.Contains(err.Error(), "src3") {
					t.Errorf("a source without first_row_id: %v, want ErrNotTranscodable naming src3", err)
				}
			}
		})
	}
}

// withLineageValues replaces b's two last columns (the lineage columns)
// with stored values, about a fifth of them null.
func withLineageValues(t *testing.T, b arrow.RecordBatch, r *rand.Rand) arrow.RecordBatch {
	t.Helper()
	cols := slices.Clone(b.Columns())
	n := int(b.NumRows())
	for c := len(cols) - 2; c < len(cols); c++ {
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		for i := range n {
			if r.IntN(5) == 0 {
				ib.AppendNull()
			} else {
				ib.Append(int64(500000 + c*n + i))
			}
		}
		cols[c] = ib.NewArray()
		ib.Release()
		defer cols[c].Release()
	}
	out := array.NewRecordBatch(b.Schema(), cols, b.NumRows())
	b.Release()
	return out
}

// TestTranscodeRefusesOtherLayouts: a file the Transcoder cannot copy
// value for value is refused with ErrNotTranscodable before anything is
// written, and so are schemas it does not handle.
func TestTranscodeRefusesOtherLayouts(t *testing.T) {
	out := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "v", Type: spec.IntType{}},
	}}
	cases := []struct {
		name      string
		file, out *spec.Schema
	}{
		{"missing required column", &spec.Schema{Fields: []spec.NestedField{{ID: 2, Name: "v", Type: spec.IntType{}}}}, out},
		{"narrowed type", &spec.Schema{Fields: []spec.NestedField{
			{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}, {ID: 2, Name: "v", Type: spec.LongType{}}}}, out},
		{"optional in the file", &spec.Schema{Fields: []spec.NestedField{
			{ID: 1, Name: "id", Type: spec.LongType{}}, {ID: 2, Name: "v", Type: spec.IntType{}}}}, out},
		{"other logical type", &spec.Schema{Fields: []spec.NestedField{
			{ID: 1, Name: "id", Type: spec.TimestampType{}, Required: true}, {ID: 2, Name: "v", Type: spec.IntType{}}}}, out},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.file, tc.out) })
	}
	for name, s := range map[string]*spec.Schema{
		"struct of variant": {Fields: []spec.NestedField{{ID: 1, Name: "st", Type: &spec.StructType{Fields: []spec.NestedField{
			{ID: 2, Name: "x", Type: spec.VariantType{}}}}}}},
		"empty struct": {Fields: []spec.NestedField{{ID: 1, Name: "st", Type: &spec.StructType{}}}},
	} {
		if _, err := NewTranscoder(&bytes.Buffer{}, s, nil); !errors.Is(err, ErrNotTranscodable) {
			t.Errorf("%s schema: got %v, want ErrNotTranscodable", name, err)
		}
	}
}

// wantRefused writes a file of schema file and wants a Transcoder of
// schema out to refuse it with ErrNotTranscodable, writing nothing.
func wantRefused(t *testing.T, file, out *spec.Schema) {
	t.Helper()
	b := genBatch(t, file, 10, 1)
	defer b.Release()
	src, _ := writeParquet(t, file, nil, b)
	var buf bytes.Buffer
	tcd, err := NewTranscoder(&buf, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := buf.Len()
	_, err = tcd.WriteRowGroup(context.Background(), []TranscodeInput{{Path: "x", File: openTc(t, src)}})
	if !errors.Is(err, ErrNotTranscodable) {
		t.Fatalf("got %v, want ErrNotTranscodable", err)
	}
	if buf.Len() != before || tcd.Rows() != 0 {
		t.Fatalf("a refused input wrote %d bytes, %d rows", buf.Len()-before, tcd.Rows())
	}
}

// TestTranscodeCorruptInput: damaged page data fails with an error (not a
// panic, not ErrNotTranscodable, which would send it down another path).
func TestTranscodeCorruptInput(t *testing.T) {
	s := transcodeSchema()
	b := genBatch(t, s, 3000, 5)
	defer b.Release()
	src, _ := writeParquet(t, s, nil, b)
	wantCorruptFails(t, s, src, 0)
}

// wantCorruptFails damages the pages of column j's first chunk in src (a
// file of schema s) and wants the transcode to fail with an error naming
// the file.
func wantCorruptFails(t *testing.T, s *spec.Schema, src []byte, j int) {
	t.Helper()
	cc, err := openTc(t, src).MetaData().RowGroup(0).ColumnChunk(j)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(src)
	start := cc.DataPageOffset()
	for i := start + 2; i < start+cc.TotalCompressedSize() && i < int64(len(bad)); i++ {
		bad[i] ^= 0x5a
	}
	// Through arrow-go's page reader, in place in memory, and read from
	// a Source.
	for i := range 3 {
		wantTranscodeFails(t, s, withBytes(TranscodeInput{Path: "bad.parquet", File: openTc(t, bad)}, i, bad), "")
	}
}

// wantTranscodeFails wants transcoding in (schema s) to fail with an error
// naming in.Path and saying want.
func wantTranscodeFails(t *testing.T, s *spec.Schema, in TranscodeInput, want string) {
	t.Helper()
	tc, err := NewTranscoder(&bytes.Buffer{}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tc.WriteRowGroup(context.Background(), []TranscodeInput{in})
	if err == nil || errors.Is(err, ErrNotTranscodable) || !strings.Contains(err.Error(), in.Path) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error naming %s and saying %q", err, in.Path, want)
	}
}

// TestTranscodeSourceTruncated: a Source that ends before a column chunk
// does (a file cut short after its footer was read) or fails to read it
// makes the transcode fail with an error naming the file.
func TestTranscodeSourceTruncated(t *testing.T) {
	s := transcodeSchema()
	b := genBatch(t, s, 3000, 5)
	defer b.Release()
	src, _ := writeParquet(t, s, nil, b)
	cc, err := openTc(t, src).MetaData().RowGroup(0).ColumnChunk(1)
	if err != nil {
		t.Fatal(err)
	}
	short := src[:cc.DataPageOffset()+cc.TotalCompressedSize()/2]
	wantTranscodeFails(t, s, TranscodeInput{Path: "short.parquet", File: openTc(t, src), Source: readerAtOnly{bytes.NewReader(short)}}, "unexpected EOF")
	holed := failingReader{bytes.NewReader(src), cc.DataPageOffset() + 1}
	pf, err := file.NewParquetReader(holed)
	if err != nil {
		t.Fatal(err)
	}
	wantTranscodeFails(t, s, TranscodeInput{Path: "holed.parquet", File: pf, Source: holed}, "bad sector")
}

// failingReader fails every read of the byte at hole.
type failingReader struct {
	*bytes.Reader
	hole int64
}

func (r failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off <= r.hole && r.hole < off+int64(len(p)) {
		return 0, errors.New("bad sector")
	}
	return r.Reader.ReadAt(p, off)
}

// readerAtOnly hides every method of its ReaderAt but ReadAt.
type readerAtOnly struct{ r io.ReaderAt }

func (r readerAtOnly) ReadAt(p []byte, off int64) (int, error) { return r.r.ReadAt(p, off) }

// withSpecialFloats puts NaN, -0.0, +0.0 and nulls into b's float and
// double columns, which NaN counts and zero-ordered bounds must get right.
func withSpecialFloats(t *testing.T, b arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	cols := slices.Clone(b.Columns())
	special := func(i int) (float64, bool, bool) { // value, special, null
		switch {
		case i%11 == 0:
			return 0, true, true
		case i%37 == 0:
			return math.NaN(), true, false
		case i%41 == 0:
			return math.Copysign(0, -1), true, false
		case i%43 == 0:
			return 0, true, false
		}
		return 0, false, false
	}
	for c, col := range cols {
		nullable := b.Schema().Field(c).Nullable
		switch a := col.(type) {
		case *array.Float32:
			cols[c] = specialFloats(a, array.NewFloat32Builder(memory.DefaultAllocator), nullable, special)
		case *array.Float64:
			cols[c] = specialFloats(a, array.NewFloat64Builder(memory.DefaultAllocator), nullable, special)
		default:
			continue
		}
		defer cols[c].Release()
	}
	out := array.NewRecordBatch(b.Schema(), cols, b.NumRows())
	b.Release()
	return out
}

func specialFloats[T float32 | float64, A interface {
	arrow.Array
	Value(int) T
}, B interface {
	array.Builder
	Append(T)
}](a A, fb B, nullable bool, special func(int) (float64, bool, bool)) arrow.Array {
	defer fb.Release()
	for i := range a.Len() {
		v, sp, null := special(i)
		switch {
		case null && nullable:
			fb.AppendNull()
		case sp && !null:
			fb.Append(T(v))
		case a.IsNull(i):
			fb.AppendNull()
		default:
			fb.Append(a.Value(i))
		}
	}
	return fb.NewArray()
}

// FuzzTranscodeCorrupt damages bytes of a valid input anywhere (pages,
// footer) and transcodes it: an error or a file, never a panic.
func FuzzTranscodeCorrupt(f *testing.F) { fuzzTranscodeCorrupt(f, transcodeSchema()) }

// FuzzTranscodeNestedCorrupt is FuzzTranscodeCorrupt for the nested
// shapes, whose pages hold repetition levels too.
func FuzzTranscodeNestedCorrupt(f *testing.F) { fuzzTranscodeCorrupt(f, nestedSchema()) }

func fuzzTranscodeCorrupt(f *testing.F, s *spec.Schema) {
	b := genBatch(f, s, 300, 9)
	src, _ := writeParquet(f, s, map[string]string{PropPageSizeBytes: "1024"}, b)
	b.Release()
	f.Add(uint32(4), byte(0xff), uint8(1))
	f.Add(uint32(len(src)/2), byte(0x01), uint8(8))
	f.Add(uint32(len(src)-12), byte(0x80), uint8(3))
	f.Fuzz(func(t *testing.T, off uint32, mask byte, n uint8) {
		bad := bytes.Clone(src)
		for i := range int(n%16) + 1 {
			bad[(int(off)+i*7)%len(bad)] ^= mask | 1
		}
		pf, err := file.NewParquetReader(bytes.NewReader(bad))
		if err != nil {
			return // a damaged footer is refused before transcoding
		}
		tc, err := NewTranscoder(io.Discard, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tc.WriteRowGroup(context.Background(), []TranscodeInput{{Path: "x", File: pf}}); err == nil {
			if _, err := tc.Close(); err != nil {
				t.Logf("close: %v", err)
			}
		}
	})
}

// TestTranscodeEvolvedSchema: files written before columns were added
// (optional ones without a default, required and optional ones with an
// initial-default) and before int -> long and float -> double promotions
// transcode to the rows and metrics the Arrow path gives them.
func TestTranscodeEvolvedSchema(t *testing.T) {
	old := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "v", Type: spec.IntType{}},
		{ID: 3, Name: "f", Type: spec.FloatType{}, Required: true},
		{ID: 4, Name: "s", Type: spec.StringType{}},
	}}
	cur := &spec.Schema{ID: 1, Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "v", Type: spec.LongType{}},
		{ID: 3, Name: "f", Type: spec.DoubleType{}, Required: true},
		{ID: 4, Name: "s", Type: spec.StringType{}},
		{ID: 5, Name: "added", Type: spec.StringType{}},
		{ID: 6, Name: "added_int", Type: spec.IntType{}, Required: true, InitialDefault: []byte("7")},
		{ID: 7, Name: "added_ts", Type: spec.TimestampTzType{}, InitialDefault: []byte(`"2024-06-25T10:00:00.123456+00:00"`)},
		{ID: 8, Name: "added_s", Type: spec.StringType{}, InitialDefault: []byte(`"dflt"`)},
		{ID: 9, Name: "added_u", Type: spec.UUIDType{}, InitialDefault: []byte(`"f79c3e09-677c-4bbd-a479-3f349cb785e7"`)},
		{ID: 10, Name: "added_d", Type: spec.DoubleType{}, InitialDefault: []byte("-0.0")},
	}}
	r := rand.New(rand.NewPCG(3, 4))
	var srcs []tcSource
	for k, s := range []*spec.Schema{old, cur, old, cur} {
		rows := 9000 + 500*k
		b := withSpecialFloats(t, genBatch(t, s, rows, 17*k))
		data, _ := writeParquet(t, s, map[string]string{PropRowGroupSizeBytes: "8192", PropPageSizeBytes: "1024"}, b)
		b.Release()
		srcs = append(srcs, tcSource{data: data, dataSeq: int64(k + 1), deleted: randomDeletes(r, rows, 0.1)})
	}
	compareWithAndWithoutLineage(t, cur, srcs)
}

// dataEncodings is the encodings of the data pages of column name in every
// row group of data, from the chunks' encoding stats.
func dataEncodings(t *testing.T, data []byte, name string) []parquet.Encoding {
	t.Helper()
	pf := openTc(t, data)
	j := pf.MetaData().Schema.ColumnIndexByName(name)
	if j < 0 {
		t.Fatalf("no column %s", name)
	}
	var out []parquet.Encoding
	for g := range pf.NumRowGroups() {
		cc, err := pf.MetaData().RowGroup(g).ColumnChunk(j)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range cc.EncodingStats() {
			if pt := int32(s.PageType); (pt == pageData || pt == pageDataV2) && !slices.Contains(out, s.Encoding) {
				out = append(out, s.Encoding)
			}
		}
	}
	return out
}
