package compact

import (
	"context"
	"sync"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
)

// openCounter counts the opens of each path.
type openCounter struct {
	fileio.FileIO
	mu    sync.Mutex
	opens map[string]int
}

func (c *openCounter) Open(ctx context.Context, path string) (fileio.File, error) {
	c.mu.Lock()
	c.opens[path]++
	c.mu.Unlock()
	return c.FileIO.Open(ctx, path)
}

// A partition-scoped position-delete file and an equality-delete file
// apply to every input of the group: the rewrite reads each once, not once
// per input, and still applies them to every input.
func TestGroupReadsSharedDeleteFilesOnce(t *testing.T) {
	e := newEnv(t, 2)
	tbl, files := fiveFiles(t, e)
	del := map[string][]int64{}
	for _, f := range files {
		del[f.FilePath] = []int64{0, 7}
	}
	pos := e.WritePositionDeletes(t, tbl, "pos-all", nil, del, false)
	eq := e.WriteEqualityDeletes(t, tbl, "eq", nil, 3, 44, 99)
	tbl = e.AddDeletes(t, tbl, pos, eq)
	before := checksum(t, tbl)
	if before.RowCount != 100-10-3 {
		t.Fatalf("before: %d rows", before.RowCount)
	}

	opts := e.options()
	p, err := PlanTable(e.Ctx, tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Groups) != 1 || len(p.Groups[0].Inputs) != 5 {
		t.Fatalf("plan: %d groups, want 1 of 5 inputs", len(p.Groups))
	}
	fio := &openCounter{FileIO: tbl.IO, opens: map[string]int{}}
	counted := *tbl
	counted.IO = fio
	rep, err := Execute(e.Ctx, e.Cat, &counted, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.RowsOut != before.RowCount {
		t.Errorf("rows out %d, want %d", rep.RowsOut, before.RowCount)
	}
	if got := checksum(t, e.Load(t)); got != before {
		t.Fatalf("rows changed: before %+v after %+v", before, got)
	}
	for _, d := range []string{pos.FilePath, eq.FilePath} {
		if n := fio.opens[d]; n != 1 {
			t.Errorf("%s opened %d times for a group of 5 inputs, want 1", d, n)
		}
	}
}
