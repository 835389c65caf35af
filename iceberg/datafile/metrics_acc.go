package datafile

import (
	"bytes"
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"

	"github.com/icectl/icectl/iceberg/spec"
)

// metricsFloatAcc tracks float and double columns. NaN is counted and never
// becomes a bound. Zeros order as -0.0 < +0.0, the order Iceberg's bounds
// use; exact bounds in that order are also valid under numeric comparison.
type metricsFloatAcc struct {
	single   bool // Iceberg float: bounds are float32
	has      bool
	min, max float64
}

func (a *metricsFloatAcc) scan(arr arrow.Array, r metricsReach) (int64, int64, error) {
	switch x := arr.(type) {
	case *array.Float32:
		n, nan := metricsScanFloats(a, x.Float32Values(), arr, r)
		return n, nan, nil
	case *array.Float64:
		n, nan := metricsScanFloats(a, x.Float64Values(), arr, r)
		return n, nan, nil
	}
	return 0, 0, fmt.Errorf("unexpected Arrow array %T", arr)
}

func metricsScanFloats[T float32 | float64](a *metricsFloatAcc, vals []T, arr arrow.Array, r metricsReach) (nulls, nans int64) {
	mn, mx := math.Inf(1), math.Inf(-1)
	if a.has {
		mn, mx = a.min, a.max
	}
	valid, off := metricsValidity(arr)
	var seen int64
	for i := r.lo; i < r.hi; i++ {
		if r.mask != nil && !r.mask[i-r.lo] {
			continue
		}
		if valid != nil && !bitutil.BitIsSet(valid, off+i) {
			nulls++
			continue
		}
		x := float64(vals[i])
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
	return nulls, nans
}

// floatBounds widens [mn, mx] to hold x, a number (not NaN), ordering
// -0.0 before +0.0: x equals a bound with another sign bit only for zeros.
func floatBounds(mn, mx, x float64) (float64, float64) {
	if x < mn || (x == mn && math.Signbit(x)) {
		mn = x
	}
	if x > mx || (x == mx && !math.Signbit(x)) {
		mx = x
	}
	return mn, mx
}

func (a *metricsFloatAcc) result() (any, any, bool, error) {
	if !a.has {
		return nil, nil, false, nil
	}
	if a.single {
		return float32(a.min), float32(a.max), true, nil
	}
	return a.min, a.max, true, nil
}

// metricsBytesAcc tracks string, binary, fixed and uuid columns in unsigned byte
// order, which for valid UTF-8 is Unicode code point order.
type metricsBytesAcc struct {
	str, uuid bool
	has       bool
	min, max  []byte
}

func (a *metricsBytesAcc) scan(arr arrow.Array, r metricsReach) (int64, int64, error) {
	switch x := arr.(type) {
	case *array.String:
		n, err := metricsScanVarBytes(a, x.ValueOffsets(), arr, r)
		return n, 0, err
	case *array.LargeString:
		n, err := metricsScanVarBytes(a, x.ValueOffsets(), arr, r)
		return n, 0, err
	case *array.Binary:
		n, err := metricsScanVarBytes(a, x.ValueOffsets(), arr, r)
		return n, 0, err
	case *array.LargeBinary:
		n, err := metricsScanVarBytes(a, x.ValueOffsets(), arr, r)
		return n, 0, err
	case *array.FixedSizeBinary:
		valid, off := metricsValidity(arr)
		var nulls int64
		for i := r.lo; i < r.hi; i++ {
			if r.mask != nil && !r.mask[i-r.lo] {
				continue
			}
			if valid != nil && !bitutil.BitIsSet(valid, off+i) {
				nulls++
				continue
			}
			a.observe(x.Value(i))
		}
		return nulls, 0, nil
	}
	return 0, 0, fmt.Errorf("unexpected Arrow array %T", arr)
}

func metricsScanVarBytes[O int32 | int64](a *metricsBytesAcc, offs []O, arr arrow.Array, r metricsReach) (nulls int64, err error) {
	// Offsets index the whole data buffer; ValueBytes would start at the
	// array's first value instead.
	var data []byte
	if bufs := arr.Data().Buffers(); len(bufs) > 2 && bufs[2] != nil {
		data = bufs[2].Bytes()
	}
	if len(offs) < r.hi+1 {
		return 0, fmt.Errorf("%d offsets for %d values", len(offs), r.hi)
	}
	valid, off := metricsValidity(arr)
	for i := r.lo; i < r.hi; i++ {
		if r.mask != nil && !r.mask[i-r.lo] {
			continue
		}
		if valid != nil && !bitutil.BitIsSet(valid, off+i) {
			nulls++
			continue
		}
		s, e := offs[i], offs[i+1]
		if s < 0 || s > e || int64(e) > int64(len(data)) {
			return 0, fmt.Errorf("value %d has offsets [%d, %d) outside %d data bytes", i, s, e, len(data))
		}
		a.observe(data[s:e])
	}
	return nulls, nil
}

// observe copies v only when it becomes a new bound, into buffers reused
// across values, so the scan does not allocate per value.
func (a *metricsBytesAcc) observe(v []byte) {
	if !a.has {
		a.min = append(a.min[:0], v...)
		a.max = append(a.max[:0], v...)
		a.has = true
		return
	}
	if bytes.Compare(v, a.min) < 0 {
		a.min = append(a.min[:0], v...)
	} else if bytes.Compare(v, a.max) > 0 {
		a.max = append(a.max[:0], v...)
	}
}

func (a *metricsBytesAcc) result() (any, any, bool, error) {
	if !a.has {
		return nil, nil, false, nil
	}
	switch {
	case a.str:
		return string(a.min), string(a.max), true, nil
	case a.uuid:
		var lo, hi [16]byte
		copy(lo[:], a.min)
		copy(hi[:], a.max)
		return lo, hi, true, nil
	}
	return bytes.Clone(a.min), bytes.Clone(a.max), true, nil
}

// metricsDecimalAcc tracks decimal128 and decimal256 columns numerically.
type metricsDecimalAcc struct {
	scale    int
	has128   bool
	min, max decimal128.Num
	has256   bool
	min2     decimal256.Num
	max2     decimal256.Num
}

func (a *metricsDecimalAcc) scan(arr arrow.Array, r metricsReach) (int64, int64, error) {
	valid, off := metricsValidity(arr)
	var nulls int64
	switch x := arr.(type) {
	case *array.Decimal128:
		vals := x.Values()
		for i := r.lo; i < r.hi; i++ {
			if r.mask != nil && !r.mask[i-r.lo] {
				continue
			}
			if valid != nil && !bitutil.BitIsSet(valid, off+i) {
				nulls++
				continue
			}
			v := vals[i]
			if !a.has128 {
				a.min, a.max, a.has128 = v, v, true
			} else if v.Less(a.min) {
				a.min = v
			} else if v.Greater(a.max) {
				a.max = v
			}
		}
		return nulls, 0, nil
	case *array.Decimal256:
		vals := x.Values()
		for i := r.lo; i < r.hi; i++ {
			if r.mask != nil && !r.mask[i-r.lo] {
				continue
			}
			if valid != nil && !bitutil.BitIsSet(valid, off+i) {
				nulls++
				continue
			}
			v := vals[i]
			if !a.has256 {
				a.min2, a.max2, a.has256 = v, v, true
			} else if v.Less(a.min2) {
				a.min2 = v
			} else if v.Greater(a.max2) {
				a.max2 = v
			}
		}
		return nulls, 0, nil
	}
	return 0, 0, fmt.Errorf("unexpected Arrow array %T", arr)
}

func (a *metricsDecimalAcc) result() (any, any, bool, error) {
	var lo, hi *big.Int
	switch {
	case a.has128:
		lo, hi = a.min.BigInt(), a.max.BigInt()
	case a.has256:
		lo, hi = a.min2.BigInt(), a.max2.BigInt()
	default:
		return nil, nil, false, nil
	}
	return spec.Decimal{Unscaled: lo, Scale: a.scale}, spec.Decimal{Unscaled: hi, Scale: a.scale}, true, nil
}
