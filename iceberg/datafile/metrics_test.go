package datafile

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"

	"github.com/icectl/icectl/iceberg/spec"
)

func TestMetricsBoundsByType(t *testing.T) {
	negZero := math.Copysign(0, -1)
	u := func(first byte) [16]byte { var b [16]byte; b[0] = first; b[15] = 1; return b }
	dec := func(s string) spec.Decimal { return spec.Decimal{Unscaled: mtBig(s), Scale: 2} }
	tests := []struct {
		name       string
		typ        spec.PrimitiveType
		dt         arrow.DataType
		vals       []any
		lo, hi     any // nil: no bound
		nulls, nan int64
	}{
		{"int", spec.IntType{}, arrow.PrimitiveTypes.Int32, []any{int32(5), nil, int32(-7), int32(3)}, int32(-7), int32(5), 1, 0},
		{"int from int16", spec.IntType{}, arrow.PrimitiveTypes.Int16, []any{int32(300), int32(-300)}, int32(-300), int32(300), 0, 0},
		{"long", spec.LongType{}, arrow.PrimitiveTypes.Int64, []any{int64(math.MinInt64), int64(math.MaxInt64), int64(0)}, int64(math.MinInt64), int64(math.MaxInt64), 0, 0},
		{"long from uint64", spec.LongType{}, arrow.PrimitiveTypes.Uint64, []any{int64(9), int64(2)}, int64(2), int64(9), 0, 0},
		{"boolean false only", spec.BooleanType{}, arrow.FixedWidthTypes.Boolean, []any{false, nil, false}, false, false, 1, 0},
		{"boolean both", spec.BooleanType{}, arrow.FixedWidthTypes.Boolean, []any{true, false}, false, true, 0, 0},
		{"float NaN ignored", spec.FloatType{}, arrow.PrimitiveTypes.Float32, []any{float32(math.NaN()), float32(1.5), float32(-2.25), nil}, float32(-2.25), float32(1.5), 1, 1},
		{"float infinities", spec.FloatType{}, arrow.PrimitiveTypes.Float32, []any{float32(math.Inf(1)), float32(math.Inf(-1))}, float32(math.Inf(-1)), float32(math.Inf(1)), 0, 0},
		{"double all NaN", spec.DoubleType{}, arrow.PrimitiveTypes.Float64, []any{math.NaN(), nil, math.NaN()}, nil, nil, 1, 2},
		{"double zeros", spec.DoubleType{}, arrow.PrimitiveTypes.Float64, []any{0.0, negZero, 0.0}, negZero, 0.0, 0, 0},
		{"double +0 only", spec.DoubleType{}, arrow.PrimitiveTypes.Float64, []any{0.0}, 0.0, 0.0, 0, 0},
		{"double -0 only", spec.DoubleType{}, arrow.PrimitiveTypes.Float64, []any{negZero, negZero}, negZero, negZero, 0, 0},
		{"double from float32", spec.DoubleType{}, arrow.PrimitiveTypes.Float32, []any{float32(0.1), float32(-3)}, float64(-3), float64(float32(0.1)), 0, 0},
		{"date", spec.DateType{}, arrow.FixedWidthTypes.Date32, []any{int32(-1), int32(19000)}, int32(-1), int32(19000), 0, 0},
		{"date from date64 rounds outward", spec.DateType{}, arrow.FixedWidthTypes.Date64, []any{int64(-1), int64(86_400_000 + 1)}, int32(-1), int32(2), 0, 0},
		{"time", spec.TimeType{}, arrow.FixedWidthTypes.Time64us, []any{int64(1), int64(86_399_999_999)}, int64(1), int64(86_399_999_999), 0, 0},
		{"time from ms", spec.TimeType{}, arrow.FixedWidthTypes.Time32ms, []any{int32(1), int32(2)}, int64(1000), int64(2000), 0, 0},
		{"timestamp", spec.TimestampType{}, &arrow.TimestampType{Unit: arrow.Microsecond}, []any{int64(-5), int64(7)}, int64(-5), int64(7), 0, 0},
		{"timestamptz zone ignored", spec.TimestampTzType{}, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "America/New_York"}, []any{int64(1_700_000_000_000_000), int64(-1)}, int64(-1), int64(1_700_000_000_000_000), 0, 0},
		{"timestamptz from ms", spec.TimestampTzType{}, &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, []any{int64(-2), int64(3)}, int64(-2000), int64(3000), 0, 0},
		{"timestamptz from ns rounds outward", spec.TimestampTzType{}, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, []any{int64(-1500), int64(1500)}, int64(-2), int64(2), 0, 0},
		{"timestamp_ns", spec.TimestampNsType{}, &arrow.TimestampType{Unit: arrow.Nanosecond}, []any{int64(-1500), int64(1501)}, int64(-1500), int64(1501), 0, 0},
		{"timestamptz_ns from us", spec.TimestampTzNsType{}, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, []any{int64(-1), int64(2)}, int64(-1000), int64(2000), 0, 0},
		{"string code point order", spec.StringType{}, arrow.BinaryTypes.String, []any{"é", "z", "😀", "\uffff", nil}, "z", "😀", 1, 0},
		{"string empty", spec.StringType{}, arrow.BinaryTypes.String, []any{"", "a"}, "", "a", 0, 0},
		{"large string", spec.StringType{}, arrow.BinaryTypes.LargeString, []any{"b", "a"}, "a", "b", 0, 0},
		{"binary unsigned", spec.BinaryType{}, arrow.BinaryTypes.Binary, []any{[]byte{0x7f}, []byte{0x80}, []byte{0x00, 0xff}}, []byte{0x00, 0xff}, []byte{0x80}, 0, 0},
		{"fixed", spec.FixedType{Length: 2}, &arrow.FixedSizeBinaryType{ByteWidth: 2}, []any{[]byte{1, 2}, []byte{0xff, 0}}, []byte{1, 2}, []byte{0xff, 0}, 0, 0},
		{"uuid big-endian unsigned", spec.UUIDType{}, &arrow.FixedSizeBinaryType{ByteWidth: 16}, []any{u(0x80), u(0x7f), nil}, u(0x7f), u(0x80), 1, 0},
		{"decimal numeric", spec.DecimalType{Precision: 10, Scale: 2}, &arrow.Decimal128Type{Precision: 10, Scale: 2}, []any{dec("-100"), dec("99"), dec("-1"), dec("12345")}, dec("-100"), dec("12345"), 0, 0},
		{"all null", spec.LongType{}, arrow.PrimitiveTypes.Int64, []any{nil, nil}, nil, nil, 2, 0},
		{"no rows", spec.LongType{}, arrow.PrimitiveTypes.Int64, []any{}, nil, nil, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			schema := mtSchema(mtOpt(1, "c", tc.typ))
			col := mtColumn(t, tc.dt, tc.vals)
			rec := mtRecord(t, []arrow.Field{mtField(1, "c", tc.dt)}, []arrow.Array{col})
			m := mtCollect(t, schema, MetricsConfig{Default: MetricsMode{Kind: MetricsFull}}, rec)
			if m.RecordCount != int64(len(tc.vals)) {
				t.Errorf("RecordCount = %d, want %d", m.RecordCount, len(tc.vals))
			}
			if m.ValueCounts[1] != int64(len(tc.vals)) || m.NullValueCounts[1] != tc.nulls {
				t.Errorf("counts = %d values %d nulls, want %d, %d", m.ValueCounts[1], m.NullValueCounts[1], len(tc.vals), tc.nulls)
			}
			_, isFloat := m.NaNValueCounts[1]
			wantFloat := tc.typ == spec.FloatType{} || tc.typ == spec.DoubleType{}
			if isFloat != wantFloat || m.NaNValueCounts[1] != tc.nan {
				t.Errorf("NaN count = %d (present %v), want %d (present %v)", m.NaNValueCounts[1], isFloat, tc.nan, wantFloat)
			}
			var wantLo, wantHi []byte
			if tc.lo != nil {
				wantLo, wantHi = mtEncode(t, tc.typ, tc.lo), mtEncode(t, tc.typ, tc.hi)
			}
			if !mtBytesEqual(m.LowerBounds[1], wantLo) || !mtBytesEqual(m.UpperBounds[1], wantHi) {
				t.Errorf("bounds = %x, %x; want %x, %x", m.LowerBounds[1], m.UpperBounds[1], wantLo, wantHi)
			}
		})
	}
}

func TestMetricsAcrossBatchesAndSlices(t *testing.T) {
	schema := mtSchema(mtOpt(1, "s", spec.StringType{}), mtOpt(2, "l", spec.LongType{}))
	fields := []arrow.Field{mtField(1, "s", arrow.BinaryTypes.String), mtField(2, "l", arrow.PrimitiveTypes.Int64)}
	s := mtColumn(t, arrow.BinaryTypes.String, []any{"zzz", "m", nil, "b", "q"})
	l := mtColumn(t, arrow.PrimitiveTypes.Int64, []any{int64(100), int64(5), nil, int64(-3), int64(7)})
	// Slices [1,4) and [4,5): "zzz"/100 are outside both and must not count.
	r1 := mtRecord(t, fields, []arrow.Array{mtSlice(s, 1, 4), mtSlice(l, 1, 4)})
	r2 := mtRecord(t, fields, []arrow.Array{mtSlice(s, 4, 5), mtSlice(l, 4, 5)})
	m := mtCollect(t, schema, MetricsConfig{Default: MetricsMode{Kind: MetricsFull}}, r1, r2)
	if m.RecordCount != 4 || m.ValueCounts[1] != 4 || m.NullValueCounts[1] != 1 || m.NullValueCounts[2] != 1 {
		t.Fatalf("counts: rows %d values %v nulls %v", m.RecordCount, m.ValueCounts, m.NullValueCounts)
	}
	if string(m.LowerBounds[1]) != "b" || string(m.UpperBounds[1]) != "q" {
		t.Errorf("string bounds %q %q, want b q", m.LowerBounds[1], m.UpperBounds[1])
	}
	if got, want := m.LowerBounds[2], mtEncode(t, spec.LongType{}, int64(-3)); string(got) != string(want) {
		t.Errorf("long lower %x want %x", got, want)
	}
	if got, want := m.UpperBounds[2], mtEncode(t, spec.LongType{}, int64(7)); string(got) != string(want) {
		t.Errorf("long upper %x want %x", got, want)
	}
}

func TestMetricsTruncateMode(t *testing.T) {
	schema := mtSchema(mtOpt(1, "s", spec.StringType{}), mtOpt(2, "b", spec.BinaryType{}), mtOpt(3, "f", spec.FixedType{Length: 4}), mtOpt(4, "l", spec.LongType{}))
	fields := []arrow.Field{mtField(1, "s", arrow.BinaryTypes.String), mtField(2, "b", arrow.BinaryTypes.Binary),
		mtField(3, "f", &arrow.FixedSizeBinaryType{ByteWidth: 4}), mtField(4, "l", arrow.PrimitiveTypes.Int64)}
	rec := mtRecord(t, fields, []arrow.Array{
		mtColumn(t, arrow.BinaryTypes.String, []any{"abcdef", "abzzzz", "\U0010ffff\U0010ffff\U0010ffffx"}),
		mtColumn(t, arrow.BinaryTypes.Binary, []any{[]byte{1, 2, 3}, []byte{1, 0xff, 0xff}, nil}),
		mtColumn(t, &arrow.FixedSizeBinaryType{ByteWidth: 4}, []any{[]byte{9, 9, 9, 9}, []byte{0xff, 0xff, 0xff, 0xff}, nil}),
		mtColumn(t, arrow.PrimitiveTypes.Int64, []any{int64(123456789), int64(-1), nil}),
	})
	m := mtCollect(t, schema, MetricsConfig{Default: MetricsMode{Kind: MetricsTruncate, Length: 2}}, rec)
	if got := string(m.LowerBounds[1]); got != "ab" {
		t.Errorf("string lower %q, want ab", got)
	}
	if _, ok := m.UpperBounds[1]; ok {
		t.Errorf("string upper %q written, but the max starts with two U+10FFFF and has none", m.UpperBounds[1])
	}
	if got := m.LowerBounds[2]; string(got) != "\x01\x02" {
		t.Errorf("binary lower %x", got)
	}
	if got := m.UpperBounds[2]; string(got) != "\x02" {
		t.Errorf("binary upper %x, want 02 (carry past ff)", got)
	}
	if got := m.LowerBounds[3]; string(got) != "\x09\x09" {
		t.Errorf("fixed lower %x, want 0909 (Java truncates fixed)", got)
	}
	if _, ok := m.UpperBounds[3]; ok {
		t.Errorf("fixed upper %x written for an all-0xff max", m.UpperBounds[3])
	}
	if got, want := m.UpperBounds[4], mtEncode(t, spec.LongType{}, int64(123456789)); string(got) != string(want) {
		t.Errorf("long upper %x: numbers are never truncated", got)
	}
}

func TestMetricsModesAndOverrides(t *testing.T) {
	schema := mtSchema(
		mtOpt(1, "a", spec.StringType{}),
		mtOpt(2, "b", spec.StringType{}),
		mtOpt(3, "c", spec.StringType{}),
		mtOpt(4, "s", &spec.StructType{Fields: []spec.NestedField{mtOpt(5, "x", spec.StringType{}), mtOpt(6, "y", spec.DoubleType{})}}),
	)
	props := map[string]string{
		MetricsDefaultProperty:                  "counts",
		MetricsColumnPropertyPrefix + "a":       "none",
		MetricsColumnPropertyPrefix + "b":       "FULL",
		MetricsColumnPropertyPrefix + "s.x":     "truncate(3)",
		MetricsColumnPropertyPrefix + "missing": "full",
	}
	cfg, err := MetricsConfigFromProperties(schema, props)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("q", 40)
	st := arrow.StructOf(mtField(5, "x", arrow.BinaryTypes.String), mtField(6, "y", arrow.PrimitiveTypes.Float64))
	sb := mtStructColumn(t, st, []bool{true, false}, []any{long, "r"}, []any{1.5, math.NaN()})
	rec := mtRecord(t, []arrow.Field{mtField(1, "a", arrow.BinaryTypes.String), mtField(2, "b", arrow.BinaryTypes.String),
		mtField(3, "c", arrow.BinaryTypes.String), mtField(4, "s", st)},
		[]arrow.Array{
			mtColumn(t, arrow.BinaryTypes.String, []any{long, "x"}),
			mtColumn(t, arrow.BinaryTypes.String, []any{long, "x"}),
			mtColumn(t, arrow.BinaryTypes.String, []any{long, nil}),
			sb,
		})
	m := mtCollect(t, schema, cfg, rec)
	if _, ok := m.ValueCounts[1]; ok {
		t.Error("mode none: value count written")
	}
	if _, ok := m.LowerBounds[1]; ok {
		t.Error("mode none: bound written")
	}
	if string(m.UpperBounds[2]) != "x" || string(m.LowerBounds[2]) != long {
		t.Errorf("mode full: bounds %q %q", m.LowerBounds[2], m.UpperBounds[2])
	}
	if m.ValueCounts[3] != 2 || m.NullValueCounts[3] != 1 {
		t.Errorf("mode counts: %d values %d nulls", m.ValueCounts[3], m.NullValueCounts[3])
	}
	if _, ok := m.LowerBounds[3]; ok {
		t.Error("mode counts: bound written")
	}
	if string(m.LowerBounds[5]) != "qqq" || string(m.UpperBounds[5]) != "qqr" {
		t.Errorf("nested truncate(3): bounds %q %q", m.LowerBounds[5], m.UpperBounds[5])
	}
	// s.y inherits counts: NaN counted, the null struct in row 2 too, no bounds.
	if m.ValueCounts[6] != 2 || m.NullValueCounts[6] != 1 || m.NaNValueCounts[6] != 0 {
		t.Errorf("s.y counts: %d values %d nulls %d NaN", m.ValueCounts[6], m.NullValueCounts[6], m.NaNValueCounts[6])
	}
	if _, ok := m.LowerBounds[6]; ok {
		t.Error("counts mode float got bounds")
	}
}

func TestMetricsConfigFromProperties(t *testing.T) {
	wide := &spec.Schema{}
	for i := 1; i <= 102; i++ {
		wide.Fields = append(wide.Fields, mtOpt(i, "c"+strconv.Itoa(i), spec.IntType{}))
	}
	wide.Fields[0].Type = &spec.StructType{Fields: []spec.NestedField{mtOpt(1000, "inner", spec.IntType{})}}
	narrow := mtSchema(mtOpt(1, "a", spec.IntType{}))
	trunc16 := MetricsMode{Kind: MetricsTruncate, Length: 16}
	none := MetricsMode{Kind: MetricsNone}
	tests := []struct {
		name   string
		schema *spec.Schema
		props  map[string]string
		want   map[string]MetricsMode // column -> mode
		errSub string
	}{
		{"default", narrow, nil, map[string]MetricsMode{"a": trunc16}, ""},
		{"explicit default", narrow, map[string]string{MetricsDefaultProperty: "Truncate(8)"}, map[string]MetricsMode{"a": {Kind: MetricsTruncate, Length: 8}}, ""},
		{"wide: first 100 inferred, rest none", wide, nil, map[string]MetricsMode{"c1.inner": trunc16, "c100": trunc16, "c101": none, "c102": none}, ""},
		{"wide: explicit column wins", wide, map[string]string{MetricsColumnPropertyPrefix + "c102": "full"}, map[string]MetricsMode{"c101": none, "c102": {Kind: MetricsFull}}, ""},
		{"wide: explicit default applies to all", wide, map[string]string{MetricsDefaultProperty: "counts"}, map[string]MetricsMode{"c102": {Kind: MetricsCounts}}, ""},
		{"wide: raised limit", wide, map[string]string{MetricsMaxInferredColumnProperty: "200"}, map[string]MetricsMode{"c102": trunc16}, ""},
		{"wide: lowered limit", wide, map[string]string{MetricsMaxInferredColumnProperty: "1"}, map[string]MetricsMode{"c1.inner": trunc16, "c2": none}, ""},
		{"wide: negative limit means default", wide, map[string]string{MetricsMaxInferredColumnProperty: "-5"}, map[string]MetricsMode{"c100": trunc16, "c101": none}, ""},
		{"bad limit", narrow, map[string]string{MetricsMaxInferredColumnProperty: "x"}, nil, "max-inferred-column-defaults"},
		{"bad default", narrow, map[string]string{MetricsDefaultProperty: "truncate(0)"}, nil, "truncate length"},
		{"bad column", narrow, map[string]string{MetricsColumnPropertyPrefix + "a": "some"}, nil, "write.metadata.metrics.column.a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := MetricsConfigFromProperties(tc.schema, tc.props)
			if tc.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSub) {
					t.Fatalf("err = %v, want one containing %q", err, tc.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for col, want := range tc.want {
				if got := cfg.ColumnMode(col); got != want {
					t.Errorf("mode of %s = %s, want %s", col, got, want)
				}
			}
		})
	}
}

func TestParseMetricsMode(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"none", "none", true}, {"NONE", "none", true}, {"counts", "counts", true}, {"Full", "full", true},
		{"truncate(1)", "truncate(1)", true}, {"TRUNCATE(32)", "truncate(32)", true},
		{"truncate(0)", "", false}, {"truncate(-1)", "", false}, {"truncate()", "", false},
		{"truncate(99999999999999999999)", "", false}, {" full", "", false}, {"", "", false},
	}
	for _, tc := range tests {
		m, err := ParseMetricsMode(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseMetricsMode(%q) err = %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if tc.ok && m.String() != tc.want {
			t.Errorf("ParseMetricsMode(%q) = %s, want %s", tc.in, m, tc.want)
		}
	}
}

func TestMetricsAddErrors(t *testing.T) {
	schema := mtSchema(mtOpt(1, "a", spec.IntType{}))
	col := mtColumn(t, arrow.PrimitiveTypes.Int32, []any{int32(1)})
	noID := arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}
	tests := []struct {
		name   string
		fields []arrow.Field
		cols   []arrow.Array
		errSub string
	}{
		{"no field id", []arrow.Field{noID}, []arrow.Array{col}, "no field id"},
		{"unknown id", []arrow.Field{mtField(9, "a", arrow.PrimitiveTypes.Int32)}, []arrow.Array{col}, "field id 9"},
		{"duplicate id", []arrow.Field{mtField(1, "a", arrow.PrimitiveTypes.Int32), mtField(1, "b", arrow.PrimitiveTypes.Int32)}, []arrow.Array{col, col}, "twice"},
		{"wrong type", []arrow.Field{mtField(1, "a", arrow.BinaryTypes.String)}, []arrow.Array{mtColumn(t, arrow.BinaryTypes.String, []any{"x"})}, "cannot be held"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewMetricsCollector(schema, DefaultMetricsConfig())
			err := c.Add(mtRecord(t, tc.fields, tc.cols))
			if err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Fatalf("err = %v, want one containing %q", err, tc.errSub)
			}
		})
	}
	t.Run("column missing from one batch", func(t *testing.T) {
		s2 := mtSchema(mtOpt(1, "a", spec.IntType{}), mtOpt(2, "b", spec.IntType{}))
		c := NewMetricsCollector(s2, DefaultMetricsConfig())
		f1, f2 := mtField(1, "a", arrow.PrimitiveTypes.Int32), mtField(2, "b", arrow.PrimitiveTypes.Int32)
		if err := c.Add(mtRecord(t, []arrow.Field{f1, f2}, []arrow.Array{col, col})); err != nil {
			t.Fatal(err)
		}
		if err := c.Add(mtRecord(t, []arrow.Field{f1}, []arrow.Array{col})); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Finish(nil); err == nil || !strings.Contains(err.Error(), `"b"`) {
			t.Fatalf("Finish err = %v, want one naming column b", err)
		}
	})
	t.Run("uint64 beyond long", func(t *testing.T) {
		s := mtSchema(mtOpt(1, "a", spec.LongType{}))
		c := NewMetricsCollector(s, DefaultMetricsConfig())
		b := mtColumn(t, arrow.PrimitiveTypes.Uint64, []any{int64(-1)}) // 2^64-1
		if err := c.Add(mtRecord(t, []arrow.Field{mtField(1, "a", arrow.PrimitiveTypes.Uint64)}, []arrow.Array{b})); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Finish(nil); err == nil {
			t.Fatal("Finish accepted a uint64 that no long bound can hold")
		}
	})
}

func TestMetricsConfigSortedColumns(t *testing.T) {
	schema := mtSchema(mtOpt(1, "a", spec.IntType{}), mtOpt(2, "b", spec.IntType{}), mtOpt(3, "c", spec.IntType{}))
	tests := []struct {
		name  string
		props map[string]string
		want  map[string]string
	}{
		{"none default promotes", map[string]string{MetricsDefaultProperty: "none"}, map[string]string{"a": "truncate(16)", "b": "none", "c": "full"}},
		{"counts default promotes", map[string]string{MetricsDefaultProperty: "counts"}, map[string]string{"a": "truncate(16)", "b": "counts"}},
		{"full default kept", map[string]string{MetricsDefaultProperty: "full"}, map[string]string{"a": "full"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.props[MetricsColumnPropertyPrefix+"c"] = "full"
			cfg, err := MetricsConfigFromProperties(schema, tc.props)
			if err != nil {
				t.Fatal(err)
			}
			cfg = cfg.WithSortedColumns("a", "c")
			for col, want := range tc.want {
				if got := cfg.ColumnMode(col).String(); got != want {
					t.Errorf("%s: %s, want %s", col, got, want)
				}
			}
		})
	}
}

func TestMetricsEmptyStringBoundUnderTruncate(t *testing.T) {
	schema := mtSchema(mtOpt(1, "s", spec.StringType{}), mtOpt(2, "n", spec.StringType{}))
	rec := mtRecord(t, []arrow.Field{mtField(1, "s", arrow.BinaryTypes.String), mtField(2, "n", arrow.BinaryTypes.String)},
		[]arrow.Array{
			mtColumn(t, arrow.BinaryTypes.String, []any{"", "abc"}),
			mtColumn(t, arrow.BinaryTypes.String, []any{nil, nil}),
		})
	m := mtCollect(t, schema, DefaultMetricsConfig(), rec)
	if lo, ok := m.LowerBounds[1]; !ok || len(lo) != 0 {
		t.Errorf("lower bound %q (present %v), want the empty string", lo, ok)
	}
	if string(m.UpperBounds[1]) != "abc" {
		t.Errorf("upper bound %q, want abc", m.UpperBounds[1])
	}
	if _, ok := m.LowerBounds[2]; ok {
		t.Error("all-null column got a lower bound")
	}
	if _, ok := m.UpperBounds[2]; ok {
		t.Error("all-null column got an upper bound")
	}
	if m.NullValueCounts[2] != 2 || m.ValueCounts[2] != 2 {
		t.Errorf("all-null counts %d/%d", m.ValueCounts[2], m.NullValueCounts[2])
	}
}

func TestMetricsUUIDExtensionArray(t *testing.T) {
	b := extensions.NewUUIDBuilder(memory.DefaultAllocator)
	hi := uuid.MustParse("f0000000-0000-0000-0000-000000000001")
	lo := uuid.MustParse("0fffffff-ffff-ffff-ffff-ffffffffffff")
	b.Append(hi)
	b.AppendNull()
	b.Append(lo)
	arr := b.NewArray()
	schema := mtSchema(mtOpt(1, "u", spec.UUIDType{}))
	m := mtCollect(t, schema, DefaultMetricsConfig(), mtRecord(t, []arrow.Field{mtField(1, "u", arr.DataType())}, []arrow.Array{arr}))
	if string(m.LowerBounds[1]) != string(lo[:]) || string(m.UpperBounds[1]) != string(hi[:]) {
		t.Errorf("uuid bounds %x %x, want %x %x", m.LowerBounds[1], m.UpperBounds[1], lo[:], hi[:])
	}
	if m.NullValueCounts[1] != 1 {
		t.Errorf("null count %d", m.NullValueCounts[1])
	}
}
