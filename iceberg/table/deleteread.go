package table

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/puffin"
)

// ReadDV reads exactly the blob of the deletion vector df describes and
// checks its cardinality against the entry's record_count: a DV that
// disagrees with its manifest entry is refused, never guessed at.
func ReadDV(ctx context.Context, fio fileio.FileIO, df *manifest.DataFile) (*roaring64.Bitmap, error) {
	if df.ContentOffset == nil || df.ContentSizeInBytes == nil {
		return nil, fmt.Errorf("deletion vector in %s has no content offset or size", df.FilePath)
	}
	off, n := *df.ContentOffset, *df.ContentSizeInBytes
	if off < 0 || n <= 0 || n > 1<<31 {
		return nil, fmt.Errorf("deletion vector %s: bad blob range offset %d length %d", KeyOf(df), off, n)
	}
	f, err := fio.Open(ctx, df.FilePath)
	if err != nil {
		return nil, fmt.Errorf("open deletion vector file: %w", err)
	}
	defer f.Close()
	if off+n > f.Size() {
		return nil, fmt.Errorf("deletion vector %s: blob [%d, %d) is past the end of the %d-byte file", KeyOf(df), off, off+n, f.Size())
	}
	blob := make([]byte, n)
	if _, err := f.ReadAt(blob, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read deletion vector %s: %w", KeyOf(df), err)
	}
	bm, err := puffin.DecodeDVWithCardinality(blob, df.RecordCount)
	if err != nil {
		return nil, fmt.Errorf("deletion vector %s: %w", KeyOf(df), err)
	}
	return bm, nil
}

// ReadPositionDeletes reads the position-delete file df and returns its
// positions by data file path, for the paths keep accepts (nil keeps
// all). keep is called once per run of a path (rows are sorted by path);
// an error from it stops the read. Rows of a file-scoped file
// (referenced_data_file set) for another data file are skipped: they
// would be a writer's bug and must not delete anything.
func ReadPositionDeletes(ctx context.Context, fio fileio.FileIO, df *manifest.DataFile, keep func(path string) (bool, error)) (map[string]*roaring64.Bitmap, error) {
	f, err := fio.Open(ctx, df.FilePath)
	if err != nil {
		return nil, fmt.Errorf("open position deletes: %w", err)
	}
	defer f.Close()
	out := map[string]*roaring64.Bitmap{}
	var started bool
	var last string
	var cur *roaring64.Bitmap
	err = datafile.ReadPositionDeletes(ctx, f, f.Size(), func(path string, pos int64) error {
		if df.ReferencedDataFile != nil && path != *df.ReferencedDataFile {
			return nil
		}
		if pos < 0 {
			return fmt.Errorf("negative position %d for %s", pos, path)
		}
		if !started || path != last {
			// path aliases the reader's batch: a copy keeps the map from
			// holding every batch of the file in memory.
			started, last, cur = true, strings.Clone(path), nil
			ok := true
			if keep != nil {
				var err error
				if ok, err = keep(last); err != nil {
					return err
				}
			}
			if ok {
				cur = out[last]
				if cur == nil {
					cur = roaring64.New()
					out[last] = cur
				}
			}
		}
		if cur != nil {
			cur.Add(uint64(pos))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("position deletes %s: %w", df.FilePath, err)
	}
	return out, nil
}
