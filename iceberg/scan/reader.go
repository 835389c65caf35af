package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/iceberg/datafile"
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

// DeletedPositions returns the positions deleted in task i by its DV,
// position-delete and equality-delete files (nil when none apply), for a
// reader that drops them itself. Equality deletes are evaluated by reading
// only their columns of the data file. It counts as the task's read, so
// delete files shared with other tasks are dropped once all of them are
// done.
func (r *FileReader) DeletedPositions(ctx context.Context, i int) (*roaring64.Bitmap, error) {
	if i < 0 || i >= len(r.tasks) {
		return nil, fmt.Errorf("read task %d: the reader has %d tasks", i, len(r.tasks))
	}
	t := &r.tasks[i]
	r.mu.Lock()
	again := r.read[i]
	r.read[i] = true
	r.mu.Unlock()
	path := t.File.Entry.DataFile.FilePath
	if again {
		return nil, fmt.Errorf("read data file %s: task %d was already read", path, i)
	}
	defer r.l.release(t.Deletes)
	bm, err := r.l.positions(ctx, t.File, t.Deletes)
	if err != nil {
		return nil, fmt.Errorf("read deletes of %s: %w", path, err)
	}
	eqs, err := r.l.equality(ctx, t.Deletes)
	if err != nil {
		return nil, fmt.Errorf("read deletes of %s: %w", path, err)
	}
	if len(eqs) == 0 {
		return bm, nil
	}
	if bm == nil {
		bm = roaring64.New()
	}
	if err := equalityDeleted(ctx, r.l, r.md, t.File, eqs, bm); err != nil {
		return nil, fmt.Errorf("read data file %s: %w", path, err)
	}
	return bm, nil
}

// equalityDeleted adds to deleted the positions of entry's rows an
// equality delete of eqs matches (rows deleted already are not looked up).
func equalityDeleted(ctx context.Context, l *deleteLoader, md *spec.TableMetadata, entry table.FileEntry, eqs []*eqFile, deleted *roaring64.Bitmap) error {
	df := &entry.Entry.DataFile
	readSchema, _, err := withEqualityColumns(md, &spec.Schema{}, eqs)
	if err != nil {
		return err
	}
	consts, err := table.IdentityConstants(md, df)
	if err != nil {
		return err
	}
	f, err := l.fio.Open(ctx, df.FilePath)
	if err != nil {
		return err
	}
	defer f.Close()
	rd, err := datafile.OpenReader(ctx, f, f.Size(), datafile.ReadOptions{Schema: readSchema, NameMapping: l.nm, Stored: df.StoredColumns(), Constants: consts})
	if err != nil {
		return err
	}
	defer rd.Close()
	if rd.NumRows() != df.RecordCount {
		return fmt.Errorf("file has %d rows but its manifest entry says %d", rd.NumRows(), df.RecordCount)
	}
	byID := map[int]int{}
	for j, fld := range rd.Schema().Fields() {
		id, err := fieldID(fld)
		if err != nil {
			return err
		}
		byID[id] = j
	}
	groups, err := groupEqualityDeletes(eqs, byID)
	if err != nil {
		return err
	}
	flt := &filter{deleted: deleted, groups: groups}
	var pos int64
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		keep, _, err := flt.keep(rec, pos)
		n := rec.NumRows()
		rec.Release()
		if err != nil {
			return err
		}
		for j, k := range keep {
			if !k {
				deleted.Add(uint64(pos + int64(j)))
			}
		}
		pos += n
	}
}
