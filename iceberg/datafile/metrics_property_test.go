package datafile

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/iceberg/spec"
)

// mtPropColumn is one randomly generated column: how to make a value and
// how a value compares, in the Iceberg type's order, with a decoded bound.
type mtPropColumn struct {
	typ spec.PrimitiveType
	dt  arrow.DataType
	gen func(r *rand.Rand) any
	// cmp compares a generated value v with a decoded bound b: <0, 0, >0.
	cmp func(v, b any) int
}

func mtCmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	case x == 0 && y == 0: // -0.0 sorts before +0.0
		return int(mtB2i(!math.Signbit(x))) - int(mtB2i(!math.Signbit(y)))
	}
	return 0
}

func mtB2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func mtRandString(r *rand.Rand) string {
	pool := []rune{'a', 'b', 'z', 'é', 'ÿ', '中', '\uffff', 0xD7FF, 0xE000, '😀', 0x10FFFF, 0x10FFFE, 0x7f, 0x80}
	n := r.IntN(6)
	rs := make([]rune, n)
	for i := range rs {
		rs[i] = pool[r.IntN(len(pool))]
	}
	return string(rs)
}

func mtRandBytes(r *rand.Rand, n int) []byte {
	pool := []byte{0, 1, 0x7f, 0x80, 0xfe, 0xff}
	b := make([]byte, n)
	for i := range b {
		b[i] = pool[r.IntN(len(pool))]
	}
	return b
}

func mtPropColumns() []mtPropColumn {
	i64 := func(v, b any) int { return mtCmpInt(v.(int64), b.(int64)) }
	return []mtPropColumn{
		{spec.LongType{}, arrow.PrimitiveTypes.Int64, func(r *rand.Rand) any { return r.Int64() - r.Int64() }, i64},
		{spec.IntType{}, arrow.PrimitiveTypes.Int32, func(r *rand.Rand) any { return int32(r.Uint32()) }, func(v, b any) int { return mtCmpInt(int64(v.(int32)), int64(b.(int32))) }},
		{spec.DoubleType{}, arrow.PrimitiveTypes.Float64, func(r *rand.Rand) any {
			special := []float64{math.NaN(), 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.MaxFloat64, -math.SmallestNonzeroFloat64}
			if r.IntN(3) == 0 {
				return special[r.IntN(len(special))]
			}
			return r.NormFloat64()
		}, func(v, b any) int { return mtCmpFloat(v.(float64), b.(float64)) }},
		{spec.FloatType{}, arrow.PrimitiveTypes.Float32, func(r *rand.Rand) any {
			if r.IntN(4) == 0 {
				return float32([]float64{math.NaN(), 0, math.Copysign(0, -1)}[r.IntN(3)])
			}
			return float32(r.NormFloat64())
		}, func(v, b any) int { return mtCmpFloat(float64(v.(float32)), float64(b.(float32))) }},
		{spec.StringType{}, arrow.BinaryTypes.String, func(r *rand.Rand) any { return mtRandString(r) },
			func(v, b any) int { return bytes.Compare([]byte(v.(string)), []byte(b.(string))) }},
		{spec.BinaryType{}, arrow.BinaryTypes.Binary, func(r *rand.Rand) any { return mtRandBytes(r, r.IntN(6)) },
			func(v, b any) int { return bytes.Compare(v.([]byte), b.([]byte)) }},
		{spec.FixedType{Length: 3}, &arrow.FixedSizeBinaryType{ByteWidth: 3}, func(r *rand.Rand) any { return mtRandBytes(r, 3) },
			func(v, b any) int { return bytes.Compare(v.([]byte), b.([]byte)) }},
		{spec.UUIDType{}, &arrow.FixedSizeBinaryType{ByteWidth: 16}, func(r *rand.Rand) any { return [16]byte(mtRandBytes(r, 16)) },
			func(v, b any) int { x, y := v.([16]byte), b.([16]byte); return bytes.Compare(x[:], y[:]) }},
		{spec.DecimalType{Precision: 38, Scale: 3}, &arrow.Decimal128Type{Precision: 38, Scale: 3}, func(r *rand.Rand) any {
			u := new(big.Int).Lsh(big.NewInt(r.Int64()-r.Int64()), uint(r.IntN(60)))
			return spec.Decimal{Unscaled: u, Scale: 3}
		}, func(v, b any) int { return v.(spec.Decimal).Unscaled.Cmp(b.(spec.Decimal).Unscaled) }},
		// Nanosecond instants stored as timestamptz (micros): a bound b in
		// micros covers v when b*1000 compares accordingly.
		{spec.TimestampTzType{}, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, func(r *rand.Rand) any { return r.Int64N(1<<50) - 1<<49 },
			func(v, b any) int { return mtCmpInt(v.(int64), b.(int64)*1000) }},
		{spec.DateType{}, arrow.FixedWidthTypes.Date64, func(r *rand.Rand) any { return r.Int64N(1<<40) - 1<<39 },
			func(v, b any) int { return mtCmpInt(v.(int64), int64(b.(int32))*86_400_000) }},
	}
}

func mtCmpInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func mtIsNaN(v any) bool {
	switch f := v.(type) {
	case float32:
		return f != f
	case float64:
		return f != f
	}
	return false
}

// TestMetricsBoundsProperty: for random data in random batches and modes,
// every non-null non-NaN value v satisfies lower <= v <= upper after
// decoding, a bound is missing only when allowed, and counts add up.
func TestMetricsBoundsProperty(t *testing.T) {
	cols := mtPropColumns()
	for seed := uint64(1); seed <= 60; seed++ {
		r := rand.New(rand.NewPCG(seed, seed*7919))
		var schema spec.Schema
		var fields []arrow.Field
		cfg := MetricsConfig{Default: MetricsMode{Kind: MetricsFull}, Columns: map[string]MetricsMode{}}
		for i, c := range cols {
			name := fmt.Sprintf("c%d", i)
			schema.Fields = append(schema.Fields, mtOpt(i+1, name, c.typ))
			fields = append(fields, mtField(i+1, name, c.dt))
			if r.IntN(2) == 0 {
				cfg.Columns[name] = MetricsMode{Kind: MetricsTruncate, Length: 1 + r.IntN(4)}
			}
		}
		values := make([][]any, len(cols))
		coll := NewMetricsCollector(&schema, cfg)
		batches := 1 + r.IntN(4)
		for b := 0; b < batches; b++ {
			n := r.IntN(40)
			nullRate := []int{0, 5, 50, 100}[r.IntN(4)]
			var arrs []arrow.Array
			for i, c := range cols {
				vals := make([]any, n)
				for j := range vals {
					if r.IntN(100) < nullRate {
						continue
					}
					vals[j] = c.gen(r)
				}
				values[i] = append(values[i], vals...)
				arrs = append(arrs, mtColumn(t, c.dt, vals))
			}
			if err := coll.Add(mtRecord(t, fields, arrs)); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		m, err := coll.Finish(nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for i, c := range cols {
			id := i + 1
			mode := cfg.ColumnMode(fmt.Sprintf("c%d", i))
			var nonNull, nulls, nans int64
			for _, v := range values[i] {
				switch {
				case v == nil:
					nulls++
				case mtIsNaN(v):
					nans++
				default:
					nonNull++
				}
			}
			if m.ValueCounts[id] != int64(len(values[i])) || m.NullValueCounts[id] != nulls || m.NaNValueCounts[id] != nans {
				t.Fatalf("seed %d %s: counts %d/%d/%d, want %d/%d/%d", seed, c.typ, m.ValueCounts[id], m.NullValueCounts[id], m.NaNValueCounts[id], len(values[i]), nulls, nans)
			}
			loB, hasLo := m.LowerBounds[id]
			hiB, hasHi := m.UpperBounds[id]
			if nonNull == 0 {
				if hasLo || hasHi {
					t.Fatalf("seed %d %s: bounds without a non-null non-NaN value", seed, c.typ)
				}
				continue
			}
			if !hasLo {
				t.Fatalf("seed %d %s: no lower bound", seed, c.typ)
			}
			truncatable := false
			switch c.typ.(type) {
			case spec.StringType, spec.BinaryType, spec.FixedType:
				truncatable = mode.Kind == MetricsTruncate
			}
			if !hasHi && !truncatable {
				t.Fatalf("seed %d %s: no upper bound", seed, c.typ)
			}
			lo, err := spec.DecodeValue(c.typ, loB)
			if err != nil {
				t.Fatalf("seed %d %s: lower: %v", seed, c.typ, err)
			}
			var hi any
			if hasHi {
				if hi, err = spec.DecodeValue(c.typ, hiB); err != nil {
					t.Fatalf("seed %d %s: upper: %v", seed, c.typ, err)
				}
			}
			for _, v := range values[i] {
				if v == nil || mtIsNaN(v) {
					continue
				}
				if c.cmp(v, lo) < 0 {
					t.Fatalf("seed %d %s (%s): value %v below lower bound %v", seed, c.typ, mode, v, lo)
				}
				if hasHi && c.cmp(v, hi) > 0 {
					t.Fatalf("seed %d %s (%s): value %v above upper bound %v", seed, c.typ, mode, v, hi)
				}
			}
		}
	}
}
