package datafile

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/icectl/icectl/iceberg/spec"
)

// dictSchema has columns of every cardinality the dictionary decision
// tells apart.
var dictSchema = &spec.Schema{Fields: []spec.NestedField{
	{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}, // unique
	{ID: 2, Name: "rnd", Type: spec.DoubleType{}},              // random
	{ID: 3, Name: "cat", Type: spec.StringType{}},              // 5 values
	{ID: 4, Name: "code", Type: spec.LongType{}},               // 300 values
	{ID: 5, Name: "flag", Type: spec.BooleanType{}},
}}

func dictBatch(t *testing.T, rows, off int, r *rand.Rand) arrow.RecordBatch {
	t.Helper()
	sc, err := ArrowSchema(dictSchema)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(off+i) * 7919)
		if i%9 == 4 {
			b.Field(1).AppendNull()
			b.Field(2).AppendNull()
			b.Field(3).AppendNull()
			b.Field(4).AppendNull()
			continue
		}
		b.Field(1).(*array.Float64Builder).Append(r.Float64())
		b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("category-%d", r.IntN(5)))
		b.Field(3).(*array.Int64Builder).Append(int64(r.IntN(300)) * 1000003)
		b.Field(4).(*array.BooleanBuilder).Append(r.IntN(2) == 0)
	}
	return b.NewRecordBatch()
}

// dictionaryEncoded says, for each column of a Parquet file, whether
// every row group of it has dictionary-encoded data pages and none
// PLAIN ones.
func dictionaryEncoded(t *testing.T, data []byte) map[string]bool {
	t.Helper()
	md := openTc(t, data).MetaData()
	out := map[string]bool{}
	for j := range md.Schema.NumColumns() {
		name := md.Schema.Column(j).Name()
		out[name] = md.NumRowGroups() > 0
		for g := range md.NumRowGroups() {
			cc, err := md.RowGroup(g).ColumnChunk(j)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(cc.Encodings(), parquet.Encodings.RLEDict) {
				out[name] = false
			}
			for _, s := range cc.EncodingStats() {
				if pt := int32(s.PageType); (pt == pageData || pt == pageDataV2) && s.Encoding == parquet.Encodings.Plain {
					out[name] = false
				}
			}
		}
	}
	return out
}

// TestTranscodeDictionaryDecision: columns of nearly distinct values
// (a unique long, random doubles) and columns whose inputs were written
// PLAIN or fell back to PLAIN are written PLAIN; a low-cardinality string
// keeps its dictionary; the values and metrics are the Arrow path's.
func TestTranscodeDictionaryDecision(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	var srcs []tcSource
	for k := range 3 {
		// Written by arrow-go with zstd (uncompressed, arrow-go falls back
		// from a dictionary that saves nothing): the Writer would write the
		// nearly distinct columns PLAIN (TestWriterDictionaryDecision).
		b := dictBatch(t, 4000, 4000*k, r)
		data := writePqarrow(t, b, parquet.WithCompression(compress.Codecs.Zstd))
		b.Release()
		srcs = append(srcs, tcSource{data: data, deleted: randomDeletes(r, 4000, 0.05)})
	}
	in := dictionaryEncoded(t, srcs[0].data)
	for _, c := range []string{"id", "rnd", "cat", "code"} {
		if !in[c] {
			t.Fatalf("input column %s is not dictionary-encoded; the test wants arrow-go's dictionaries", c)
		}
	}
	want, wantM := arrowPath(t, dictSchema, dictSchema, nil, srcs)
	got, gotM := transcodePath(t, dictSchema, nil, srcs, 3)
	compareRows(t, storedRowKeys(t, got), storedRowKeys(t, want))
	compareMetrics(t, gotM, wantM)
	enc := dictionaryEncoded(t, got)
	for c, dict := range map[string]bool{"id": false, "rnd": false, "cat": true, "code": true} {
		if enc[c] != dict {
			t.Errorf("column %s: dictionary %v, want %v", c, enc[c], dict)
		}
	}

	// The same rows from inputs written without dictionaries, and from
	// inputs whose dictionaries overflowed into PLAIN pages: every column
	// but the boolean is written PLAIN.
	for name, props := range map[string][]parquet.WriterProperty{
		"no dictionary": {parquet.WithDictionaryDefault(false)},
		"fell back":     {parquet.WithDictionaryPageSizeLimit(1024), parquet.WithDataPageSize(1024)},
	} {
		t.Run(name, func(t *testing.T) {
			var srcs2 []tcSource
			for k := range 3 {
				b := dictBatch(t, 4000, 4000*k, r)
				srcs2 = append(srcs2, tcSource{data: writePqarrow(t, b, props...)})
				b.Release()
			}
			if !plainInput(openTc(t, srcs2[0].data), 3) {
				t.Fatalf("input column code is not PLAIN")
			}
			want, wantM := arrowPath(t, dictSchema, dictSchema, nil, srcs2)
			got, gotM := transcodePath(t, dictSchema, nil, srcs2, 2)
			compareRows(t, storedRowKeys(t, got), storedRowKeys(t, want))
			compareMetrics(t, gotM, wantM)
			enc := dictionaryEncoded(t, got)
			for _, c := range []string{"id", "rnd", "code"} {
				if enc[c] {
					t.Errorf("column %s is dictionary-encoded, want PLAIN", c)
				}
			}
		})
	}
}
