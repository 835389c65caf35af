package datafile

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/icectl/icectl/iceberg/spec"
)

// Table properties that choose which column metrics are written, as Java
// Iceberg reads them (core TableProperties and MetricsConfig).
const (
	MetricsDefaultProperty           = "write.metadata.metrics.default"
	MetricsColumnPropertyPrefix      = "write.metadata.metrics.column."
	MetricsMaxInferredColumnProperty = "write.metadata.metrics.max-inferred-column-defaults"

	// DefaultMetricsMaxInferredColumns is how many top-level columns get the
	// default mode when write.metadata.metrics.default is unset; the rest
	// get none, so that very wide tables do not bloat their manifests.
	DefaultMetricsMaxInferredColumns = 100
)

// MetricsModeKind says how much is recorded for a column.
type MetricsModeKind int

const (
	// MetricsNone records nothing for the column.
	MetricsNone MetricsModeKind = iota
	// MetricsCounts records value, null and NaN counts and the column size.
	MetricsCounts
	// MetricsTruncate records counts and bounds, string and binary bounds
	// cut to Length code points or bytes.
	MetricsTruncate
	// MetricsFull records counts and bounds as they are.
	MetricsFull
)

// MetricsMode is one column's metrics mode: none, counts, truncate(N) or
// full.
type MetricsMode struct {
	Kind   MetricsModeKind
	Length int // truncate length; only for MetricsTruncate
}

// DefaultMetricsMode is Java's default, truncate(16).
var DefaultMetricsMode = MetricsMode{Kind: MetricsTruncate, Length: 16}

var metricsTruncateRe = regexp.MustCompile(`^truncate\((\d+)\)$`)

// ParseMetricsMode parses a metrics mode as Java's MetricsModes.fromString
// does: case-insensitive, truncate length positive.
func ParseMetricsMode(s string) (MetricsMode, error) {
	switch lower := strings.ToLower(s); lower {
	case "none":
		return MetricsMode{Kind: MetricsNone}, nil
	case "counts":
		return MetricsMode{Kind: MetricsCounts}, nil
	case "full":
		return MetricsMode{Kind: MetricsFull}, nil
	default:
		m := metricsTruncateRe.FindStringSubmatch(lower)
		if m == nil {
			return MetricsMode{}, fmt.Errorf("invalid metrics mode %q: want none, counts, truncate(N) or full", s)
		}
		n, err := strconv.Atoi(m[1])
		if err != nil || n <= 0 {
			return MetricsMode{}, fmt.Errorf("invalid metrics mode %q: truncate length must be a positive int", s)
		}
		return MetricsMode{Kind: MetricsTruncate, Length: n}, nil
	}
}

func (m MetricsMode) String() string {
	switch m.Kind {
	case MetricsNone:
		return "none"
	case MetricsCounts:
		return "counts"
	case MetricsTruncate:
		return fmt.Sprintf("truncate(%d)", m.Length)
	case MetricsFull:
		return "full"
	}
	return fmt.Sprintf("MetricsMode(%d)", int(m.Kind))
}

// MetricsConfig is the metrics mode of every column of a file, by full
// dotted column name ("a.b", "list.element", "map.key", "map.value"), as
// Java's MetricsConfig keys them.
type MetricsConfig struct {
	Default MetricsMode
	Columns map[string]MetricsMode

	explicit map[string]bool // columns set by a column property
}

// DefaultMetricsConfig is truncate(16) for every column.
func DefaultMetricsConfig() MetricsConfig { return MetricsConfig{Default: DefaultMetricsMode} }

// PositionDeleteMetricsConfig is Java's default for position-delete files:
// full metrics for every column, so file_path bounds name the data file.
func PositionDeleteMetricsConfig() MetricsConfig {
	return MetricsConfig{Default: MetricsMode{Kind: MetricsFull}}
}

// ColumnMode returns the mode of the column with the given full name.
func (c MetricsConfig) ColumnMode(name string) MetricsMode {
	if m, ok := c.Columns[name]; ok {
		return m
	}
	return c.Default
}

// MetricsConfigFromProperties builds the metrics config of a table from its
// properties, following Java's MetricsConfig.forTable: the default mode
// applies to all columns unless it is unset and the schema has more
// top-level columns than write.metadata.metrics.max-inferred-column-defaults;
// then only the columns under the first that many top-level columns get
// truncate(16) and the rest none. Per-column properties override both.
//
// Unlike Java, which logs and ignores an invalid mode, an invalid mode is an
// error: silently writing different metrics than the table asks for is
// worse than refusing. Sort-order promotion of sorted columns is not
// applied (the caller has no sort order here).
func MetricsConfigFromProperties(schema *spec.Schema, props map[string]string) (MetricsConfig, error) {
	maxInferred := DefaultMetricsMaxInferredColumns
	if v, ok := props[MetricsMaxInferredColumnProperty]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return MetricsConfig{}, fmt.Errorf("table property %s=%q: not an integer", MetricsMaxInferredColumnProperty, v)
		}
		if n >= 0 { // Java falls back to the default for a negative value
			maxInferred = n
		}
	}
	cfg := MetricsConfig{Columns: map[string]MetricsMode{}, explicit: map[string]bool{}}
	if v, ok := props[MetricsDefaultProperty]; ok {
		m, err := ParseMetricsMode(v)
		if err != nil {
			return MetricsConfig{}, fmt.Errorf("table property %s: %w", MetricsDefaultProperty, err)
		}
		cfg.Default = m
	} else if schema == nil || len(schema.Fields) <= maxInferred {
		cfg.Default = DefaultMetricsMode
	} else {
		for _, f := range schema.Fields[:maxInferred] {
			metricsColumnNames(f, "", func(name string) { cfg.Columns[name] = DefaultMetricsMode })
		}
		cfg.Default = MetricsMode{Kind: MetricsNone}
	}
	for k, v := range props {
		col, ok := strings.CutPrefix(k, MetricsColumnPropertyPrefix)
		if !ok {
			continue
		}
		m, err := ParseMetricsMode(v)
		if err != nil {
			return MetricsConfig{}, fmt.Errorf("table property %s: %w", k, err)
		}
		cfg.Columns[col] = m
		cfg.explicit[col] = true
	}
	return cfg, nil
}

// WithSortedColumns returns c with Java's promotion of sort-order columns
// applied: the named columns (those of the table's sort order whose
// transform preserves order, by full name) get truncate(16) when the
// default mode is none or counts, and the default mode otherwise, unless a
// column property of the table set their mode.
func (c MetricsConfig) WithSortedColumns(names ...string) MetricsConfig {
	mode := c.Default
	if mode.Kind == MetricsNone || mode.Kind == MetricsCounts {
		mode = DefaultMetricsMode
	}
	out := MetricsConfig{Default: c.Default, Columns: make(map[string]MetricsMode, len(c.Columns)+len(names)), explicit: c.explicit}
	for k, v := range c.Columns {
		out.Columns[k] = v
	}
	for _, n := range names {
		if !c.explicit[n] {
			out.Columns[n] = mode
		}
	}
	return out
}

// metricsColumnNames calls fn with the full name of f and of every field
// nested in it, named the way Java's Schema.findColumnName names them.
func metricsColumnNames(f spec.NestedField, prefix string, fn func(string)) {
	name := f.Name
	if prefix != "" {
		name = prefix + "." + f.Name
	}
	fn(name)
	switch t := f.Type.(type) {
	case *spec.StructType:
		for _, c := range t.Fields {
			metricsColumnNames(c, name, fn)
		}
	case *spec.ListType:
		metricsColumnNames(spec.NestedField{ID: t.ElementID, Name: "element", Type: t.Element}, name, fn)
	case *spec.MapType:
		metricsColumnNames(spec.NestedField{ID: t.KeyID, Name: "key", Type: t.Key}, name, fn)
		metricsColumnNames(spec.NestedField{ID: t.ValueID, Name: "value", Type: t.Value}, name, fn)
	}
}
