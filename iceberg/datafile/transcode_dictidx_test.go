package datafile

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/icectl/icectl/iceberg/spec"
)

// dictIdxSchema has string, binary, int and long columns of few values,
// flat and nested, optional and required.
func dictIdxSchema() *spec.Schema {
	return &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "s", Type: spec.StringType{}},
		{ID: 3, Name: "r", Type: spec.StringType{}, Required: true},
		{ID: 4, Name: "ls", Type: &spec.ListType{ElementID: 40, Element: spec.StringType{}}},
		{ID: 5, Name: "m", Type: &spec.MapType{KeyID: 50, Key: spec.StringType{}, ValueID: 51, Value: spec.LongType{}}},
		{ID: 6, Name: "st", Type: &spec.StructType{Fields: []spec.NestedField{
			{ID: 60, Name: "x", Type: spec.StringType{}},
			{ID: 61, Name: "in", Type: &spec.StructType{Fields: []spec.NestedField{
				{ID: 62, Name: "y", Type: spec.BinaryType{}, Required: true}}}},
		}}},
		{ID: 7, Name: "n", Type: spec.IntType{}},
		{ID: 8, Name: "ll", Type: &spec.ListType{ElementID: 80, Element: spec.LongType{}, ElementRequired: true}},
	}}
}

// dictIdxBatch makes rows whose strings come from a vocabulary of vocab
// words that shifts with salt (inputs' dictionaries overlap without being equal),
// with nulls at every optional level and empty lists and maps. Its first
// two rows hold the only "aa" and "zz" values (the test deletes them).
func dictIdxBatch(t *testing.T, rows, salt, vocab int) arrow.RecordBatch {
	t.Helper()
	sc, err := ArrowSchema(dictIdxSchema())
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	word := func(i int) string { return fmt.Sprintf("w%04d-é", i%vocab+salt*vocab/2) }
	for i := range rows {
		w := word(i * 7)
		switch i {
		case 0:
			w = "aa"
		case 1:
			w = "zz"
		}
		b.Field(0).(*array.Int64Builder).Append(int64(salt*100000 + i))
		if i%6 == 5 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(w)
		}
		b.Field(2).(*array.StringBuilder).Append(w)
		lb := b.Field(3).(*array.ListBuilder)
		switch {
		case i%7 == 3:
			lb.AppendNull()
		case i%7 == 4:
			lb.Append(true) // empty
		default:
			lb.Append(true)
			eb := lb.ValueBuilder().(*array.StringBuilder)
			for k := range 1 + i%4 {
				if k == 2 {
					eb.AppendNull()
					continue
				}
				eb.Append(word(i + k))
			}
			if i < 2 {
				eb.Append(w)
			}
		}
		mb := b.Field(4).(*array.MapBuilder)
		switch {
		case i%5 == 2:
			mb.AppendNull()
		case i%5 == 3:
			mb.Append(true)
		default:
			mb.Append(true)
			kb, vb := mb.KeyBuilder().(*array.StringBuilder), mb.ItemBuilder().(*array.Int64Builder)
			for k := range 1 + i%3 {
				kb.Append(word(i + 11*k))
				vb.Append(int64(i * k))
			}
			if i < 2 {
				kb.Append(w)
				vb.Append(1)
			}
		}
		// Ints of few values, the extremes in the rows deleted.
		nv := int32((i*13+salt)%50 - 20)
		switch i {
		case 0:
			nv = -1000
		case 1:
			nv = 1000
		}
		if i%7 == 2 {
			b.Field(6).AppendNull()
		} else {
			b.Field(6).(*array.Int32Builder).Append(nv)
		}
		llb := b.Field(7).(*array.ListBuilder)
		if i%6 == 1 && i > 1 {
			llb.AppendNull()
		} else {
			llb.Append(true)
			for k := range i % 3 {
				llb.ValueBuilder().(*array.Int64Builder).Append(int64(nv)*1_000_000_007 + int64(k))
			}
			if i < 2 {
				llb.ValueBuilder().(*array.Int64Builder).Append(int64(nv) << 40)
			}
		}
		sb := b.Field(5).(*array.StructBuilder)
		if i%8 == 6 {
			sb.AppendNull()
			continue
		}
		sb.Append(true)
		if i%4 == 1 {
			sb.FieldBuilder(0).AppendNull()
		} else {
			sb.FieldBuilder(0).(*array.StringBuilder).Append(w)
		}
		ib := sb.FieldBuilder(1).(*array.StructBuilder)
		if i%9 == 2 {
			ib.AppendNull() // appends a null y too
		} else {
			ib.Append(true)
			ib.FieldBuilder(0).(*array.BinaryBuilder).Append([]byte("\x00" + w))
		}
	}
	return b.NewRecordBatch()
}

// TestTranscodeDictionaryIndices: string and binary columns whose inputs
// are dictionary-encoded (flat and nested, by icectl's writer and by
// pqarrow with data pages v1 and v2, pages read in place, from chunks
// read whole and through arrow-go, and handed over to arrow-go mid-chunk)
// are transcoded as dictionary indices: the rows and metrics are the
// Arrow path's; and against the same transcode as values, every column
// chunk's statistics and every page's value count and statistics are the
// same, although the dictionary also holds the values only deleted rows
// had ("aa", "zz", ±1000).
func TestTranscodeDictionaryIndices(t *testing.T) {
	s := dictIdxSchema()
	srcs := dictIdxSources(t, 40)
	for name, enc := range dictionaryEncoded(t, srcs[2].data) {
		if name != "id" && !enc {
			t.Fatalf("input column %s is not dictionary-encoded; the test wants dictionaries", name)
		}
	}
	props := map[string]string{PropPageSizeBytes: "4096"}
	want, wantM := arrowPath(t, s, s, props, srcs)
	for _, chunk := range []int{1, 2, 5} {
		got, gotM := transcodePath(t, s, props, srcs, chunk)
		compareRows(t, storedRows(t, got), storedRows(t, want))
		compareMetrics(t, gotM, wantM)
		plain := transcodeValues(t, s, props, srcs, chunk)
		samePages(t, got, plain)
	}
	wantSameWithPageLimits(t, s, srcs, want, wantM)

	// A union of dictionaries over the dictionary page size limit (8 KiB
	// here): those columns go by value and fall back to PLAIN, with the
	// same rows.
	srcs = dictIdxSources(t, 500)
	if !dictionaryEncoded(t, srcs[0].data)["s"] {
		t.Fatal("input column s is not dictionary-encoded")
	}
	want, wantM = arrowPath(t, s, s, props, srcs)
	got, gotM := transcodePath(t, s, props, srcs, 6)
	compareRows(t, storedRows(t, got), storedRows(t, want))
	compareMetrics(t, gotM, wantM)
	if dictionaryEncoded(t, got)["s"] {
		t.Error("column s kept a dictionary over the size limit")
	}
}

// dictIdxSources are six inputs of dictIdxBatch rows, written by the
// Writer, by pqarrow with data pages v2 and with v1, each with deletes
// (the first two rows among them).
func dictIdxSources(t *testing.T, vocab int) []tcSource {
	t.Helper()
	s := dictIdxSchema()
	r := rand.New(rand.NewPCG(3, 4))
	var srcs []tcSource
	for k := range 6 {
		rows := 2000 + 300*k
		b := dictIdxBatch(t, rows, k, vocab)
		var data []byte
		// Each writer's files are read in two of withBytes' three ways.
		switch k / 2 {
		case 0:
			data, _ = writeParquet(t, s, map[string]string{PropPageSizeBytes: "2048", PropRowGroupSizeBytes: "32768"}, b)
		case 1:
			data = writePqarrow(t, b, parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithCompression(compress.Codecs.Zstd),
				parquet.WithDataPageSize(1024), parquet.WithMaxRowGroupLength(1500))
		default:
			data = writePqarrow(t, b, parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageSize(4096))
		}
		b.Release()
		del := randomDeletes(r, rows, 0.1)
		del.AddRange(0, 2)
		srcs = append(srcs, tcSource{data: data, deleted: del, dataSeq: int64(k + 1)})
	}
	return srcs
}

// transcodeValues is transcodePath with every column transcoded as
// values.
func transcodeValues(t *testing.T, s *spec.Schema, props map[string]string, srcs []tcSource, chunk int) []byte {
	t.Helper()
	var buf bytes.Buffer
	tc, err := NewTranscoder(&buf, s, props)
	if err != nil {
		t.Fatal(err)
	}
	tc.noDictIndex = true
	for off := 0; off < len(srcs); off += chunk {
		var ins []TranscodeInput
		for i, src := range srcs[off:min(off+chunk, len(srcs))] {
			ins = append(ins, withBytes(TranscodeInput{Path: fmt.Sprint(off + i), File: openTc(t, src.data), Deleted: src.deleted,
				DataSequenceNumber: src.dataSeq}, off+i, src.data))
		}
		if _, err := tc.WriteRowGroup(context.Background(), ins); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// samePages wants files got and want to have the same row groups, and in
// each the same column chunk statistics and data pages (value counts,
// statistics); got's string dictionaries hold more entries than want's.
func samePages(t *testing.T, got, want []byte) {
	t.Helper()
	g, w := openTc(t, got), openTc(t, want)
	if g.NumRowGroups() != w.NumRowGroups() {
		t.Fatalf("%d row groups, want %d", g.NumRowGroups(), w.NumRowGroups())
	}
	moreEntries := false
	for rg := range g.NumRowGroups() {
		for j := range g.MetaData().Schema.NumColumns() {
			name := g.MetaData().Schema.Column(j).Path()
			gc, _ := g.MetaData().RowGroup(rg).ColumnChunk(j)
			wc, _ := w.MetaData().RowGroup(rg).ColumnChunk(j)
			gs, err1 := gc.Statistics()
			ws, err2 := wc.Statistics()
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			ge, _ := gs.Encode()
			we, _ := ws.Encode()
			if fmt.Sprint(ge) != fmt.Sprint(we) || gc.NumValues() != wc.NumValues() {
				t.Errorf("row group %d column %s: statistics %+v, %d values; want %+v, %d", rg, name, ge, gc.NumValues(), we, wc.NumValues())
			}
			gp, wp := pagesOf(t, g, rg, j), pagesOf(t, w, rg, j)
			if gp.entries > wp.entries {
				moreEntries = true
			}
			if fmt.Sprint(gp.pages) != fmt.Sprint(wp.pages) {
				t.Errorf("row group %d column %s: pages\n%v\nwant\n%v", rg, name, gp.pages, wp.pages)
			}
		}
	}
	if !moreEntries {
		t.Error("no dictionary holds the values of deleted rows: the columns were not transcoded as indices")
	}
}

type chunkPages struct {
	entries int32
	pages   []string
}

func pagesOf(t *testing.T, f *file.Reader, rg, j int) chunkPages {
	t.Helper()
	pr, err := f.RowGroup(rg).GetColumnPageReader(j)
	if err != nil {
		t.Fatal(err)
	}
	var out chunkPages
	for pr.Next() {
		switch p := pr.Page().(type) {
		case *file.DictionaryPage:
			out.entries = p.NumValues()
		case file.DataPage:
			st := p.Statistics()
			out.pages = append(out.pages, fmt.Sprintf("%d values %s: min %q max %q nulls %d", p.NumValues(), p.Encoding(), st.Min, st.Max, st.NullCount))
		}
	}
	if err := pr.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
