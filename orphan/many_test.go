package orphan

import (
	"fmt"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
)

// TestManyFiles runs with a memory budget of a few records, so both
// sorted streams and the orphans go through many spilled runs (and their
// merges), and the deletions through several batches.
func TestManyFiles(t *testing.T) {
	f := newFixture(t, "mem://bucket/wh")
	id := f.create(t, "t", "", nil)
	tbl := f.load(t, id)
	loc := tbl.Metadata.Location
	var live []string
	for i := range 1500 {
		live = append(live, fmt.Sprintf("%s/data/p=%d/live-%05d.parquet", loc, i%7, i))
	}
	for i := 0; i < len(live); i += 500 {
		f.appendFiles(t, id, true, live[i:i+500]...)
	}
	var orphans []string
	for i := range 2500 {
		p := fmt.Sprintf("%s/data/p=%d/orphan-%05d.parquet", loc, i%5, i)
		if err := fileio.WriteFile(f.Ctx, tbl.IO, p, []byte(p)); err != nil {
			t.Fatal(err)
		}
		orphans = append(orphans, p)
	}
	o := opts()
	o.MemoryBudget = 4 << 10
	o.MaxConcurrentDeletes = 3
	var s sink
	sum, err := Run(f.Ctx, f.loader(id), o, &s)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.byStatus(); !sameStrings(got[StatusDeleted], orphans) || len(got) != 1 {
		t.Errorf("deleted %d, want %d (statuses %d)", len(got[StatusDeleted]), len(orphans), len(got))
	}
	if sum.Referenced < int64(len(live)) || sum.Deleted != int64(len(orphans)) {
		t.Errorf("summary %+v", sum)
	}
	// The orphans came out in key order.
	for i := 1; i < len(s.results); i++ {
		if s.results[i-1].Path >= s.results[i].Path {
			t.Fatalf("results out of order at %d: %s, %s", i, s.results[i-1].Path, s.results[i].Path)
		}
	}
	checkReferencedExist(t, f.load(t, id))
}
