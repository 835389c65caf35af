package datafile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/icectl/icectl/iceberg/spec"
)

// wideSchema is the wide shape: 61 columns of high-cardinality
// longs, random doubles, decimal(18,4), dates, booleans and UUID-like
// strings.
func wideSchema() *spec.Schema {
	fields := []spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}}
	add := func(n int, prefix string, t spec.Type) {
		for i := range n {
			fields = append(fields, spec.NestedField{ID: len(fields) + 1, Name: fmt.Sprintf("%s_%d", prefix, i), Type: t})
		}
	}
	add(12, "l", spec.LongType{})
	add(12, "f", spec.DoubleType{})
	add(10, "dec", spec.DecimalType{Precision: 18, Scale: 4})
	add(8, "day", spec.DateType{})
	add(8, "b", spec.BooleanType{})
	add(10, "u", spec.StringType{})
	return &spec.Schema{Fields: fields}
}

const (
	wideFiles = 60
	wideRows  = 4000
)

// wideInputs writes the wide benchmark's input files in memory.
func wideInputs(b *testing.B) (*spec.Schema, [][]byte) {
	b.Helper()
	s := wideSchema()
	sc, err := ArrowSchema(s)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var out [][]byte
	for k := range wideFiles {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for i := range wideRows {
			rb.Field(0).(*array.Int64Builder).Append(int64(k*wideRows + i))
			for c := 1; c < len(s.Fields); c++ {
				if r.IntN(20) == 0 {
					rb.Field(c).AppendNull()
					continue
				}
				switch fb := rb.Field(c).(type) {
				case *array.Int64Builder:
					fb.Append(r.Int64())
				case *array.Float64Builder:
					fb.Append(r.NormFloat64() * 1e6)
				case *array.Decimal128Builder:
					fb.Append(decimal128.FromI64(r.Int64N(1e17)))
				case *array.Date32Builder:
					fb.Append(arrow.Date32(18000 + r.IntN(3000)))
				case *array.BooleanBuilder:
					fb.Append(r.IntN(2) == 0)
				case *array.StringBuilder:
					fb.Append(fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff))
				}
			}
		}
		rec := rb.NewRecordBatch()
		rb.Release()
		data, _ := writeParquet(b, s, nil, rec)
		rec.Release()
		out = append(out, data)
	}
	return s, out
}

// BenchmarkTranscodeWide rewrites the wide shape's 60 files into one:
// through Reader and Writer (the Arrow path, which decimals took before
// the Transcoder copied them), through the Transcoder keeping every
// dictionary (before the dictionary decision) and through the
// Transcoder as it is.
func BenchmarkTranscodeWide(b *testing.B) {
	s, inputs := wideInputs(b)
	benchRewritePaths(b, s, inputs, int64(wideFiles*wideRows), true)
}

const (
	nestedFiles = 40
	nestedRows  = 12000
)

// BenchmarkTranscodeNested rewrites 40 files of the nested shapes
// (nestedSchema: the struct holding a struct and a list,
// list<string>, map<string,long> and a nullable struct, and more) into
// one, through the Arrow path (which nested columns took before the
// Transcoder carried levels through) and through the Transcoder.
func BenchmarkTranscodeNested(b *testing.B) {
	s := nestedSchema()
	var inputs [][]byte
	for k := range nestedFiles {
		rec := genBatch(b, s, nestedRows, 97*k)
		data, _ := writeParquet(b, s, nil, rec)
		rec.Release()
		inputs = append(inputs, data)
	}
	benchRewritePaths(b, s, inputs, int64(nestedFiles*nestedRows), false)
}

// benchRewritePaths rewrites inputs (files of schema s, total rows in
// all) into one file through the Arrow path and the Transcoder, and with
// everyDict also through the Transcoder keeping every dictionary.
func benchRewritePaths(b *testing.B, s *spec.Schema, inputs [][]byte, total int64, everyDict bool) {
	report := func(b *testing.B) {
		b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	}
	b.Run("arrow", func(b *testing.B) {
		for b.Loop() {
			w, err := NewWriter(io.Discard, s, nil)
			if err != nil {
				b.Fatal(err)
			}
			for _, data := range inputs {
				rd, err := OpenReader(context.Background(), bytes.NewReader(data), int64(len(data)), ReadOptions{Schema: s})
				if err != nil {
					b.Fatal(err)
				}
				copyRows(b, rd, w)
				rd.Close()
			}
			if m, err := w.Close(); err != nil || m.RecordCount != total {
				b.Fatalf("wrote %d rows: %v", m.RecordCount, err)
			}
		}
		report(b)
	})
	modes := []bool{false}
	if everyDict {
		modes = []bool{true, false}
	}
	for _, keepDict := range modes {
		name := "transcode"
		if keepDict {
			name = "transcode-every-dictionary"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				transcodeInputs(b, s, inputs, total, keepDict, "")
			}
			report(b)
		})
	}
}

// transcodeInputs transcodes inputs (files of schema s, total rows in
// all) into one file, keeping every dictionary with keepDict and giving
// each input's bytes as via says: "data" (TranscodeInput.Data), "source"
// (TranscodeInput.Source) or not at all ("").
func transcodeInputs(b *testing.B, s *spec.Schema, inputs [][]byte, total int64, keepDict bool, via string) {
	tc, err := NewTranscoder(io.Discard, s, nil)
	if err != nil {
		b.Fatal(err)
	}
	tc.keepDict = keepDict
	ins := make([]TranscodeInput, len(inputs))
	for i, data := range inputs {
		ins[i] = TranscodeInput{Path: fmt.Sprint(i), File: openTc(b, data)}
		switch via {
		case "data":
			ins[i].Data = data
		case "source":
			ins[i].Source = bytes.NewReader(data)
		}
	}
	if _, err := tc.WriteRowGroup(context.Background(), ins); err != nil {
		b.Fatal(err)
	}
	if m, err := tc.Close(); err != nil || m.RecordCount != total {
		b.Fatalf("wrote %d rows: %v", m.RecordCount, err)
	}
}

// BenchmarkTranscodeInPlace rewrites 40 files of the wide shape, written
// as iceberg-go writes them (pqarrow, data pages v2, zstd), into one: with
// their pages read through arrow-go's page reader, which hands v2 pages to
// arrow-go's typed reader (what every such input took before the page
// decoder read v2), read in place from the file's bytes
// (TranscodeInput.Data), and from each column chunk read whole
// (TranscodeInput.Source, what inputs too large to hold whole take).
func BenchmarkTranscodeInPlace(b *testing.B) {
	s := wideSchema()
	const files, rows = 40, 4000
	var inputs [][]byte
	for k := range files {
		rec := genBatch(b, s, rows, 17*k)
		inputs = append(inputs, writePqarrow(b, rec, parquet.WithDataPageVersion(parquet.DataPageV2),
			parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(true)))
		rec.Release()
	}
	for _, m := range []struct{ name, via string }{{"arrow-go-pages", ""}, {"in-place", "data"}, {"chunks-read", "source"}} {
		b.Run(m.name, func(b *testing.B) {
			for b.Loop() {
				transcodeInputs(b, s, inputs, files*rows, false, m.via)
			}
			b.ReportMetric(float64(files*rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
