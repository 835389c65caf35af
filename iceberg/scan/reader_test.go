package scan

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/table"
)

// countingIO counts the opens of each path.
type countingIO struct {
	fileio.FileIO
	mu    sync.Mutex
	opens map[string]int
}

func (c *countingIO) Open(ctx context.Context, path string) (fileio.File, error) {
	c.mu.Lock()
	c.opens[path]++
	c.mu.Unlock()
	return c.FileIO.Open(ctx, path)
}

func (c *countingIO) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opens[path]
}

// sharedDeletesEnv commits three data files in partition eu and one in us,
// then a partition-scoped position-delete file for eu (with a row for the
// us file, which must not apply) and an equality-delete file for eu.
func sharedDeletesEnv(t *testing.T) (e *env, pd, eq manifest.DataFile, tasks []FileTask) {
	t.Helper()
	e = newEnv(t, 2, true)
	d1 := e.data(t, rows(1, 2, 3)...)
	d2 := e.data(t, rows(4, 5, 6)...)
	d3 := e.data(t, rows(7, 8, 9)...)
	d4 := e.data(t, r(10, "us"), r(11, "us"))
	e.commit(t, []manifest.DataFile{d1, d2, d3, d4})
	pd = e.posDeletes(t, "eu", false, map[string][]int64{d1.FilePath: {0}, d2.FilePath: {1}, d3.FilePath: {2}, d4.FilePath: {0}})
	eq = e.eqDeletes(t, "eu", []int{1}, r(2, "eu"), r(10, "eu"))
	e.commit(t, nil, pd, eq)
	fs, err := table.LiveFiles(e.ctx, e.tbl.IO, e.tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	ix := table.DeletesForTable(e.tbl.Metadata, fs)
	for _, d := range fs.Data {
		tasks = append(tasks, FileTask{File: d, Deletes: ix.For(d)})
	}
	slices.SortFunc(tasks, func(a, b FileTask) int {
		return strings.Compare(a.File.Entry.DataFile.FilePath, b.File.Entry.DataFile.FilePath)
	})
	return e, pd, eq, tasks
}

func readTaskIDs(t *testing.T, ctx context.Context, r *FileReader, i int) []int64 {
	t.Helper()
	var ids []int64
	err := r.Read(ctx, i, Options{}, func(rec arrow.RecordBatch) error {
		ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func (l *deleteLoader) cached() (pos, eq []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(maps.Keys(l.pos)), slices.Sorted(maps.Keys(l.eq))
}

func TestFileReaderLoadsSharedDeletesOnceAndReleasesThem(t *testing.T) {
	e, pd, eq, tasks := sharedDeletesEnv(t)
	fio := &countingIO{FileIO: e.tbl.IO, opens: map[string]int{}}
	// Only the three eu files: d4 (us) is not a task here.
	r, err := NewFileReader(fio, e.tbl.Metadata, tasks[:3])
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int64{{3}, {4, 6}, {7, 8}}
	for i := range 3 {
		wantIDs(t, readTaskIDs(t, e.ctx, r, i), want[i]...)
		pos, eqs := r.l.cached()
		if i < 2 {
			// Task i+1.. still need both delete files.
			if !slices.Equal(pos, []string{pd.FilePath}) || !slices.Equal(eqs, []string{eq.FilePath}) {
				t.Fatalf("after task %d: cached position deletes %v, equality deletes %v; want both kept", i, pos, eqs)
			}
			if i == 0 {
				if _, ok := r.l.pos[pd.FilePath].byFile[tasks[3].File.Entry.DataFile.FilePath]; ok {
					t.Error("the position deletes were indexed for a data file that is not a task")
				}
			}
		} else if len(pos)+len(eqs) != 0 {
			t.Fatalf("after the last task: still cached %v %v", pos, eqs)
		}
	}
	if n := fio.count(pd.FilePath); n != 1 {
		t.Errorf("position-delete file opened %d times, want 1", n)
	}
	if n := fio.count(eq.FilePath); n != 1 {
		t.Errorf("equality-delete file opened %d times, want 1", n)
	}
	if len(r.l.refs) != 0 {
		t.Errorf("references left after every task was read: %v", r.l.refs)
	}
}

func TestFileReaderRefusesASecondReadAndABadIndex(t *testing.T) {
	e, _, _, tasks := sharedDeletesEnv(t)
	r, err := NewFileReader(e.tbl.IO, e.tbl.Metadata, tasks)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, readTaskIDs(t, e.ctx, r, 0), 3)
	noop := func(arrow.RecordBatch) error { return nil }
	if err := r.Read(e.ctx, 0, Options{}, noop); err == nil || !strings.Contains(err.Error(), "already read") {
		t.Errorf("second read of task 0: err = %v, want already read", err)
	}
	for _, i := range []int{-1, len(tasks)} {
		if err := r.Read(e.ctx, i, Options{}, noop); err == nil {
			t.Errorf("Read(%d) of %d tasks succeeded", i, len(tasks))
		}
	}
	// The other tasks still read right after the refused reads.
	wantIDs(t, readTaskIDs(t, e.ctx, r, 3), 10, 11)
}

func TestRowsLoadsSharedDeletesOnce(t *testing.T) {
	e, pd, eq, _ := sharedDeletesEnv(t)
	fio := &countingIO{FileIO: e.tbl.IO, opens: map[string]int{}}
	var ids []int64
	err := Rows(e.ctx, fio, e.tbl.Metadata, e.tbl.Metadata.CurrentSnapshot(), Options{Concurrency: 3}, func(rec arrow.RecordBatch) error {
		ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, ids, 3, 4, 6, 7, 8, 10, 11)
	if n := fio.count(pd.FilePath); n != 1 {
		t.Errorf("position-delete file opened %d times, want 1", n)
	}
	if n := fio.count(eq.FilePath); n != 1 {
		t.Errorf("equality-delete file opened %d times, want 1", n)
	}
}

// TestDeletedPositionsMatchRead: the positions DeletedPositions gives
// (position and equality deletes) are exactly those Read drops, and the
// shared delete files are still loaded once and released.
func TestDeletedPositionsMatchRead(t *testing.T) {
	e, _, _, tasks := sharedDeletesEnv(t)
	ctx := context.Background()
	read, err := NewFileReader(e.tbl.IO, e.tbl.Metadata, tasks)
	if err != nil {
		t.Fatal(err)
	}
	positions, err := NewFileReader(e.tbl.IO, e.tbl.Metadata, tasks)
	if err != nil {
		t.Fatal(err)
	}
	anyEquality := false
	for i, task := range tasks {
		kept := map[int64]bool{}
		err := read.Read(ctx, i, Options{WithPos: true}, func(rec arrow.RecordBatch) error {
			for _, p := range rec.Column(int(rec.NumCols()) - 1).(*array.Int64).Int64Values() {
				kept[p] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		del, err := positions.DeletedPositions(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		anyEquality = anyEquality || len(task.Deletes.EqualityDeletes) > 0
		for p := range task.File.Entry.DataFile.RecordCount {
			gone := del != nil && del.Contains(uint64(p))
			if gone == kept[p] {
				t.Errorf("%s position %d: deleted %v, but Read kept it %v", task.File.Entry.DataFile.FilePath, p, gone, kept[p])
			}
		}
	}
	if !anyEquality {
		t.Fatal("no task had equality deletes: the test proves nothing")
	}
	if pos, eq := positions.l.cached(); len(pos)+len(eq) != 0 {
		t.Errorf("delete files still held after every task: %v %v", pos, eq)
	}
	if _, err := positions.DeletedPositions(ctx, 0); err == nil {
		t.Error("a second DeletedPositions of a task was accepted")
	}
}
