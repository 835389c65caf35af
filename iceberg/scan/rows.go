package scan

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// batchBuffer is how many batches a data file read ahead may hold while
// an earlier file is still being passed to fn.
const batchBuffer = 2

// Rows reads every live data file of snap with the deletes that apply to
// it and calls fn with the surviving rows, in the schema Schema(md, opts)
// describes. Files are read opts.Concurrency at a time, but fn is called
// from one goroutine, in manifest order then file order, so the output is
// the same whatever the concurrency. A batch is released when fn returns;
// fn must Retain what it keeps. An error from fn stops the scan and is
// returned. A nil snap (a table without snapshots) has no rows.
func Rows(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, snap *spec.Snapshot, opts Options, fn func(rec arrow.RecordBatch) error) error {
	if snap == nil {
		return nil
	}
	fs, err := table.LiveFiles(ctx, fio, snap)
	if err != nil {
		return fmt.Errorf("scan snapshot %d: %w", snap.SnapshotID, err)
	}
	if err := scanFiles(ctx, fio, md, fs, opts, fn); err != nil {
		return fmt.Errorf("scan snapshot %d: %w", snap.SnapshotID, err)
	}
	return nil
}

type fileResult struct {
	rec arrow.RecordBatch
	err error
}

func scanFiles(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, fs *table.FileSet, opts Options, fn func(rec arrow.RecordBatch) error) error {
	ix := table.DeletesForTable(md, fs)
	tasks := make([]FileTask, len(fs.Data))
	for i, d := range fs.Data {
		tasks[i] = FileTask{File: d, Deletes: ix.For(d)}
	}
	r, err := NewFileReader(fio, md, tasks)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	outs := make([]chan fileResult, len(fs.Data))
	for i := range outs {
		outs[i] = make(chan fileResult, batchBuffer)
	}
	slots := make(chan struct{}, opts.concurrency())
	// Workers start in file order, so the file the consumer waits for has
	// always been started: read-ahead blocks on its buffer, never the
	// reverse.
	go func() {
		for i := range fs.Data {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go func() {
				defer close(outs[i])
				err := r.Read(ctx, i, opts, func(rec arrow.RecordBatch) error {
					rec.Retain()
					select {
					case outs[i] <- fileResult{rec: rec}:
						return nil
					case <-ctx.Done():
						rec.Release()
						return ctx.Err()
					}
				})
				if err != nil {
					select {
					case outs[i] <- fileResult{err: err}:
					case <-ctx.Done():
					}
				}
			}()
		}
	}()
	for i := range fs.Data {
		if err := drain(ctx, outs[i], fn); err != nil {
			// Workers blocked on a full buffer see the cancellation and
			// stop; batches left queued are Go memory the GC reclaims.
			return err
		}
		<-slots
	}
	return nil
}

func drain(ctx context.Context, ch <-chan fileResult, fn func(rec arrow.RecordBatch) error) error {
	for {
		var r fileResult
		var ok bool
		select {
		case r, ok = <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !ok {
			return nil
		}
		if r.err != nil {
			return r.err
		}
		err := fn(r.rec)
		r.rec.Release()
		if err != nil {
			return err
		}
	}
}
