package verify

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/table"
	icefx "github.com/icectl/icectl/internal/testing/fixture"
)

// TestPartitionsFindsDamage: on v2 and v3 tables whose data files store
// their identity partition columns otherwise than their partition values,
// Partitions names exactly those files and fields (by metrics, and by
// reading the file whose metrics say nothing), with the spec each file was
// written with; the healthy and the Hive-style file (no such column) pass.
func TestPartitionsFindsDamage(t *testing.T) {
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			c := icefx.NewSQLite(t)
			pv := c.PartitionValuesTable(t, "pv", v)
			tbl := pv.Load(t)
			ctx := context.Background()
			r, err := Partitions(ctx, tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), PartitionsOptions{MaxViolations: 100})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range r.Problems {
				got = append(got, fmt.Sprintf("%s %s %s %d %v", p.DataFile[strings.LastIndex(p.DataFile, "/")+1:], p.Field, p.Kind, p.Rows, p.FromFile))
			}
			slices.Sort(got)
			var want []string
			for _, f := range []string{"a", "b", "d", "m", "s", "st_q"} {
				want = append(want, "damaged.parquet "+f+" all-null 3 false", "unmeasured.parquet "+f+" all-null 2 true")
			}
			want = append(want, "bounds.parquet s values-differ 2 false", "old-damaged.parquet a all-null 2 false", "damaged-noids.parquet a all-null 2 true", "damaged-noids.parquet st_q all-null 2 true")
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if r.DataFiles != 9 || r.DamagedFiles != 5 || r.DamagedRows != 11 || r.FilesRead != 5 || r.OK() || r.Violations != int64(len(want)) {
				t.Errorf("report: %d files, %d damaged (%d rows), %d read, %d violations", r.DataFiles, r.DamagedFiles, r.DamagedRows, r.FilesRead, r.Violations)
			}
			for _, p := range r.Problems {
				if p.Kind == table.PartitionAllNull && !strings.Contains(p.Detail, "null") {
					t.Errorf("detail %q", p.Detail)
				}
			}

			// Metrics only: the unmeasured files stay undecided.
			r, err = Partitions(ctx, tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), PartitionsOptions{MetricsOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Problems) != 8 || r.FilesRead != 0 || r.Undecided != 30 {
				t.Errorf("metrics only: %d problems, %d read, %d undecided", len(r.Problems), r.FilesRead, r.Undecided)
			}
		})
	}
}
