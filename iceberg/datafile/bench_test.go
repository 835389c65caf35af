package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/icectl/icectl/iceberg/spec"
)

var benchSchema = &spec.Schema{Fields: []spec.NestedField{
	{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
	{ID: 2, Name: "name", Type: spec.StringType{}},
	{ID: 3, Name: "price", Type: spec.DoubleType{}},
	{ID: 4, Name: "ts", Type: spec.TimestampTzType{}},
	{ID: 5, Name: "qty", Type: spec.IntType{}},
}}

const benchRows = 1 << 20

// benchFile writes the benchmark input once: ~1M rows, 5 columns, zstd.
func benchFile(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.parquet")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w, err := NewWriter(f, benchSchema, nil)
	if err != nil {
		b.Fatal(err)
	}
	sc := w.Schema()
	for off := 0; off < benchRows; off += DefaultBatchSize {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for i := off; i < off+DefaultBatchSize; i++ {
			rb.Field(0).(*array.Int64Builder).Append(int64(i))
			rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("customer-%d", (i*7919)%50000))
			rb.Field(2).(*array.Float64Builder).Append(float64((i*31)%100000) / 100)
			rb.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000 + int64(i)*1_000_003))
			if i%10 == 0 {
				rb.Field(4).AppendNull()
			} else {
				rb.Field(4).(*array.Int32Builder).Append(int32(i % 1000))
			}
		}
		rec := rb.NewRecordBatch()
		rb.Release()
		if err := w.Write(rec); err != nil {
			b.Fatal(err)
		}
		rec.Release()
	}
	if _, err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkReadWrite rewrites a Parquet file through our Reader and Writer
// (icectl), through the Transcoder (transcode, as compaction does) and
// through bare arrow-go (arrow: pqarrow record reader into a
// buffered pqarrow writer with the same codec and row-group size), and
// reports rows/s for each.
func BenchmarkReadWrite(b *testing.B) {
	path := benchFile(b)
	b.Run("icectl", func(b *testing.B) {
		for b.Loop() {
			if n := rewriteIcectl(b, path); n != benchRows {
				b.Fatalf("rewrote %d rows", n)
			}
		}
		b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("transcode", func(b *testing.B) {
		for b.Loop() {
			if n := rewriteTranscode(b, path); n != benchRows {
				b.Fatalf("rewrote %d rows", n)
			}
		}
		b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("arrow", func(b *testing.B) {
		for b.Loop() {
			if n := rewriteArrow(b, path); n != benchRows {
				b.Fatalf("rewrote %d rows", n)
			}
		}
		b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}

func rewriteIcectl(b *testing.B, path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	rd, err := OpenReader(context.Background(), f, st.Size(), ReadOptions{Schema: benchSchema})
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	w, err := NewWriter(io.Discard, benchSchema, nil)
	if err != nil {
		b.Fatal(err)
	}
	copyRows(b, rd, w)
	m, err := w.Close()
	if err != nil {
		b.Fatal(err)
	}
	return m.RecordCount
}

// copyRows writes every batch of rd with w.
func copyRows(b *testing.B, rd *Reader, w *Writer) {
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			b.Fatal(err)
		}
		rec.Release()
	}
}

func rewriteTranscode(b *testing.B, path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		b.Fatal(err)
	}
	defer pf.Close()
	tc, err := NewTranscoder(io.Discard, benchSchema, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tc.WriteRowGroup(context.Background(), []TranscodeInput{{Path: path, File: pf}}); err != nil {
		b.Fatal(err)
	}
	m, err := tc.Close()
	if err != nil {
		b.Fatal(err)
	}
	return m.RecordCount
}

func rewriteArrow(b *testing.B, path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		b.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: DefaultBatchSize}, memory.DefaultAllocator)
	if err != nil {
		b.Fatal(err)
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer rr.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	fw, err := pqarrow.NewFileWriter(rr.Schema(), io.Discard, props, pqarrow.DefaultWriterProps())
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for {
		rec, err := rr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if err := fw.WriteBuffered(rec); err != nil {
			b.Fatal(err)
		}
		n += rec.NumRows()
		if fw.RowGroupTotalBytesWritten() >= DefaultRowGroupSizeBytes {
			if err := fw.NewBufferedRowGroupChecked(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := fw.Close(); err != nil {
		b.Fatal(err)
	}
	return n
}
