package datafile

import (
	"math"

	"github.com/apache/arrow-go/v18/parquet"

	"github.com/icectl/icectl/iceberg/spec"
)

// newTcAcc is the accumulator the Writer would pick for Iceberg type t
// (newMetricsAcc with the Arrow type ArrowSchema gives t): values arrive
// in t's own units, so no conversion applies.
func newTcAcc(t spec.PrimitiveType) metricsAcc {
	switch t := t.(type) {
	case spec.BooleanType:
		return &metricsBoolAcc{}
	case spec.IntType, spec.DateType:
		return &metricsIntAcc{mul: 1, div: 1, out: metricsOutInt32}
	case spec.FloatType:
		return &metricsFloatAcc{single: true}
	case spec.DoubleType:
		return &metricsFloatAcc{}
	case spec.StringType:
		return &metricsBytesAcc{str: true}
	case spec.UUIDType:
		return &metricsBytesAcc{uuid: true}
	case spec.BinaryType, spec.FixedType:
		return &metricsBytesAcc{}
	case spec.DecimalType:
		// The output's physical type: int32 and int64 up to precision 18.
		if t.Precision <= 18 {
			return &metricsIntAcc{mul: 1, div: 1, out: metricsOutDecimal, scale: t.Scale}
		}
		return &metricsDecimalAcc{scale: t.Scale}
	}
	return &metricsIntAcc{mul: 1, div: 1, out: metricsOutInt64} // long, time, timestamps
}

// observe records the metrics of rows output rows whose non-null values
// are vals.
func observe[T any](c *tcColumn, vals []T, rows int64) {
	observeNested(c, vals, rows, rows)
}

// observeNested records the metrics of a nested leaf's levels for rows
// output rows: entries levels (null or empty parents and null values
// included, as the Arrow path counts them) of which vals are the
// non-null values.
func observeNested[T any](c *tcColumn, vals []T, entries, rows int64) {
	l := c.leaf
	if l == nil {
		return
	}
	l.rows += rows
	l.values += entries
	l.nulls += entries - int64(len(vals))
	if c.dictIdx {
		return // indices: their write observes the bounds
	}
	observeValues(l, vals)
}

// observeValues adds non-null values to l's bounds and NaN count.
func observeValues[T any](l *metricsLeaf, vals []T) {
	switch a := l.acc.(type) {
	case *metricsIntAcc:
		switch v := any(vals).(type) {
		case []int32:
			observeInts(a, v)
		case []int64:
			observeInts(a, v)
		}
	case *metricsFloatAcc:
		switch v := any(vals).(type) {
		case []float32:
			l.nans += observeFloats(a, v)
		case []float64:
			l.nans += observeFloats(a, v)
		}
	case *metricsBytesAcc:
		switch v := any(vals).(type) {
		case []parquet.ByteArray:
			for _, b := range v {
				a.observe(b)
			}
		case []parquet.FixedLenByteArray:
			for _, b := range v {
				a.observe(b)
			}
		}
	case *metricsDecimalAcc:
		if v, ok := any(vals).([]parquet.FixedLenByteArray); ok {
			observeDecimalBytes(a, v)
		}
	case *metricsBoolAcc:
		for _, b := range any(vals).([]bool) {
			if b {
				a.sawTrue = true
			} else {
				a.sawFalse = true
			}
		}
	}
}

func observeInts[T int32 | int64](a *metricsIntAcc, vals []T) {
	if len(vals) == 0 {
		return
	}
	mn, mx := int64(math.MaxInt64), int64(math.MinInt64)
	if a.has {
		mn, mx = a.min, a.max
	}
	for _, v := range vals {
		x := int64(v)
		mn = min(mn, x)
		mx = max(mx, x)
	}
	a.min, a.max, a.has = mn, mx, true
}

// observeFloats is metricsScanFloats over dense values: NaN is counted,
// never a bound, and -0.0 orders before +0.0.
func observeFloats[T float32 | float64](a *metricsFloatAcc, vals []T) (nans int64) {
	mn, mx := math.Inf(1), math.Inf(-1)
	if a.has {
		mn, mx = a.min, a.max
	}
	var seen int64
	for _, v := range vals {
		x := float64(v)
		if x != x {
			nans++
			continue
		}
		seen++
		mn, mx = floatBounds(mn, mx, x)
	}
	if seen > 0 {
		a.min, a.max, a.has = mn, mx, true
	}
	return nans
}
