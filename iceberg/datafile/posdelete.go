package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

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
// returned. filePath shares the reader's page buffers and is valid only
// during the call: a caller that keeps it (as a map key, say) copies it.
func ReadPositionDeletes(ctx context.Context, r io.ReaderAt, size int64, fn func(filePath string, pos int64) error) (err error) {
	defer recoverError(&err, "read position deletes")
	pf, err := openParquet(r, size)
	if err != nil {
		return fmt.Errorf("read position deletes: %w", err)
	}
	pathCol, posCol, ok := positionDeleteColumns(pf)
	if ok {
		defer pf.Close()
		return readPositionDeleteColumns(ctx, pf, pathCol, posCol, fn)
	}
	pf.Close()
	return readPositionDeletesArrow(ctx, r, size, fn)
}

// positionDeleteColumns finds the file_path and pos columns of a
// position-delete file that stores them as Java and icectl write them:
// top-level, not repeated, a byte array and a 64-bit integer. ok is false
// for any other layout, which the Arrow path reads (with its promotions
// and errors).
func positionDeleteColumns(pf *file.Reader) (pathCol, posCol int, ok bool) {
	src := pf.MetaData().Schema
	ids, err := resolveIDs(src, positionDeleteMapping())
	if err != nil {
		return 0, 0, false
	}
	pathCol, posCol = -1, -1
	for j := range src.NumColumns() {
		c := src.Column(j)
		if c.MaxRepetitionLevel() != 0 || len(c.ColumnPath()) != 1 {
			continue
		}
		switch ids.node(c.SchemaNode()) {
		case spec.FieldIDFilePath:
			if pathCol >= 0 || c.PhysicalType() != parquet.Types.ByteArray {
				return 0, 0, false
			}
			pathCol = j
		case spec.FieldIDPos:
			if posCol >= 0 || c.PhysicalType() != parquet.Types.Int64 {
				return 0, 0, false
			}
			posCol = j
		}
	}
	return pathCol, posCol, pathCol >= 0 && posCol >= 0
}

// readPositionDeleteColumns streams the rows of columns pathCol and posCol
// to fn with arrow-go's column readers: no Arrow arrays are built, and a
// path is handed to fn as it lies in its page (or dictionary), copied
// only by a caller that keeps it.
func readPositionDeleteColumns(ctx context.Context, pf *file.Reader, pathCol, posCol int, fn func(string, int64) error) error {
	const batch = 4096
	paths := make([]parquet.ByteArray, batch)
	poss := make([]int64, batch)
	pathDef := make([]int16, batch)
	posDef := make([]int16, batch)
	var row int64
	for g := range pf.NumRowGroups() {
		if err := ctx.Err(); err != nil {
			return err
		}
		rg := pf.RowGroup(g)
		rows := rg.NumRows()
		pc, err := rg.Column(pathCol)
		if err != nil {
			return fmt.Errorf("read position deletes: %w", err)
		}
		oc, err := rg.Column(posCol)
		if err != nil {
			return fmt.Errorf("read position deletes: %w", err)
		}
		pr, ok1 := pc.(*file.ByteArrayColumnChunkReader)
		or, ok2 := oc.(*file.Int64ColumnChunkReader)
		if !ok1 || !ok2 {
			return fmt.Errorf("read position deletes: unexpected column readers %T, %T", pc, oc)
		}
		var got int64
		for got < rows {
			// ReadBatchInPage: the paths alias their page, which stays
			// valid until the next read of this column.
			total, nv, err := pr.ReadBatchInPage(min(batch, rows-got), paths, pathDef, nil)
			if err != nil {
				return fmt.Errorf("read position deletes: file_path: %w", err)
			}
			if total == 0 {
				break
			}
			ptotal, pnv, err := or.ReadBatch(total, poss, posDef, nil)
			if err != nil {
				return fmt.Errorf("read position deletes: pos: %w", err)
			}
			if ptotal != total {
				return fmt.Errorf("read position deletes: row group %d has %d more file_path values than pos values", g, total-ptotal)
			}
			if int64(nv) != total || int64(pnv) != total {
				return fmt.Errorf("read position deletes: a row among %d-%d has a null file_path or pos", row, row+total-1)
			}
			for i := range int(total) {
				if err := fn(aliasString(paths[i]), poss[i]); err != nil {
					return err
				}
			}
			got += total
			row += total
		}
		if got != rows {
			return fmt.Errorf("read position deletes: row group %d has %d rows, its file_path column %d values", g, rows, got)
		}
		if or.HasNext() {
			return fmt.Errorf("read position deletes: row group %d has more pos values than its %d rows", g, rows)
		}
		if err := pc.Err(); err != nil {
			return fmt.Errorf("read position deletes: file_path: %w", err)
		}
		if err := oc.Err(); err != nil {
			return fmt.Errorf("read position deletes: pos: %w", err)
		}
	}
	return nil
}

// aliasString is b as a string sharing its bytes.
func aliasString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// readPositionDeletesArrow is ReadPositionDeletes through the Reader, for
// files of another layout than positionDeleteColumns accepts.
func readPositionDeletesArrow(ctx context.Context, r io.ReaderAt, size int64, fn func(filePath string, pos int64) error) error {
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
