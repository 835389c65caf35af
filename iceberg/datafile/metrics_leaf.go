package datafile

import (
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/icectl/icectl/iceberg/spec"
)

// metricsLeaf accumulates one primitive column.
type metricsLeaf struct {
	id      int
	name    string
	typ     spec.PrimitiveType
	mode    MetricsMode
	bounds  bool // bounds are wanted: mode truncate or full, not repeated, type has bounds
	isFloat bool
	// repeated: below a list or map, where writers disagree on what a
	// null or empty parent adds to the null count.
	repeated bool

	rows                int64 // top-level rows of the batches that held this column
	values, nulls, nans int64
	dt                  arrow.DataType
	acc                 metricsAcc
}

// metricsAcc is a typed min/max accumulator. scan adds the reached slots of
// arr and returns how many of them were null and NaN.
type metricsAcc interface {
	scan(arr arrow.Array, r metricsReach) (nulls, nans int64, err error)
	// result returns the bounds as Go values of the Iceberg type (see
	// spec/values.go), or ok false when no non-null non-NaN value was seen.
	result() (lo, hi any, ok bool, err error)
}

func newMetricsLeaf(id int, name string, t spec.PrimitiveType, mode MetricsMode, repeated bool) *metricsLeaf {
	l := &metricsLeaf{id: id, name: name, typ: t, mode: mode, repeated: repeated}
	switch t.(type) {
	case spec.FloatType, spec.DoubleType:
		l.isFloat = true
	}
	hasBounds := true
	switch t.(type) {
	case spec.GeometryType, spec.GeographyType:
		hasBounds = false // geo bounds are bounding boxes, not value bounds
	}
	l.bounds = hasBounds && !repeated && (mode.Kind == MetricsTruncate || mode.Kind == MetricsFull)
	return l
}

func (l *metricsLeaf) add(arr arrow.Array, r metricsReach) error {
	if l.mode.Kind == MetricsNone {
		return nil
	}
	if l.dt == nil {
		l.dt = arr.DataType()
		if l.bounds || l.isFloat {
			acc, err := newMetricsAcc(l.typ, l.dt)
			if err != nil {
				return err
			}
			l.acc = acc
		} else if err := checkMetricsCountType(l.typ, l.dt); err != nil {
			return err
		}
	} else if !arrow.TypeEqual(l.dt, arr.DataType()) {
		return fmt.Errorf("Arrow type changed from %s to %s between batches", l.dt, arr.DataType())
	}
	var nulls, nans int64
	if l.acc != nil {
		var err error
		if nulls, nans, err = l.acc.scan(arr, r); err != nil {
			return err
		}
	} else {
		nulls = metricsCountNulls(arr, r)
	}
	l.values += r.count + r.phantom
	l.nulls += nulls + r.phantom
	l.nans += nans
	return nil
}

// finishBounds returns the serialized, truncated bounds and whether each
// may be written. An empty bound (the empty string) is a real bound.
func (l *metricsLeaf) finishBounds() (lo, hi []byte, hasLo, hasHi bool, err error) {
	vlo, vhi, ok, err := l.acc.result()
	if err != nil || !ok {
		return nil, nil, false, false, err
	}
	if lo, err = spec.EncodeValue(l.typ, vlo); err != nil {
		return nil, nil, false, false, err
	}
	if hi, err = spec.EncodeValue(l.typ, vhi); err != nil {
		return nil, nil, false, false, err
	}
	hasHi = true
	if l.mode.Kind == MetricsTruncate {
		lo = TruncateLowerBound(l.typ, lo, l.mode.Length)
		hi, hasHi = TruncateUpperBound(l.typ, hi, l.mode.Length)
	}
	if lo == nil {
		lo = []byte{}
	}
	if hasHi && hi == nil {
		hi = []byte{}
	}
	return lo, hi, true, hasHi, nil
}

// metricsCountNulls counts the null slots among those r reaches.
func metricsCountNulls(arr arrow.Array, r metricsReach) int64 {
	if arr.NullN() == 0 {
		return 0
	}
	if r.mask == nil && r.lo == 0 && r.hi == arr.Len() {
		return int64(arr.NullN())
	}
	valid, off := arr.NullBitmapBytes(), arr.Data().Offset()
	var nulls int64
	for i := r.lo; i < r.hi; i++ {
		if (r.mask == nil || r.mask[i-r.lo]) && !bitutil.BitIsSet(valid, off+i) {
			nulls++
		}
	}
	return nulls
}

// metricsValidity returns the metricsValidity bitmap and offset of arr, or nil when arr
// has no nulls, so scans can skip the per-slot check.
func metricsValidity(arr arrow.Array) ([]byte, int) {
	if arr.NullN() == 0 {
		return nil, 0
	}
	return arr.NullBitmapBytes(), arr.Data().Offset()
}

// checkMetricsCountType accepts the Arrow types a column that only gets
// counts may hold: any type whose nulls mean the same thing.
func checkMetricsCountType(t spec.PrimitiveType, dt arrow.DataType) error {
	switch dt.ID() {
	case arrow.STRUCT, arrow.LIST, arrow.LARGE_LIST, arrow.MAP, arrow.NULL, arrow.DENSE_UNION, arrow.SPARSE_UNION:
		return fmt.Errorf("type %s cannot be held in Arrow %s", t, dt)
	}
	return nil
}

// newMetricsAcc picks the accumulator for Iceberg type t held in Arrow
// type dt, converting units so that bounds are in t's units.
func newMetricsAcc(t spec.PrimitiveType, dt arrow.DataType) (metricsAcc, error) {
	bad := func() (metricsAcc, error) { return nil, fmt.Errorf("type %s cannot be held in Arrow %s", t, dt) }
	id := dt.ID()
	switch tt := t.(type) {
	case spec.BooleanType:
		if id == arrow.BOOL {
			return &metricsBoolAcc{}, nil
		}
	case spec.IntType:
		switch id {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.UINT8, arrow.UINT16:
			return &metricsIntAcc{mul: 1, div: 1, out: metricsOutInt32}, nil
		}
	case spec.LongType:
		switch id {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
			return &metricsIntAcc{mul: 1, div: 1, out: metricsOutInt64}, nil
		case arrow.UINT64:
			return &metricsUint64Acc{}, nil
		}
	case spec.DateType:
		switch id {
		case arrow.DATE32:
			return &metricsIntAcc{mul: 1, div: 1, out: metricsOutInt32}, nil
		case arrow.DATE64:
			return &metricsIntAcc{mul: 1, div: 86_400_000, out: metricsOutInt32}, nil
		}
	case spec.TimeType:
		switch d := dt.(type) {
		case *arrow.Time32Type:
			return &metricsIntAcc{mul: metricsUnitMicros(d.Unit), div: 1, out: metricsOutInt64}, nil
		case *arrow.Time64Type:
			if d.Unit == arrow.Nanosecond {
				return &metricsIntAcc{mul: 1, div: 1000, out: metricsOutInt64}, nil
			}
			return &metricsIntAcc{mul: 1, div: 1, out: metricsOutInt64}, nil
		}
	case spec.TimestampType, spec.TimestampTzType:
		// Arrow timestamps are instants since the epoch whatever their zone,
		// and so are Iceberg's; the zone only changes how they print.
		if d, ok := dt.(*arrow.TimestampType); ok {
			if d.Unit == arrow.Nanosecond {
				return &metricsIntAcc{mul: 1, div: 1000, out: metricsOutInt64}, nil
			}
			return &metricsIntAcc{mul: metricsUnitMicros(d.Unit), div: 1, out: metricsOutInt64}, nil
		}
	case spec.TimestampNsType, spec.TimestampTzNsType:
		if d, ok := dt.(*arrow.TimestampType); ok {
			return &metricsIntAcc{mul: metricsUnitNanos(d.Unit), div: 1, out: metricsOutInt64}, nil
		}
	case spec.FloatType:
		if id == arrow.FLOAT32 {
			return &metricsFloatAcc{single: true}, nil
		}
	case spec.DoubleType:
		if id == arrow.FLOAT32 || id == arrow.FLOAT64 {
			return &metricsFloatAcc{}, nil
		}
	case spec.StringType:
		switch id {
		case arrow.STRING, arrow.LARGE_STRING:
			return &metricsBytesAcc{str: true}, nil
		}
	case spec.BinaryType:
		switch id {
		case arrow.BINARY, arrow.LARGE_BINARY:
			return &metricsBytesAcc{}, nil
		}
	case spec.FixedType:
		if d, ok := dt.(*arrow.FixedSizeBinaryType); ok && d.ByteWidth == tt.Length {
			return &metricsBytesAcc{}, nil
		}
	case spec.UUIDType:
		if d, ok := dt.(*arrow.FixedSizeBinaryType); ok && d.ByteWidth == 16 {
			return &metricsBytesAcc{uuid: true}, nil
		}
	case spec.DecimalType:
		var scale int32 = -1
		switch d := dt.(type) {
		case *arrow.Decimal32Type:
			scale = d.Scale
		case *arrow.Decimal64Type:
			scale = d.Scale
		case *arrow.Decimal128Type:
			scale = d.Scale
		case *arrow.Decimal256Type:
			scale = d.Scale
		default:
			return bad()
		}
		if int(scale) != tt.Scale {
			return nil, fmt.Errorf("type %s held in Arrow %s with a different scale", t, dt)
		}
		switch id {
		case arrow.DECIMAL32, arrow.DECIMAL64:
			return &metricsIntAcc{mul: 1, div: 1, out: metricsOutDecimal, scale: tt.Scale}, nil
		default:
			return &metricsDecimalAcc{scale: tt.Scale}, nil
		}
	}
	return bad()
}

// metricsUnitMicros is how many microseconds one unit holds (0 for nanoseconds,
// which callers handle by division).
func metricsUnitMicros(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1_000_000
	case arrow.Millisecond:
		return 1_000
	case arrow.Microsecond:
		return 1
	}
	return 0
}

// metricsUnitNanos is how many nanoseconds one unit holds.
func metricsUnitNanos(u arrow.TimeUnit) int64 {
	if u == arrow.Nanosecond {
		return 1
	}
	return metricsUnitMicros(u) * 1000
}

const (
	metricsOutInt32 = iota
	metricsOutInt64
	metricsOutDecimal
)

// metricsIntAcc tracks the min and max of integer-like values in the Arrow unit;
// result converts with mul/div, rounding the lower bound down and the upper
// bound up so that lossy unit changes still bound every value.
type metricsIntAcc struct {
	has      bool
	min, max int64
	mul, div int64
	out      int
	scale    int
}

func (a *metricsIntAcc) scan(arr arrow.Array, r metricsReach) (int64, int64, error) {
	switch x := arr.(type) {
	case *array.Int8:
		return metricsScanInts(a, x.Int8Values(), arr, r), 0, nil
	case *array.Int16:
		return metricsScanInts(a, x.Int16Values(), arr, r), 0, nil
	case *array.Int32:
		return metricsScanInts(a, x.Int32Values(), arr, r), 0, nil
	case *array.Int64:
		return metricsScanInts(a, x.Int64Values(), arr, r), 0, nil
	case *array.Uint8:
		return metricsScanInts(a, x.Uint8Values(), arr, r), 0, nil
	case *array.Uint16:
		return metricsScanInts(a, x.Uint16Values(), arr, r), 0, nil
	case *array.Uint32:
		return metricsScanInts(a, x.Uint32Values(), arr, r), 0, nil
	case *array.Date32:
		return metricsScanInts(a, x.Date32Values(), arr, r), 0, nil
	case *array.Date64:
		return metricsScanInts(a, x.Date64Values(), arr, r), 0, nil
	case *array.Time32:
		return metricsScanInts(a, x.Time32Values(), arr, r), 0, nil
	case *array.Time64:
		return metricsScanInts(a, x.Time64Values(), arr, r), 0, nil
	case *array.Timestamp:
		return metricsScanInts(a, x.TimestampValues(), arr, r), 0, nil
	case *array.Decimal32:
		return metricsScanInts(a, x.Values(), arr, r), 0, nil
	case *array.Decimal64:
		return metricsScanInts(a, x.Values(), arr, r), 0, nil
	}
	return 0, 0, fmt.Errorf("unexpected Arrow array %T", arr)
}

type metricsIntLike interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32
}

func metricsScanInts[T metricsIntLike](a *metricsIntAcc, vals []T, arr arrow.Array, r metricsReach) (nulls int64) {
	mn, mx := int64(math.MaxInt64), int64(math.MinInt64)
	if a.has {
		mn, mx = a.min, a.max
	}
	valid, off := metricsValidity(arr)
	seen := false
	if r.mask == nil && valid == nil {
		for _, v := range vals[r.lo:r.hi] {
			x := int64(v)
			mn = min(mn, x)
			mx = max(mx, x)
		}
		seen = r.hi > r.lo
	} else {
		for i := r.lo; i < r.hi; i++ {
			if r.mask != nil && !r.mask[i-r.lo] {
				continue
			}
			if valid != nil && !bitutil.BitIsSet(valid, off+i) {
				nulls++
				continue
			}
			x := int64(vals[i])
			mn = min(mn, x)
			mx = max(mx, x)
			seen = true
		}
	}
	if seen || a.has {
		a.min, a.max, a.has = mn, mx, true
	}
	return nulls
}

func (a *metricsIntAcc) result() (any, any, bool, error) {
	if !a.has {
		return nil, nil, false, nil
	}
	lo, hi := a.min, a.max
	if a.mul != 1 {
		var ok1, ok2 bool
		lo, ok1 = metricsMulExact(lo, a.mul)
		hi, ok2 = metricsMulExact(hi, a.mul)
		if !ok1 || !ok2 {
			return nil, nil, false, fmt.Errorf("value out of range after unit conversion")
		}
	}
	if a.div != 1 {
		lo, hi = metricsFloorDiv(lo, a.div), metricsCeilDiv(hi, a.div)
	}
	switch a.out {
	case metricsOutInt32:
		if lo < math.MinInt32 || hi > math.MaxInt32 {
			return nil, nil, false, fmt.Errorf("value out of int32 range")
		}
		return int32(lo), int32(hi), true, nil
	case metricsOutDecimal:
		return spec.Decimal{Unscaled: big.NewInt(lo), Scale: a.scale}, spec.Decimal{Unscaled: big.NewInt(hi), Scale: a.scale}, true, nil
	}
	return lo, hi, true, nil
}

func metricsMulExact(x, m int64) (int64, bool) {
	if x == 0 || m == 0 {
		return 0, true
	}
	p := x * m
	if p/m != x || (x == -1 && m == math.MinInt64) || (m == -1 && x == math.MinInt64) {
		return 0, false
	}
	return p, true
}

func metricsFloorDiv(x, d int64) int64 {
	q := x / d
	if x%d != 0 && (x < 0) != (d < 0) {
		q--
	}
	return q
}

func metricsCeilDiv(x, d int64) int64 {
	q := x / d
	if x%d != 0 && (x < 0) == (d < 0) {
		q++
	}
	return q
}

// metricsUint64Acc tracks a uint64 column stored as Iceberg long.
type metricsUint64Acc struct {
	has      bool
	min, max uint64
}

func (a *metricsUint64Acc) scan(arr arrow.Array, r metricsReach) (int64, int64, error) {
	x, ok := arr.(*array.Uint64)
	if !ok {
		return 0, 0, fmt.Errorf("unexpected Arrow array %T", arr)
	}
	vals := x.Uint64Values()
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
		v := vals[i]
		if !a.has {
			a.min, a.max, a.has = v, v, true
		}
		a.min = min(a.min, v)
		a.max = max(a.max, v)
	}
	return nulls, 0, nil
}

func (a *metricsUint64Acc) result() (any, any, bool, error) {
	if !a.has {
		return nil, nil, false, nil
	}
	if a.max > math.MaxInt64 {
		return nil, nil, false, fmt.Errorf("uint64 value %d does not fit a long", a.max)
	}
	return int64(a.min), int64(a.max), true, nil
}

// metricsBoolAcc remembers which of false and true were seen.
type metricsBoolAcc struct{ sawFalse, sawTrue bool }

func (a *metricsBoolAcc) scan(arr arrow.Array, r metricsReach) (int64, int64, error) {
	x, ok := arr.(*array.Boolean)
	if !ok {
		return 0, 0, fmt.Errorf("unexpected Arrow array %T", arr)
	}
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
		if x.Value(i) {
			a.sawTrue = true
		} else {
			a.sawFalse = true
		}
	}
	return nulls, 0, nil
}

func (a *metricsBoolAcc) result() (any, any, bool, error) {
	switch {
	case a.sawFalse && a.sawTrue:
		return false, true, true, nil
	case a.sawFalse:
		return false, false, true, nil
	case a.sawTrue:
		return true, true, true, nil
	}
	return nil, nil, false, nil
}
