package where

import (
	"math"
	"slices"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// TestAllMatch: bounds prove every row matches only for range and
// equality predicates with no nulls (and no NaN for floats), never for
// string bounds (they may be truncated) or missing metrics; identity
// partition columns are decided by the partition value.
func TestAllMatch(t *testing.T) {
	jan1 := micros("2024-01-01")
	jan := fileWith(t, 10, stats{id: 3, lower: jan1, upper: jan1 + 86400e6, values: 10, nulls: 0, nans: -1})
	withNull := fileWith(t, 10, stats{id: 3, lower: jan1, upper: jan1 + 86400e6, values: 10, nulls: 1, nans: -1})
	noNullCount := fileWith(t, 10, stats{id: 3, lower: jan1, upper: jan1 + 86400e6, values: 10, nulls: -1, nans: -1})
	noBounds := fileWith(t, 10, stats{id: 3, values: 10, nulls: 0, nans: -1})
	allNull := fileWith(t, 10, stats{id: 3, values: 10, nulls: 10, nans: -1})
	single := fileWith(t, 10, stats{id: 1, lower: int64(7), upper: int64(7), values: 10, nulls: 0, nans: -1})
	strs := fileWith(t, 10, stats{id: 2, lower: "a", upper: "b", values: 10, nulls: 0, nans: -1})
	dbl := fileWith(t, 10, stats{id: 13, lower: 1.0, upper: 2.0, values: 10, nulls: 0, nans: 0})
	dblNaN := fileWith(t, 10, stats{id: 13, lower: 1.0, upper: 2.0, values: 10, nulls: 0, nans: 1})
	for _, c := range []struct {
		expr string
		file *manifest.DataFile
		want bool
	}{
		{"ts < '2024-02-01'", jan, true},
		{"ts < '2024-01-02'", jan, false}, // upper bound is 2024-01-02: not below
		{"ts <= '2024-01-02'", jan, true},
		{"ts >= '2024-01-01'", jan, true},
		{"ts > '2024-01-01'", jan, false},
		{"ts < '2024-02-01'", withNull, false},
		{"ts < '2024-02-01' OR ts IS NULL", withNull, false}, // each side alone proves nothing
		{"ts < '2024-02-01'", noNullCount, false},
		{"ts < '2024-02-01'", noBounds, false},
		{"ts IS NULL", allNull, true},
		{"ts IS NULL", jan, false},
		{"ts IS NOT NULL", jan, true},
		{"ts IS NOT NULL", noNullCount, false},
		{"NOT ts >= '2024-02-01'", jan, true},
		{"ts != '2024-03-01'", jan, true},
		{"ts != '2024-01-01'", jan, false},
		{"id = 7", single, true},
		{"id IN (1, 7)", single, true},
		{"id = 8", single, false},
		{"id NOT IN (1, 8)", single, true},
		{"id < 8 AND ts < '2024-02-01'", single, false}, // no ts metrics
		{"cat < 'c'", strs, false},
		{"dbl < 3", dbl, true},
		{"dbl < 3", dblNaN, false},
	} {
		f, err := Compile(c.expr, testSchema())
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		if got := f.AllMatchIn(c.file, nil); got != c.want {
			t.Errorf("%s on %v..%v nulls %v = %v, want %v", c.expr, c.file.LowerBounds, c.file.UpperBounds, c.file.NullValueCounts, got, c.want)
		}
	}

	// An identity partition decides its column whatever the metrics say.
	ps := &spec.PartitionSpec{Fields: []spec.PartitionField{field(2, "cat", identity)}}
	part := fileWith(t, 10)
	part.Partition = []any{"eu"}
	for expr, want := range map[string]bool{"cat = 'eu'": true, "cat IN ('us', 'eu')": true, "cat = 'us'": false, "cat != 'us'": true, "cat IS NULL": false} {
		f, err := Compile(expr, testSchema())
		if err != nil {
			t.Fatal(err)
		}
		if got := f.AllMatchIn(part, ps); got != want {
			t.Errorf("%s on partition eu = %v, want %v", expr, got, want)
		}
	}
	nullPart := fileWith(t, 10)
	nullPart.Partition = []any{nil}
	if f, _ := Compile("cat = 'eu' OR cat IS NULL", testSchema()); !f.AllMatchIn(nullPart, ps) {
		t.Error("cat IS NULL does not prove a null partition")
	}
	// A day partition is not an identity: a January day proves nothing
	// without metrics.
	byDay := &spec.PartitionSpec{Fields: []spec.PartitionField{field(3, "ts_day", day)}}
	dayFile := fileWith(t, 10)
	dayFile.Partition = []any{days("2024-01-05")}
	if f, _ := Compile("ts < '2024-02-01'", testSchema()); f.AllMatchIn(dayFile, byDay) {
		t.Error("a day partition proved a range without metrics")
	}
}

// TestMatchRow: rows are selected as a SQL DELETE selects them: a null
// matches no comparison (nor its negation), a NaN only != and NOT IN.
func TestMatchRow(t *testing.T) {
	jan, mar := micros("2024-01-10"), micros("2024-03-01")
	rows := []map[int]any{
		{1: int64(1), 3: jan, 2: "a", 13: 1.5},
		{1: int64(2), 3: mar, 2: "b", 13: math.NaN()},
		{1: int64(3), 3: nil, 2: nil, 13: nil},
	}
	for _, c := range []struct {
		expr string
		want []int64
	}{
		{"ts < '2024-02-01'", []int64{1}},
		{"NOT ts < '2024-02-01'", []int64{2}},
		{"ts IS NULL", []int64{3}},
		{"ts < '2024-02-01' OR ts IS NULL", []int64{1, 3}},
		{"cat IN ('a', 'b') AND id > 1", []int64{2}},
		{"cat NOT IN ('a')", []int64{2}},
		{"dbl > 1", []int64{1}},
		{"dbl != 1.5", []int64{2}},
		{"NOT dbl = 1.5", []int64{2}},
		{"dbl NOT IN (1.5)", []int64{2}},
	} {
		f, err := Compile(c.expr, testSchema())
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		var got []int64
		for _, r := range rows {
			ok, err := f.MatchRow(func(id int) any { return r[id] })
			if err != nil {
				t.Fatalf("%s: %v", c.expr, err)
			}
			if ok {
				got = append(got, r[1].(int64))
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s selects %v, want %v", c.expr, got, c.want)
		}
	}
	f, _ := Compile("ts < '2024-02-01' AND id = 1", testSchema())
	if got := f.Fields(); len(got) != 2 || got[0].Name != "ts" || got[1].Name != "id" {
		t.Errorf("Fields = %v", got)
	}
}
