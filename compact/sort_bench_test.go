package compact

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/spec"
)

// BenchmarkSortRun orders one run of 1M rows (a long and an int column)
// by an explicit sort order and by a z-order of both columns.
func BenchmarkSortRun(b *testing.B) {
	const n = 1 << 20
	meta := func(id int) arrow.Metadata {
		return arrow.NewMetadata([]string{datafile.FieldIDKey}, []string{strconv.Itoa(id)})
	}
	as := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int64, Metadata: meta(1)},
		{Name: "y", Type: arrow.PrimitiveTypes.Int32, Nullable: true, Metadata: meta(2)},
	}, nil)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, as)
	rng := rand.New(rand.NewPCG(1, 2))
	for range n {
		rb.Field(0).(*array.Int64Builder).Append(rng.Int64())
		rb.Field(1).(*array.Int32Builder).Append(rng.Int32())
	}
	rec := rb.NewRecordBatch()
	rb.Release()
	defer rec.Release()
	id := spec.ParseTransform("identity")
	for _, c := range []struct {
		name string
		o    *ordering
	}{
		{"sort", &ordering{order: &spec.SortOrder{Fields: []spec.SortField{
			{SourceID: 1, Transform: id, Direction: "asc", NullOrder: "nulls-first"},
			{SourceID: 2, Transform: id, Direction: "desc", NullOrder: "nulls-last"}}}}},
		{"zorder", &ordering{zorder: []int{1, 2}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, err := newSorter(c.o, as)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(recordSize(rec))
			for b.Loop() {
				out, err := s.sort([]arrow.RecordBatch{rec})
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
		})
	}
}
