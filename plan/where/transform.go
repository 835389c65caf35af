package where

import (
	"fmt"
	"math"
	"math/big"
	"time"
	"unicode/utf8"

	"github.com/icectl/icectl/iceberg/spec"
)

// applyTransform computes the partition value tr(v) for a value v of the
// source type src. Null stays null.
func applyTransform(tr spec.Transform, src spec.Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch tr.Kind {
	case spec.TransformIdentity:
		return v, nil
	case spec.TransformYear, spec.TransformMonth, spec.TransformDay, spec.TransformHour:
		return applyTime(tr.Kind, src, v)
	case spec.TransformTruncate:
		return applyTruncate(tr.Param, v)
	case spec.TransformBucket:
		b, ok := bucketOf(src, v, tr.Param)
		if !ok {
			return nil, fmt.Errorf("%s is not supported on %s columns", tr, src)
		}
		return b, nil
	}
	return nil, fmt.Errorf("%s transform cannot be evaluated", tr)
}

func applyTime(kind spec.TransformKind, src spec.Type, v any) (any, error) {
	var micros int64
	isDate := false
	switch src.(type) {
	case spec.DateType:
		d, ok := v.(int32)
		if !ok {
			return nil, fmt.Errorf("date value %T", v)
		}
		isDate = true
		micros = int64(d) * 86400 * 1e6
	case spec.TimestampType, spec.TimestampTzType:
		m, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("timestamp value %T", v)
		}
		micros = m
	case spec.TimestampNsType, spec.TimestampTzNsType:
		n, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("timestamp value %T", v)
		}
		micros = floorDiv(n, 1000)
	default:
		return nil, fmt.Errorf("time transforms apply to date and timestamp columns, not %s", src)
	}
	var out int64
	switch kind {
	case spec.TransformHour:
		if isDate {
			return nil, fmt.Errorf("hour transform does not apply to date columns")
		}
		out = floorDiv(micros, 3600*1e6)
	case spec.TransformDay:
		out = floorDiv(micros, 86400*1e6)
	case spec.TransformMonth, spec.TransformYear:
		t := time.Unix(floorDiv(micros, 86400*1e6)*86400, 0).UTC()
		out = int64(t.Year() - 1970)
		if kind == spec.TransformMonth {
			out = out*12 + int64(t.Month()) - 1
		}
	}
	if out < math.MinInt32 || out > math.MaxInt32 {
		return nil, fmt.Errorf("value out of range for the %v transform", kind)
	}
	return int32(out), nil
}

func applyTruncate(w int, v any) (any, error) {
	if w <= 0 {
		return nil, fmt.Errorf("truncate width %d", w)
	}
	switch x := v.(type) {
	case int32:
		m := int32(((int64(x) % int64(w)) + int64(w)) % int64(w))
		return x - m, nil
	case int64:
		m := ((x % int64(w)) + int64(w)) % int64(w)
		if x-m > x { // overflow near MinInt64
			return nil, fmt.Errorf("truncate[%d] overflows for %d", w, x)
		}
		return x - m, nil
	case spec.Decimal:
		if x.Unscaled == nil {
			return nil, fmt.Errorf("null decimal")
		}
		m := new(big.Int).Mod(x.Unscaled, big.NewInt(int64(w))) // Euclidean: >= 0
		return spec.Decimal{Unscaled: new(big.Int).Sub(x.Unscaled, m), Scale: x.Scale}, nil
	case string:
		// Java truncates strings by code points.
		i, n := 0, 0
		for i < len(x) && n < w {
			_, size := utf8.DecodeRuneInString(x[i:])
			i += size
			n++
		}
		return x[:i], nil
	case []byte:
		if len(x) > w {
			return x[:w], nil
		}
		return x, nil
	}
	return nil, fmt.Errorf("truncate does not apply to %T values", v)
}

// predecessor and successor give the previous and next value of an
// integer-like literal, so that x < v can be projected as t(x) <= t(v-1)
// as Java does; ok is false when there is none (or the type has no
// discrete neighbours).
func predecessor(v any) (any, bool) {
	switch x := v.(type) {
	case int32:
		return x - 1, x != math.MinInt32
	case int64:
		return x - 1, x != math.MinInt64
	case spec.Decimal:
		if x.Unscaled == nil {
			return nil, false
		}
		return spec.Decimal{Unscaled: new(big.Int).Sub(x.Unscaled, big.NewInt(1)), Scale: x.Scale}, true
	}
	return nil, false
}

func successor(v any) (any, bool) {
	switch x := v.(type) {
	case int32:
		return x + 1, x != math.MaxInt32
	case int64:
		return x + 1, x != math.MaxInt64
	case spec.Decimal:
		if x.Unscaled == nil {
			return nil, false
		}
		return spec.Decimal{Unscaled: new(big.Int).Add(x.Unscaled, big.NewInt(1)), Scale: x.Scale}, true
	}
	return nil, false
}

// Apply is the partition value tr(v) of a value v of source type src, as
// a writer puts it in a data file's partition tuple: nil (null) stays
// null, and void gives null.
func Apply(tr spec.Transform, src spec.Type, v any) (any, error) {
	if tr.Kind == spec.TransformVoid {
		return nil, nil
	}
	return applyTransform(tr, src, v)
}
