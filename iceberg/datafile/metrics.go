package datafile

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/icectl/icectl/iceberg/spec"
)

// Metrics are the column metrics of one data or delete file, as a manifest
// entry stores them. Maps are keyed by field id; bounds are in Iceberg's
// single-value serialization.
type Metrics struct {
	RecordCount     int64
	ColumnSizes     map[int]int64
	ValueCounts     map[int]int64
	NullValueCounts map[int]int64
	NaNValueCounts  map[int]int64
	LowerBounds     map[int][]byte
	UpperBounds     map[int][]byte
	SplitOffsets    []int64
}

// MetricsCollector computes a file's metrics from the record batches
// written to it, as Java Iceberg's Parquet writer does (ParquetUtil
// footerMetrics plus its own float metrics), except that bounds come from
// the exact values rather than from Parquet statistics, so they never
// depend on a Parquet writer's statistics or on per-row-group truncation.
//
// Every leaf column gets value, null (and for float and double, NaN) counts
// unless its mode is none; value and null counts follow Parquet's column
// chunk semantics, so a null or empty list counts one null value for each
// leaf below it. Bounds are kept only for primitive columns reached through
// structs alone, never inside a list or map, as in Java.
//
// A MetricsCollector is not safe for concurrent use.
type MetricsCollector struct {
	roots  []*metricsNode
	byID   map[int]*metricsNode // top-level columns by field id
	leaves []*metricsLeaf
	rows   int64
	seenID map[int]bool // scratch for duplicate detection in Add
}

// NewMetricsCollector returns a collector for files of the given schema.
// Columns of type unknown and variant get no metrics.
func NewMetricsCollector(schema *spec.Schema, cfg MetricsConfig) *MetricsCollector {
	c := &MetricsCollector{byID: map[int]*metricsNode{}, seenID: map[int]bool{}}
	if schema == nil {
		return c
	}
	for _, f := range schema.Fields {
		n := c.newNode(f, f.Name, cfg, false)
		if n == nil {
			continue
		}
		c.roots = append(c.roots, n)
		c.byID[f.ID] = n
	}
	return c
}

// Add records the metrics of one batch. Columns are matched by the field
// id in each Arrow field's metadata (key "PARQUET:field_id"); a column the
// schema does not have is an error, and so is a column present in some
// batches but not in others (caught by Finish).
func (c *MetricsCollector) Add(rec arrow.RecordBatch) error {
	if rec == nil {
		return fmt.Errorf("metrics: nil record batch")
	}
	sc := rec.Schema()
	n := int(rec.NumRows())
	clear(c.seenID)
	for i := range sc.NumFields() { // Fields() would copy the slice
		f := sc.Field(i)
		id, err := metricsFieldID(f)
		if err != nil {
			return fmt.Errorf("metrics: column %q: %w", f.Name, err)
		}
		if c.seenID[id] {
			return fmt.Errorf("metrics: field id %d appears twice in the record batch", id)
		}
		c.seenID[id] = true
		node, ok := c.byID[id]
		if !ok {
			return fmt.Errorf("metrics: column %q has field id %d, which is not a metrics column of the schema", f.Name, id)
		}
		col := rec.Column(i)
		if col.Len() != n {
			return fmt.Errorf("metrics: column %q has %d values in a batch of %d rows", f.Name, col.Len(), n)
		}
		if err := c.visit(node, col, metricsReach{lo: 0, hi: n, count: int64(n)}, int64(n)); err != nil {
			return err
		}
	}
	c.rows += int64(n)
	return nil
}

// Finish returns the metrics of everything added. Column sizes and split
// offsets come from the Parquet footer md, which must describe the file the
// batches were written to; md may be nil when there is no file, and then
// they are left out.
func (c *MetricsCollector) Finish(md *metadata.FileMetaData) (Metrics, error) {
	m := Metrics{
		RecordCount:     c.rows,
		ColumnSizes:     map[int]int64{},
		ValueCounts:     map[int]int64{},
		NullValueCounts: map[int]int64{},
		NaNValueCounts:  map[int]int64{},
		LowerBounds:     map[int][]byte{},
		UpperBounds:     map[int][]byte{},
	}
	for _, l := range c.leaves {
		if l.mode.Kind == MetricsNone || l.rows == 0 && l.values == 0 {
			continue // no metrics wanted, or column not written
		}
		if l.rows != c.rows {
			return Metrics{}, fmt.Errorf("metrics: column %q (id %d) was present in %d of %d rows' batches", l.name, l.id, l.rows, c.rows)
		}
		m.ValueCounts[l.id] = l.values
		m.NullValueCounts[l.id] = l.nulls
		if l.isFloat {
			m.NaNValueCounts[l.id] = l.nans
		}
		if !l.bounds || l.acc == nil {
			continue
		}
		lo, hi, hasLo, hasHi, err := l.finishBounds()
		if err != nil {
			return Metrics{}, fmt.Errorf("metrics: column %q (id %d): %w", l.name, l.id, err)
		}
		if hasLo {
			m.LowerBounds[l.id] = lo
		}
		if hasHi {
			m.UpperBounds[l.id] = hi
		}
	}
	if md != nil {
		if err := c.footerMetrics(md, &m); err != nil {
			return Metrics{}, err
		}
	}
	return m, nil
}

func metricsFieldID(f arrow.Field) (int, error) {
	i := f.Metadata.FindKey(FieldIDKey)
	if i < 0 {
		return 0, fmt.Errorf("no field id in metadata key %s", FieldIDKey)
	}
	v := f.Metadata.Values()[i]
	id, err := strconv.Atoi(v)
	if err != nil || id < 0 {
		return 0, fmt.Errorf("invalid field id %q", v)
	}
	return id, nil
}
