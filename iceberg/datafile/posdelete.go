package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/spec"
)

// PositionDeleteSchema is the schema of a v2 position-delete file, with the
// reserved field ids and names.
func PositionDeleteSchema() *spec.Schema {
	return &spec.Schema{Fields: []spec.NestedField{
		{ID: spec.FieldIDFilePath, Name: spec.PositionDeleteFilePathColumnName, Type: spec.StringType{}, Required: true},
		{ID: spec.FieldIDPos, Name: spec.PositionDeletePosColumnName, Type: spec.LongType{}, Required: true},
	}}
}

// positionDeleteMapping finds the two columns by name in a delete file
// written without field ids.
func positionDeleteMapping() NameMapping {
	fp, pos := spec.FieldIDFilePath, spec.FieldIDPos
	return NameMapping{
		{FieldID: &fp, Names: []string{spec.PositionDeleteFilePathColumnName}},
		{FieldID: &pos, Names: []string{spec.PositionDeletePosColumnName}},
	}
}

// ReadPositionDeletes streams the (file_path, pos) rows of a position-delete
// file to fn, in file order. An error from fn stops the read and is
// returned.
func ReadPositionDeletes(ctx context.Context, r io.ReaderAt, size int64, fn func(filePath string, pos int64) error) error {
	rd, err := OpenReader(ctx, r, size, ReadOptions{Schema: PositionDeleteSchema(), NameMapping: positionDeleteMapping()})
	if err != nil {
		return fmt.Errorf("read position deletes: %w", err)
	}
	defer rd.Close()
	var row int64
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read position deletes: %w", err)
		}
		paths, ok1 := rec.Column(0).(*array.String)
		poss, ok2 := rec.Column(1).(*array.Int64)
		if !ok1 || !ok2 {
			rec.Release()
			return fmt.Errorf("read position deletes: unexpected column types %s, %s", rec.Column(0).DataType(), rec.Column(1).DataType())
		}
		for i := range int(rec.NumRows()) {
			if paths.IsNull(i) || poss.IsNull(i) {
				rec.Release()
				return fmt.Errorf("read position deletes: row %d has a null file_path or pos", row+int64(i))
			}
			if err := fn(paths.Value(i), poss.Value(i)); err != nil {
				rec.Release()
				return err
			}
		}
		row += rec.NumRows()
		rec.Release()
	}
}

// PositionDeleteWriter writes a v2 position-delete file. Rows must be given
// sorted by file_path, then pos, as the spec requires; the writer checks.
type PositionDeleteWriter struct {
	w        *Writer
	paths    *array.StringBuilder
	pos      *array.Int64Builder
	n        int
	lastPath string
	lastPos  int64
	any      bool
}

// NewPositionDeleteWriter starts a position-delete file on w with the
// table's Parquet properties. Metrics are full for both columns, as Java
// writes them, so that file_path bounds say which data files it covers.
func NewPositionDeleteWriter(w io.Writer, props map[string]string) (*PositionDeleteWriter, error) {
	wr, err := newWriter(w, PositionDeleteSchema(), props, PositionDeleteMetricsConfig())
	if err != nil {
		return nil, fmt.Errorf("new position delete writer: %w", err)
	}
	mem := memory.DefaultAllocator
	return &PositionDeleteWriter{w: wr, paths: array.NewStringBuilder(mem), pos: array.NewInt64Builder(mem)}, nil
}

// Write adds one deleted position.
func (pw *PositionDeleteWriter) Write(filePath string, pos int64) error {
	if pos < 0 {
		return fmt.Errorf("write position delete: negative position %d in %s", pos, filePath)
	}
	if pw.any && (filePath < pw.lastPath || (filePath == pw.lastPath && pos <= pw.lastPos)) {
		return fmt.Errorf("write position delete: (%s, %d) after (%s, %d): rows must be sorted by file_path and pos without duplicates", filePath, pos, pw.lastPath, pw.lastPos)
	}
	pw.any, pw.lastPath, pw.lastPos = true, filePath, pos
	pw.paths.Append(filePath)
	pw.pos.Append(pos)
	pw.n++
	if pw.n >= DefaultBatchSize {
		return pw.flush()
	}
	return nil
}

func (pw *PositionDeleteWriter) flush() error {
	if pw.n == 0 {
		return nil
	}
	cols := []arrow.Array{pw.paths.NewArray(), pw.pos.NewArray()}
	rec := array.NewRecordBatch(pw.w.Schema(), cols, int64(pw.n))
	cols[0].Release()
	cols[1].Release()
	defer rec.Release()
	pw.n = 0
	return pw.w.Write(rec)
}

// BytesWritten is the size of the file so far; after Close, its final size.
func (pw *PositionDeleteWriter) BytesWritten() int64 { return pw.w.BytesWritten() }

// Close finishes the file and returns its metrics.
func (pw *PositionDeleteWriter) Close() (Metrics, error) {
	defer pw.paths.Release()
	defer pw.pos.Release()
	if err := pw.flush(); err != nil {
		return Metrics{}, err
	}
	return pw.w.Close()
}
