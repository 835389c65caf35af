package datafile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/spec"
)

// genArray builds n deterministic values of dt; when nullable, every
// nullEvery-th row is null.
func genArray(t testing.TB, dt arrow.DataType, n int, nullable bool, salt int) arrow.Array {
	return genArrayIn(t, dt, n, nullable, salt, func(int) bool { return false })
}

// genArrayIn is genArray for a child of a struct whose null rows are
// parentNull: lists and maps there are empty, as pqarrow requires.
func genArrayIn(t testing.TB, dt arrow.DataType, n int, nullable bool, salt int, parentNull func(int) bool) arrow.Array {
	t.Helper()
	mem := memory.DefaultAllocator
	nullEvery := 5 + salt%4
	isNull := func(i int) bool { return nullable && i%nullEvery == 1 }
	empty := func(i int) bool { return isNull(i) || parentNull(i) }
	switch dt := dt.(type) {
	case *arrow.StructType:
		kids := make([]arrow.Array, dt.NumFields())
		for k, f := range dt.Fields() {
			kids[k] = genArrayIn(t, f.Type, n, f.Nullable, salt+k+1, empty)
			defer kids[k].Release()
		}
		valid, nulls := validity(n, isNull)
		data := array.NewData(dt, n, []*memory.Buffer{valid}, childData(kids), nulls, 0)
		defer data.Release()
		return array.MakeFromData(data)
	case *arrow.MapType:
		offsets, total := listOffsets(n, empty)
		entries := dt.Elem().(*arrow.StructType)
		keys := genUniqueKeys(t, entries.Field(0).Type, total)
		defer keys.Release()
		vals := genArray(t, entries.Field(1).Type, total, entries.Field(1).Nullable, salt+1)
		defer vals.Release()
		ed := array.NewData(entries, total, []*memory.Buffer{nil}, childData([]arrow.Array{keys, vals}), 0, 0)
		defer ed.Release()
		valid, nulls := validity(n, isNull)
		data := array.NewData(dt, n, []*memory.Buffer{valid, offsets}, []arrow.ArrayData{ed}, nulls, 0)
		defer data.Release()
		return array.MakeFromData(data)
	case *arrow.ListType:
		offsets, total := listOffsets(n, empty)
		el := genArray(t, dt.Elem(), total, dt.ElemField().Nullable, salt+1)
		defer el.Release()
		valid, nulls := validity(n, isNull)
		data := array.NewData(dt, n, []*memory.Buffer{valid, offsets}, []arrow.ArrayData{el.Data()}, nulls, 0)
		defer data.Release()
		return array.MakeFromData(data)
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for i := range n {
		if isNull(i) {
			b.AppendNull()
			continue
		}
		v := int64(i*7919+salt*31) - 50000
		switch b := b.(type) {
		case *array.BooleanBuilder:
			b.Append(v%3 == 0)
		case *array.Int32Builder:
			b.Append(int32(v))
		case *array.Int64Builder:
			b.Append(v * 1_000_003)
		case *array.Float32Builder:
			b.Append(float32(v) / 7)
		case *array.Float64Builder:
			b.Append(float64(v) / 13)
		case *array.Date32Builder:
			b.Append(arrow.Date32(v % 100000))
		case *array.Time64Builder:
			b.Append(arrow.Time64((v + 86_400_000_000) % 86_400_000_000))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(v * 1_000_000_007))
		case *array.StringBuilder:
			b.Append(fmt.Sprintf("str-%d-é", v))
		case *array.BinaryBuilder:
			b.Append([]byte(fmt.Sprintf("bin\x00%d", v)))
		case *array.FixedSizeBinaryBuilder:
			w := dt.(*arrow.FixedSizeBinaryType).ByteWidth
			bs := make([]byte, w)
			for k := range bs {
				bs[k] = byte(int(v) + k*17)
			}
			b.Append(bs)
		case *array.Decimal128Builder:
			b.Append(decimal128.FromI64(v * 3))
		default:
			t.Fatalf("genArray: no generator for %s", dt)
		}
	}
	return b.NewArray()
}

func genUniqueKeys(t testing.TB, dt arrow.DataType, n int) arrow.Array {
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	for i := range n {
		switch b := b.(type) {
		case *array.StringBuilder:
			b.Append(fmt.Sprintf("k%d", i))
		case *array.Int32Builder:
			b.Append(int32(i))
		default:
			t.Fatalf("no key generator for %s", dt)
		}
	}
	return b.NewArray()
}

func childData(arrs []arrow.Array) []arrow.ArrayData {
	out := make([]arrow.ArrayData, len(arrs))
	for i, a := range arrs {
		out[i] = a.Data()
	}
	return out
}

func validity(n int, isNull func(int) bool) (*memory.Buffer, int) {
	buf := memory.NewResizableBuffer(memory.DefaultAllocator)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	nulls := 0
	for i := range n {
		if isNull(i) {
			nulls++
		} else {
			bitutil.SetBit(buf.Bytes(), i)
		}
	}
	return buf, nulls
}

// listOffsets gives row i (i%4) entries; null rows get none.
func listOffsets(n int, isNull func(int) bool) (*memory.Buffer, int) {
	buf := memory.NewResizableBuffer(memory.DefaultAllocator)
	buf.Resize((n + 1) * 4)
	offs := arrow.Int32Traits.CastFromBytes(buf.Bytes())
	total := 0
	for i := range n {
		offs[i] = int32(total)
		if !isNull(i) {
			total += i % 4
		}
	}
	offs[n] = int32(total)
	return buf, total
}

// genBatch builds a batch of n rows in the Arrow schema of s.
func genBatch(t testing.TB, s *spec.Schema, n, salt int) arrow.RecordBatch {
	t.Helper()
	sc, err := ArrowSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	cols := make([]arrow.Array, len(sc.Fields()))
	for i, f := range sc.Fields() {
		cols[i] = genArray(t, f.Type, n, f.Nullable, salt+i)
		defer cols[i].Release()
	}
	return array.NewRecordBatch(sc, cols, int64(n))
}

// writeParquet writes the batches with our Writer and returns the file.
func writeParquet(t testing.TB, s *spec.Schema, props map[string]string, batches ...arrow.RecordBatch) ([]byte, Metrics) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, s, props)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	m, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if w.BytesWritten() != int64(buf.Len()) {
		t.Fatalf("BytesWritten %d, file has %d bytes", w.BytesWritten(), buf.Len())
	}
	return buf.Bytes(), m
}

// readParquet reads a whole file with OpenReader, checking every batch
// against the reader's schema and the batch size.
func readParquet(t testing.TB, data []byte, opts ReadOptions) []arrow.RecordBatch {
	t.Helper()
	rd, err := OpenReader(context.Background(), bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var out []arrow.RecordBatch
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Schema().Equal(rd.Schema()) {
			t.Fatalf("batch schema %s differs from reader schema %s", rec.Schema(), rd.Schema())
		}
		if opts.BatchSize > 0 && rec.NumRows() > int64(opts.BatchSize) {
			t.Fatalf("batch of %d rows, batch size %d", rec.NumRows(), opts.BatchSize)
		}
		out = append(out, rec)
	}
}

// rowsJSON renders the rows of batches as JSON lines, one per row, for
// comparing tables value by value.
func rowsJSON(t testing.TB, batches ...arrow.RecordBatch) []string {
	t.Helper()
	var out []string
	for _, b := range batches {
		for i := range int(b.NumRows()) {
			row := make([]any, b.NumCols())
			for c := range int(b.NumCols()) {
				row[c] = b.Column(c).GetOneForMarshal(i)
			}
			js, err := json.Marshal(row)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(js))
		}
	}
	return out
}

func compareRows(t testing.TB, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("row %d:\n got  %s\n want %s", i, got[i], want[i])
		}
	}
}

func release(batches []arrow.RecordBatch) {
	for _, b := range batches {
		b.Release()
	}
}
