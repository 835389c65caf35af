package datafile

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/spec"
)

// BenchmarkMetricsCollector feeds a stream of 8192-row batches of five
// columns (long, double with NaN, string, timestamptz, nullable int) to one
// collector with the default truncate(16) mode and reports rows/s.
func BenchmarkMetricsCollector(b *testing.B) {
	const rows = 8192
	schema := mtSchema(
		mtOpt(1, "id", spec.LongType{}),
		mtOpt(2, "price", spec.DoubleType{}),
		mtOpt(3, "name", spec.StringType{}),
		mtOpt(4, "ts", spec.TimestampTzType{}),
		mtOpt(5, "qty", spec.IntType{}),
	)
	tsType := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	fields := []arrow.Field{
		mtField(1, "id", arrow.PrimitiveTypes.Int64), mtField(2, "price", arrow.PrimitiveTypes.Float64),
		mtField(3, "name", arrow.BinaryTypes.String), mtField(4, "ts", tsType), mtField(5, "qty", arrow.PrimitiveTypes.Int32),
	}
	mem := memory.DefaultAllocator
	r := rand.New(rand.NewPCG(1, 2))
	ib, db, sb := array.NewInt64Builder(mem), array.NewFloat64Builder(mem), array.NewStringBuilder(mem)
	tb, qb := array.NewTimestampBuilder(mem, tsType), array.NewInt32Builder(mem)
	for i := 0; i < rows; i++ {
		ib.Append(r.Int64())
		if i%100 == 0 {
			db.Append(float64(i) / 0) // +Inf and NaN now and then
		} else {
			db.Append(r.NormFloat64())
		}
		sb.Append(fmt.Sprintf("customer-%08d-%s", r.IntN(1_000_000), "name-of-some-length"))
		tb.Append(arrow.Timestamp(1_700_000_000_000_000 + r.Int64N(1e12)))
		if i%10 == 0 {
			qb.AppendNull()
		} else {
			qb.Append(r.Int32N(1000))
		}
	}
	rec := mtRecord(b, fields, []arrow.Array{ib.NewArray(), db.NewArray(), sb.NewArray(), tb.NewArray(), qb.NewArray()})
	c := NewMetricsCollector(schema, DefaultMetricsConfig())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.Add(rec); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if _, err := c.Finish(nil); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)*rows/b.Elapsed().Seconds(), "rows/s")
}
