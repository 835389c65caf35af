package demo

import (
	"context"
	"fmt"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
)

// posDelete is one deleted row.
type posDelete struct {
	path string
	pos  int64
}

// writePositionDeletes writes rows, which must be sorted by path then pos.
func writePositionDeletes(ctx context.Context, fio fileio.FileIO, path string, props map[string]string, rows []posDelete) (manifest.DataFile, error) {
	w, err := fio.Create(ctx, path)
	if err != nil {
		return manifest.DataFile{}, err
	}
	cw := &fileio.CountingWriter{W: w}
	pw, err := datafile.NewPositionDeleteWriter(cw, props)
	if err != nil {
		w.Abort()
		return manifest.DataFile{}, fmt.Errorf("write %s: %w", path, err)
	}
	for _, d := range rows {
		if err := pw.Write(d.path, d.pos); err != nil {
			pw.Close()
			w.Abort()
			return manifest.DataFile{}, fmt.Errorf("write %s: %w", path, err)
		}
	}
	m, err := pw.Close()
	if err != nil {
		w.Abort()
		return manifest.DataFile{}, fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return manifest.DataFile{}, fmt.Errorf("write %s: %w", path, err)
	}
	df := m.DataFile(path, cw.N)
	df.Content = manifest.ContentPositionDeletes
	return df, nil
}
