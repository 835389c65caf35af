package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// fileEncoder is the part of pqarrow.FileWriter the Writer uses. Flat
// schemas get a parallelEncoder instead, which writes the same bytes.
type fileEncoder interface {
	WriteBuffered(rec arrow.RecordBatch) error
	RowGroupTotalBytesWritten() int64
	NewBufferedRowGroupChecked() error
	AppendKeyValueMetadata(key, value string) error
	Close() error
	FileMetadata() (*metadata.FileMetaData, error)
}

// newFileEncoder picks the encoder for a write schema: column-parallel when
// every column is a single Parquet leaf, pqarrow's serial one otherwise
// (nested columns need pqarrow's level builder, which it does not export).
func newFileEncoder(sc *arrow.Schema, w io.Writer, props *parquet.WriterProperties, parallel bool) (fileEncoder, error) {
	arrowProps := pqarrow.DefaultWriterProps()
	if parallel && isFlat(sc) {
		return newParallelEncoder(sc, w, props, arrowProps)
	}
	return pqarrow.NewFileWriter(sc, w, props, arrowProps)
}

func isFlat(sc *arrow.Schema) bool {
	for _, f := range sc.Fields() {
		if len(childFields(f.Type)) > 0 {
			return false
		}
	}
	return true
}

// parallelEncoder writes a Parquet file whose columns are all top-level
// leaves, encoding the column chunks of each buffered row group in one
// goroutine per column. Dictionary hashing and compression, most of a
// rewrite's cost, are per column, and pqarrow.FileWriter runs them one
// column after the other on a single core. The bytes are those
// pqarrow.FileWriter writes: same schema conversion, same column writers,
// fed the same arrays and definition levels.
type parallelEncoder struct {
	wr      *file.Writer
	rgw     file.BufferedRowGroupWriter // nil until the first row group
	rgRows  int64
	maxRows int64
	cols    []leafEncoder
	closed  bool
}

// leafEncoder is one column's state; only that column's goroutine uses it.
type leafEncoder struct {
	ctx       context.Context // arrow write context: scratch buffers, not shareable
	nullable  bool
	defLevels []int16
}

func newParallelEncoder(sc *arrow.Schema, w io.Writer, props *parquet.WriterProperties, arrowProps pqarrow.ArrowWriterProperties) (*parallelEncoder, error) {
	pqschema, err := pqarrow.ToParquet(sc, props, arrowProps)
	if err != nil {
		return nil, err
	}
	if pqschema.NumColumns() != len(sc.Fields()) {
		return nil, fmt.Errorf("internal error: %d parquet columns for %d flat arrow fields", pqschema.NumColumns(), len(sc.Fields()))
	}
	meta := make(metadata.KeyValueMetadata, 0)
	for i, k := range sc.Metadata().Keys() {
		meta.Append(k, sc.Metadata().Values()[i])
	}
	wr, err := file.NewParquetWriterWithError(w, pqschema.Root(), file.WithWriterProps(props), file.WithWriteMetadata(meta))
	if err != nil {
		return nil, err
	}
	e := &parallelEncoder{wr: wr, maxRows: props.MaxRowGroupLength(), cols: make([]leafEncoder, len(sc.Fields()))}
	for i, f := range sc.Fields() {
		e.cols[i] = leafEncoder{ctx: pqarrow.NewArrowWriteContext(context.Background(), &arrowProps), nullable: f.Nullable}
	}
	return e, nil
}

// WriteBuffered appends rec to the open row group, starting a new one when
// the row group reaches the writer properties' maximum row count, as
// pqarrow.FileWriter.WriteBuffered does.
func (e *parallelEncoder) WriteBuffered(rec arrow.RecordBatch) error {
	if e.closed {
		return errors.New("write to a closed parquet writer")
	}
	if int(rec.NumCols()) != len(e.cols) {
		return fmt.Errorf("batch has %d columns, the writer %d", rec.NumCols(), len(e.cols))
	}
	if e.rgw == nil {
		if err := e.NewBufferedRowGroupChecked(); err != nil {
			return err
		}
	}
	n := rec.NumRows()
	for off := int64(0); off < n; {
		room := e.maxRows - e.rgRows
		if room <= 0 {
			if err := e.NewBufferedRowGroupChecked(); err != nil {
				return err
			}
			continue
		}
		rows := min(room, n-off)
		if err := e.writeColumns(rec, off, rows); err != nil {
			return err
		}
		off += rows
		e.rgRows += rows
	}
	return nil
}

// writeColumns encodes rows [off, off+n) of every column concurrently and
// waits for all of them: the caller decides where row groups end from the
// bytes all columns have flushed.
func (e *parallelEncoder) writeColumns(rec arrow.RecordBatch, off, n int64) error {
	errs := make([]error, len(e.cols))
	var wg sync.WaitGroup
	for i := range e.cols {
		wg.Go(func() { errs[i] = e.writeColumn(i, rec.Column(i), off, n) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (e *parallelEncoder) writeColumn(i int, col arrow.Array, off, n int64) (err error) {
	// A panic here would not reach the caller's recover: it is this
	// goroutine's to turn into an error.
	defer recoverError(&err, fmt.Sprintf("encode parquet column %d", i))
	cw, err := e.rgw.Column(i)
	if err != nil {
		return err
	}
	if off != 0 || n != int64(col.Len()) {
		col = array.NewSlice(col, off, off+n)
		defer col.Release()
	}
	c := &e.cols[i]
	var def []int16
	if c.nullable {
		def = c.levels(col)
	}
	if err := pqarrow.WriteArrowToColumn(c.ctx, cw, col, def, nil, c.nullable); err != nil {
		return fmt.Errorf("encode parquet column %d: %w", i, err)
	}
	return nil
}

// levels are the definition levels of an optional top-level leaf: 1 for a
// value, 0 for a null (what pqarrow's level builder gives such a column).
func (c *leafEncoder) levels(col arrow.Array) []int16 {
	n := col.Len()
	if cap(c.defLevels) < n {
		c.defLevels = make([]int16, n)
	}
	def := c.defLevels[:n]
	if col.NullN() == 0 {
		for j := range def {
			def[j] = 1
		}
		return def
	}
	for j := range def {
		if col.IsValid(j) {
			def[j] = 1
		} else {
			def[j] = 0
		}
	}
	return def
}

// RowGroupTotalBytesWritten is the bytes of the open row group's flushed
// pages.
func (e *parallelEncoder) RowGroupTotalBytesWritten() int64 {
	if e.rgw == nil {
		return 0
	}
	return e.rgw.TotalBytesWritten()
}

// NewBufferedRowGroupChecked closes the open row group, if any, and starts
// another.
func (e *parallelEncoder) NewBufferedRowGroupChecked() error {
	if e.closed {
		return errors.New("write to a closed parquet writer")
	}
	if e.rgw != nil {
		if err := e.rgw.Close(); err != nil {
			return err
		}
	}
	rgw, err := e.wr.AppendBufferedRowGroupChecked()
	if err != nil {
		return err
	}
	e.rgw, e.rgRows = rgw, 0
	return nil
}

func (e *parallelEncoder) AppendKeyValueMetadata(key, value string) error {
	return e.wr.AppendKeyValueMetadata(key, value)
}

// Close flushes the open row group and writes the footer; later calls do
// nothing, as with pqarrow.FileWriter.
func (e *parallelEncoder) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	if e.rgw != nil {
		if err := e.rgw.Close(); err != nil {
			return err
		}
	}
	return e.wr.Close()
}

func (e *parallelEncoder) FileMetadata() (*metadata.FileMetaData, error) {
	return e.wr.FileMetadata()
}
