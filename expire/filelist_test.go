package expire

import (
	"fmt"
	"slices"
	"testing"

	"github.com/icectl/icectl/iceberg/table"
)

// A FileList gives back its files in order, with their reasons (their own
// or the derived one), whether it stayed in memory or spilled, as often as
// asked.
func TestFileListKeepsOrderAcrossTheSpill(t *testing.T) {
	for _, budget := range []int{1 << 20, 64} {
		t.Run(fmt.Sprint("budget ", budget), func(t *testing.T) {
			l := NewFileList(t.TempDir())
			l.budget = budget
			defer l.Close()
			var want []File
			var bytes int64
			for i := range 500 {
				// Out of path order on purpose: the list keeps the order of Add.
				f := File{Path: fmt.Sprintf("file:///wh/t/data/%03d.parquet", (i*7)%500), Kind: table.KindData, Size: int64(i), SnapshotID: int64(i % 3)}
				if i%5 == 0 {
					f.Kind, f.SnapshotID, f.Reason = KindMetadataJSON, 0, "metadata file dropped from the metadata log"
				}
				if err := l.Add(f); err != nil {
					t.Fatal(err)
				}
				if f.Reason == "" {
					f.Reason = defaultReason(f)
				}
				want = append(want, f)
				bytes += f.Size
			}
			if spilled := l.f != nil; spilled != (budget < 1<<20) {
				t.Errorf("spilled %v with a budget of %d", spilled, budget)
			}
			for range 2 {
				var got []File
				if err := l.Each(func(f File) error { got = append(got, f); return nil }); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("got %d files %v..., want %d %v...", len(got), got[:min(3, len(got))], len(want), want[:3])
				}
			}
			if l.Len() != len(want) || l.Bytes() != bytes {
				t.Errorf("Len %d Bytes %d, want %d %d", l.Len(), l.Bytes(), len(want), bytes)
			}
		})
	}
}
