package table

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// Resurrection is a data file whose deletion vector lacks positions that
// an older delete of the same file deleted. Readers apply only the newest
// DV of a data file and ignore its position-delete files, so those rows
// are visible again although the table's history deleted them. A writer
// that adds a DV without folding in the existing position deletes (as
// iceberg-go v0.7.0 does after a v2-to-v3 upgrade) leaves this behind.
type Resurrection struct {
	DataFile FileEntry
	// DV is the deletion vector readers apply.
	DV FileEntry
	// Positions are the positions deleted by Sources but not by DV, below
	// the data file's record count (larger ones delete nothing).
	Positions *roaring64.Bitmap
	// Sources are the position-delete files (and older DVs of the same
	// data file) holding those positions, in key order.
	Sources []FileKey
}

// Count is the number of resurrected positions.
func (r Resurrection) Count() int64 { return int64(r.Positions.GetCardinality()) }

// First returns up to n of the resurrected positions, ascending.
func (r Resurrection) First(n int) []int64 {
	out := make([]int64, 0, min(uint64(n), r.Positions.GetCardinality()))
	it := r.Positions.Iterator()
	for it.HasNext() && len(out) < n {
		out = append(out, int64(it.Next()))
	}
	return out
}

// Lost returns the positions of sources (each a delete file's positions
// for one data file) that dv lacks, below recordCount, and the keys of
// the sources holding any of them, sorted. It is the one rule both
// finding and repairing resurrected rows use.
func Lost(dv *roaring64.Bitmap, sources map[FileKey]*roaring64.Bitmap, recordCount int64) (*roaring64.Bitmap, []FileKey) {
	lost := roaring64.New()
	var keys []FileKey
	for k, bm := range sources {
		diff := roaring64.AndNot(bm, dv)
		if recordCount >= 0 {
			diff.RemoveRange(uint64(recordCount), ^uint64(0))
			diff.Remove(^uint64(0))
		}
		if diff.IsEmpty() {
			continue
		}
		lost.Or(diff)
		keys = append(keys, k)
	}
	sortKeys(keys)
	return lost, keys
}

func sortKeys(keys []FileKey) {
	slices.SortFunc(keys, func(a, b FileKey) int {
		if c := cmp.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return cmp.Compare(a.ContentOffset, b.ContentOffset)
	})
}

// FindResurrected returns the resurrected rows of snap's live data files
// (see Resurrection), ordered by data file path. It reads only the DVs of
// data files that also have position-delete files or other DVs, and each
// such position-delete file once. It never writes.
func FindResurrected(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, snap *spec.Snapshot) ([]Resurrection, error) {
	if snap == nil {
		return nil, nil
	}
	fs, err := LiveFiles(ctx, fio, snap)
	if err != nil {
		return nil, err
	}
	return FindResurrectedIn(ctx, fio, md, fs)
}

// FindResurrectedIn is FindResurrected over the live files fs.
func FindResurrectedIn(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, fs *FileSet) ([]Resurrection, error) {
	ix := DeletesForTable(md, fs)
	type job struct {
		data FileEntry
		c    Candidates
	}
	var jobs []job
	wanted := map[string]map[string]bool{} // position-delete file -> data files
	posFiles := map[string]FileEntry{}
	for _, d := range fs.Data {
		c := ix.Candidates(d)
		if len(c.DVs) == 0 || (len(c.PositionDeletes) == 0 && len(c.DVs) < 2) {
			continue
		}
		jobs = append(jobs, job{d, c})
		for _, p := range c.PositionDeletes {
			path := p.Entry.DataFile.FilePath
			if wanted[path] == nil {
				wanted[path] = map[string]bool{}
				posFiles[path] = p
			}
			wanted[path][d.Entry.DataFile.FilePath] = true
		}
	}
	read := make(map[string]map[string]*roaring64.Bitmap, len(posFiles))
	for path, p := range posFiles {
		want := wanted[path]
		bms, err := ReadPositionDeletes(ctx, fio, &p.Entry.DataFile, func(dp string) (bool, error) { return want[dp], nil })
		if err != nil {
			return nil, err
		}
		read[path] = bms
	}
	var out []Resurrection
	for _, j := range jobs {
		dataPath := j.data.Entry.DataFile.FilePath
		newest := j.c.DVs[len(j.c.DVs)-1]
		dv, err := ReadDV(ctx, fio, &newest.Entry.DataFile)
		if err != nil {
			return nil, err
		}
		sources := map[FileKey]*roaring64.Bitmap{}
		for _, old := range j.c.DVs[:len(j.c.DVs)-1] {
			bm, err := ReadDV(ctx, fio, &old.Entry.DataFile)
			if err != nil {
				return nil, err
			}
			sources[old.Key()] = bm
		}
		for _, p := range j.c.PositionDeletes {
			if bm := read[p.Entry.DataFile.FilePath][dataPath]; bm != nil {
				sources[p.Key()] = bm
			}
		}
		lost, keys := Lost(dv, sources, j.data.Entry.DataFile.RecordCount)
		if lost.IsEmpty() {
			continue
		}
		out = append(out, Resurrection{DataFile: j.data, DV: newest, Positions: lost, Sources: keys})
	}
	slices.SortFunc(out, func(a, b Resurrection) int {
		return cmp.Compare(a.DataFile.Entry.DataFile.FilePath, b.DataFile.Entry.DataFile.FilePath)
	})
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("find resurrected rows: %w", err)
	}
	return out, nil
}
