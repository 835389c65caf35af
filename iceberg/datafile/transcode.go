package datafile

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
)

// ErrNotTranscodable says a schema or an input file cannot go through a
// Transcoder; the caller rewrites it through Arrow (Reader and Writer).
var ErrNotTranscodable = errors.New("not transcodable column by column")

// TranscodeInput is one source Parquet file of a Transcoder row group.
type TranscodeInput struct {
	Path string
	File *file.Reader
	// Data, when set, is the whole file File reads: its pages are then
	// decoded where they lie instead of copied out first.
	Data []byte
	// Source, when Data is nil, reads the file File reads (safe for
	// concurrent ReadAt calls, as io.ReaderAt requires): each column
	// chunk is then read whole into a buffer its column reuses and its
	// pages decoded there, instead of through arrow-go's page reader. A
	// Source with a Size method has each chunk's range checked against it.
	Source io.ReaderAt
	// Deleted are the row positions not to copy (DV or position deletes).
	Deleted *roaring64.Bitmap
	// FirstRowID and DataSequenceNumber give lineage by inheritance to rows
	// whose stored _row_id or _last_updated_sequence_number is null, as a
	// Reader with the same options does.
	FirstRowID         *int64
	DataSequenceNumber int64
	// Stored, when set, reports the field ids the file is known to store
	// (ReadOptions.Stored): such a column the file does not show is an
	// error, not nulls.
	Stored func(id int) bool
	// Constants are the file's identity-partition values
	// (ReadOptions.Constants): such a top-level column is written as the
	// constant for every row, whether or not the file stores it.
	Constants Constants
	// Tally, when set, receives what was read of this input and written.
	Tally *TranscodeTally
}

// Transcoder writes a Parquet data file from the rows of other Parquet
// files, less deleted positions, decoding each column chunk to typed values
// and encoding it again with no Arrow arrays in between. Each column is
// transcoded by its own goroutine over all inputs of a row group, so both
// cores work without a record batch to hand from reader to writer: a
// rewrite of small files costs about 40% less CPU than Reader + Writer.
//
// It accepts schemas of primitive types and of structs, lists and maps of
// them, and inputs whose column of each field id has exactly the physical
// and logical type the Writer would write (ErrNotTranscodable otherwise):
// a value is then copied unchanged, so the file holds the same rows,
// encoded with the same properties, as a Writer would produce. A leaf of
// a struct, list or map is copied with its repetition and definition
// levels (transcode_nested.go), which needs the input's path to that leaf
// to repeat and be defined as the output's at every level. What goes
// through Arrow instead: geo, variant and unknown types; a nested column
// stored with another layout (two-level lists, a level optional in the
// file and required in the output or the reverse, a struct field the
// file lacks while it has the struct); a required or defaulted nested
// column the file lacks. Metrics follow the Writer's rules (the same
// accumulators and bound encoding).
//
// A Transcoder is not safe for concurrent use.
type Transcoder struct {
	out *fileio.CountingWriter
	// wr is created by start, when the first row group's first input
	// shows how its columns were encoded.
	wr     *file.Writer
	opts   []parquet.WriterProperty
	schema string // iceberg.schema metadata
	pq     *schema.Schema
	// nm finds the columns of inputs written without field ids: the
	// table's name mapping, from the properties NewTranscoder was given.
	nm      NameMapping
	cols    []*tcColumn
	metrics *MetricsCollector
	rgSize  int64
	workers int
	closed  bool
	err     error // a failed row group: the file is unusable
	// pageLimit, when positive, makes the page decoder hand every column
	// chunk over to arrow-go's reader after that many data pages (tests).
	pageLimit int
	// keepDict keeps every column's dictionary (benchmarks measure what
	// the dictionary decision saves).
	keepDict bool
	// noDictIndex transcodes string and binary columns as values, never as
	// dictionary indices (tests compare the two).
	noDictIndex bool
	// deltaRowIDs: _row_id is written DELTA_BINARY_PACKED (DeltaRowIDs).
	deltaRowIDs bool
}

// DeltaRowIDs makes the file's _row_id column DELTA_BINARY_PACKED instead
// of PLAIN. Row ids ascend by one within each input but for deleted rows,
// so they take a bit or two each where PLAIN takes eight bytes for the
// codec to squeeze again: a rewrite of a v3 table then spends on them a
// small part of the CPU and bytes (Java's vectorized reader reads the
// encoding since Iceberg 1.10; older ones do not read _row_id at all).
//
// The caller promises that every input has a first_row_id, so that no
// row id is null: arrow-go's encoder fails on a page of nulls after one of
// values. An input without one is refused with ErrNotTranscodable. It
// must be called before the first row group; it does nothing on a schema
// without _row_id.
func (t *Transcoder) DeltaRowIDs() {
	if t.wr == nil {
		t.deltaRowIDs = true
	}
}

type tcKind int

const (
	tcData tcKind = iota
	tcRowID
	tcSeq
)

// tcColumn is one output column and its metrics.
type tcColumn struct {
	idx    int
	id     int
	field  spec.NestedField
	name   string
	typ    spec.PrimitiveType
	kind   tcKind
	desc   *schema.Column
	leaf   *metricsLeaf // nil when the column gets no metrics
	maxDef int16
	// dflt is the initial-default as the column writer's value type, for
	// files written before the column was added; nil: null.
	dflt any
	// scratch is the column's *tcScratch (*tcNestedScratch for a nested
	// leaf), kept across row groups.
	scratch any
	// nested: a leaf of a struct, list or map column (c.field is the
	// leaf's field, top the index of its top-level field); its values are
	// copied with their repetition and definition levels.
	nested   bool
	top      int
	topField spec.NestedField
	maxRep   int16
	// chain is the leaf's path from the leaf up to its top-level field,
	// which a source column must repeat for its levels to mean the same.
	chain []tcLevel
	// tally counts the input being transcoded.
	tally colTally
	// dictIdx: the column is transcoded as dictionary indices in this row
	// group (transcode_dictidx.go).
	dictIdx bool
}

// tcLevel is one node of a leaf's path: how it repeats and its field id
// (-1 for the unnamed groups of lists and maps).
type tcLevel struct {
	rep parquet.Repetition
	id  int32
}

// levelChain is the path from leaf n up to (and including) its top-level
// node, with the field id ids gives each node (Node.FieldID when nil).
func levelChain(n schema.Node, ids *fileIDs) []tcLevel {
	var out []tcLevel
	for ; n != nil && n.Parent() != nil; n = n.Parent() {
		id := n.FieldID()
		if ids != nil {
			id = ids.node(n)
		}
		out = append(out, tcLevel{rep: n.RepetitionType(), id: id})
	}
	return out
}

// tcScratch is one column's buffers. A column is transcoded by one
// goroutine at a time, so they are reused across inputs and row groups
// instead of allocated (and zeroed) for each column chunk.
type tcScratch[T any] struct {
	vals        []T
	def, outDef []int16
	lin         []int64
	pd          pageDecoder[T]
}

// NewTranscoder starts a Parquet file of schema (with lineage columns
// when the table has them, as for NewWriter) on w, with the table
// properties props. It returns ErrNotTranscodable for schemas it cannot
// write column by column.
func NewTranscoder(w io.Writer, sch *spec.Schema, props map[string]string) (*Transcoder, error) {
	cfg, err := writerConfigFromProperties(props)
	if err != nil {
		return nil, fmt.Errorf("new parquet transcoder: %w", err)
	}
	mcfg, err := MetricsConfigFromProperties(sch, props)
	if err != nil {
		return nil, fmt.Errorf("new parquet transcoder: %w", err)
	}
	for _, f := range sch.Fields {
		if !transcodableType(f.Type) {
			return nil, fmt.Errorf("%w: column %s has type %s", ErrNotTranscodable, f.Name, f.Type)
		}
	}
	sc, err := ArrowSchema(sch)
	if err != nil {
		return nil, fmt.Errorf("new parquet transcoder: %w", err)
	}
	if len(sc.Fields()) != len(sch.Fields) || len(sc.Fields()) == 0 {
		return nil, fmt.Errorf("%w: schema has columns that are not stored", ErrNotTranscodable)
	}
	wfields := make([]arrow.Field, len(sc.Fields()))
	for i, f := range sc.Fields() {
		f.Type = writeType(sch.Fields[i].Type, f.Type)
		wfields[i] = f
	}
	wsc := arrow.NewSchema(wfields, nil)
	opts := cfg.parquetOptions(countLeaves(wsc))
	pq, err := pqarrow.ToParquet(wsc, parquet.NewWriterProperties(opts...), pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, fmt.Errorf("new parquet transcoder: %w", err)
	}
	js, err := json.Marshal(sch)
	if err != nil {
		return nil, fmt.Errorf("new parquet transcoder: %w", err)
	}
	nm, err := spec.NameMappingOf(props)
	if err != nil {
		return nil, fmt.Errorf("new parquet transcoder: %w", err)
	}
	t := &Transcoder{out: &fileio.CountingWriter{W: w}, opts: opts, schema: string(js), pq: pq, metrics: NewMetricsCollector(sch, mcfg), rgSize: cfg.rowGroupSize,
		workers: runtime.GOMAXPROCS(0), nm: nm}
	leaves := map[int]*metricsLeaf{}
	for _, l := range t.metrics.leaves {
		leaves[l.id] = l
	}
	top := make(map[int32]int, len(sch.Fields))
	for i, f := range sch.Fields {
		top[int32(f.ID)] = i
	}
	// One column per Parquet leaf: a struct, list or map field has one
	// for each primitive below it.
	for i := range pq.NumColumns() {
		desc := pq.Column(i)
		chain := levelChain(desc.SchemaNode(), nil)
		ti, ok := top[chain[len(chain)-1].id]
		if !ok {
			return nil, fmt.Errorf("%w: parquet column %s has no top-level field id", ErrNotTranscodable, desc.Path())
		}
		f := sch.Fields[ti]
		c := &tcColumn{idx: i, id: f.ID, field: f, topField: f, name: f.Name, desc: desc, top: ti, maxDef: desc.MaxDefinitionLevel(), maxRep: desc.MaxRepetitionLevel()}
		if len(chain) > 1 {
			lf, ok := sch.FindField(int(desc.SchemaNode().FieldID()))
			if !ok {
				return nil, fmt.Errorf("%w: parquet column %s has no field id of the schema", ErrNotTranscodable, desc.Path())
			}
			c.nested, c.chain, c.id, c.field, c.name = true, chain, lf.ID, lf, desc.Path()
		}
		pt, ok := c.field.Type.(spec.PrimitiveType)
		if !ok {
			return nil, fmt.Errorf("%w: parquet column %s is not a primitive field", ErrNotTranscodable, desc.Path())
		}
		c.typ = pt
		switch c.id {
		case spec.FieldIDRowID:
			c.kind = tcRowID
		case spec.FieldIDLastUpdatedSequenceNumber:
			c.kind = tcSeq
		}
		if !c.nested && hasInitialDefault(f) && c.kind == tcData {
			if c.dflt, err = physicalDefault(f, c.desc); err != nil {
				return nil, fmt.Errorf("%w: column %s: initial-default %s: %v", ErrNotTranscodable, f.Name, f.InitialDefault, err)
			}
		}
		if l := leaves[c.id]; l != nil && l.mode.Kind != MetricsNone {
			c.leaf = l
			if l.bounds || l.isFloat {
				l.acc = newTcAcc(c.typ)
			}
		}
		t.cols = append(t.cols, c)
	}
	return t, nil
}

// transcodableType is the types whose Parquet values a Transcoder
// copies: every primitive type but geo, and structs, lists and maps of
// them. Geo, variant and unknown types go through Arrow.
func transcodableType(t spec.Type) bool {
	switch t := t.(type) {
	case *spec.StructType:
		if len(t.Fields) == 0 {
			return false // no leaf to carry its nulls
		}
		for _, f := range t.Fields {
			if !transcodableType(f.Type) {
				return false
			}
		}
		return true
	case *spec.ListType:
		return transcodableType(t.Element)
	case *spec.MapType:
		return transcodableType(t.Key) && transcodableType(t.Value)
	case spec.BooleanType, spec.IntType, spec.LongType, spec.FloatType, spec.DoubleType,
		spec.DateType, spec.TimeType, spec.TimestampType, spec.TimestampTzType,
		spec.TimestampNsType, spec.TimestampTzNsType, spec.StringType, spec.BinaryType,
		spec.FixedType, spec.UUIDType, spec.DecimalType:
		return true
	}
	return false
}

// RowGroupSize is the target compressed size of a row group
// (write.parquet.row-group-size-bytes); the caller decides how many
// inputs make one.
func (t *Transcoder) RowGroupSize() int64 { return t.rgSize }

// BytesWritten is the size of the file so far.
func (t *Transcoder) BytesWritten() int64 { return t.out.N }

// Rows is the number of rows written so far.
func (t *Transcoder) Rows() int64 { return t.metrics.rows }

// Check returns, for each output column, the index of the column of f
// with its field id (-1 for a lineage column f does not store), or an
// error wrapping ErrNotTranscodable saying why f must go through Arrow.
// A file that stores no field ids is matched through the table's name
// mapping, and refused with ErrNoFieldIDs when the table has none; a
// column storedIDs knows (nil: none) that cannot be found is an error
// wrapping ErrUnmatchedColumns.
func (t *Transcoder) Check(f *file.Reader, storedIDs func(id int) bool) ([]int, error) {
	return t.check(f, storedIDs, nil)
}

// check is Check for an input with constants: a flat column with one
// reads none of the file's columns (-1).
func (t *Transcoder) check(f *file.Reader, storedIDs func(id int) bool, consts Constants) ([]int, error) {
	src := f.MetaData().Schema
	ids, err := resolveIDs(src, t.nm)
	if err != nil {
		return nil, err
	}
	// Flat output columns are matched with top-level source columns only,
	// nested leaves with leaves of any depth (a leaf's field id is unique
	// in the schema), whose paths must then agree.
	byID := make(map[int32]int, src.NumColumns())
	leafByID := make(map[int32]int, src.NumColumns())
	dupLeaf := map[int32]bool{}
	for j := 0; j < src.NumColumns(); j++ {
		c := src.Column(j)
		id := ids.node(c.SchemaNode())
		if id < 0 {
			continue
		}
		if _, dup := leafByID[id]; dup {
			dupLeaf[id] = true
		}
		leafByID[id] = j
		if c.MaxRepetitionLevel() != 0 || len(c.ColumnPath()) != 1 {
			continue
		}
		if _, dup := byID[id]; dup {
			return nil, fmt.Errorf("%w: field id %d appears twice", ErrNotTranscodable, id)
		}
		byID[id] = j
	}
	out := make([]int, len(t.cols))
	for i, c := range t.cols {
		if _, ok := consts[c.id]; ok && !c.nested && c.kind == tcData {
			out[i] = -1
			continue
		}
		if _, ok := consts[c.id]; ok && c.nested {
			// A stored struct's field is its partition value (the Reader's
			// rule), which levels copied as stored would not give.
			return nil, fmt.Errorf("%w: column %s is a nested identity-partition source", ErrNotTranscodable, c.name)
		}
		if c.nested {
			j, err := t.checkNested(src, ids, storedIDs, consts, c, leafByID, dupLeaf)
			if err != nil {
				return nil, err
			}
			out[i] = j
			continue
		}
		j, ok := byID[int32(c.id)]
		if !ok && c.kind == tcData && storedIDs != nil && storedIDs(c.id) {
			return nil, unmatchedErr(c.name, c.id, topNames(src))
		}
		if !ok {
			// A column added after the file was written reads as null
			// (lineage columns inherit); a default needs the Arrow path.
			if c.kind == tcData && c.field.Required && c.dflt == nil {
				return nil, fmt.Errorf("%w: the file has no column with field id %d (%s), which is required and has no initial-default", ErrNotTranscodable, c.id, c.name)
			}
			out[i] = -1
			continue
		}
		s := src.Column(j)
		if err := checkLeafType(s, c); err != nil {
			return nil, err
		}
		if s.MaxDefinitionLevel() > c.maxDef {
			return nil, fmt.Errorf("%w: column %s is optional in the file but required in the output", ErrNotTranscodable, c.name)
		}
		out[i] = j
	}
	// A nested column the file lacks entirely reads as null; one that
	// lacks only some of its leaves (a field added to a struct) would
	// need levels derived from its siblings, which the Arrow path gives.
	var srcTop map[int32]bool
	for i, c := range t.cols {
		if !c.nested || out[i] >= 0 {
			continue
		}
		if srcTop == nil {
			srcTop = map[int32]bool{}
			for j := range src.NumColumns() {
				srcTop[ids.node(src.ColumnRoot(j))] = true
			}
		}
		if srcTop[int32(c.topField.ID)] {
			// Only fields dropped since: the column is there, not null.
			return nil, fmt.Errorf("%w: the file has column %s with none of the fields of %s", ErrNotTranscodable, c.topField.Name, c.name)
		}
		for k, o := range t.cols {
			if o.top == c.top && out[k] >= 0 {
				return nil, fmt.Errorf("%w: the file has column %s but not %s", ErrNotTranscodable, o.name, c.name)
			}
		}
	}
	return out, nil
}

// checkNested finds the source column of nested leaf c: the leaf with its
// field id, of the output's type, whose path repeats and is defined as
// the output's at every level (so that its levels are copied as they
// are); -1 when the file has no column of c's top-level field.
func (t *Transcoder) checkNested(src *schema.Schema, ids *fileIDs, storedIDs func(int) bool, consts Constants, c *tcColumn, leafByID map[int32]int, dup map[int32]bool) (int, error) {
	id := int32(c.id)
	if dup[id] {
		return 0, fmt.Errorf("%w: field id %d appears twice", ErrNotTranscodable, id)
	}
	j, ok := leafByID[id]
	if !ok && storedIDs != nil && storedIDs(c.id) {
		return 0, unmatchedErr(c.name, c.id, topNames(src))
	}
	if !ok {
		if c.topField.Required || hasInitialDefault(c.topField) || hasInitialDefault(c.field) {
			return 0, fmt.Errorf("%w: the file has no column %s, which is required or has an initial-default", ErrNotTranscodable, c.name)
		}
		return -1, nil
	}
	s := src.Column(j)
	sc := levelChain(s.SchemaNode(), ids)
	if len(sc) != len(c.chain) {
		return 0, fmt.Errorf("%w: column %s is nested %d deep in the file, %d in the output", ErrNotTranscodable, c.name, len(sc), len(c.chain))
	}
	for k, l := range c.chain {
		if sc[k].rep != l.rep || l.id >= 0 && sc[k].id != l.id {
			return 0, fmt.Errorf("%w: column %s has another layout in the file (level %d: %s id %d, output %s id %d)",
				ErrNotTranscodable, c.name, len(sc)-k, sc[k].rep, sc[k].id, l.rep, l.id)
		}
	}
	if err := checkLeafType(s, c); err != nil {
		return 0, err
	}
	if s.MaxDefinitionLevel() != c.maxDef || s.MaxRepetitionLevel() != c.maxRep {
		return 0, fmt.Errorf("%w: column %s has other levels in the file", ErrNotTranscodable, c.name)
	}
	return j, nil
}

// checkLeafType says whether the file's column s holds values of output
// column c's type, as they are or by a promotion the Transcoder applies.
func checkLeafType(s *schema.Column, c *tcColumn) error {
	if dt, ok := c.typ.(spec.DecimalType); ok {
		if !decimalSourceOK(s, dt) {
			return fmt.Errorf("%w: column %s is %s %s in the file, %s in the output", ErrNotTranscodable, c.name, s.PhysicalType(), s.LogicalType(), c.typ)
		}
	} else if !promotable(s, c) {
		if s.PhysicalType() != c.desc.PhysicalType() ||
			s.PhysicalType() == parquet.Types.FixedLenByteArray && s.TypeLength() != c.desc.TypeLength() {
			return fmt.Errorf("%w: column %s is %s in the file, %s in the output", ErrNotTranscodable, c.name, s.PhysicalType(), c.desc.PhysicalType())
		}
		if !sameLogical(s.LogicalType(), c.desc.LogicalType()) && !plainSignedInt(s, c.desc) && !plainSignedInt(c.desc, s) {
			return fmt.Errorf("%w: column %s is %s in the file, %s in the output", ErrNotTranscodable, c.name, s.LogicalType(), c.desc.LogicalType())
		}
	}
	return nil
}

// physicalDefault is f's initial-default as the value a column writer of
// physical type pt takes.
func physicalDefault(f spec.NestedField, desc *schema.Column) (any, error) {
	v, err := parseDefault(f.Type, f.InitialDefault)
	if err != nil {
		return nil, err
	}
	return physicalValue(v, desc)
}

// physicalValue is v (spec/values.go conventions) as the value a column
// writer of desc's physical type takes.
func physicalValue(v any, desc *schema.Column) (any, error) {
	pt := desc.PhysicalType()
	var out any
	switch v := v.(type) {
	case spec.Decimal:
		return decimalDefault(v, desc)
	case bool, int32, int64, float32, float64:
		out = v
	case string:
		out = parquet.ByteArray(v)
	case [16]byte:
		out = parquet.FixedLenByteArray(v[:])
	case []byte:
		if pt == parquet.Types.FixedLenByteArray {
			out = parquet.FixedLenByteArray(v)
		} else {
			out = parquet.ByteArray(v)
		}
	default:
		return nil, fmt.Errorf("unsupported default %T", v)
	}
	want := map[parquet.Type]string{parquet.Types.Boolean: "bool", parquet.Types.Int32: "int32", parquet.Types.Int64: "int64",
		parquet.Types.Float: "float32", parquet.Types.Double: "float64", parquet.Types.ByteArray: "parquet.ByteArray",
		parquet.Types.FixedLenByteArray: "parquet.FixedLenByteArray"}[pt]
	if got := fmt.Sprintf("%T", out); got != want {
		return nil, fmt.Errorf("a %s default for a %s column", got, pt)
	}
	return out, nil
}

func hasInitialDefault(f spec.NestedField) bool {
	d := strings.TrimSpace(string(f.InitialDefault))
	return d != "" && d != "null"
}

// promotable says whether the file's column holds an older type that
// Iceberg promotes to the output's: int to long, float to double. The
// values convert exactly, as the Reader converts them.
func promotable(s *schema.Column, c *tcColumn) bool {
	plain := func(l schema.LogicalType, bits int8) bool {
		if l == nil {
			return true
		}
		switch l := l.(type) {
		case schema.NoLogicalType:
			return true
		case schema.IntLogicalType:
			return l.BitWidth() == bits && l.IsSigned()
		}
		return false
	}
	switch c.typ.(type) {
	case spec.LongType:
		return s.PhysicalType() == parquet.Types.Int32 && plain(s.LogicalType(), 32) && plain(c.desc.LogicalType(), 64)
	case spec.DoubleType:
		return s.PhysicalType() == parquet.Types.Float && c.desc.PhysicalType() == parquet.Types.Double
	}
	return false
}

// plainSignedInt reports whether a is an INT32 or INT64 column without a
// logical type and b one of the same physical type annotated as the signed
// integer of its width: Parquet reads both as the same values (writers such
// as pyarrow leave int64 columns unannotated).
func plainSignedInt(a, b *schema.Column) bool {
	if a.PhysicalType() != b.PhysicalType() || !noLogical(a.LogicalType()) {
		return false
	}
	it, ok := b.LogicalType().(schema.IntLogicalType)
	if !ok || !it.IsSigned() {
		return false
	}
	switch a.PhysicalType() {
	case parquet.Types.Int32:
		return it.BitWidth() == 32
	case parquet.Types.Int64:
		return it.BitWidth() == 64
	}
	return false
}

func sameLogical(a, b schema.LogicalType) bool {
	if noLogical(a) || noLogical(b) {
		return noLogical(a) && noLogical(b)
	}
	return a.Equals(b)
}

func noLogical(l schema.LogicalType) bool {
	if l == nil {
		return true
	}
	_, ok := l.(schema.NoLogicalType)
	return ok
}

// tcInput is an input with its column mapping and deleted positions.
type tcInput struct {
	TranscodeInput
	src []int
	// fill is, by output column, the value of a column the input has a
	// constant for (nil: null), as the column writer takes it; set where
	// hasFill is.
	fill    []any
	hasFill []bool
	deleted []uint64
	rows    int64
}

// TranscodeSource gives the inputs of one row group in order. Input may
// block until input k is ready: a caller that reads inputs ahead lets the
// columns start on the first while later ones load. Input is called at
// most once for each k, possibly from several goroutines at once for
// different k.
type TranscodeSource interface {
	Len() int
	Input(ctx context.Context, k int) (TranscodeInput, error)
}

type sliceSource []TranscodeInput

func (s sliceSource) Len() int { return len(s) }
func (s sliceSource) Input(_ context.Context, k int) (TranscodeInput, error) {
	return s[k], nil
}

// tcLazy resolves one input the first time a column needs it.
type tcLazy struct {
	once sync.Once
	in   tcInput
	err  error
}

func (t *Transcoder) resolve(ctx context.Context, src TranscodeSource, l *tcLazy, k int) (*tcInput, error) {
	l.once.Do(func() {
		in, err := src.Input(ctx, k)
		if err != nil {
			l.err = err
			return
		}
		cols, err := t.check(in.File, in.Stored, in.Constants)
		if err != nil {
			l.err = fmt.Errorf("transcode %s: %w", in.Path, err)
			return
		}
		if t.deltaRowIDs && in.FirstRowID == nil && t.hasRowID() {
			l.err = fmt.Errorf("transcode %s: %w: the file has no first_row_id, and this output's _row_id column takes no nulls (DeltaRowIDs)", in.Path, ErrNotTranscodable)
			return
		}
		l.in = tcInput{TranscodeInput: in, src: cols, rows: in.File.NumRows()}
		if err := t.fillConstants(&l.in); err != nil {
			l.err = fmt.Errorf("transcode %s: %w", in.Path, err)
			return
		}
		if in.Deleted != nil && !in.Deleted.IsEmpty() {
			l.in.deleted = in.Deleted.ToArray()
		}
	})
	return &l.in, l.err
}

// hasRowID says whether the file has a _row_id column.
func (t *Transcoder) hasRowID() bool {
	return slices.ContainsFunc(t.cols, func(c *tcColumn) bool { return c.kind == tcRowID })
}

// fillConstants sets in's fill values from its constants, converted to
// each column's type and then to its writer's physical value.
func (t *Transcoder) fillConstants(in *tcInput) error {
	if len(in.Constants) == 0 {
		return nil
	}
	in.fill = make([]any, len(t.cols))
	in.hasFill = make([]bool, len(t.cols))
	for _, c := range t.cols {
		if c.nested || c.kind != tcData {
			continue
		}
		v, ok, err := resolveConstant(in.Constants, c.field)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		in.hasFill[c.idx] = true
		if v == nil {
			continue
		}
		pv, err := physicalValue(v, c.desc)
		if err != nil {
			return fmt.Errorf("column %s: partition value %v: %w", c.name, v, err)
		}
		in.fill[c.idx] = pv
	}
	return nil
}

// WriteRowGroup appends one row group holding the rows of every input, in
// order, less their deleted positions. All inputs are checked before any
// byte is written; an error wrapping ErrNotTranscodable leaves the file as
// it was.
func (t *Transcoder) WriteRowGroup(ctx context.Context, ins []TranscodeInput) (int64, error) {
	for _, in := range ins {
		if _, err := t.check(in.File, in.Stored, in.Constants); err != nil {
			return 0, fmt.Errorf("transcode %s: %w", in.Path, err)
		}
	}
	return t.WriteRowGroupFrom(ctx, sliceSource(ins))
}

// WriteRowGroupFrom is WriteRowGroup for inputs that arrive while the row
// group is written. An input refused by Check fails the row group (with
// ErrNotTranscodable) after earlier inputs were encoded; the Transcoder
// then takes no more writes and its file must be discarded.
func (t *Transcoder) WriteRowGroupFrom(ctx context.Context, src TranscodeSource) (rows int64, err error) {
	if t.closed {
		return 0, errors.New("transcode: write to a closed file")
	}
	if t.err != nil {
		return 0, fmt.Errorf("transcode: an earlier row group failed: %w", t.err)
	}
	defer func() {
		if err != nil {
			t.err = err
		}
	}()
	n := src.Len()
	if n == 0 {
		return 0, nil
	}
	lazy := make([]tcLazy, n)
	get := func(k int) (*tcInput, error) { return t.resolve(ctx, src, &lazy[k], k) }
	first, err := get(0)
	if err != nil {
		return 0, err
	}
	// The costliest columns (estimated from the first input) start first,
	// so that the last to finish is a cheap one and no core waits long.
	cost := make([]float64, len(t.cols))
	md := first.File.MetaData()
	for g := 0; g < md.NumRowGroups(); g++ {
		rg := md.RowGroup(g)
		for i, j := range first.src {
			if j < 0 {
				continue
			}
			if cc, err := rg.ColumnChunk(j); err == nil {
				cost[i] += columnCost(cc)
			}
		}
	}
	if t.wr == nil {
		if err := t.start(first); err != nil {
			return 0, err
		}
	}
	rgw, err := t.wr.AppendBufferedRowGroupChecked()
	if err != nil {
		return 0, fmt.Errorf("transcode: %w", err)
	}
	order := make([]int, len(t.cols))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cost[b], cost[a]) })
	counts := make([]int64, len(t.cols))
	errs := make([]error, len(t.cols))
	next := make(chan int, len(order))
	for _, i := range order {
		next <- i
	}
	close(next)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range min(t.workers, len(t.cols)) {
		wg.Go(func() {
			for i := range next {
				if ctx.Err() != nil {
					errs[i] = ctx.Err()
					continue
				}
				counts[i], errs[i] = t.writeColumn(ctx, rgw, t.cols[i], n, get)
				if errs[i] != nil {
					cancel()
				}
			}
		})
	}
	wg.Wait()
	if err := firstCause(errs); err != nil {
		return 0, err
	}
	for i := 1; i < len(counts); i++ {
		if counts[i] != counts[0] {
			return 0, fmt.Errorf("transcode: column %s got %d rows, column %s %d", t.cols[i].name, counts[i], t.cols[0].name, counts[0])
		}
	}
	if err := rgw.Close(); err != nil {
		return 0, fmt.Errorf("transcode: %w", err)
	}
	t.metrics.rows += counts[0]
	return counts[0], nil
}

// columnCost estimates the CPU a column chunk costs to transcode, in
// nanoseconds: a cost per value by physical type (dictionary hashing and
// encoding dominate, so short strings cost about what integers do) plus
// a cost per byte of values. Measured on the compaction benchmark; only
// the order it gives matters.
func columnCost(cc *metadata.ColumnChunkMetaData) float64 {
	n := float64(cc.NumValues())
	if n == 0 {
		return 0
	}
	switch cc.Type() {
	case parquet.Types.ByteArray, parquet.Types.FixedLenByteArray:
		avg := float64(cc.TotalUncompressedSize()) / n
		return n * (60 + 9*avg)
	case parquet.Types.Boolean:
		return n * 20
	case parquet.Types.Float, parquet.Types.Double:
		return n * 45
	}
	return n * 80
}

// firstCause is the error that stopped the columns: the others were
// cancelled because of it.
func firstCause(errs []error) error {
	var cancelled error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled):
			cancelled = err
		default:
			return err
		}
	}
	return cancelled
}

// Close finishes the file and returns its metrics. It does not close the
// underlying io.Writer.
func (t *Transcoder) Close() (m Metrics, err error) {
	defer recoverError(&err, "close parquet file")
	if t.closed {
		return Metrics{}, errors.New("close parquet file: already closed")
	}
	t.closed = true
	if t.err != nil {
		return Metrics{}, fmt.Errorf("close parquet file: a row group failed: %w", t.err)
	}
	if t.wr == nil {
		if err := t.start(nil); err != nil {
			return Metrics{}, fmt.Errorf("close parquet file: %w", err)
		}
	}
	if err := t.wr.Close(); err != nil {
		return Metrics{}, fmt.Errorf("close parquet file: %w", err)
	}
	md, err := t.wr.FileMetadata()
	if err != nil {
		return Metrics{}, fmt.Errorf("close parquet file: %w", err)
	}
	m, err = t.metrics.Finish(md)
	if err != nil {
		return Metrics{}, fmt.Errorf("close parquet file: %w", err)
	}
	return m, nil
}

// writeColumn transcodes column c of every input into the row group and
// returns the rows it wrote.
func (t *Transcoder) writeColumn(ctx context.Context, rgw file.BufferedRowGroupWriter, c *tcColumn, n int, get func(int) (*tcInput, error)) (rows int64, err error) {
	defer recoverError(&err, "transcode column "+c.name)
	cw, err := rgw.Column(c.idx)
	if err != nil {
		return 0, err
	}
	_, isDecimal := c.typ.(spec.DecimalType)
	switch w := cw.(type) {
	case *file.BooleanColumnChunkWriter:
		return transcodeColumn(ctx, c, n, get, tcDecoders[bool]{limit: t.pageLimit, open: readerOf[bool, *file.BooleanColumnChunkReader], plain: plainBool}, w.WriteBatch)
	case *file.Int32ColumnChunkWriter:
		if !isDecimal {
			var stats func(mn, mx int32)
			if st, ok := w.PageStatistics().(*metadata.Int32Statistics); ok {
				stats = st.SetMinMax
			}
			p, err := intDictIndex(t, c, w, n, get, plainInt32, stats, 4, func(v []int32) arrow.Array {
				return array.NewInt32Data(array.NewData(arrow.PrimitiveTypes.Int32, len(v), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(v))}, nil, 0, 0))
			})
			if p != nil || err != nil {
				return transcodeIndices(ctx, t, c, n, get, p, err)
			}
		}
		open := readerOf[int32, *file.Int32ColumnChunkReader]
		if isDecimal {
			open = openDecimal[int32, *file.Int32ColumnChunkReader](c.desc)
		}
		return transcodeColumn(ctx, c, n, get, tcDecoders[int32]{limit: t.pageLimit, open: open, plain: plainInt32}, w.WriteBatch)
	case *file.Int64ColumnChunkWriter:
		if !isDecimal {
			var stats func(mn, mx int64)
			if st, ok := w.PageStatistics().(*metadata.Int64Statistics); ok {
				stats = st.SetMinMax
			}
			p, err := intDictIndex(t, c, w, n, get, plainInt64, stats, 8, func(v []int64) arrow.Array {
				return array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, len(v), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(v))}, nil, 0, 0))
			})
			if p != nil || err != nil {
				return transcodeIndices(ctx, t, c, n, get, p, err)
			}
		}
		open := openInt64
		if isDecimal {
			open = openDecimal[int64, *file.Int64ColumnChunkReader](c.desc)
		}
		return transcodeColumn(ctx, c, n, get, tcDecoders[int64]{limit: t.pageLimit, open: open, plain: plainInt64}, w.WriteBatch)
	case *file.Float32ColumnChunkWriter:
		return transcodeColumn(ctx, c, n, get, tcDecoders[float32]{limit: t.pageLimit, open: readerOf[float32, *file.Float32ColumnChunkReader], plain: plainFloat32}, w.WriteBatch)
	case *file.Float64ColumnChunkWriter:
		return transcodeColumn(ctx, c, n, get, tcDecoders[float64]{limit: t.pageLimit, open: openFloat64, plain: plainFloat64}, w.WriteBatch)
	case *file.ByteArrayColumnChunkWriter:
		p, err := t.byteArrayDictIndex(c, w, n, get)
		if p != nil || err != nil {
			return transcodeIndices(ctx, t, c, n, get, p, err)
		}
		return transcodeColumn(ctx, c, n, get, tcDecoders[parquet.ByteArray]{limit: t.pageLimit, open: readerOf[parquet.ByteArray, *file.ByteArrayColumnChunkReader],
			plain: plainByteArray, owned: ownBytes[parquet.ByteArray]}, w.WriteBatch)
	case *file.FixedLenByteArrayColumnChunkWriter:
		open := readerOf[parquet.FixedLenByteArray, *file.FixedLenByteArrayColumnChunkReader]
		if isDecimal {
			open = openDecimal[parquet.FixedLenByteArray, *file.FixedLenByteArrayColumnChunkReader](c.desc)
		}
		return transcodeColumn(ctx, c, n, get, tcDecoders[parquet.FixedLenByteArray]{limit: t.pageLimit, open: open,
			plain: plainFixedLen(c.desc.TypeLength()), owned: ownBytes[parquet.FixedLenByteArray]}, w.WriteBatch)
	}
	return 0, fmt.Errorf("transcode column %s: unexpected column writer %T", c.name, cw)
}

// transcodeIndices transcodes column c as the indices of plan p's
// dictionary.
func transcodeIndices[V any](ctx context.Context, t *Transcoder, c *tcColumn, n int, get func(int) (*tcInput, error), p *tcDictIndex[V], err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	c.dictIdx = true
	defer func() { c.dictIdx = false }()
	return transcodeColumn(ctx, c, n, get, tcDecoders[int32]{limit: t.pageLimit, open: p.open, plain: p.plain}, p.write(c))
}

// pageReader is the typed part of a column chunk reader a transcode uses.
// ReadBatchInPage, not ReadBatch: its byte-array values alias the page,
// which stays valid until the next read, so nothing is copied per value.
type pageReader[T any] interface {
	HasNext() bool
	Skip(int64) (int64, error)
	ReadBatchInPage(batchSize int64, values []T, defLvls, repLvls []int16) (int64, int, error)
}

func readerOf[T any, R pageReader[T]](cr file.ColumnChunkReader) (pageReader[T], error) {
	r, ok := cr.(R)
	if !ok {
		return nil, fmt.Errorf("unexpected column reader %T", cr)
	}
	return r, nil
}

// openInt64 reads a long column, promoting an int one.
func openInt64(cr file.ColumnChunkReader) (pageReader[int64], error) {
	if r, ok := cr.(*file.Int32ColumnChunkReader); ok {
		return &promoted[int32, int64]{r: r}, nil
	}
	return readerOf[int64, *file.Int64ColumnChunkReader](cr)
}

// openFloat64 reads a double column, promoting a float one.
func openFloat64(cr file.ColumnChunkReader) (pageReader[float64], error) {
	if r, ok := cr.(*file.Float32ColumnChunkReader); ok {
		return &promoted[float32, float64]{r: r}, nil
	}
	return readerOf[float64, *file.Float64ColumnChunkReader](cr)
}

// promoted reads S values and converts them to T.
type promoted[S int32 | float32, T int64 | float64] struct {
	r   pageReader[S]
	buf []S
}

func (p *promoted[S, T]) HasNext() bool { return p.r.HasNext() }

func (p *promoted[S, T]) Skip(n int64) (int64, error) { return p.r.Skip(n) }

func (p *promoted[S, T]) ReadBatchInPage(n int64, vals []T, def, rep []int16) (int64, int, error) {
	if len(p.buf) < len(vals) {
		p.buf = make([]S, len(vals))
	}
	total, nv, err := p.r.ReadBatchInPage(n, p.buf[:len(vals)], def, rep)
	for i := range nv {
		vals[i] = T(p.buf[i])
	}
	return total, nv, err
}

// tcBatch is how many values one read takes; a few pages' worth.
const tcBatch = 4096

// tcDecoders are how a column's values are read: arrow-go's typed reader
// (always possible) and, when plain is set, the Transcoder's own page
// decoder for sources of the output's physical type.
type tcDecoders[T any] struct {
	open  func(file.ColumnChunkReader) (pageReader[T], error)
	plain plainDecoder[T]
	owned func([]T)
	limit int // Transcoder.pageLimit
}

func transcodeColumn[T any](ctx context.Context, c *tcColumn, nin int, get func(int) (*tcInput, error),
	dec tcDecoders[T], write func(values []T, def, rep []int16) (int64, error)) (int64, error) {
	if c.nested {
		return transcodeNested(ctx, c, nin, get, dec, write)
	}
	sc, _ := c.scratch.(*tcScratch[T])
	if sc == nil {
		sc = &tcScratch[T]{vals: make([]T, tcBatch), def: make([]int16, tcBatch), outDef: make([]int16, tcBatch)}
		if c.kind != tcData {
			sc.lin = make([]int64, tcBatch)
		}
		c.scratch = sc
	}
	vals, def := sc.vals, sc.def
	outDef := sc.outDef
	// lin is the lineage values out, when they differ from vals.
	lin := sc.lin
	// Both grow for long pages; the next row group reuses them.
	defer func() { sc.outDef, sc.lin = outDef, lin }()
	var written int64
	for k := range nin {
		in, err := get(k)
		if err != nil {
			return 0, err
		}
		c.tally = colTally{}
		n, err := func() (n int64, err error) {
			// arrow-go panics on some corrupt pages: name the file.
			defer recoverError(&err, "transcode "+in.Path+" column "+c.name)
			j := in.src[c.idx]
			var pos int64 // row position in the file
			del := in.deleted
			md := in.File.MetaData()
			for g := 0; g < md.NumRowGroups(); g++ {
				if err := ctx.Err(); err != nil {
					return n, err
				}
				rgRows := md.RowGroup(g).NumRows()
				if j < 0 && c.kind == tcData {
					// A column added after the file was written: its
					// initial-default, or nulls; or one the file's
					// partition gives (Constants).
					var dv T
					nv := 0
					d := int16(0)
					fill := c.dflt
					if in.hasFill != nil && in.hasFill[c.idx] {
						fill = in.fill[c.idx]
					}
					if fill != nil {
						dv, d = fill.(T), 1
						for i := range vals {
							vals[i] = dv
						}
					}
					for left := rgRows; left > 0; {
						nb := min(left, tcBatch)
						var kept int
						kept, del = keepRows(del, pos, nb, func(_ int64, o int) { outDef[o] = d })
						if d == 1 {
							nv = kept
							c.tally.nonNull += nb
							c.tally.dropped += nb - int64(kept)
						}
						c.tally.written += int64(nv)
						od := outDef[:kept]
						if c.maxDef == 0 {
							od = nil
						}
						observe(c, vals[:nv], int64(kept))
						if _, err := write(vals[:nv], od, nil); err != nil {
							return n, err
						}
						n += int64(kept)
						pos += nb
						left -= nb
					}
					continue
				}
				if j < 0 {
					// A lineage column the file does not store: every row
					// inherits.
					for left := rgRows; left > 0; {
						nb := min(left, tcBatch)
						var kept int
						kept, del = keepRows(del, pos, nb, func(r int64, o int) {
							c.tally.lin.Inherited.add(c.tally.ro, uint64(r))
							c.tally.ro++
							outDef[o] = 0
							if v, ok := inherit(c, in, r); ok {
								lin[o], outDef[o] = v, 1
							}
						})
						nv := compactLineage(lin, outDef[:kept])
						if err := writeLineage(c, any(write), lin[:nv], outDef[:kept]); err != nil {
							return n, err
						}
						n += int64(kept)
						pos += nb
						left -= nb
					}
					continue
				}
				rgr := in.File.RowGroup(g)
				srcCol := in.File.MetaData().Schema.Column(j)
				srcMaxDef := srcCol.MaxDefinitionLevel()
				var got int64
				emit := func(total int64, nv int, vals []T, def []int16) error {
					if len(outDef) < int(total) {
						outDef = make([]int16, total)
						if c.kind != tcData {
							lin = make([]int64, total)
						}
					}
					c.tally.nonNull += int64(nv)
					kept, out, od, err := filterBatch(c, in, vals, def[:total], nv, srcMaxDef, pos, &del, outDef, lin)
					if err != nil {
						return fmt.Errorf("%s: column %s: %w", in.Path, c.name, err)
					}
					if c.kind == tcData {
						c.tally.written += int64(len(out.([]T)))
						observe(c, out.([]T), int64(kept))
						if _, err := write(out.([]T), od, nil); err != nil {
							return err
						}
					} else if err := writeLineage(c, any(write), out.([]int64), od); err != nil {
						return err
					}
					n += int64(kept)
					pos += total
					got += total
					return nil
				}
				done := false
				if dec.plain != nil && sameForm(srcCol, c.desc) {
					pd, err := sc.pd.open(in, g, j, srcMaxDef, dec.plain, dec.owned)
					if err != nil {
						return n, fmt.Errorf("%s: %w", in.Path, err)
					}
					pd.limit = dec.limit
					for {
						total, vals, def, err := pd.next(rgRows - got)
						if errors.Is(err, errPageUnsupported) {
							break // arrow-go's reader goes on from row got
						}
						if err != nil {
							return n, fmt.Errorf("%s: column %s: %w", in.Path, c.name, err)
						}
						if total == 0 {
							done = true
							break
						}
						if err := emit(total, len(vals), vals, def); err != nil {
							return n, err
						}
					}
				}
				if !done {
					cr, err := rgr.Column(j)
					if err != nil {
						return n, fmt.Errorf("%s: %w", in.Path, err)
					}
					rd, err := dec.open(cr)
					if err != nil {
						return n, fmt.Errorf("%s: %w", in.Path, err)
					}
					if got > 0 {
						if skipped, err := rd.Skip(got); err != nil || skipped != got {
							return n, fmt.Errorf("%s: column %s: skip %d rows: %d, %v", in.Path, c.name, got, skipped, err)
						}
					}
					for rd.HasNext() {
						total, nv, err := rd.ReadBatchInPage(tcBatch, vals, def, nil)
						if err != nil {
							return n, fmt.Errorf("%s: column %s: %w", in.Path, c.name, err)
						}
						if total == 0 {
							break
						}
						if err := emit(total, nv, vals, def); err != nil {
							return n, err
						}
					}
					if err := cr.Err(); err != nil {
						return n, fmt.Errorf("%s: column %s: %w", in.Path, c.name, err)
					}
				}
				if got != rgRows {
					return n, fmt.Errorf("%s: column %s has %d values in a row group of %d rows", in.Path, c.name, got, rgRows)
				}
			}
			if pos != in.rows {
				return n, fmt.Errorf("%s: column %s has %d rows, the file %d", in.Path, c.name, pos, in.rows)
			}
			return n, nil
		}()
		if err != nil {
			return 0, err
		}
		in.Tally.merge(c.id, &c.tally, c.kind != tcData)
		written += n
	}
	return written, nil
}

// keepRows calls fn(position, output index) for each row of [pos, pos+n)
// not in del (sorted), and returns how many and del past the range.
func keepRows(del []uint64, pos, n int64, fn func(r int64, o int)) (int, []uint64) {
	o := 0
	for r := pos; r < pos+n; r++ {
		for len(del) > 0 && del[0] < uint64(r) {
			del = del[1:]
		}
		if len(del) > 0 && del[0] == uint64(r) {
			continue
		}
		fn(r, o)
		o++
	}
	return o, del
}

// inherit is the lineage value a row without a stored one gets.
func inherit(c *tcColumn, in *tcInput, r int64) (int64, bool) {
	switch c.kind {
	case tcRowID:
		if in.FirstRowID == nil {
			return 0, false
		}
		return *in.FirstRowID + r, true
	case tcSeq:
		return in.DataSequenceNumber, true
	}
	return 0, false
}

// compactLineage moves the non-null values of lin (by def) to its front
// and returns how many there are.
func compactLineage(lin []int64, def []int16) int {
	n := 0
	for i, d := range def {
		if d == 1 {
			lin[n] = lin[i]
			n++
		}
	}
	return n
}

// filterBatch drops the deleted rows of one read batch (rows
// [pos, pos+len(def)), vals holding nv non-null values) and returns the
// kept rows' count, values and definition levels (nil for a required
// output column). For lineage columns the values are the int64s with
// inheritance applied.
func filterBatch[T any](c *tcColumn, in *tcInput, vals []T, def []int16, nv int, srcMaxDef int16, pos int64, del *[]uint64, outDef []int16, lin []int64) (int, any, []int16, error) {
	total := int64(len(def))
	if srcMaxDef == 0 {
		if int64(nv) != total {
			return 0, nil, nil, fmt.Errorf("%d values for %d rows of a required column", nv, total)
		}
	}
	d := *del
	for len(d) > 0 && d[0] < uint64(pos) {
		d = d[1:]
	}
	hasDel := len(d) > 0 && d[0] < uint64(pos+total)
	if c.kind != tcData {
		src := any(vals).([]int64)
		o, vi := 0, 0
		for i := range total {
			r := pos + i
			isVal := srcMaxDef == 0 || def[i] == srcMaxDef
			var v int64
			if isVal {
				v = src[vi]
				vi++
			}
			if hasDel && len(d) > 0 && d[0] == uint64(r) {
				d = d[1:]
				if isVal {
					c.tally.dropped++
				}
				continue
			}
			// The tally splits rows by what the file holds, whatever the
			// input's first_row_id: the caller applies the manifest's.
			if isVal {
				c.tally.lin.Stored.add(c.tally.ro, uint64(v))
			} else {
				c.tally.lin.Inherited.add(c.tally.ro, uint64(r))
			}
			c.tally.ro++
			stored := isVal && in.FirstRowID != nil // a file without first_row_id has no lineage yet
			switch {
			case stored:
				lin[o], outDef[o] = v, 1
			default:
				if iv, ok := inherit(c, in, r); ok {
					lin[o], outDef[o] = iv, 1
				} else {
					outDef[o] = 0
				}
			}
			o++
		}
		*del = d
		nvOut := compactLineage(lin, outDef[:o])
		return o, lin[:nvOut], outDef[:o], nil
	}
	if !hasDel {
		*del = d
		var od []int16
		if c.maxDef > 0 {
			od = def
			if srcMaxDef == 0 {
				od = outDef[:total]
				for i := range od {
					od[i] = 1
				}
			}
		}
		return int(total), vals[:nv], od, nil
	}
	o, vo, vi := 0, 0, 0
	for i := range total {
		r := pos + i
		isVal := srcMaxDef == 0 || def[i] == srcMaxDef
		if len(d) > 0 && d[0] == uint64(r) {
			d = d[1:]
			if isVal {
				vi++
				c.tally.dropped++
			}
			continue
		}
		if isVal {
			vals[vo] = vals[vi]
			vo++
			vi++
			outDef[o] = 1
		} else {
			outDef[o] = 0
		}
		o++
	}
	*del = d
	var od []int16
	if c.maxDef > 0 {
		od = outDef[:o]
	}
	return o, vals[:vo], od, nil
}

// writeLineage writes int64 lineage values through write, which is an
// int64 column writer's WriteBatch, and records their metrics.
func writeLineage(c *tcColumn, write any, vals []int64, def []int16) error {
	w, ok := write.(func([]int64, []int16, []int16) (int64, error))
	if !ok {
		return fmt.Errorf("lineage column %s is not int64", c.name)
	}
	observe(c, vals, int64(len(def)))
	c.tally.writtenLineage(vals, def)
	_, err := w(vals, def, nil)
	return err
}
