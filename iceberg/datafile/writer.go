package datafile

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// minSlice is the fewest rows written between two row-group size checks;
// fewer would cost more in per-call overhead than it gains in precision.
const minSlice = 4096

// Writer writes a Parquet data file of one Iceberg schema, with field ids,
// and collects its metrics.
type Writer struct {
	schema      *arrow.Schema // what Write accepts (ArrowSchema)
	writeSchema *arrow.Schema // what pqarrow writes: uuid as the arrow.uuid extension
	fw          fileEncoder   // nil until the first Write or Close (start)
	out         *fileio.CountingWriter
	metrics     *MetricsCollector
	cfg         writerConfig
	schemaJSON  string  // the iceberg.schema key of the footer; "" leaves it out
	rgRows      int64   // rows in the current row group
	bytesPerRow float64 // measured, for sizing slices; 0 until known
	closed      bool
}

// NewWriter starts a Parquet file of the given schema on w. props are the
// table properties (compression, row-group size, metrics modes). To carry
// row lineage, pass a schema with the lineage columns (SchemaWithLineage).
func NewWriter(w io.Writer, schema *spec.Schema, props map[string]string) (*Writer, error) {
	mcfg, err := MetricsConfigFromProperties(schema, props)
	if err != nil {
		return nil, fmt.Errorf("new parquet writer: %w", err)
	}
	return newWriter(w, schema, props, mcfg)
}

func newWriter(w io.Writer, schema *spec.Schema, props map[string]string, mcfg MetricsConfig) (*Writer, error) {
	cfg, err := writerConfigFromProperties(props)
	if err != nil {
		return nil, fmt.Errorf("new parquet writer: %w", err)
	}
	return newWriterFromConfig(w, schema, cfg, mcfg)
}

func newWriterFromConfig(w io.Writer, schema *spec.Schema, cfg writerConfig, mcfg MetricsConfig) (*Writer, error) {
	sc, err := ArrowSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("new parquet writer: %w", err)
	}
	if len(sc.Fields()) == 0 {
		return nil, fmt.Errorf("new parquet writer: schema has no stored columns")
	}
	wfields := make([]arrow.Field, len(sc.Fields()))
	for i, f := range sc.Fields() {
		f.Type = writeType(schema.Fields[indexOfField(schema, f)].Type, f.Type)
		wfields[i] = f
	}
	wsc := arrow.NewSchema(wfields, nil)
	// The counting writer also hides w's Close from pqarrow, which would
	// otherwise close it: making the file visible is the caller's decision.
	cw := &fileio.CountingWriter{W: w}
	var kv string
	if js, err := json.Marshal(schema); err == nil {
		// Java writes the schema here too; readers use it to show the
		// Iceberg types of the columns.
		kv = string(js)
	}
	return &Writer{schema: sc, writeSchema: wsc, out: cw, metrics: NewMetricsCollector(schema, mcfg), cfg: cfg, schemaJSON: kv}, nil
}

// start creates the file encoder once the first batch (nil for a file
// without rows) shows which columns to write without a dictionary
// (plainColumns).
func (w *Writer) start(first arrow.RecordBatch) error {
	opts := w.cfg.parquetOptions(countLeaves(w.writeSchema))
	for _, name := range plainColumns(first) {
		opts = append(opts, parquet.WithDictionaryFor(name, false))
	}
	fw, err := newFileEncoder(w.writeSchema, w.out, parquet.NewWriterProperties(opts...), !w.cfg.serialEncode)
	if err != nil {
		return err
	}
	if w.schemaJSON != "" {
		if err := fw.AppendKeyValueMetadata("iceberg.schema", w.schemaJSON); err != nil {
			return err
		}
	}
	w.fw = fw
	return nil
}

func indexOfField(s *spec.Schema, f arrow.Field) int {
	id, _ := fieldID(f)
	for i, sf := range s.Fields {
		if sf.ID == id {
			return i
		}
	}
	return 0
}

// writeType swaps uuid columns for the arrow.uuid extension type, which
// pqarrow writes with Parquet's UUID logical type as the spec asks, and
// geometry and geography columns for geoType (their logical types).
func writeType(t spec.Type, dt arrow.DataType) arrow.DataType {
	switch t := t.(type) {
	case spec.UUIDType:
		return extensions.NewUUIDType()
	case spec.GeometryType, spec.GeographyType:
		return newGeoType(t)
	case *spec.StructType:
		st := dt.(*arrow.StructType)
		fields := st.Fields()
		i := 0
		for _, f := range t.Fields {
			if _, ok := f.Type.(spec.UnknownType); ok {
				continue
			}
			fields[i].Type = writeType(f.Type, fields[i].Type)
			i++
		}
		return arrow.StructOf(fields...)
	case *spec.ListType:
		el := dt.(*arrow.ListType).ElemField()
		el.Type = writeType(t.Element, el.Type)
		return arrow.ListOfField(el)
	case *spec.MapType:
		mt := dt.(*arrow.MapType)
		k, v := mt.KeyField(), mt.ItemField()
		k.Type = writeType(t.Key, k.Type)
		v.Type = writeType(t.Value, v.Type)
		return arrow.MapOfFields(k, v)
	}
	return dt
}

func countLeaves(sc *arrow.Schema) int {
	n := 0
	var walk func(dt arrow.DataType)
	walk = func(dt arrow.DataType) {
		kids := childFields(dt)
		if len(kids) == 0 {
			n++
		}
		for _, k := range kids {
			walk(k.Type)
		}
	}
	for _, f := range sc.Fields() {
		walk(f.Type)
	}
	return n
}

// BytesWritten is the size of the file so far; after Close, its final size.
func (w *Writer) BytesWritten() int64 { return w.out.N }

// Schema is the Arrow schema Write accepts.
func (w *Writer) Schema() *arrow.Schema { return w.schema }

// Write appends a batch. Its columns must be the schema's stored columns in
// order, with the Arrow types ArrowSchema gives (names and field metadata
// may differ).
func (w *Writer) Write(rec arrow.RecordBatch) (err error) {
	defer recoverError(&err, "write parquet batch")
	if w.closed {
		return fmt.Errorf("write parquet batch: writer is closed")
	}
	if int(rec.NumCols()) != len(w.schema.Fields()) {
		return fmt.Errorf("write parquet batch: batch has %d columns, the file's schema has %d (lineage columns need SchemaWithLineage)", rec.NumCols(), len(w.schema.Fields()))
	}
	n := rec.NumRows()
	cols := make([]arrow.Array, rec.NumCols())
	wcols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for i := range cols {
			if cols[i] != nil {
				cols[i].Release()
			}
			if wcols[i] != nil {
				wcols[i].Release()
			}
		}
	}()
	for i, f := range w.schema.Fields() {
		col := rec.Column(i)
		if !sameLayout(col.DataType(), f.Type) {
			return fmt.Errorf("write parquet batch: column %d (%s) is %s, want %s", i, f.Name, col.DataType(), f.Type)
		}
		if !f.Nullable && col.NullN() > 0 {
			return fmt.Errorf("write parquet batch: required column %s has %d nulls", f.Name, col.NullN())
		}
		cols[i] = retype(col, f.Type)
		wcols[i] = retype(col, w.writeSchema.Field(i).Type)
	}
	own := array.NewRecordBatch(w.schema, cols, n)
	defer own.Release()
	out := array.NewRecordBatch(w.writeSchema, wcols, n)
	defer out.Release()
	if w.fw == nil {
		if err := w.start(out); err != nil {
			return fmt.Errorf("write parquet batch: %w", err)
		}
	}
	return w.encodeAndCollect(own, out)
}

// encodeAndCollect encodes out while another goroutine collects the
// metrics of own, the same rows under the read types: both only read the
// batch. It returns once both are done, so the caller may release them.
func (w *Writer) encodeAndCollect(own, out arrow.RecordBatch) error {
	var merr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer recoverError(&merr, "collect parquet metrics")
		merr = w.metrics.Add(own)
	}()
	// Deferred so that a panic in writeSized still waits for the metrics
	// goroutine before the batch is released (a closed channel receives
	// at once, so waiting twice is harmless).
	defer func() { <-done }()
	if err := w.writeSized(out); err != nil {
		return err
	}
	<-done
	if merr != nil {
		return fmt.Errorf("write parquet batch: %w", merr)
	}
	return nil
}

// writeSized feeds the batch to the buffered row group in slices, cutting a
// new row group whenever the current one reaches the target size.
// (pqarrow's Write would start a row group on every call.)
func (w *Writer) writeSized(rec arrow.RecordBatch) error {
	n := rec.NumRows()
	for off := int64(0); off < n; {
		rows := n - off
		if w.bytesPerRow > 0 {
			left := float64(w.cfg.rowGroupSize - w.fw.RowGroupTotalBytesWritten())
			rows = min(rows, max(int64(left/w.bytesPerRow), minSlice))
		} else {
			rows = min(rows, minSlice)
		}
		part := rec.NewSlice(off, off+rows)
		err := w.fw.WriteBuffered(part)
		part.Release()
		if err != nil {
			return fmt.Errorf("write parquet batch: %w", err)
		}
		off += rows
		w.rgRows += rows
		// Only a finished row group gives a fair bytes-per-row figure: early
		// in a row group most bytes still sit in unflushed pages.
		size := w.fw.RowGroupTotalBytesWritten()
		if size >= w.cfg.rowGroupSize {
			w.bytesPerRow = float64(size) / float64(w.rgRows)
			if err := w.fw.NewBufferedRowGroupChecked(); err != nil {
				return fmt.Errorf("write parquet batch: %w", err)
			}
			w.rgRows = 0
		}
	}
	return nil
}

// Close finishes the file and returns its metrics. It does not close the
// underlying io.Writer.
func (w *Writer) Close() (m Metrics, err error) {
	defer recoverError(&err, "close parquet file")
	if w.closed {
		return Metrics{}, fmt.Errorf("close parquet file: already closed")
	}
	w.closed = true
	if w.fw == nil {
		if err := w.start(nil); err != nil {
			return Metrics{}, fmt.Errorf("close parquet file: %w", err)
		}
	}
	if err := w.fw.Close(); err != nil {
		return Metrics{}, fmt.Errorf("close parquet file: %w", err)
	}
	md, err := w.fw.FileMetadata()
	if err != nil {
		return Metrics{}, fmt.Errorf("close parquet file: %w", err)
	}
	m, err = w.metrics.Finish(md)
	if err != nil {
		return Metrics{}, fmt.Errorf("close parquet file: %w", err)
	}
	return m, nil
}
