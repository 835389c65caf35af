package compact

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
)

// outputs writes the rows of one group into files of about maxSize bytes,
// all in the group's spec and partition tuple. Files are created through
// the table's FileIO and made visible (Close) before any commit refers to
// them; on failure the open file is aborted and finished ones removed.
type outputs struct {
	ctx         context.Context
	fio         fileio.FileIO
	md          *spec.TableMetadata // the table the outputs are for: what bounds their removal
	schema      *spec.Schema
	props       map[string]string
	dir         string
	prefix      string
	maxSize     int64
	bytesPerRow float64 // estimate of a row's encoded size, for rows still buffered
	specID      int32
	partition   []any
	sortOrderID *int32
	// rowIDsAssigned: every input has a first_row_id, so a transcoded
	// output's row ids are never null (datafile.Transcoder.DeltaRowIDs).
	rowIDsAssigned bool

	cur  *openFile
	n    int
	done []manifest.DataFile
	// fan, when set, routes rows to outputs of their own partitions in
	// another spec (repartition.go); finish moves their files to done.
	fan *repartitioner
}

type openFile struct {
	path       string
	w          fileio.Writer
	cw         *fileio.CountingWriter
	pw         *datafile.Writer
	rows       int64
	seenBytes  int64 // bytes flushed when last looked at
	rowsAtSeen int64 // rows written when the flushed size last grew
}

// newOutputs starts a group's outputs. Their names begin with namePrefix
// followed by a fresh random part: a sharded run names them by plan and
// group (executor.groupPrefix) so its committer finds every file a group's
// attempts left; "" names them by the random part alone.
func newOutputs(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, schema *spec.Schema, dir, namePrefix string, maxSize int64, bytesPerRow float64, specID int32, partition []any) *outputs {
	prefix := uuid.NewString()
	if namePrefix != "" {
		prefix = namePrefix + prefix[:8]
	}
	return &outputs{ctx: ctx, fio: fio, md: md, schema: schema, props: md.Properties, dir: dir, prefix: prefix,
		maxSize: maxSize, bytesPerRow: bytesPerRow, specID: specID, partition: partition}
}

// create starts the group's next output file.
func (o *outputs) create() (string, fileio.Writer, *fileio.CountingWriter, error) {
	o.n++
	path := fmt.Sprintf("%s/%s-%05d.parquet", o.dir, o.prefix, o.n)
	w, err := o.fio.Create(o.ctx, path)
	if err != nil {
		return "", nil, nil, fmt.Errorf("create output %s: %w", path, err)
	}
	return path, w, &fileio.CountingWriter{W: w}, nil
}

func (o *outputs) open() error {
	path, w, cw, err := o.create()
	if err != nil {
		return err
	}
	pw, err := datafile.NewWriter(cw, o.schema, o.props)
	if err != nil {
		w.Abort()
		return fmt.Errorf("write output %s: %w", path, err)
	}
	o.cur = &openFile{path: path, w: w, cw: cw, pw: pw}
	return nil
}

// write appends rec to the current file and starts a new one once the
// current one reaches maxSize: flushed bytes plus an estimate for the rows
// still buffered in the open row group.
func (o *outputs) write(rec arrow.RecordBatch) error {
	if o.fan != nil {
		return o.fan.write(rec)
	}
	if o.cur == nil {
		if err := o.open(); err != nil {
			return err
		}
	}
	f := o.cur
	if err := f.pw.Write(rec); err != nil {
		return fmt.Errorf("write output %s: %w", f.path, err)
	}
	f.rows += rec.NumRows()
	if f.cw.N != f.seenBytes {
		f.seenBytes, f.rowsAtSeen = f.cw.N, f.rows
	}
	if f.cw.N+int64(float64(f.rows-f.rowsAtSeen)*o.bytesPerRow) >= o.maxSize {
		return o.finish()
	}
	return nil
}

// finish closes the current file, if any, and records it.
func (o *outputs) finish() error {
	if o.fan != nil {
		for _, k := range o.fan.order {
			kid := o.fan.kids[k]
			err := kid.finish()
			o.done = append(o.done, kid.done...)
			kid.done = nil
			if err != nil {
				return err
			}
		}
		return nil
	}
	f := o.cur
	if f == nil {
		return nil
	}
	o.cur = nil
	return o.seal(f.path, f.w, f.cw, f.pw.Close)
}

// seal finishes an output with closeData (which writes the Parquet footer
// and returns the metrics), makes it visible and records it; on failure
// the file is discarded.
func (o *outputs) seal(path string, w fileio.Writer, cw *fileio.CountingWriter, closeData func() (datafile.Metrics, error)) error {
	m, err := closeData()
	if err != nil {
		w.Abort()
		return fmt.Errorf("write output %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("close output %s: %w", path, err)
	}
	o.record(path, cw.N, m)
	return nil
}

// record adds a closed, visible output file to the finished ones.
func (o *outputs) record(path string, size int64, m datafile.Metrics) {
	df := m.DataFile(path, size)
	df.SpecID, df.Partition, df.SortOrderID = o.specID, append([]any(nil), o.partition...), o.sortOrderID
	o.done = append(o.done, df)
}

// abort discards the open file and removes the finished ones; it uses a
// context that outlives cancellation so a cancelled run still cleans up
// what it alone knows about.
func (o *outputs) abort() error {
	var errs []error
	if o.fan != nil {
		for _, k := range o.fan.order {
			errs = append(errs, o.fan.kids[k].abort())
		}
	}
	if f := o.cur; f != nil {
		o.cur = nil
		f.pw.Close()
		errs = append(errs, f.w.Abort())
	}
	errs = append(errs, removeFiles(o.ctx, o.fio, o.md, o.done))
	o.done = nil
	return errors.Join(errs...)
}

// removeFiles deletes outputs no commit refers to, through the guard.
func removeFiles(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, files []manifest.DataFile) error {
	paths := make([]string, len(files))
	for i := range files {
		paths[i] = files[i].FilePath
	}
	return reclaim.DeleteWritten(ctx, fio, md, paths)
}
