package icebergread

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// BareResult is what a bare arrow-go read and write of a table's data
// files did: the floor a compaction is measured against.
type BareResult struct {
	Files   int     `json:"files"`
	Rows    int64   `json:"rows"`
	Seconds float64 `json:"seconds"`
	RowsPS  float64 `json:"rows_per_second"`
}

// BareRewrite reads every live data file of req.Table (local files only)
// with pqarrow and writes all their rows to out, zstd, buffered into
// 1M-row groups: no deletes, no metrics, no commit. Only the reading and
// writing is timed, not the planning.
func BareRewrite(ctx context.Context, req ScanRequest, out string) (*BareResult, error) {
	tbl, closeCat, err := loadTable(ctx, req)
	if err != nil {
		return nil, err
	}
	defer closeCat()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", req.Table, err)
	}
	if len(tasks) == 0 {
		return nil, errors.New("table has no data files")
	}
	start := time.Now()
	f, err := os.Create(out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithMaxRowGroupLength(1<<20), parquet.WithAllocator(memory.DefaultAllocator))
	var w *pqarrow.FileWriter
	res := &BareResult{Files: len(tasks)}
	for _, t := range tasks {
		path := strings.TrimPrefix(t.File.FilePath(), "file://")
		pf, err := file.OpenParquetFile(path, false)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
		if err != nil {
			pf.Close()
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		rr, err := fr.GetRecordReader(ctx, nil, nil)
		if err != nil {
			pf.Close()
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		for {
			rec, err := rr.Read()
			if errors.Is(err, io.EOF) || (err == nil && rec == nil) {
				break
			}
			if err != nil {
				rr.Release()
				pf.Close()
				return nil, fmt.Errorf("read %s: %w", path, err)
			}
			if w == nil {
				if w, err = pqarrow.NewFileWriter(rec.Schema(), f, props, pqarrow.DefaultWriterProps()); err != nil {
					return nil, err
				}
			}
			if err := w.WriteBuffered(rec); err != nil {
				return nil, fmt.Errorf("write: %w", err)
			}
			res.Rows += rec.NumRows()
		}
		rr.Release()
		pf.Close()
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	res.Seconds = time.Since(start).Seconds()
	res.RowsPS = float64(res.Rows) / res.Seconds
	return res, nil
}
