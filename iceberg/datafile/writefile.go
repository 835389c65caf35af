package datafile

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// WriteFile writes recs as one Parquet file of schema s (with the table
// properties props) at path through fio, and returns it described as a
// data file of a manifest entry; its spec id and partition are the
// caller's to set. Nothing is visible at path unless it returns nil.
func WriteFile(ctx context.Context, fio fileio.FileIO, path string, s *spec.Schema, props map[string]string, recs ...arrow.RecordBatch) (manifest.DataFile, error) {
	w, err := fio.Create(ctx, path)
	if err != nil {
		return manifest.DataFile{}, err
	}
	pw, err := NewWriter(w, s, props)
	if err != nil {
		w.Abort()
		return manifest.DataFile{}, fmt.Errorf("write %s: %w", path, err)
	}
	for _, rec := range recs {
		if err := pw.Write(rec); err != nil {
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
	return m.DataFile(path, pw.BytesWritten()), nil
}

// DataFile describes a Parquet data file of size bytes at path with
// these metrics, as a manifest entry lists it (spec id, partition and sort
// order are left to the caller).
func (m Metrics) DataFile(path string, size int64) manifest.DataFile {
	return manifest.DataFile{
		Content: manifest.ContentData, FilePath: path, FileFormat: "PARQUET",
		RecordCount: m.RecordCount, FileSizeInBytes: size,
		ColumnSizes: m.ColumnSizes, ValueCounts: m.ValueCounts, NullValueCounts: m.NullValueCounts,
		NaNValueCounts: m.NaNValueCounts, LowerBounds: m.LowerBounds, UpperBounds: m.UpperBounds,
		SplitOffsets: m.SplitOffsets,
	}
}
