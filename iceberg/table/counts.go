package table

import (
	"context"
	"fmt"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
)

// hasCounts reports whether the manifest list gave all six file and row
// counts of mf; v1 lists may leave them out, v2 and v3 lists require them.
func hasCounts(mf manifest.ManifestFile) bool {
	return mf.AddedFilesCount != nil && mf.ExistingFilesCount != nil && mf.DeletedFilesCount != nil &&
		mf.AddedRowsCount != nil && mf.ExistingRowsCount != nil && mf.DeletedRowsCount != nil
}

// ManifestCounts reads the manifest mf and returns it with the file and
// row counts of its entries by status, as Java's snapshot producer fills
// them in for a manifest carried over from a v1 list without them.
func ManifestCounts(ctx context.Context, fio fileio.FileIO, mf manifest.ManifestFile) (manifest.ManifestFile, error) {
	var files [3]int32
	var rows [3]int64
	err := ReadManifest(ctx, fio, mf, true, func(e FileEntry) error {
		s := e.Entry.Status
		if s != manifest.StatusExisting && s != manifest.StatusAdded && s != manifest.StatusDeleted {
			return fmt.Errorf("entry %s has status %d", e.Entry.DataFile.FilePath, s)
		}
		files[s]++
		rows[s] += e.Entry.DataFile.RecordCount
		return nil
	})
	if err != nil {
		return manifest.ManifestFile{}, fmt.Errorf("count the entries of manifest %s: %w", mf.Path, err)
	}
	a, x, d := manifest.StatusAdded, manifest.StatusExisting, manifest.StatusDeleted
	mf.AddedFilesCount, mf.ExistingFilesCount, mf.DeletedFilesCount = &files[a], &files[x], &files[d]
	mf.AddedRowsCount, mf.ExistingRowsCount, mf.DeletedRowsCount = &rows[a], &rows[x], &rows[d]
	return mf, nil
}

// withCounts gives every manifest of mfs its counts, reading those the
// list left out once per producer (a retry reuses them).
func (p *producer) withCounts(ctx context.Context, fio fileio.FileIO, mfs []manifest.ManifestFile) ([]manifest.ManifestFile, error) {
	for i, mf := range mfs {
		if hasCounts(mf) {
			continue
		}
		c, ok := p.counted[mf.Path]
		if !ok {
			var err error
			if c, err = ManifestCounts(ctx, fio, mf); err != nil {
				return nil, err
			}
			p.counted[mf.Path] = c
		}
		mfs[i] = c
	}
	return mfs, nil
}
