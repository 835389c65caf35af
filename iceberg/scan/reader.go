package scan

import (
	"context"
	"fmt"
	"sync"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// FileTask is one live data file to read and the deletes that apply to it
// (from table.DeleteIndex.For).
type FileTask struct {
	File    table.FileEntry
	Deletes table.Applicable
}

// FileReader reads a fixed set of data files with their deletes, loading
// each position-delete and equality-delete file that applies to several
// of them once, not once per data file: a partition-scoped delete file
// applies to every data file of its partition. A delete file's index is
// dropped as soon as the last task that needs it has been read, so memory
// holds only the deletes of the tasks still to read. DVs belong to one
// data file and are read with it.
//
// Each task is read at most once. Reads of different tasks may run
// concurrently.
type FileReader struct {
	md    *spec.TableMetadata
	l     *deleteLoader
	tasks []FileTask

	mu   sync.Mutex
	read []bool
}

// NewFileReader prepares to read tasks, the data files of one table
// described by md (which types equality deletes by field id and supplies
// the name mapping; compaction passes the metadata it plans on). Nothing
// is read until Read.
func NewFileReader(fio fileio.FileIO, md *spec.TableMetadata, tasks []FileTask) (*FileReader, error) {
	l, err := newDeleteLoader(fio, md, tasks)
	if err != nil {
		return nil, err
	}
	return &FileReader{md: md, l: l, tasks: tasks, read: make([]bool, len(tasks))}, nil
}

// Len is the number of tasks.
func (r *FileReader) Len() int { return len(r.tasks) }

// Read reads task i as ReadFile does: fn gets batches of the surviving
// rows, in file order, in the schema Schema(md, opts) describes, each
// released when fn returns.
func (r *FileReader) Read(ctx context.Context, i int, opts Options, fn func(rec arrow.RecordBatch) error) error {
	if i < 0 || i >= len(r.tasks) {
		return fmt.Errorf("read task %d: the reader has %d tasks", i, len(r.tasks))
	}
	r.mu.Lock()
	again := r.read[i]
	r.read[i] = true
	r.mu.Unlock()
	t := &r.tasks[i]
	if again {
		// Its references to its delete files were counted once, and are
		// spent: a second read would drop indexes other tasks still need.
		return fmt.Errorf("read data file %s: task %d was already read", t.File.Entry.DataFile.FilePath, i)
	}
	defer r.l.release(t.Deletes)
	return readFile(ctx, r.l, r.md, t.File, t.Deletes, opts, fn)
}

// DeletedPositions returns the positions deleted in task i by its DV or
// position-delete files (nil when none apply), for a reader that applies
// them itself. It counts as the task's read, so delete files shared with
// other tasks are dropped once all of them are done. Tasks with equality
// deletes are refused: positions alone would resurrect their rows.
func (r *FileReader) DeletedPositions(ctx context.Context, i int) (*roaring64.Bitmap, error) {
	if i < 0 || i >= len(r.tasks) {
		return nil, fmt.Errorf("read task %d: the reader has %d tasks", i, len(r.tasks))
	}
	t := &r.tasks[i]
	if len(t.Deletes.EqualityDeletes) > 0 {
		return nil, fmt.Errorf("deleted positions of %s: it has equality deletes", t.File.Entry.DataFile.FilePath)
	}
	r.mu.Lock()
	again := r.read[i]
	r.read[i] = true
	r.mu.Unlock()
	if again {
		return nil, fmt.Errorf("read data file %s: task %d was already read", t.File.Entry.DataFile.FilePath, i)
	}
	defer r.l.release(t.Deletes)
	bm, err := r.l.positions(ctx, t.File, t.Deletes)
	if err != nil {
		return nil, fmt.Errorf("read deletes of %s: %w", t.File.Entry.DataFile.FilePath, err)
	}
	return bm, nil
}
