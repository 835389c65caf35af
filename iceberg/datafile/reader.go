package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/icectl/icectl/iceberg/spec"
)

// DefaultBatchSize is the number of rows per batch when ReadOptions does
// not say.
const DefaultBatchSize = 64 * 1024

// ErrNoFieldIDs is returned when a file has no field ids and no name
// mapping was given to find its columns.
var ErrNoFieldIDs = errors.New("parquet file has no field ids and the table has no name mapping (schema.name-mapping.default)")

// ErrUnmatchedColumns is returned when a file's columns cannot be matched
// to the table's: reading on would give nulls for stored values.
var ErrUnmatchedColumns = errors.New("parquet file columns not matched to the table schema")

// unmatchedErr says that a column the file's metrics name was found
// neither by field id nor through the name mapping; cols lists the file's
// columns.
func unmatchedErr(name string, id int, cols string) error {
	return fmt.Errorf("%w: column %s (field id %d) is in the file's metrics, but no column of the file has its field id or a name the name mapping gives it (file columns: %s)",
		ErrUnmatchedColumns, name, id, cols)
}

// mappedNoneErr says that the name mapping names none of a file's columns.
func mappedNoneErr(cols string) error {
	return fmt.Errorf("%w: the table's name mapping names none of the file's columns (%s)", ErrUnmatchedColumns, cols)
}

// storedUnder reports whether stored knows f or a field nested in it.
func storedUnder(f spec.NestedField, stored func(int) bool) bool {
	if stored(f.ID) {
		return true
	}
	found := false
	spec.WalkFields(f.Type, func(c spec.NestedField) bool {
		found = stored(c.ID)
		return !found
	})
	return found
}

// columnNames lists the top-level columns of a file, with their field ids
// where they have one, for errors.
func columnNames(ffs []*fileField) string {
	names := make([]string, len(ffs))
	for i, ff := range ffs {
		names[i] = ff.field.Name
		if ff.id >= 0 {
			names[i] += fmt.Sprintf(" (id %d)", ff.id)
		}
	}
	return listNames(names)
}

// listNames joins column names for an error, the first eight of them.
func listNames(names []string) string {
	if len(names) > 8 {
		return strings.Join(names[:8], ", ") + fmt.Sprintf(", ... %d more", len(names)-8)
	}
	return strings.Join(names, ", ")
}

// ReadOptions says what to read from a data or delete file.
type ReadOptions struct {
	// Schema is the projection: these fields, in this order, matched by id.
	Schema *spec.Schema
	// NameMapping finds the columns of files written without field ids.
	NameMapping NameMapping
	// WithPos appends _pos, the row's position in the file.
	WithPos bool
	// WithLineage appends _row_id and _last_updated_sequence_number with
	// inheritance applied from FirstRowID and DataSequenceNumber.
	WithLineage bool
	// FirstRowID is the data file's first_row_id; nil (a file committed
	// before a v3 upgrade) makes both lineage columns null.
	FirstRowID         *int64
	DataSequenceNumber int64
	// BatchSize is the number of rows per batch; DefaultBatchSize when 0.
	BatchSize int
	// Stored, when set, reports whether the file is known to store a
	// column of a field id (its manifest entry has metrics for it). A
	// projected column known to be stored that the file's ids and the name
	// mapping cannot find is an error, never a column of nulls.
	Stored func(id int) bool
	// Constants are the file's identity-partition values (Constants):
	// such a top-level column is the constant for every row, whether or
	// not the file stores it.
	Constants Constants
}

type columnKind int

const (
	kindData columnKind = iota
	kindMissing
	kindConst
	kindPos
	kindRowID
	kindSeq
)

// column is how one output column is produced.
type column struct {
	kind  columnKind
	field spec.NestedField
	dt    arrow.DataType
	src   int // index in the record reader's batches, or -1
	ff    *fileField
	val   any // kindConst: the value, nil for null
}

// Reader streams record batches of a Parquet file in the requested schema.
type Reader struct {
	ctx    context.Context
	mem    memory.Allocator
	opts   ReadOptions
	pf     *file.Reader
	rr     pqarrow.RecordReader // nil when no stored column is read
	cols   []column
	schema *arrow.Schema
	pos    int64 // position of the next row
	rows   int64
	batch  int64
	ahead  *prefetcher // nil until the first Next
	final  error       // what every Next returns after an error, io.EOF or Close
}

// OpenReader opens a Parquet file for reading in opts.Schema.
func OpenReader(ctx context.Context, r io.ReaderAt, size int64, opts ReadOptions) (rd *Reader, err error) {
	defer recoverError(&err, "open parquet file")
	if opts.Schema == nil {
		return nil, errors.New("open parquet file: no schema to read")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	pf, err := openParquet(r, size)
	if err != nil {
		return nil, err
	}
	rd, err = newReader(ctx, pf, opts)
	if err != nil {
		pf.Close()
		return nil, err
	}
	return rd, nil
}

func openParquet(r io.ReaderAt, size int64) (*file.Reader, error) {
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	pf, err := file.NewParquetReader(io.NewSectionReader(r, 0, size), file.WithReadProps(props))
	if err != nil {
		return nil, fmt.Errorf("open parquet file (%d bytes): %w", size, err)
	}
	return pf, nil
}

func newReader(ctx context.Context, pf *file.Reader, opts ReadOptions) (*Reader, error) {
	mem := memory.DefaultAllocator
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(opts.BatchSize)}, mem)
	if err != nil {
		return nil, fmt.Errorf("read parquet schema: %w", err)
	}
	ffs, err := fileColumns(pf, fr, opts.NameMapping)
	if err != nil {
		return nil, err
	}

	var schemaOpts []SchemaOption
	if opts.WithPos {
		schemaOpts = append(schemaOpts, WithPosColumn())
	}
	if opts.WithLineage {
		schemaOpts = append(schemaOpts, WithLineageColumns())
	}
	out, err := ArrowSchema(opts.Schema, schemaOpts...)
	if err != nil {
		return nil, fmt.Errorf("read parquet file: %w", err)
	}

	rd := &Reader{ctx: ctx, mem: mem, opts: opts, pf: pf, schema: out,
		rows: pf.NumRows(), batch: int64(opts.BatchSize)}
	var fileIdx []int // top-level file columns to read, by output column
	for _, of := range out.Fields() {
		id, _ := fieldID(of)
		f, ok := opts.Schema.AsStruct().Field(id)
		if !ok {
			f = spec.NestedField{ID: id, Name: of.Name, Type: spec.LongType{}}
		}
		c := column{kind: kindData, field: f, dt: of.Type, src: -1}
		i, ff := findByID(ffs, id)
		switch id {
		case spec.FieldIDMetaPos:
			c.kind = kindPos
			ff = nil
		case spec.FieldIDRowID:
			c.kind = kindRowID
		case spec.FieldIDLastUpdatedSequenceNumber:
			c.kind = kindSeq
		default:
			if v, ok, err := resolveConstant(opts.Constants, f); err != nil {
				return nil, err
			} else if ok {
				c.kind, c.val = kindConst, v
				ff = nil
				break
			}
			if ff == nil {
				if opts.Stored != nil && storedUnder(f, opts.Stored) {
					return nil, unmatchedErr(f.Name, f.ID, columnNames(ffs))
				}
				c.kind = kindMissing
			}
		}
		if ff != nil {
			c.ff = ff
			fileIdx = append(fileIdx, i)
			c.src = i
		}
		rd.cols = append(rd.cols, c)
	}
	if len(fileIdx) > 0 {
		if err := rd.openColumns(ctx, fr, fileIdx); err != nil {
			return nil, err
		}
	}
	return rd, nil
}

// fileColumns are the top-level columns of a file as pqarrow reads them,
// with the field ids resolveIDs gives them (nm: the name mapping).
func fileColumns(pf *file.Reader, fr *pqarrow.FileReader, nm NameMapping) ([]*fileField, error) {
	fileSchema, err := fr.Schema()
	if err != nil {
		return nil, fmt.Errorf("read parquet schema: %w", err)
	}
	ids, err := resolveIDs(pf.MetaData().Schema, nm)
	if err != nil {
		return nil, err
	}
	return fileFields(fileSchema.Fields(), ids.fields), nil
}

// openColumns starts a record reader over the leaves of the file's
// top-level columns fileIdx, and points each output column at its position
// in the record reader's batches (which follow file order).
func (rd *Reader) openColumns(ctx context.Context, fr *pqarrow.FileReader, fileIdx []int) error {
	top := slices.Clone(fileIdx)
	slices.Sort(top)
	top = slices.Compact(top)
	var leaves []int
	for _, i := range top {
		leaves = appendLeaves(leaves, &fr.Manifest.Fields[i])
	}
	slices.Sort(leaves)
	rr, err := fr.GetRecordReader(ctx, leaves, nil)
	if err != nil {
		return fmt.Errorf("read parquet columns: %w", err)
	}
	rd.rr = rr
	for k := range rd.cols {
		if rd.cols[k].src >= 0 {
			rd.cols[k].src = slices.Index(top, rd.cols[k].src)
		}
	}
	return nil
}

func appendLeaves(out []int, f *pqarrow.SchemaField) []int {
	if f.IsLeaf() {
		return append(out, f.ColIndex)
	}
	for i := range f.Children {
		out = appendLeaves(out, &f.Children[i])
	}
	return out
}

// Schema is the Arrow schema of the batches Next returns.
func (rd *Reader) Schema() *arrow.Schema { return rd.schema }

// NumRows is the number of rows in the file.
func (rd *Reader) NumRows() int64 { return rd.rows }

// Next returns the next batch, or io.EOF after the last one. The caller
// owns the batch and must Release it. Batches are decoded one ahead in
// another goroutine, so decoding overlaps whatever the caller does with
// the previous batch.
func (rd *Reader) Next() (arrow.RecordBatch, error) {
	if err := rd.ctx.Err(); err != nil {
		return nil, err
	}
	if rd.final != nil {
		return nil, rd.final
	}
	if rd.rr == nil {
		return rd.next()
	}
	if rd.ahead == nil {
		rd.ahead = startPrefetch(rd.next)
	}
	r := <-rd.ahead.results
	if r.err != nil {
		rd.final = r.err
		return nil, r.err
	}
	return r.rec, nil
}

// next decodes the next batch; only the prefetch goroutine calls it while
// one runs.
func (rd *Reader) next() (rec arrow.RecordBatch, err error) {
	defer recoverError(&err, "read parquet batch")
	if err := rd.ctx.Err(); err != nil {
		return nil, err
	}
	var in arrow.RecordBatch
	var n int64
	if rd.rr != nil {
		in, err = rd.rr.Read()
		if errors.Is(err, io.EOF) || (err == nil && in == nil) {
			if rd.pos != rd.rows {
				return nil, fmt.Errorf("read parquet batch: file ended after %d of %d rows", rd.pos, rd.rows)
			}
			return nil, io.EOF
		}
		if err != nil {
			return nil, fmt.Errorf("read parquet batch at row %d: %w", rd.pos, err)
		}
		n = in.NumRows()
	} else {
		if rd.pos >= rd.rows {
			return nil, io.EOF
		}
		n = min(rd.batch, rd.rows-rd.pos)
	}
	if rd.pos+n > rd.rows {
		return nil, fmt.Errorf("read parquet batch: more rows than the %d the footer declares", rd.rows)
	}
	cols := make([]arrow.Array, len(rd.cols))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, c := range rd.cols {
		var stored arrow.Array
		if c.src >= 0 {
			stored = in.Column(c.src)
		}
		cols[i], err = rd.buildColumn(c, stored, int(n))
		if err != nil {
			return nil, fmt.Errorf("read parquet batch at row %d: %w", rd.pos, err)
		}
	}
	rec = array.NewRecordBatch(rd.schema, cols, n)
	rd.pos += n
	return rec, nil
}

func (rd *Reader) buildColumn(c column, stored arrow.Array, n int) (arrow.Array, error) {
	switch c.kind {
	case kindData:
		return conform(rd.mem, stored, c.ff, c.field, c.dt, rd.opts.Constants)
	case kindMissing:
		return missingColumn(rd.mem, c.field, c.dt, n)
	case kindConst:
		return constantColumn(rd.mem, c.field, c.dt, c.val, n)
	case kindPos:
		return posColumn(rd.mem, rd.pos, n), nil
	case kindRowID:
		if rd.opts.FirstRowID == nil {
			return array.MakeArrayOfNull(rd.mem, c.dt, n), nil
		}
		first := *rd.opts.FirstRowID + rd.pos
		return inheritColumn(rd.mem, stored, n, func(i int) int64 { return first + int64(i) })
	case kindSeq:
		if rd.opts.FirstRowID == nil {
			return array.MakeArrayOfNull(rd.mem, c.dt, n), nil
		}
		seq := rd.opts.DataSequenceNumber
		return inheritColumn(rd.mem, stored, n, func(int) int64 { return seq })
	}
	return nil, fmt.Errorf("internal error: column kind %d", c.kind)
}

// Close stops decoding ahead and releases the file.
func (rd *Reader) Close() error {
	if rd.ahead != nil {
		rd.ahead.stop()
		rd.ahead = nil
	}
	if rd.final == nil {
		rd.final = errors.New("read parquet batch: reader is closed")
	}
	if rd.rr != nil {
		rd.rr.Release()
		rd.rr = nil
	}
	if rd.pf != nil {
		err := rd.pf.Close()
		rd.pf = nil
		return err
	}
	return nil
}
