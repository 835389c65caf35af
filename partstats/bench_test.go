package partstats_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/partstats"
)

// benchTable is a table of ICECTL_BENCH_PSTATS_SNAPSHOTS appends (default
// 1,000), each of 20 files in 20 of 100 partitions, with manifest merging
// off: one manifest per snapshot. The file of the second-newest snapshot
// is registered, so an incremental computation of the head reads it and
// one manifest.
func benchTable(t testing.TB) (*catalog.Table, error) {
	n := 1000
	if s := os.Getenv("ICECTL_BENCH_PSTATS_SNAPSHOTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			return nil, err
		}
	}
	cat := fixture.NewSQLite(t)
	name := spec.PartitionField{SourceID: 2, FieldID: 1000, Name: "name", Transform: spec.ParseTransform("identity")}
	tb := cat.Table(t, fixture.TableOptions{Spec: spec.PartitionSpec{Fields: []spec.PartitionField{name}},
		Props: map[string]string{"commit.manifest-merge.enabled": "false"}})
	tbl := tb.Load(t)
	for i := range n {
		var files []manifest.DataFile
		for j := range 20 {
			files = append(files, fixture.Listed(fmt.Sprintf("%s/data/f-%d-%d.parquet", tbl.Metadata.Location, i, j),
				[]any{fmt.Sprint("p", (i*20+j)%100)}, 1000, 64<<10))
		}
		tbl = tb.Append(t, tbl, files...)
	}
	prev := tbl.Metadata.Snapshots[len(tbl.Metadata.Snapshots)-2].SnapshotID
	res, err := partstats.Compute(context.Background(), tbl.IO, tbl.Metadata, prev, partstats.Options{})
	if err != nil {
		return nil, err
	}
	data, err := partstats.Encode(res, tbl.Metadata.FormatVersion)
	if err != nil {
		return nil, err
	}
	f, err := partstats.Write(context.Background(), tbl.IO, partstats.NewPath(tbl.Metadata, prev), prev, data)
	if err != nil {
		return nil, err
	}
	return partstats.Commit(context.Background(), cat, tbl, f, fixture.NoWait())
}

// BenchmarkCompute computes the head's statistics of benchTable in full
// (every manifest) and incrementally (the previous file and the head's
// one manifest):
//
//	go test -run '^$' -bench Compute -benchtime 5x ./partstats/
func BenchmarkCompute(b *testing.B) {
	tbl, err := benchTable(b)
	if err != nil {
		b.Fatal(err)
	}
	head := *tbl.Metadata.CurrentSnapshotID
	for _, full := range []bool{true, false} {
		b.Run(map[bool]string{true: "full", false: "incremental"}[full], func(b *testing.B) {
			for b.Loop() {
				res, err := partstats.Compute(context.Background(), tbl.IO, tbl.Metadata, head, partstats.Options{Full: full})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Manifests), "manifests")
			}
		})
	}
}
