package table

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// Kinds of partition value problems: a data file whose identity-partition
// source column disagrees with the file's partition value. By the spec
// (and Java) a reader takes the partition value, but engines prune files
// on their column metrics first, so such a file's rows go missing from
// filtered reads.
const (
	// PartitionAllNull: every row stores null where the partition value
	// is not null (the metrics' null count is the record count, or the
	// stored values read so).
	PartitionAllNull = "all-null"
	// PartitionSomeNull: some rows store null where the partition value
	// is not null.
	PartitionSomeNull = "some-null"
	// PartitionValuesDiffer: the bounds, or the stored values, show values
	// other than the partition value (for a null partition value: any
	// non-null value).
	PartitionValuesDiffer = "values-differ"
)

// PartitionValueProblem is one identity partition field of one data file
// whose stored source column disagrees with the file's partition value.
type PartitionValueProblem struct {
	DataFile  string `json:"data_file"`
	SpecID    int32  `json:"spec_id"`
	Partition []any  `json:"-"`
	// Field is the partition field, Column its source column (a dotted
	// name when nested in a struct).
	Field    string `json:"partition_field"`
	SourceID int    `json:"source_id"`
	Column   string `json:"column"`
	Kind     string `json:"kind"`
	// Rows is how many of the file's rows disagree: exact for nulls and
	// for values read from the file; the file's rows when only bounds
	// say so.
	Rows        int64  `json:"rows"`
	RecordCount int64  `json:"record_count"`
	Detail      string `json:"detail"`
	// FromFile: the values were read from the file (its metrics did not
	// decide).
	FromFile bool `json:"read_from_file"`
}

// identityColumn is an identity partition field of a spec with its source
// column: the fields from the top of the schema down to it (structs only).
type identityColumn struct {
	index int // in the spec
	field spec.PartitionField
	path  []spec.NestedField
}

func (c identityColumn) source() spec.NestedField { return c.path[len(c.path)-1] }

func (c identityColumn) name() string {
	names := make([]string, len(c.path))
	for i, f := range c.path {
		names[i] = f.Name
	}
	return strings.Join(names, ".")
}

// PartitionChecker judges data files of one table version against their
// identity partition values; it keeps each spec's identity fields and
// source columns, so that a table's millions of files cost a few map
// lookups each. It is not safe for concurrent use.
type PartitionChecker struct {
	md    *spec.TableMetadata
	specs map[int32]specColumns
}

type specColumns struct {
	cols   []identityColumn
	fields int
	err    error
}

// NewPartitionChecker returns a checker of md's data files.
func NewPartitionChecker(md *spec.TableMetadata) *PartitionChecker {
	return &PartitionChecker{md: md, specs: map[int32]specColumns{}}
}

// identityColumns lists the identity fields of the spec df was written
// with (its manifest's) and their source columns, looked up in the current
// schema, else the newest older one that has them. A spec id or a source
// column the metadata lacks is an error: the file cannot be judged.
func (pc *PartitionChecker) identityColumns(df *manifest.DataFile) ([]identityColumn, error) {
	sc, ok := pc.specs[df.SpecID]
	if !ok {
		sc = pc.specColumns(df.SpecID)
		pc.specs[df.SpecID] = sc
	}
	if sc.err != nil {
		return nil, fmt.Errorf("data file %s: %w", df.FilePath, sc.err)
	}
	if len(df.Partition) != sc.fields {
		return nil, fmt.Errorf("data file %s: partition tuple has %d values but spec %d has %d fields", df.FilePath, len(df.Partition), df.SpecID, sc.fields)
	}
	return sc.cols, nil
}

func (pc *PartitionChecker) specColumns(id int32) specColumns {
	ps, ok := pc.md.SpecByID(int(id))
	if !ok {
		return specColumns{err: fmt.Errorf("table has no partition spec %d", id)}
	}
	out := specColumns{fields: len(ps.Fields)}
	for i, f := range ps.Fields {
		if f.Transform.Kind != spec.TransformIdentity || len(f.SourceIDs) > 1 {
			continue
		}
		path := sourcePath(pc.md, f.SourceID)
		if path == nil {
			return specColumns{err: fmt.Errorf("partition field %s of spec %d: no schema has its source column %d", f.Name, ps.ID, f.SourceID)}
		}
		out.cols = append(out.cols, identityColumn{index: i, field: f, path: path})
	}
	return out
}

// IdentityFields is how many identity fields df's spec has (0 when the
// spec is unknown).
func (pc *PartitionChecker) IdentityFields(df *manifest.DataFile) int {
	cols, err := pc.identityColumns(df)
	if err != nil {
		return 0
	}
	return len(cols)
}

// sourcePath finds field id through nested structs of the current schema,
// else of the newest older schema that has it.
func sourcePath(md *spec.TableMetadata, id int) []spec.NestedField {
	schemas := []*spec.Schema{md.CurrentSchema()}
	for i := len(md.Schemas) - 1; i >= 0; i-- {
		schemas = append(schemas, &md.Schemas[i])
	}
	for _, s := range schemas {
		if s == nil {
			continue
		}
		if p := structPath(s.Fields, id); p != nil {
			return p
		}
	}
	return nil
}

func structPath(fields []spec.NestedField, id int) []spec.NestedField {
	for _, f := range fields {
		if f.ID == id {
			return []spec.NestedField{f}
		}
		if st, ok := f.Type.(*spec.StructType); ok {
			if p := structPath(st.Fields, id); p != nil {
				return append([]spec.NestedField{f}, p...)
			}
		}
	}
	return nil
}

// Metrics judges the identity partition fields of data file df (of the
// spec its manifest names) by its column metrics. It returns
// the problems the metrics prove, and the indexes (in the spec) of the
// fields the metrics do not decide: no metrics for the source column (the
// file may not store it, as Hive-migrated files do not, which is no
// problem: readers take the partition value), or counts without bounds
// that show no null. Only File, reading the file, decides those.
func (pc *PartitionChecker) Metrics(df *manifest.DataFile) (problems []PartitionValueProblem, undecided []int, err error) {
	cols, err := pc.identityColumns(df)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range cols {
		p, decided := judgeMetrics(df, c)
		if !decided {
			undecided = append(undecided, c.index)
		}
		if p != nil {
			problems = append(problems, *p)
		}
	}
	return problems, undecided, nil
}

func newProblem(df *manifest.DataFile, c identityColumn, kind string, rows int64, fromFile bool, format string, args ...any) *PartitionValueProblem {
	return &PartitionValueProblem{DataFile: df.FilePath, SpecID: df.SpecID, Partition: df.Partition, Field: c.field.Name,
		SourceID: c.source().ID, Column: c.name(), Kind: kind, Rows: rows, RecordCount: df.RecordCount, FromFile: fromFile,
		Detail: fmt.Sprintf(format, args...)}
}

// judgeMetrics returns the problem df's metrics prove for column c (nil:
// none) and whether they decide it.
func judgeMetrics(df *manifest.DataFile, c identityColumn) (*PartitionValueProblem, bool) {
	src := c.source()
	id, t := src.ID, src.Type
	pv := df.Partition[c.index]
	nulls, hasNulls := df.NullValueCounts[id]
	lower, hasLower := df.LowerBounds[id]
	upper, hasUpper := df.UpperBounds[id]
	_, hasValues := df.ValueCounts[id]
	_, hasSize := df.ColumnSizes[id]
	_, hasNaN := df.NaNValueCounts[id]
	rc := df.RecordCount
	if !hasNulls && !hasLower && !hasUpper && !hasValues && !hasSize && !hasNaN {
		return nil, false // not known to be stored
	}
	if rc == 0 {
		return nil, true
	}
	text := valueText(t, pv)
	if pv == nil {
		switch {
		case hasNulls && nulls < rc:
			return newProblem(df, c, PartitionValuesDiffer, rc-nulls, false,
				"%d of %d rows store a non-null %s where the partition value is null (null count %d)", rc-nulls, rc, c.name(), nulls), true
		case hasLower || hasUpper:
			return newProblem(df, c, PartitionValuesDiffer, rc, false,
				"bounds %s store non-null values of %s where the partition value is null", boundsText(t, lower, hasLower, upper, hasUpper), c.name()), true
		}
		return nil, hasNulls
	}
	if hasNulls && nulls >= rc {
		return newProblem(df, c, PartitionAllNull, rc, false,
			"all %d rows store %s as null (null count %d, %s) where the partition value is %s", rc, c.name(), nulls, boundsText(t, lower, hasLower, upper, hasUpper), text), true
	}
	var differ []string
	if hasLower && !lowerFits(t, lower, pv) {
		differ = append(differ, "lower bound "+boundText(t, lower))
	}
	if hasUpper && !upperFits(t, upper, pv) {
		differ = append(differ, "upper bound "+boundText(t, upper))
	}
	if len(differ) > 0 {
		return newProblem(df, c, PartitionValuesDiffer, rc, false,
			"%s of %s cannot hold only the partition value %s", strings.Join(differ, " and "), c.name(), text), true
	}
	if hasNulls && nulls > 0 {
		return newProblem(df, c, PartitionSomeNull, nulls, false,
			"%d of %d rows store %s as null where the partition value is %s", nulls, rc, c.name(), text), true
	}
	if isNaN(pv) {
		// Bounds leave NaN out: only the NaN count says all rows are NaN.
		nans, ok := df.NaNValueCounts[id]
		return nil, ok && nans == rc
	}
	// No null stored: the bounds (both present, both fitting) show the
	// value; without them the values are not known.
	return nil, hasLower && hasUpper
}

// lowerFits reports whether b can be the lower bound of a column holding
// only v: v itself, or for strings and binary a prefix of it (bounds may
// be truncated).
func lowerFits(t spec.Type, b []byte, v any) bool {
	switch t.(type) {
	case spec.StringType, spec.BinaryType:
		want, err := spec.EncodeValue(t, v)
		if err != nil {
			return true
		}
		return bytes.HasPrefix(want, b)
	}
	return boundEquals(t, b, v)
}

// upperFits reports whether b can be the upper bound of a column holding
// only v: v itself, or for strings and binary a truncated upper bound of
// it (a prefix of v with its last character, or byte, incremented).
func upperFits(t spec.Type, b []byte, v any) bool {
	switch t.(type) {
	case spec.StringType, spec.BinaryType:
		want, err := spec.EncodeValue(t, v)
		if err != nil {
			return true
		}
		if bytes.Equal(b, want) {
			return true
		}
		if bytes.Compare(b, want) <= 0 || len(b) == 0 {
			return false
		}
		n := 1
		if _, ok := t.(spec.StringType); ok {
			_, n = utf8.DecodeLastRune(b)
		}
		return bytes.HasPrefix(want, b[:len(b)-n])
	}
	return boundEquals(t, b, v)
}

// boundEquals reports whether bound b decodes to v; a bound that does not
// decode says nothing (true).
func boundEquals(t spec.Type, b []byte, v any) bool {
	got, err := spec.DecodeValue(t, b)
	if err != nil {
		return true
	}
	eq, ok := valuesEqual(got, v)
	return eq || !ok
}

// valuesEqual compares two values of one column in the conventions of
// spec/values.go, widening what a type promotion widens (a partition value
// written before int -> long, float -> double); ok is false when they
// cannot be compared.
func valuesEqual(a, b any) (eq, ok bool) {
	a, b = widen(a), widen(b)
	switch x := a.(type) {
	case int64:
		y, ok := b.(int64)
		return ok && x == y, ok
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || math.IsNaN(x) && math.IsNaN(y)), ok
	case bool:
		y, ok := b.(bool)
		return ok && x == y, ok
	case string:
		y, ok := b.(string)
		return ok && x == y, ok
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y), ok
	case spec.Decimal:
		y, ok := b.(spec.Decimal)
		if !ok || x.Unscaled == nil || y.Unscaled == nil {
			return false, false
		}
		if x.Scale != y.Scale {
			return false, false
		}
		return x.Unscaled.Cmp(y.Unscaled) == 0, true
	}
	return false, false
}

func widen(v any) any {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	case [16]byte: // a uuid: compared as the bytes a file stores
		return x[:]
	}
	return v
}

func isNaN(v any) bool {
	switch x := v.(type) {
	case float32:
		return math.IsNaN(float64(x))
	case float64:
		return math.IsNaN(x)
	}
	return false
}

// valueText renders a value of type t for a problem's detail: dates as
// dates, strings quoted.
func valueText(t spec.Type, v any) string {
	if d, ok := v.(int32); ok {
		if _, ok := t.(spec.DateType); ok {
			return time.Unix(0, 0).UTC().AddDate(0, 0, int(d)).Format("2006-01-02")
		}
	}
	return partitionValueText(v)
}

func partitionValueText(v any) string {
	if v == nil {
		return "null"
	}
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case []byte:
		return fmt.Sprintf("0x%x", x)
	}
	return fmt.Sprint(v)
}

func boundText(t spec.Type, b []byte) string {
	v, err := spec.DecodeValue(t, b)
	if err != nil {
		return fmt.Sprintf("0x%x", b)
	}
	return valueText(t, v)
}

func boundsText(t spec.Type, lower []byte, hasLower bool, upper []byte, hasUpper bool) string {
	l, u := "none", "none"
	if hasLower {
		l = boundText(t, lower)
	}
	if hasUpper {
		u = boundText(t, upper)
	}
	if !hasLower && !hasUpper {
		return "no bounds"
	}
	return fmt.Sprintf("[%s, %s]", l, u)
}

// File reads, from data file df, the stored values of the source columns
// of the identity partition fields at indexes (of df's spec; Metrics
// returns those its metrics do not decide)
// and returns the fields whose values disagree with the partition value.
// A column the file does not store is no problem: readers take the
// partition value (the Hive-migrated case). Values are read as stored,
// with no partition value put in their place. A file whose columns
// cannot be matched to the table's (no field ids, no name mapping) is an
// error.
func (pc *PartitionChecker) File(ctx context.Context, fio fileio.FileIO, df *manifest.DataFile, indexes []int) ([]PartitionValueProblem, error) {
	if len(indexes) == 0 {
		return nil, nil
	}
	cols, err := pc.identityColumns(df)
	if err != nil {
		return nil, err
	}
	nm, err := spec.NameMappingOf(pc.md.Properties)
	if err != nil {
		return nil, err
	}
	f, err := fio.Open(ctx, df.FilePath)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", df.FilePath, err)
	}
	defer f.Close()
	info, err := datafile.InspectParquet(f, f.Size())
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", df.FilePath, err)
	}
	var out []PartitionValueProblem
	for _, c := range cols {
		if !containsInt(indexes, c.index) {
			continue
		}
		stored, err := storesColumn(info.Schema, c.path, nm)
		if err != nil {
			return nil, fmt.Errorf("data file %s: %w", df.FilePath, err)
		}
		if !stored {
			continue
		}
		p, err := readColumn(ctx, f, nm, df, c)
		if err != nil {
			return nil, fmt.Errorf("data file %s: column %s: %w", df.FilePath, c.name(), err)
		}
		if p != nil {
			out = append(out, *p)
		}
	}
	return out, nil
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// storesColumn reports whether a Parquet schema holds the column at path:
// by field id when the file has any, else by the names the table's name
// mapping gives the path's fields (a file without either cannot be read).
func storesColumn(nodes []datafile.ParquetNode, path []spec.NestedField, nm spec.NameMapping) (bool, error) {
	withIDs := false
	var walk func([]datafile.ParquetNode)
	walk = func(ns []datafile.ParquetNode) {
		for _, n := range ns {
			if n.FieldID != nil {
				withIDs = true
			}
			walk(n.Children)
		}
	}
	walk(nodes)
	if !withIDs && nm == nil {
		return false, datafile.ErrNoFieldIDs
	}
	mapped := []spec.MappedField(nm)
	for _, f := range path {
		var names []string
		if !withIDs {
			var mf *spec.MappedField
			for j := range mapped {
				if mapped[j].FieldID != nil && *mapped[j].FieldID == f.ID {
					mf = &mapped[j]
				}
			}
			if mf == nil {
				return false, nil // the mapping names no column for it: not read
			}
			names, mapped = mf.Names, mf.Fields
		}
		var next *datafile.ParquetNode
		for j := range nodes {
			n := &nodes[j]
			if withIDs && n.FieldID != nil && int(*n.FieldID) == f.ID || !withIDs && containsString(names, n.Name) {
				next = n
				break
			}
		}
		if next == nil {
			return false, nil
		}
		nodes = next.Children
	}
	return true, nil
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// readColumn reads column c of f as stored and compares each row with
// the file's partition value.
func readColumn(ctx context.Context, f fileio.File, nm spec.NameMapping, df *manifest.DataFile, c identityColumn) (*PartitionValueProblem, error) {
	// The projection: the path's structs, each holding only the next
	// field down.
	leaf := c.path[len(c.path)-1]
	leaf.Required = false
	for i := len(c.path) - 2; i >= 0; i-- {
		parent := c.path[i]
		parent.Required = false
		parent.Type = &spec.StructType{Fields: []spec.NestedField{leaf}}
		leaf = parent
	}
	rd, err := datafile.OpenReader(ctx, f, f.Size(), datafile.ReadOptions{Schema: &spec.Schema{Fields: []spec.NestedField{leaf}}, NameMapping: nm})
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	pv := df.Partition[c.index]
	var rows, nulls, differ int64
	var first any
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		err = eachValue(rec.Column(0), len(c.path)-1, func(v any) error {
			rows++
			switch {
			case v == nil && pv == nil:
			case v == nil:
				nulls++
			case pv == nil:
				differ++
				if first == nil {
					first = v
				}
			default:
				eq, ok := valuesEqual(v, pv)
				if !ok {
					return fmt.Errorf("cannot compare stored %T with partition value %T", v, pv)
				}
				if !eq {
					differ++
					if first == nil {
						first = v
					}
				}
			}
			return nil
		})
		rec.Release()
		if err != nil {
			return nil, err
		}
	}
	text := valueText(c.source().Type, pv)
	switch {
	case pv != nil && rows > 0 && nulls == rows:
		return newProblem(df, c, PartitionAllNull, rows, true,
			"all %d rows store %s as null (read from the file; its metrics have no bounds for it) where the partition value is %s", rows, c.name(), text), nil
	case differ > 0:
		return newProblem(df, c, PartitionValuesDiffer, differ+nulls, true,
			"%d of %d rows store %s otherwise than the partition value %s (read from the file; first: %s, %d null)", differ+nulls, rows, c.name(), text, valueText(c.source().Type, first), nulls), nil
	case nulls > 0:
		return newProblem(df, c, PartitionSomeNull, nulls, true,
			"%d of %d rows store %s as null (read from the file) where the partition value is %s", nulls, rows, c.name(), text), nil
	}
	return nil, nil
}

// eachValue calls fn with each row's value of the column depth structs
// below arr (nil where it or a struct above it is null), in the
// conventions of spec/values.go.
func eachValue(arr arrow.Array, depth int, fn func(any) error) error {
	leaf := arr
	var parents []arrow.Array
	for range depth {
		st, ok := leaf.(*array.Struct)
		if !ok {
			return fmt.Errorf("stored as %s, not a struct", leaf.DataType())
		}
		parents = append(parents, st)
		leaf = st.Field(0)
	}
	for i := range arr.Len() {
		null := leaf.IsNull(i)
		for _, p := range parents {
			null = null || p.IsNull(i)
		}
		if null {
			if err := fn(nil); err != nil {
				return err
			}
			continue
		}
		v, err := datafile.Value(leaf, i)
		if err != nil {
			return err
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}
