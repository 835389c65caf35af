package where

import (
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/spec"
)

func testSchema() *spec.Schema {
	return &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}},
		{ID: 2, Name: "cat", Type: spec.StringType{}},
		{ID: 3, Name: "ts", Type: spec.TimestampType{}},
		{ID: 4, Name: "d", Type: spec.DateType{}},
		{ID: 5, Name: "n", Type: spec.IntType{}},
		{ID: 6, Name: "amount", Type: spec.DecimalType{Precision: 9, Scale: 2}},
		{ID: 7, Name: "flag", Type: spec.BooleanType{}},
		{ID: 8, Name: "tsn", Type: spec.TimestampNsType{}},
		{ID: 9, Name: "u", Type: spec.UUIDType{}},
		{ID: 10, Name: "s", Type: &spec.StructType{Fields: []spec.NestedField{{ID: 11, Name: "x", Type: spec.IntType{}}}}},
		{ID: 12, Name: "tz", Type: spec.TimestampTzType{}},
		{ID: 13, Name: "dbl", Type: spec.DoubleType{}},
		{ID: 14, Name: "flt", Type: spec.FloatType{}},
	}}
}

func field(src int, name string, tr spec.Transform) spec.PartitionField {
	return spec.PartitionField{SourceID: src, Name: name, Transform: tr}
}

var (
	identity = spec.Transform{Kind: spec.TransformIdentity}
	day      = spec.Transform{Kind: spec.TransformDay}
	month    = spec.Transform{Kind: spec.TransformMonth}
	year     = spec.Transform{Kind: spec.TransformYear}
	hour     = spec.Transform{Kind: spec.TransformHour}
	void     = spec.Transform{Kind: spec.TransformVoid}
)

func bucket(n int) spec.Transform   { return spec.Transform{Kind: spec.TransformBucket, Param: n} }
func truncate(w int) spec.Transform { return spec.Transform{Kind: spec.TransformTruncate, Param: w} }

func TestParseRoundTrip(t *testing.T) {
	cases := map[string]string{
		"a = 1":                                 "a = 1",
		"a=1 and b<>'x' OR NOT c >= -2.5":       "((a = 1 AND b != 'x') OR NOT c >= -2.5)",
		"x IN (1, 2,3)":                         "x IN (1, 2, 3)",
		"x not in ('a''b')":                     "x NOT IN ('a''b')",
		"x is null or y IS NOT NULL":            "(x IS NULL OR y IS NOT NULL)",
		"ts >= TIMESTAMP '2026-01-01 00:00:00'": "ts >= TIMESTAMP '2026-01-01 00:00:00'",
		"d < date '2026-01-01' and (f = TRUE)":  "(d < DATE '2026-01-01' AND f = true)",
		`"order" = 1 AND s.x > 0`:               `(order = 1 AND s.x > 0)`,
		`"and" = 1 OR "my col" = 2`:             `("and" = 1 OR "my col" = 2)`,
		"a = 1 AND b = 2 AND c = 3 OR d = 4":    "(((a = 1 AND b = 2) AND c = 3) OR d = 4)",
		"NOT (a = 1 OR b = 2)":                  "NOT (a = 1 OR b = 2)",
	}
	for in, want := range cases {
		e, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if got := e.String(); got != want && "("+got+")" != want {
			t.Errorf("Parse(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		in   string
		pos  int
		want string
	}{
		{"", 0, "empty expression"},
		{"a = ", 4, "expected a literal"},
		{"a = 1 b = 2", 6, "expected AND, OR"},
		{"(a = 1", 6, "expected ')'"},
		{"a ~ 1", 2, "unexpected character"},
		{"a = 'x", 4, "unterminated quote"},
		{"1 = a", 0, "write the column first"},
		{"a = NULL", 4, "use IS NULL"},
		{"a IS 5", 5, "expected NULL"},
		{"a IN 1", 5, "expected '('"},
		{"a IN (1 2)", 8, "expected ',' or ')'"},
		{"a = 1.2.3", 4, "malformed number"},
		{"a = DATE 5", 9, "quoted string"},
		{"and = 1", 0, "keyword AND"},
		{"a NOT 1", 6, "expected IN"},
		{"a = 12abc", 6, "after number"},
		{"a ! 1", 2, "did you mean"},
	}
	for _, c := range cases {
		_, err := Parse(c.in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, want a SyntaxError", c.in, err)
			continue
		}
		if se.Pos != c.pos || !strings.Contains(se.Msg, c.want) {
			t.Errorf("Parse(%q) = %v (offset %d), want offset %d and %q", c.in, err, se.Pos, c.pos, c.want)
		}
	}
	deep := strings.Repeat("(", 1000) + "a = 1" + strings.Repeat(")", 1000)
	if _, err := Parse(deep); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("deep nesting: %v", err)
	}
}

func TestCompileErrors(t *testing.T) {
	cases := map[string]string{
		"nope = 1":                   `no column "nope"`,
		"s = 1":                      "not a primitive column",
		"n = 99999999999":            "out of range for int",
		"n = 'x'":                    "expected an integer",
		"id = 1.5":                   "expected an integer",
		"d = '2026-13-01'":           "yyyy-mm-dd",
		"ts > 'yesterday'":           "yyyy-mm-dd",
		"amount = 1.234":             "more than 2 digits",
		"flag = 1":                   "TRUE or FALSE",
		"cat = 5":                    "expected a 'string'",
		"u = 'not-a-uuid'":           "not a UUID",
		"d = TIMESTAMP '2026-01-01'": "expected DATE",
	}
	for in, want := range cases {
		_, err := Compile(in, testSchema())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%q) = %v, want %q", in, err, want)
		}
	}
}

func TestLiterals(t *testing.T) {
	s := testSchema()
	cases := []struct {
		expr string
		want any
	}{
		{"ts = '2026-01-03'", time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC).UnixMicro()},
		{"ts = '2026-01-03 10:20:30.123456'", time.Date(2026, 1, 3, 10, 20, 30, 123456000, time.UTC).UnixMicro()},
		{"ts = TIMESTAMP '2026-01-03T10:20:30+02:00'", time.Date(2026, 1, 3, 8, 20, 30, 0, time.UTC).UnixMicro()},
		{"ts = DATE '1969-12-31'", int64(-86400e6)},
		{"tsn = '1970-01-01 00:00:00.000000001'", int64(1)},
		{"d = DATE '1970-01-02'", int32(1)},
		{"d = '1969-12-31'", int32(-1)},
		{"n = -7", int32(-7)},
		{"amount = 14.2", spec.Decimal{Unscaled: big.NewInt(1420), Scale: 2}},
		{"amount = -3", spec.Decimal{Unscaled: big.NewInt(-300), Scale: 2}},
		{"flag = FALSE", false},
		{"cat = 'it''s'", "it's"},
	}
	for _, c := range cases {
		f, err := Compile(c.expr, s)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		got := f.root.(*leaf).values[0]
		if cmpv, err := compareValues(got, c.want); err != nil || cmpv != 0 {
			t.Errorf("%s: literal = %v (%T), want %v", c.expr, got, got, c.want)
		}
	}
}

// Spec Appendix B reference hashes.
func TestMurmur3Vectors(t *testing.T) {
	s := testSchema()
	_ = s
	cases := []struct {
		t    spec.Type
		v    any
		want int32
	}{
		{spec.IntType{}, int32(34), 2017239379},
		{spec.LongType{}, int64(34), 2017239379},
		{spec.DecimalType{Precision: 9, Scale: 2}, spec.Decimal{Unscaled: big.NewInt(1420), Scale: 2}, -500754589},
		{spec.DateType{}, int32(17486), -653330422},
		{spec.TimeType{}, int64(81068000000), -662762989},
		{spec.TimestampType{}, int64(1510871468000000), -2047944441},
		{spec.TimestampTzType{}, int64(1510871468000000), -2047944441},
		{spec.StringType{}, "iceberg", 1210000089},
		{spec.UUIDType{}, [16]byte{0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7}, 1488055340},
		{spec.BinaryType{}, []byte{0, 1, 2, 3}, -188683207},
		{spec.FixedType{Length: 4}, []byte{0, 1, 2, 3}, -188683207},
	}
	for _, c := range cases {
		got, ok := hashValue(c.t, c.v)
		if !ok || got != c.want {
			t.Errorf("hash(%s %v) = %d, %v; want %d", c.t, c.v, got, ok, c.want)
		}
	}
	if b, ok := bucketOf(spec.LongType{}, int64(34), 100); !ok || b != 79 {
		t.Errorf("bucket[100](34) = %d", b)
	}
	if _, ok := hashValue(spec.TimestampNsType{}, int64(1)); ok {
		t.Error("nanosecond timestamps must be refused, not hashed")
	}
}

func TestTransforms(t *testing.T) {
	micros := func(y int, m time.Month, d, h int) int64 { return time.Date(y, m, d, h, 0, 0, 0, time.UTC).UnixMicro() }
	cases := []struct {
		tr   spec.Transform
		src  spec.Type
		v    any
		want any
	}{
		{year, spec.TimestampType{}, micros(2026, 3, 1, 0), int32(56)},
		{month, spec.TimestampType{}, micros(2026, 3, 1, 0), int32(56*12 + 2)},
		{day, spec.TimestampType{}, micros(1970, 1, 2, 5), int32(1)},
		{day, spec.TimestampType{}, int64(-1), int32(-1)},
		{hour, spec.TimestampType{}, int64(-1), int32(-1)},
		{hour, spec.TimestampType{}, micros(1970, 1, 1, 3), int32(3)},
		{month, spec.DateType{}, int32(-1), int32(-1)},
		{year, spec.DateType{}, int32(-1), int32(-1)},
		{day, spec.TimestampNsType{}, int64(86400e9), int32(1)},
		{truncate(10), spec.IntType{}, int32(-1), int32(-10)},
		{truncate(10), spec.LongType{}, int64(15), int64(10)},
		{truncate(3), spec.StringType{}, "añbcd", "añb"},
		{truncate(2), spec.StringType{}, "a", "a"},
		{truncate(50), spec.DecimalType{Scale: 2}, spec.Decimal{Unscaled: big.NewInt(-1), Scale: 2}, spec.Decimal{Unscaled: big.NewInt(-50), Scale: 2}},
		{truncate(2), spec.BinaryType{}, []byte{1, 2, 3}, []byte{1, 2}},
	}
	for _, c := range cases {
		got, err := applyTransform(c.tr, c.src, c.v)
		if err != nil {
			t.Errorf("%s(%v): %v", c.tr, c.v, err)
			continue
		}
		if cv, err := compareValues(got, c.want); err != nil || cv != 0 {
			t.Errorf("%s(%v) = %v, want %v", c.tr, c.v, got, c.want)
		}
	}
	if _, err := applyTransform(hour, spec.DateType{}, int32(1)); err == nil {
		t.Error("hour of a date accepted")
	}
}

type evalCase struct {
	expr  string
	part  []any
	match bool
}

func runEval(t *testing.T, ps *spec.PartitionSpec, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		f, err := Compile(c.expr, testSchema())
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		pf, err := f.ForSpec(ps, testSchema())
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		got, err := pf.Match(c.part)
		if err != nil {
			t.Fatalf("%s on %v: %v", c.expr, c.part, err)
		}
		if got != c.match {
			t.Errorf("%s on %v = %v, want %v", c.expr, c.part, got, c.match)
		}
	}
}

func TestEvalIdentity(t *testing.T) {
	ps := &spec.PartitionSpec{ID: 3, Fields: []spec.PartitionField{field(2, "cat", identity), field(5, "n", identity)}}
	runEval(t, ps, []evalCase{
		{"cat = 'a'", []any{"a", int32(1)}, true},
		{"cat = 'a'", []any{"b", int32(1)}, false},
		{"cat != 'a'", []any{"b", int32(1)}, true},
		{"cat != 'a'", []any{nil, int32(1)}, false},
		{"cat IS NULL", []any{nil, int32(1)}, true},
		{"cat IS NOT NULL", []any{nil, int32(1)}, false},
		{"n > 1", []any{"a", int32(1)}, false},
		{"n >= 1 AND cat IN ('x', 'a')", []any{"a", int32(1)}, true},
		{"cat NOT IN ('x', 'a')", []any{"a", int32(1)}, false},
		{"NOT (cat = 'a' OR n < 0)", []any{"b", int32(5)}, true},
		{"NOT (cat = 'a' OR n < 0)", []any{"a", int32(5)}, false},
		{"NOT cat IS NULL", []any{"a", int32(5)}, true},
		{"n < 2 OR cat = 'z'", []any{"a", int32(1)}, true},
	})
}

func TestEvalTime(t *testing.T) {
	dayOf := func(s string) int32 {
		tm, _ := time.Parse("2006-01-02", s)
		return int32(tm.Unix() / 86400)
	}
	ps := &spec.PartitionSpec{ID: 1, Fields: []spec.PartitionField{field(3, "ts_day", day)}}
	runEval(t, ps, []evalCase{
		// A partition that may hold matching rows is selected whole.
		{"ts >= '2026-01-03 12:00:00'", []any{dayOf("2026-01-03")}, true},
		{"ts >= '2026-01-03'", []any{dayOf("2026-01-02")}, false},
		{"ts > '2026-01-03 23:59:59.999999'", []any{dayOf("2026-01-03")}, false},
		{"ts < '2026-01-03'", []any{dayOf("2026-01-03")}, false},
		{"ts < '2026-01-03 00:00:00.000001'", []any{dayOf("2026-01-03")}, true},
		{"ts <= '2026-01-03'", []any{dayOf("2026-01-03")}, true},
		{"ts = '2026-01-03 10:00:00'", []any{dayOf("2026-01-03")}, true},
		{"ts IN ('2026-01-01', '2026-01-05')", []any{dayOf("2026-01-03")}, false},
		{"ts IS NULL", []any{nil}, true},
		{"ts >= '2026-01-01'", []any{nil}, false},
	})
	msp := &spec.PartitionSpec{ID: 2, Fields: []spec.PartitionField{field(4, "d_month", month), field(3, "ts_year", year)}}
	runEval(t, msp, []evalCase{
		{"d >= '2026-02-15'", []any{int32(56*12 + 1), int32(0)}, true},
		{"d < '2026-02-01'", []any{int32(56*12 + 1), int32(0)}, false},
		{"ts >= '2026-06-01' AND d = '2026-02-03'", []any{int32(56*12 + 1), int32(56)}, true},
		{"ts < '2026-01-01'", []any{int32(0), int32(56)}, false},
	})
	hsp := &spec.PartitionSpec{ID: 4, Fields: []spec.PartitionField{field(3, "ts_hour", hour)}}
	runEval(t, hsp, []evalCase{
		{"ts >= '1970-01-01 02:30:00'", []any{int32(2)}, true},
		{"ts >= '1970-01-01 02:30:00'", []any{int32(1)}, false},
	})
}

func TestEvalTruncateAndBucket(t *testing.T) {
	ps := &spec.PartitionSpec{ID: 5, Fields: []spec.PartitionField{
		field(2, "cat_trunc", truncate(2)), field(1, "id_bucket", bucket(16)), field(5, "n_trunc", truncate(10)),
	}}
	b34, _ := bucketOf(spec.LongType{}, int64(34), 16)
	runEval(t, ps, []evalCase{
		{"cat = 'abc'", []any{"ab", b34, int32(0)}, true},
		{"cat = 'xbc'", []any{"ab", b34, int32(0)}, false},
		{"cat > 'abz'", []any{"ab", b34, int32(0)}, true},
		{"cat >= 'ac'", []any{"ab", b34, int32(0)}, false},
		{"id = 34", []any{"ab", b34, int32(0)}, true},
		{"id = 34", []any{"ab", (b34 + 1) % 16, int32(0)}, false},
		{"id IN (34, 35)", []any{"ab", b34, int32(0)}, true},
		{"n < 10", []any{"ab", b34, int32(10)}, false},
		{"n <= 10", []any{"ab", b34, int32(10)}, true},
		{"n > 9", []any{"ab", b34, int32(0)}, false},
		{"id IS NULL", []any{"ab", nil, int32(0)}, true},
	})
}

// TestProjectionKeepsWhatItCannotDecide: a predicate no partition field
// can project keeps every partition (Java's inclusive projection gives
// alwaysTrue), and one that some field projects still prunes.
func TestProjectionKeepsWhatItCannotDecide(t *testing.T) {
	s := testSchema()
	specs := map[string]*spec.PartitionSpec{
		"unpartitioned": {ID: 0},
		"day":           {ID: 1, Fields: []spec.PartitionField{field(3, "ts_day", day)}},
		"bucket":        {ID: 2, Fields: []spec.PartitionField{field(1, "id_b", bucket(8))}},
		"void":          {ID: 3, Fields: []spec.PartitionField{field(2, "cat", void)}},
		"unknown":       {ID: 4, Fields: []spec.PartitionField{field(2, "cat", spec.ParseTransform("zorder"))}},
		"nanos bucket":  {ID: 5, Fields: []spec.PartitionField{field(8, "b", bucket(8))}},
	}
	cases := []struct {
		spec, expr string
		tuple      []any
	}{
		{"unpartitioned", "cat = 'a'", []any{}},
		{"day", "cat = 'a' OR ts > '2026-01-01'", []any{int32(0)}},
		{"day", "ts != '2026-01-01'", []any{int32(20454)}},
		{"day", "NOT ts = '2026-01-01'", []any{int32(20454)}},
		{"day", "ts NOT IN ('2026-01-01')", []any{int32(20454)}},
		{"bucket", "id > 5", []any{int32(3)}},
		{"bucket", "id != 5", []any{int32(3)}},
		{"void", "cat = 'a'", []any{nil}},
		{"unknown", "cat = 'a'", []any{"zz"}},
		{"nanos bucket", "tsn = '2026-01-01'", []any{int32(1)}},
	}
	for _, c := range cases {
		f, err := Compile(c.expr, s)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := f.ForSpec(specs[c.spec], s)
		if err != nil {
			t.Errorf("%s on %s: %v", c.expr, c.spec, err)
			continue
		}
		if ok, err := pf.Match(c.tuple); err != nil || !ok {
			t.Errorf("%s on %s %v = %v, %v; want a match", c.expr, c.spec, c.tuple, ok, err)
		}
	}
	// An AND keeps what the other side can prune.
	f, _ := Compile("cat = 'a' AND ts >= '2026-01-01'", s)
	pf, _ := f.ForSpec(specs["day"], s)
	if ok, _ := pf.Match([]any{int32(0)}); ok {
		t.Error("cat = 'a' AND ts >= 2026 matched day 1970-01-01")
	}
	// Both day(ts) and bucket(ts): the range projects through the day.
	both := &spec.PartitionSpec{ID: 6, Fields: []spec.PartitionField{field(3, "ts_day", day), field(3, "ts_b", bucket(4))}}
	f, _ = Compile("ts > '2026-01-01'", s)
	pf, err := f.ForSpec(both, s)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := pf.Match([]any{int32(0), int32(1)}); ok {
		t.Error("ts > 2026 matched day 0 through day+bucket")
	}
}

func TestMatchErrors(t *testing.T) {
	ps := &spec.PartitionSpec{ID: 1, Fields: []spec.PartitionField{field(2, "cat", identity)}}
	f, _ := Compile("cat = 'a'", testSchema())
	pf, _ := f.ForSpec(ps, testSchema())
	if _, err := pf.Match([]any{"a", "b"}); err == nil {
		t.Error("tuple of the wrong length accepted")
	}
	if _, err := pf.Match([]any{int64(5)}); err == nil || !strings.Contains(err.Error(), `"cat"`) {
		t.Errorf("value of the wrong type: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"a = 1", "ts >= '2026-01-03' AND cat IN ('a', 'b')", "NOT (x IS NULL OR y <> -2.5)",
		`"weird col" = DATE '2026-01-01'`, "a IN (1,2,3) OR b NOT IN ('x')", "((((a=1))))",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Pos < 0 || se.Pos > len(s) {
				t.Fatalf("Parse(%q): bad error %v", s, err)
			}
			return
		}
		// The printed form parses back to the same expression.
		e2, err := Parse(e.String())
		if err != nil || e2.String() != e.String() {
			t.Fatalf("Parse(%q).String() = %q does not round-trip: %v", s, e.String(), err)
		}
		if fl, err := Compile(s, testSchema()); err == nil {
			ps := &spec.PartitionSpec{ID: 1, Fields: []spec.PartitionField{field(2, "cat", identity), field(3, "ts_day", day), field(1, "id_b", bucket(4))}}
			if pf, err := fl.ForSpec(ps, testSchema()); err == nil {
				_, _ = pf.Match([]any{"a", int32(3), int32(1)})
				_, _ = pf.Match([]any{nil, nil, nil})
			}
		}
	})
}
