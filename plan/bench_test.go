package plan

import (
	"fmt"
	"testing"

	"github.com/icectl/icectl/iceberg/table"
)

// BenchmarkPlan100kFiles plans 100,000 small files in 200 partitions of a
// day-partitioned spec, with a DV on every tenth file, as the issue's
// planning benchmark (manifest reading is iceberg/table's part).
func BenchmarkPlan100kFiles(b *testing.B) { benchPlan(b, 100_000, 200) }

// BenchmarkPlan10kFiles is the same table at a tenth of the size, to show
// that time and memory per file stay flat.
func BenchmarkPlan10kFiles(b *testing.B) { benchPlan(b, 10_000, 200) }

func benchPlan(b *testing.B, files, parts int) {
	data := make([]table.FileEntry, 0, files)
	var deletes []table.FileEntry
	for i := range files {
		part := []any{fmt.Sprint("c", i%parts), int32(20000 + i%parts)}
		p := fmt.Sprintf("s3://bucket/db/t/data/part-%06d.parquet", i)
		data = append(data, dataFile(p, 1, part, int64(1+i%8)*mib, 10_000, int64(1+i%5)))
		if i%10 == 0 {
			deletes = append(deletes, dv("s3://bucket/db/t/data/dvs.puffin", int64(4+i*64), 1, part, 100, 6, p))
		}
	}
	in := testInput(data, deletes)
	r := resolve(Options{})
	b.ReportAllocs()
	b.ResetTimer()
	var p *Plan
	for b.Loop() {
		var err error
		if p, err = New(in, r, testNow); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if p.Totals.InputFiles != files {
		b.Fatalf("planned %d files, want %d", p.Totals.InputFiles, files)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(files), "ns/file")
}
