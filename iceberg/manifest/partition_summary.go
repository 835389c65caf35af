package manifest

import (
	"bytes"
	"math"

	"github.com/icectl/icectl/iceberg/spec"
)

// fieldStats accumulates one partition field's summary over a manifest.
type fieldStats struct {
	typ          spec.Type
	containsNull bool
	containsNaN  bool
	lower, upper any
}

func (s *fieldStats) add(v any) {
	if v == nil {
		s.containsNull = true
		return
	}
	switch f := v.(type) {
	case float32:
		if math.IsNaN(float64(f)) {
			s.containsNaN = true
			return
		}
	case float64:
		if math.IsNaN(f) {
			s.containsNaN = true
			return
		}
	}
	if s.lower == nil || compareValues(v, s.lower) < 0 {
		s.lower = v
	}
	if s.upper == nil || compareValues(v, s.upper) > 0 {
		s.upper = v
	}
}

// summary follows Java's PartitionSummary: contains_nan is always written,
// bounds are absent when every value was null or NaN.
func (s *fieldStats) summary() FieldSummary {
	nan := s.containsNaN
	fs := FieldSummary{ContainsNull: s.containsNull, ContainsNaN: &nan}
	if s.lower != nil {
		fs.LowerBound, _ = spec.EncodeValue(s.typ, s.lower)
		fs.UpperBound, _ = spec.EncodeValue(s.typ, s.upper)
	}
	return fs
}

// compareValues orders two non-null values of one partition type. Floats
// order -0.0 before +0.0, so a -0.0 lower bound is never reported as +0.0.
func compareValues(a, b any) int {
	switch x := a.(type) {
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case int32:
		return cmp3(x, b.(int32))
	case int64:
		return cmp3(x, b.(int64))
	case float32:
		return compareFloat(float64(x), float64(b.(float32)))
	case float64:
		return compareFloat(x, b.(float64))
	case string:
		return cmp3(x, b.(string))
	case []byte:
		return bytes.Compare(x, b.([]byte))
	case [16]byte:
		y := b.([16]byte)
		return bytes.Compare(x[:], y[:])
	case spec.Decimal:
		return x.Unscaled.Cmp(b.(spec.Decimal).Unscaled)
	}
	return 0
}

func cmp3[T int32 | int64 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareFloat(a, b float64) int {
	if a == 0 && b == 0 {
		sa, sb := math.Signbit(a), math.Signbit(b)
		switch {
		case sa == sb:
			return 0
		case sa:
			return -1
		}
		return 1
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
