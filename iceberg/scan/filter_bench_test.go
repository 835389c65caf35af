package scan

import (
	"strconv"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// benchBatch is a 64k-row batch of the compaction benchmark's shape: long,
// string, timestamp, double, string.
func benchBatch(b *testing.B, n int) arrow.RecordBatch {
	b.Helper()
	s := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64},
		{Name: "cat", Type: arrow.BinaryTypes.String},
	}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer bld.Release()
	for i := range n {
		bld.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%7 == 0 {
			bld.Field(1).AppendNull()
		} else {
			bld.Field(1).(*array.StringBuilder).Append("name-" + strconv.Itoa(i))
		}
		bld.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1000))
		bld.Field(3).(*array.Float64Builder).Append(float64(i) / 3)
		bld.Field(4).(*array.StringBuilder).Append("c" + strconv.Itoa(i%100))
	}
	return bld.NewRecordBatch()
}

// BenchmarkFilterPositions drops positions from a 64k-row batch: every
// tenth (the compaction benchmark's deletes), one run, and none.
func BenchmarkFilterPositions(b *testing.B) {
	const n = 64 << 10
	rec := benchBatch(b, n)
	defer rec.Release()
	outIdx := []int{0, 1, 2, 3, 4}
	for _, c := range []struct {
		name string
		del  func(i int) bool
	}{
		{"every-tenth", func(i int) bool { return i%10 == 0 }},
		{"one-range", func(i int) bool { return i >= 1000 && i < 2000 }},
		{"none", func(int) bool { return false }},
	} {
		b.Run(c.name, func(b *testing.B) {
			bm := roaring64.New()
			for i := range n {
				if c.del(i) {
					bm.Add(uint64(i))
				}
			}
			f := &filter{deleted: bm}
			b.ReportAllocs()
			for b.Loop() {
				out, err := f.apply(b.Context(), rec, 0, outIdx, rec.Schema(), "f", Options{})
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
			b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
