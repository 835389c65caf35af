package table

import (
	"math"
	"math/big"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
)

// TestHumanValue holds, for every transform result type, what Java's
// Transform.toHumanString gives (TransformUtil, DateTimeUtil, LocalTime,
// Float/Double/BigDecimal.toString, Base64). The Spark interop test
// (internal/testing/sparkinterop, TestPartitionPathsBesideSpark) checks
// the types Spark can write against Java itself.
func TestHumanValue(t *testing.T) {
	const (
		ts   = int64(1709201730) * 1e6 // 2024-02-29T10:15:30Z in micros
		tsNs = int64(1709201730) * 1e9
	)
	identity := spec.Transform{Kind: spec.TransformIdentity}
	dec := func(unscaled int64, scale int) spec.Decimal {
		return spec.Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
	}
	cases := []struct {
		name string
		tr   spec.Transform
		typ  spec.Type
		v    any
		want string
	}{
		{"null", identity, spec.StringType{}, nil, "null"},
		{"void", spec.Transform{Kind: spec.TransformVoid}, spec.IntType{}, int32(3), "null"},
		{"boolean", identity, spec.BooleanType{}, true, "true"},
		{"int", identity, spec.IntType{}, int32(-42), "-42"},
		{"long", identity, spec.LongType{}, int64(math.MinInt64), "-9223372036854775808"},

		{"float", identity, spec.FloatType{}, float32(1.5), "1.5"},
		{"float shortest", identity, spec.FloatType{}, float32(0.1), "0.1"},
		{"float 1e7", identity, spec.FloatType{}, float32(1e7), "1.0E7"},
		{"float below 1e7", identity, spec.FloatType{}, float32(1234567), "1234567.0"},
		{"float 1e-3", identity, spec.FloatType{}, float32(0.001), "0.001"},
		{"float below 1e-3", identity, spec.FloatType{}, float32(0.0009765625), "9.765625E-4"},
		{"float negative zero", identity, spec.FloatType{}, float32(math.Copysign(0, -1)), "-0.0"},
		{"float NaN", identity, spec.FloatType{}, float32(math.NaN()), "NaN"},
		{"double", identity, spec.DoubleType{}, 12345678.9, "1.23456789E7"},
		{"double small", identity, spec.DoubleType{}, -1e-5, "-1.0E-5"},
		{"double -Inf", identity, spec.DoubleType{}, math.Inf(-1), "-Infinity"},
		{"double zero", identity, spec.DoubleType{}, 0.0, "0.0"},
		{"double 1e21", identity, spec.DoubleType{}, 1e21, "1.0E21"},

		{"decimal", identity, spec.DecimalType{Precision: 9, Scale: 2}, dec(12345, 2), "123.45"},
		{"decimal negative fraction", identity, spec.DecimalType{Precision: 9, Scale: 3}, dec(-5, 3), "-0.005"},
		{"decimal zero scale 2", identity, spec.DecimalType{Precision: 9, Scale: 2}, dec(0, 2), "0.00"},
		{"decimal scale 0", identity, spec.DecimalType{Precision: 9, Scale: 0}, dec(-7, 0), "-7"},
		{"decimal adjusted -6", identity, spec.DecimalType{Precision: 20, Scale: 12}, dec(1234567, 12), "0.000001234567"},
		{"decimal adjusted -7", identity, spec.DecimalType{Precision: 9, Scale: 7}, dec(1, 7), "1E-7"},
		{"decimal adjusted -8", identity, spec.DecimalType{Precision: 9, Scale: 10}, dec(-123, 10), "-1.23E-8"},
		{"decimal zero scale 10", identity, spec.DecimalType{Precision: 12, Scale: 10}, dec(0, 10), "0E-10"},

		{"string", identity, spec.StringType{}, "a b/c=d%e", "a b/c=d%e"},
		{"uuid", identity, spec.UUIDType{}, [16]byte{0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7},
			"f79c3e09-677c-4bbd-a479-3f349cb785e7"},
		{"binary", identity, spec.BinaryType{}, []byte{0xff, 0x00}, "/wA="},
		{"fixed", identity, spec.FixedType{Length: 3}, []byte("abc"), "YWJj"},
		{"empty binary", identity, spec.BinaryType{}, []byte{}, ""},

		{"date", identity, spec.DateType{}, int32(19782), "2024-02-29"},
		{"date before 1970", identity, spec.DateType{}, int32(-1), "1969-12-31"},
		{"date before year 0", identity, spec.DateType{}, int32(-719529), "-001-12-31"},
		{"date after 9999", identity, spec.DateType{}, int32(2932897), "10000-01-01"},
		{"time minutes", identity, spec.TimeType{}, int64(36000e6), "10:00"},
		{"time seconds", identity, spec.TimeType{}, int64(37230e6), "10:20:30"},
		{"time millis", identity, spec.TimeType{}, int64(37230e6 + 5e5), "10:20:30.500"},
		{"time micros", identity, spec.TimeType{}, int64(37230e6 + 1), "10:20:30.000001"},
		{"time midnight", identity, spec.TimeType{}, int64(0), "00:00"},
		{"time fraction only", identity, spec.TimeType{}, int64(60e6 + 10), "00:01:00.000010"},
		{"timestamp", identity, spec.TimestampType{}, ts, "2024-02-29T10:15:30"},
		{"timestamp minute", identity, spec.TimestampType{}, ts - 30e6, "2024-02-29T10:15:00"},
		{"timestamp fraction", identity, spec.TimestampType{}, ts + 5e5, "2024-02-29T10:15:30.5"},
		{"timestamp before 1970", identity, spec.TimestampType{}, int64(-1), "1969-12-31T23:59:59.999999"},
		{"timestamp before year 0", identity, spec.TimestampType{}, int64(-719529) * 86400e6, "-0001-12-31T00:00:00"},
		{"timestamp after 9999", identity, spec.TimestampType{}, int64(2932897) * 86400e6, "+10000-01-01T00:00:00"},
		{"timestamptz", identity, spec.TimestampTzType{}, ts, "2024-02-29T10:15:30+00:00"},
		{"timestamptz fraction", identity, spec.TimestampTzType{}, ts + 120, "2024-02-29T10:15:30.00012+00:00"},
		{"timestamp_ns", identity, spec.TimestampNsType{}, tsNs + 1, "2024-02-29T10:15:30.000000001"},
		{"timestamptz_ns", identity, spec.TimestampTzNsType{}, int64(-1), "1969-12-31T23:59:59.999999999+00:00"},
		// The type is not known (a dropped source column): Java prints
		// the value's toString.
		{"unknown type", identity, nil, int32(19782), "19782"},

		{"year", spec.Transform{Kind: spec.TransformYear}, spec.IntType{}, int32(54), "2024"},
		{"year before 1970", spec.Transform{Kind: spec.TransformYear}, spec.IntType{}, int32(-1), "1969"},
		{"year before year 0", spec.Transform{Kind: spec.TransformYear}, spec.IntType{}, int32(-1971), "-001"},
		{"month", spec.Transform{Kind: spec.TransformMonth}, spec.IntType{}, int32(649), "2024-02"},
		{"month before 1970", spec.Transform{Kind: spec.TransformMonth}, spec.IntType{}, int32(-1), "1969-12"},
		{"month -13", spec.Transform{Kind: spec.TransformMonth}, spec.IntType{}, int32(-13), "1968-12"},
		{"month -12", spec.Transform{Kind: spec.TransformMonth}, spec.IntType{}, int32(-12), "1969-01"},
		{"day", spec.Transform{Kind: spec.TransformDay}, spec.DateType{}, int32(19782), "2024-02-29"},
		{"day before 1970", spec.Transform{Kind: spec.TransformDay}, spec.DateType{}, int32(-365), "1969-01-01"},
		{"hour", spec.Transform{Kind: spec.TransformHour}, spec.IntType{}, int32(474778), "2024-02-29-10"},
		{"hour before 1970", spec.Transform{Kind: spec.TransformHour}, spec.IntType{}, int32(-1), "1969-12-31-23"},
		{"hour far", spec.Transform{Kind: spec.TransformHour}, spec.IntType{}, int32(math.MaxInt32), "246953-10-09-07"},
		{"bucket", spec.Transform{Kind: spec.TransformBucket, Param: 16}, spec.IntType{}, int32(7), "7"},
		{"truncate string", spec.Transform{Kind: spec.TransformTruncate, Param: 2}, spec.StringType{}, "ab", "ab"},
		{"truncate int", spec.Transform{Kind: spec.TransformTruncate, Param: 10}, spec.IntType{}, int32(-10), "-10"},
		{"truncate long", spec.Transform{Kind: spec.TransformTruncate, Param: 10}, spec.LongType{}, int64(120), "120"},
		{"truncate decimal", spec.Transform{Kind: spec.TransformTruncate, Param: 50}, spec.DecimalType{Precision: 9, Scale: 2}, dec(-150, 2), "-1.50"},
		{"truncate binary", spec.Transform{Kind: spec.TransformTruncate, Param: 2}, spec.BinaryType{}, []byte("ab"), "YWI="},
	}
	for _, c := range cases {
		if got := humanValue(c.tr, c.typ, c.v); got != c.want {
			t.Errorf("%s: %s of %v (%T) as %v = %q, want %q", c.name, c.tr, c.v, c.v, c.typ, got, c.want)
		}
	}
}

// TestPartitionPathOf checks the escaping (Java's URLEncoder: form
// encoding, "*" kept, "~" encoded) of names and values, the types taken
// from the schema, and a field whose source column is gone.
func TestPartitionPathOf(t *testing.T) {
	schema := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "d", Type: spec.DateType{}},
		{ID: 2, Name: "s", Type: spec.StringType{}},
		{ID: 3, Name: "ts", Type: spec.TimestampTzType{}},
		{ID: 4, Name: "b", Type: spec.BinaryType{}},
	}}
	ps := &spec.PartitionSpec{Fields: []spec.PartitionField{
		{SourceID: 1, FieldID: 1000, Name: "p date", Transform: spec.Transform{Kind: spec.TransformIdentity}},
		{SourceID: 2, FieldID: 1001, Name: "s/é", Transform: spec.Transform{Kind: spec.TransformIdentity}},
		{SourceID: 3, FieldID: 1002, Name: "ts", Transform: spec.Transform{Kind: spec.TransformIdentity}},
		{SourceID: 4, FieldID: 1003, Name: "b", Transform: spec.Transform{Kind: spec.TransformIdentity}},
		{SourceID: 9, FieldID: 1004, Name: "gone", Transform: spec.Transform{Kind: spec.TransformIdentity}},
		{SourceID: 2, FieldID: 1005, Name: "n", Transform: spec.Transform{Kind: spec.TransformIdentity}},
	}}
	tuple := []any{int32(-1), "a b/c=d%e+f~g*h_i.j-k😀", int64(1709201730) * 1e6, []byte{0xfb, 0xff}, int64(5), nil}
	want := "p+date=1969-12-31" +
		"/s%2F%C3%A9=a+b%2Fc%3Dd%25e%2Bf%7Eg*h_i.j-k%F0%9F%98%80" +
		"/ts=2024-02-29T10%3A15%3A30%2B00%3A00" +
		"/b=%2B%2F8%3D" +
		"/gone=5" +
		"/n=null"
	if got := PartitionPathOf(schema, ps, tuple); got != want {
		t.Errorf("PartitionPathOf:\n got %s\nwant %s", got, want)
	}
	// Without a schema the date is a number, which is why callers pass
	// the schema.
	if got := PartitionPathOf(nil, ps, tuple); got[:len("p+date=-1/")] != "p+date=-1/" {
		t.Errorf("PartitionPathOf without a schema: %s", got)
	}
	if got := PartitionPathOf(schema, &spec.PartitionSpec{}, nil); got != "" {
		t.Errorf("unpartitioned: %q, want empty", got)
	}
}
