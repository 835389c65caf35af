package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// deleteLoader reads the delete files of a FileReader's tasks, each at
// most once while it is in use: a partition-scoped position-delete file or
// an equality-delete file applies to many data files. An entry is dropped
// once the last task it applies to is done, so memory holds only the
// deletes of the tasks still to read.
type deleteLoader struct {
	fio fileio.FileIO
	md  *spec.TableMetadata
	nm  datafile.NameMapping
	// data holds the data file paths of the tasks: a position-delete file
	// is indexed for those only, since no other file is read through the
	// loader.
	data map[string]bool

	mu   sync.Mutex
	pos  map[string]*posFile
	eq   map[string]*eqFile
	refs map[string]int // tasks not yet done, per delete file path
}

// posFile is a position-delete file indexed by data file path.
type posFile struct {
	once   sync.Once
	byFile map[string]*roaring64.Bitmap
	err    error
}

// eqFile is an equality-delete file: the keys of its rows over ids.
type eqFile struct {
	once sync.Once
	ids  []int
	keys map[string]struct{}
	err  error
}

func newDeleteLoader(fio fileio.FileIO, md *spec.TableMetadata, tasks []FileTask) (*deleteLoader, error) {
	nm, err := nameMapping(md)
	if err != nil {
		return nil, err
	}
	l := &deleteLoader{fio: fio, md: md, nm: nm, data: make(map[string]bool, len(tasks)),
		pos: map[string]*posFile{}, eq: map[string]*eqFile{}, refs: map[string]int{}}
	for _, t := range tasks {
		l.data[t.File.Entry.DataFile.FilePath] = true
		for _, d := range t.Deletes.PositionDeletes {
			l.refs[d.Entry.DataFile.FilePath]++
		}
		for _, d := range t.Deletes.EqualityDeletes {
			l.refs[d.Entry.DataFile.FilePath]++
		}
	}
	return l, nil
}

// release counts a task done and drops the delete files no remaining task
// needs.
func (l *deleteLoader) release(a table.Applicable) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, list := range [][]table.FileEntry{a.PositionDeletes, a.EqualityDeletes} {
		for _, d := range list {
			p := d.Entry.DataFile.FilePath
			if l.refs[p]--; l.refs[p] <= 0 {
				delete(l.refs, p)
				delete(l.pos, p)
				delete(l.eq, p)
			}
		}
	}
}

// positions returns the deleted positions of the data file data: its DV,
// or the union of its position-delete files. Nil when none apply.
func (l *deleteLoader) positions(ctx context.Context, data table.FileEntry, a table.Applicable) (*roaring64.Bitmap, error) {
	if a.DV != nil {
		return l.readDV(ctx, a.DV)
	}
	if len(a.PositionDeletes) == 0 {
		return nil, nil
	}
	out := roaring64.New()
	for _, d := range a.PositionDeletes {
		pf := l.posFile(d.Entry.DataFile.FilePath)
		pf.once.Do(func() { pf.byFile, pf.err = l.readPositionDeletes(ctx, d) })
		if pf.err != nil {
			return nil, pf.err
		}
		if bm := pf.byFile[data.Entry.DataFile.FilePath]; bm != nil {
			out.Or(bm)
		}
	}
	return out, nil
}

func (l *deleteLoader) posFile(path string) *posFile {
	l.mu.Lock()
	defer l.mu.Unlock()
	pf := l.pos[path]
	if pf == nil {
		pf = &posFile{}
		l.pos[path] = pf
	}
	return pf
}

func (l *deleteLoader) eqFile(path string) *eqFile {
	l.mu.Lock()
	defer l.mu.Unlock()
	ef := l.eq[path]
	if ef == nil {
		ef = &eqFile{}
		l.eq[path] = ef
	}
	return ef
}

// readDV reads exactly the DV's blob and checks its cardinality against
// the manifest's record count.
func (l *deleteLoader) readDV(ctx context.Context, dv *table.FileEntry) (*roaring64.Bitmap, error) {
	return table.ReadDV(ctx, l.fio, &dv.Entry.DataFile)
}

// readPositionDeletes indexes a position-delete file by data file path,
// for the loader's data files only.
func (l *deleteLoader) readPositionDeletes(ctx context.Context, d table.FileEntry) (map[string]*roaring64.Bitmap, error) {
	return table.ReadPositionDeletes(ctx, l.fio, &d.Entry.DataFile, func(path string) (bool, error) {
		return l.data[path], nil
	})
}

// equality returns the loaded equality-delete files that apply.
func (l *deleteLoader) equality(ctx context.Context, a table.Applicable) ([]*eqFile, error) {
	out := make([]*eqFile, 0, len(a.EqualityDeletes))
	for _, d := range a.EqualityDeletes {
		ef := l.eqFile(d.Entry.DataFile.FilePath)
		ef.once.Do(func() { ef.ids, ef.keys, ef.err = l.readEqualityDeletes(ctx, d) })
		if ef.err != nil {
			return nil, ef.err
		}
		out = append(out, ef)
	}
	return out, nil
}

// readEqualityDeletes reads the equality columns of a delete file, typed by
// the table's schema, into a set of row keys.
func (l *deleteLoader) readEqualityDeletes(ctx context.Context, d table.FileEntry) ([]int, map[string]struct{}, error) {
	df := &d.Entry.DataFile
	if len(df.EqualityIDs) == 0 {
		return nil, nil, fmt.Errorf("equality deletes %s have no equality field ids", df.FilePath)
	}
	ids := slices.Clone(df.EqualityIDs)
	schema := &spec.Schema{}
	for _, id := range ids {
		fld, err := topField(l.md, id)
		if err != nil {
			return nil, nil, fmt.Errorf("equality deletes %s: %w", df.FilePath, err)
		}
		if !isPrimitive(fld.Type) {
			return nil, nil, fmt.Errorf("equality deletes %s: field %d (%s) is not primitive", df.FilePath, id, fld.Name)
		}
		fld.Required = false // a delete row may hold null to match nulls
		schema.Fields = append(schema.Fields, fld)
	}
	f, err := l.fio.Open(ctx, df.FilePath)
	if err != nil {
		return nil, nil, fmt.Errorf("open equality deletes: %w", err)
	}
	defer f.Close()
	rd, err := datafile.OpenReader(ctx, f, f.Size(), datafile.ReadOptions{Schema: schema, NameMapping: l.nm})
	if err != nil {
		return nil, nil, fmt.Errorf("equality deletes %s: %w", df.FilePath, err)
	}
	defer rd.Close()
	keys := map[string]struct{}{}
	var buf []byte
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return ids, keys, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("equality deletes %s: %w", df.FilePath, err)
		}
		cols := rec.Columns()
		for i := range int(rec.NumRows()) {
			buf = buf[:0]
			for _, c := range cols {
				if buf, err = appendKey(buf, c, i); err != nil {
					rec.Release()
					return nil, nil, fmt.Errorf("equality deletes %s: %w", df.FilePath, err)
				}
			}
			keys[string(buf)] = struct{}{}
		}
		rec.Release()
	}
}

func isPrimitive(t spec.Type) bool {
	switch t.(type) {
	case *spec.StructType, *spec.ListType, *spec.MapType:
		return false
	}
	return true
}

// idsKey names a set of equality ids, to share key computation between
// delete files with the same columns.
func idsKey(ids []int) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(id))
	}
	return b.String()
}
