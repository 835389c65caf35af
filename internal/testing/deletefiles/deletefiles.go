// Package deletefiles writes position-delete files and deletion vectors
// for a table's data files, with the manifest entries that describe them.
// Tests of the table, scan and compaction packages build their fixtures
// with it; it must never decide which deletes a commit needs, only write
// the ones it is given.
package deletefiles

import (
	"context"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/puffin"
)

// WritePositionDeletes writes a v2 position-delete file at path holding
// deletes (data file path -> positions), sorted as the spec requires. With
// scoped and a single data file, the entry names it as
// referenced_data_file. The entry has the given partition tuple.
func WritePositionDeletes(ctx context.Context, fio fileio.FileIO, path string, partition []any, deletes map[string][]int64, scoped bool) (manifest.DataFile, error) {
	w, err := fio.Create(ctx, path)
	if err != nil {
		return manifest.DataFile{}, err
	}
	cw := &fileio.CountingWriter{W: w}
	pw, err := datafile.NewPositionDeleteWriter(cw, nil)
	if err != nil {
		w.Abort()
		return manifest.DataFile{}, err
	}
	files := make([]string, 0, len(deletes))
	for f := range deletes {
		files = append(files, f)
	}
	slices.Sort(files)
	var n int64
	for _, f := range files {
		ps := slices.Clone(deletes[f])
		slices.Sort(ps)
		for _, p := range ps {
			if err := pw.Write(f, p); err != nil {
				w.Abort()
				return manifest.DataFile{}, fmt.Errorf("write %s: %w", path, err)
			}
			n++
		}
	}
	if _, err := pw.Close(); err != nil {
		w.Abort()
		return manifest.DataFile{}, fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return manifest.DataFile{}, fmt.Errorf("close %s: %w", path, err)
	}
	df := manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: path, FileFormat: "PARQUET",
		Partition: partition, RecordCount: n, FileSizeInBytes: cw.N}
	if scoped && len(files) == 1 {
		df.ReferencedDataFile = &files[0]
	}
	return df, nil
}

// WriteDVs writes one Puffin file at path holding a deletion vector per
// data file of deletes, and returns one manifest entry per DV.
func WriteDVs(ctx context.Context, fio fileio.FileIO, path string, partition []any, deletes map[string][]int64) ([]manifest.DataFile, error) {
	dvs := make([]puffin.DV, 0, len(deletes))
	for f, ps := range deletes {
		bm := roaring64.New()
		for _, p := range ps {
			bm.Add(uint64(p))
		}
		dvs = append(dvs, puffin.DV{ReferencedDataFile: f, Positions: bm})
	}
	w, err := fio.Create(ctx, path)
	if err != nil {
		return nil, err
	}
	blobs, size, err := puffin.WriteDVs(w, dvs, nil)
	if err != nil {
		w.Abort()
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("close %s: %w", path, err)
	}
	out := make([]manifest.DataFile, 0, len(blobs))
	for _, b := range blobs {
		ref, off, n := b.ReferencedDataFile, b.Offset, b.Length
		out = append(out, manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: path, FileFormat: "PUFFIN",
			Partition: partition, RecordCount: b.Cardinality, FileSizeInBytes: size,
			ReferencedDataFile: &ref, ContentOffset: &off, ContentSizeInBytes: &n})
	}
	return out, nil
}
