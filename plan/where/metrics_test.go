package where

import (
	"math"
	"math/big"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// stats describes one column's metrics in a test file; a nil bound or a
// negative count is left out of the manifest entry.
type stats struct {
	id                  int
	lower, upper        any
	values, nulls, nans int64
}

func fileWith(t *testing.T, records int64, cols ...stats) *manifest.DataFile {
	t.Helper()
	df := &manifest.DataFile{RecordCount: records, Partition: []any{},
		LowerBounds: map[int][]byte{}, UpperBounds: map[int][]byte{},
		ValueCounts: map[int]int64{}, NullValueCounts: map[int]int64{}, NaNValueCounts: map[int]int64{}}
	for _, c := range cols {
		f, ok := testSchema().FindField(c.id)
		if !ok {
			t.Fatalf("no field %d", c.id)
		}
		for m, v := range map[*map[int][]byte]any{&df.LowerBounds: c.lower, &df.UpperBounds: c.upper} {
			if v == nil {
				continue
			}
			b, err := spec.EncodeValue(f.Type, v)
			if err != nil {
				t.Fatal(err)
			}
			(*m)[c.id] = b
		}
		for m, v := range map[*map[int]int64]int64{&df.ValueCounts: c.values, &df.NullValueCounts: c.nulls, &df.NaNValueCounts: c.nans} {
			if v >= 0 {
				(*m)[c.id] = v
			}
		}
	}
	return df
}

func micros(s string) int64 {
	ts, err := parseTimestamp(s)
	if err != nil {
		panic(err)
	}
	return ts.UnixMicro()
}

func days(s string) int32 {
	return int32(micros(s) / 86400e6)
}

func dec(unscaled int64) spec.Decimal { return spec.Decimal{Unscaled: big.NewInt(unscaled), Scale: 2} }

type metricsCase struct {
	expr  string
	file  *manifest.DataFile
	match bool
}

func runMetrics(t *testing.T, cases []metricsCase) {
	t.Helper()
	for _, c := range cases {
		f, err := Compile(c.expr, testSchema())
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		if got := f.MatchMetrics(c.file); got != c.match {
			t.Errorf("%s on bounds %v..%v = %v, want %v", c.expr, c.file.LowerBounds, c.file.UpperBounds, got, c.match)
		}
	}
}

func TestMetricsBoundsByType(t *testing.T) {
	// One file per type, holding values from lo to hi and no nulls.
	long := fileWith(t, 10, stats{1, int64(10), int64(20), 10, 0, -1})
	intf := fileWith(t, 10, stats{5, int32(-5), int32(5), 10, 0, -1})
	date := fileWith(t, 10, stats{4, days("2024-06-01"), days("2024-06-05"), 10, 0, -1})
	ts := fileWith(t, 10, stats{3, micros("2024-06-05 10:00:00"), micros("2024-06-05 18:00:00"), 10, 0, -1})
	tz := fileWith(t, 10, stats{12, micros("2024-06-05 10:00:00"), micros("2024-06-05 18:00:00"), 10, 0, -1})
	str := fileWith(t, 10, stats{2, "banana", "cherry", 10, 0, -1})
	decimal := fileWith(t, 10, stats{6, dec(150), dec(999), 10, 0, -1})
	nanos := fileWith(t, 10, stats{8, micros("2024-06-05 10:00:00") * 1000, micros("2024-06-05 18:00:00") * 1000, 10, 0, -1})
	runMetrics(t, []metricsCase{
		{"id = 10", long, true},
		{"id = 9", long, false},
		{"id = 21", long, false},
		{"id < 10", long, false},
		{"id <= 10", long, true},
		{"id > 20", long, false},
		{"id >= 20", long, true},
		{"id IN (1, 2, 30)", long, false},
		{"id IN (1, 15)", long, true},
		{"id != 10", long, true},
		{"id NOT IN (10, 11)", long, true},
		{"n > 5", intf, false},
		{"n >= -5 AND n < -4", intf, true},
		{"n < -5", intf, false},
		{"d >= '2024-06-06'", date, false},
		{"d >= DATE '2024-06-05'", date, true},
		{"d < '2024-06-01'", date, false},
		{"ts >= '2024-06-06'", ts, false},
		{"ts >= '2024-06-05 18:00:00'", ts, true},
		{"ts > '2024-06-05 18:00:00'", ts, false},
		{"ts < '2024-06-05 10:00:00.000001'", ts, true},
		{"ts = TIMESTAMP '2024-06-05 09:59:59'", ts, false},
		{"tz >= '2024-06-05T19:00:00+02:00'", tz, true}, // 17:00 UTC
		{"tz >= '2024-06-05T21:00:00+02:00'", tz, false},
		{"tsn >= '2024-06-05 18:00:00.000001'", nanos, false},
		{"tsn <= '2024-06-05 10:00:00'", nanos, true},
		{"cat = 'apple'", str, false},
		{"cat >= 'cherry'", str, true},
		{"cat > 'cherry'", str, false},
		{"cat < 'banana'", str, false},
		{"cat IN ('apple', 'blueberry')", str, true},
		{"amount >= 10.00", decimal, false},
		{"amount > 9.98", decimal, true},
		{"amount < 1.5", decimal, false},
		{"amount = 1.50", decimal, true},
	})
}

func TestMetricsNullsNaNsAndMissingStats(t *testing.T) {
	noStats := fileWith(t, 10)
	allNull := fileWith(t, 10, stats{1, nil, nil, 10, 10, -1})
	noNull := fileWith(t, 10, stats{1, int64(1), int64(2), 10, 0, -1})
	someNull := fileWith(t, 10, stats{1, int64(1), int64(2), 10, 3, -1})
	onlyLower := fileWith(t, 10, stats{1, int64(5), nil, -1, -1, -1})
	allNaN := fileWith(t, 10, stats{13, nil, nil, 10, 0, 10})
	nanBound := fileWith(t, 10, stats{13, math.NaN(), 5.0, 10, 0, 1})
	floats := fileWith(t, 10, stats{14, float32(1.5), float32(2.5), 10, 0, 0})
	empty := fileWith(t, 0)
	badBound := fileWith(t, 10)
	badBound.LowerBounds[1] = []byte{1, 2, 3} // not 8 bytes
	runMetrics(t, []metricsCase{
		// A file without stats for the column may hold anything.
		{"id = 1", noStats, true},
		{"id IS NULL", noStats, true},
		{"id IS NOT NULL", noStats, true},
		{"cat > 'x' OR id < 0", noStats, true},
		{"id IS NULL", allNull, true},
		{"id IS NOT NULL", allNull, false},
		{"id = 1", allNull, false},
		{"id < 100", allNull, false},
		{"NOT id IS NULL", allNull, false},
		{"id IS NULL", noNull, false},
		{"NOT id IS NOT NULL", noNull, false},
		{"id IS NULL", someNull, true},
		{"id IS NOT NULL", someNull, true},
		{"id < 5", onlyLower, false},
		{"id > 1000", onlyLower, true},
		{"dbl > 0", allNaN, false},
		{"dbl IS NOT NULL", allNaN, true},
		{"dbl < 0", nanBound, true}, // a NaN lower bound says nothing
		{"dbl > 5", nanBound, false},
		{"flt > 2.5", floats, false},
		{"flt >= 2.5", floats, true},
		{"dbl = 1", empty, true}, // no rows, but kept, as its partition would be
		{"id < 0", badBound, true},
		// NOT is pushed down soundly.
		{"NOT (id < 1)", noNull, true},
		{"NOT (id <= 2)", noNull, false},
		{"NOT (id = 1 OR id = 2)", noNull, true}, // != never prunes
		{"NOT (id > 0 AND id < 3)", noNull, false},
		{"NOT id IN (1, 2)", noNull, true},
		// AND and OR.
		{"id = 1 AND cat = 'x'", noNull, true},
		{"id = 7 AND cat = 'x'", noNull, false},
		{"id = 7 OR cat = 'x'", noNull, true},
		{"id = 7 OR id = 8", noNull, false},
	})
}

// TestMatchFileUsesBothPartitionAndMetrics: with day(ts) partitioning, a
// file in a matching partition is still ruled out by its bounds, and one
// in a partition that cannot match is ruled out without them.
func TestMatchFileUsesBothPartitionAndMetrics(t *testing.T) {
	s := testSchema()
	ps := &spec.PartitionSpec{ID: 1, Fields: []spec.PartitionField{field(3, "ts_day", day)}}
	f, err := Compile("ts >= '2024-06-06 12:00:00'", s)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := f.ForSpec(ps, s)
	if err != nil {
		t.Fatal(err)
	}
	morning := fileWith(t, 5, stats{3, micros("2024-06-06 01:00:00"), micros("2024-06-06 11:00:00"), 5, 0, -1})
	morning.Partition = []any{days("2024-06-06")}
	evening := fileWith(t, 5, stats{3, micros("2024-06-06 13:00:00"), micros("2024-06-06 20:00:00"), 5, 0, -1})
	evening.Partition = []any{days("2024-06-06")}
	before := fileWith(t, 5)
	before.Partition = []any{days("2024-06-05")}
	after := fileWith(t, 5)
	after.Partition = []any{days("2024-06-07")}
	for _, c := range []struct {
		name string
		df   *manifest.DataFile
		want bool
	}{{"morning", morning, false}, {"evening", evening, true}, {"before", before, false}, {"after", after, true}} {
		got, err := pf.MatchFile(c.df)
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

func TestProjectionPerTransformAndType(t *testing.T) {
	ps := &spec.PartitionSpec{ID: 7, Fields: []spec.PartitionField{
		field(12, "tz_day", day), field(1, "id_trunc", truncate(100)), field(6, "amount_bucket", bucket(4)),
		field(4, "d_year", year), field(5, "n_bucket", bucket(8)), field(2, "cat_bucket", bucket(8)),
	}}
	b, _ := bucketOf(spec.DecimalType{Scale: 2}, dec(1234), 4)
	nb, _ := bucketOf(spec.IntType{}, int32(7), 8)
	cb, _ := bucketOf(spec.StringType{}, "iceberg", 8)
	tuple := []any{days("2024-06-06"), int64(200), b, int32(2024 - 1970), nb, cb}
	runEval(t, ps, []evalCase{
		{"tz >= '2024-06-06T23:00:00-01:00'", tuple, false}, // 2024-06-07 00:00 UTC
		{"tz >= '2024-06-06T23:00:00+01:00'", tuple, true},
		{"tz < '2024-06-06'", tuple, false},
		{"id >= 250", tuple, true},
		{"id >= 300", tuple, false},
		{"id < 200", tuple, false},
		{"id = 299", tuple, true},
		{"amount = 12.34", tuple, true},
		{"amount IN (12.34, 0.01)", tuple, true},
		{"amount > 100", tuple, true}, // a range says nothing about a bucket
		{"d >= '2025-01-01'", tuple, false},
		{"d <= '2024-01-01'", tuple, true},
		{"d < '2024-01-01'", tuple, false},
		{"n = 7", tuple, true},
		{"cat = 'iceberg'", tuple, true},
	})
	other := []any{days("2024-06-06"), int64(200), (b + 1) % 4, int32(54), (nb + 1) % 8, (cb + 1) % 8}
	runEval(t, ps, []evalCase{
		{"amount = 12.34", other, false},
		{"n = 7", other, false},
		{"cat = 'iceberg'", other, false},
	})
}

func TestPartitionsDecide(t *testing.T) {
	s := testSchema()
	idCat := []spec.PartitionSpec{{ID: 0, Fields: []spec.PartitionField{field(2, "cat", identity), field(1, "id", identity)}}}
	withDay := append(idCat[:1:1], spec.PartitionSpec{ID: 1, Fields: []spec.PartitionField{field(2, "cat", identity), field(3, "ts_day", day)}})
	for _, c := range []struct {
		expr  string
		specs []spec.PartitionSpec
		want  bool
	}{
		{"cat = 'a'", idCat, true},
		{"cat = 'a' OR NOT id IN (1, 2)", idCat, true},
		{"cat = 'a'", withDay, true},
		{"id = 1", withDay, false}, // spec 1 does not partition by id
		{"ts > '2026-01-01'", withDay, false},
		{"n = 1 AND cat = 'a'", idCat, false},
	} {
		f, err := Compile(c.expr, s)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.PartitionsDecide(c.specs); got != c.want {
			t.Errorf("%s: PartitionsDecide = %v, want %v", c.expr, got, c.want)
		}
	}
}

// TestMatchMetricsIdentityPartition: a file whose identity-partition
// column is stored as nulls (a file compaction wrote before it applied the
// spec's first projection rule) or not at all still holds its partition
// value in every row, so metrics do not rule it out for a predicate on that
// column; the partition match decides. Other columns' metrics still do.
func TestMatchMetricsIdentityPartition(t *testing.T) {
	ps := &spec.PartitionSpec{Fields: []spec.PartitionField{{SourceID: 2, FieldID: 1000, Name: "cat", Transform: spec.Transform{Kind: spec.TransformIdentity}}}}
	f, err := Compile("cat = 'eu' AND n > 5", testSchema())
	if err != nil {
		t.Fatal(err)
	}
	df := fileWith(t, 10, stats{id: 2, values: 10, nulls: 10, nans: -1}, stats{id: 5, lower: int32(6), upper: int32(9), values: 10, nulls: 0, nans: -1})
	if f.MatchMetrics(df) {
		t.Fatal("MatchMetrics keeps a file whose cat is all null by its metrics")
	}
	if !f.MatchMetricsIn(df, ps) {
		t.Error("MatchMetricsIn rules out a file whose cat its partition gives")
	}
	pf, err := f.ForSpec(ps, testSchema())
	if err != nil {
		t.Fatal(err)
	}
	for part, want := range map[string]bool{"eu": true, "us": false} {
		df.Partition = []any{part}
		if got, err := pf.MatchFile(df); err != nil || got != want {
			t.Errorf("partition cat=%s: MatchFile = %v, %v; want %v", part, got, err, want)
		}
	}
	df.Partition = []any{"eu"}
	df.UpperBounds[5], _ = spec.EncodeValue(spec.IntType{}, int32(4))
	if got, _ := pf.MatchFile(df); got {
		t.Error("MatchFile keeps a file whose n metrics rule it out")
	}
}
