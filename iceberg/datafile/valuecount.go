package datafile

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/iceberg/spec"
)

// LeafColumn is one primitive column of a schema, at any depth.
type LeafColumn struct {
	ID   int
	Name string // dotted path from the top-level field
	// Repeated: below a list or map. The null count writers put in a
	// manifest for such a leaf differs (parquet-mr counts a null or empty
	// list as a null of each leaf below it, Arrow's spaced writes do
	// not), so only leaves reached through structs alone can be compared
	// with another writer's metrics.
	Repeated bool
}

// NonNullCounter counts the non-null values of each leaf column of a
// schema in record batches, as a manifest's value_counts minus
// null_value_counts count them (MetricsCollector's rules: a NaN is a
// value, a leaf below a null struct or in a null or empty list is not),
// for every leaf whatever its metrics mode. It does not keep bounds, so it
// costs little more than the arrays' null counts.
//
// A NonNullCounter is not safe for concurrent use.
type NonNullCounter struct {
	c *MetricsCollector
}

// NewNonNullCounter returns a counter for batches of schema s (lineage
// columns included when s has them, as SchemaWithLineage gives).
func NewNonNullCounter(s *spec.Schema) *NonNullCounter {
	c := NewMetricsCollector(s, MetricsConfig{Default: MetricsMode{Kind: MetricsCounts}})
	for _, l := range c.leaves {
		l.bounds, l.isFloat = false, false // NaNs are values here: no need to find them
	}
	return &NonNullCounter{c: c}
}

// Add counts one batch, whose columns are matched by field id.
func (n *NonNullCounter) Add(rec arrow.RecordBatch) error { return n.c.Add(rec) }

// Rows is the number of rows added.
func (n *NonNullCounter) Rows() int64 { return n.c.rows }

// NonNull returns the non-null values counted so far by leaf field id.
func (n *NonNullCounter) NonNull() map[int]int64 {
	out := make(map[int]int64, len(n.c.leaves))
	for _, l := range n.c.leaves {
		out[l.id] = l.values - l.nulls
	}
	return out
}

// LeafColumns returns the primitive columns of s in schema order, nested
// leaves included (not those of variant or unknown type, which are not
// counted).
func LeafColumns(s *spec.Schema) []LeafColumn {
	c := NewMetricsCollector(s, MetricsConfig{Default: MetricsMode{Kind: MetricsCounts}})
	out := make([]LeafColumn, len(c.leaves))
	for i, l := range c.leaves {
		out[i] = LeafColumn{ID: l.id, Name: l.name, Repeated: l.repeated}
	}
	return out
}
