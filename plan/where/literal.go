package where

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/icectl/icectl/iceberg/spec"
)

// convert turns a literal into a value of type t, in the Go conventions of
// spec/values.go.
func convert(l Literal, t spec.Type) (any, error) {
	bad := func(why string) error {
		return &SyntaxError{l.Pos, fmt.Sprintf("cannot compare %s column with %s: %s", t, l, why)}
	}
	switch t := t.(type) {
	case spec.BooleanType:
		if l.Kind != LitBool {
			return nil, bad("expected TRUE or FALSE")
		}
		return l.Text == "true", nil
	case spec.IntType, spec.LongType:
		if l.Kind != LitInt {
			return nil, bad("expected an integer")
		}
		n, err := strconv.ParseInt(l.Text, 10, 64)
		if err != nil {
			return nil, bad("out of range")
		}
		if _, ok := t.(spec.IntType); ok {
			if n < math.MinInt32 || n > math.MaxInt32 {
				return nil, bad("out of range for int")
			}
			return int32(n), nil
		}
		return n, nil
	case spec.FloatType, spec.DoubleType:
		if l.Kind != LitInt && l.Kind != LitDecimal {
			return nil, bad("expected a number")
		}
		f, err := strconv.ParseFloat(l.Text, 64)
		if err != nil {
			return nil, bad("not a number")
		}
		if _, ok := t.(spec.FloatType); ok {
			return float32(f), nil
		}
		return f, nil
	case spec.DecimalType:
		if l.Kind != LitInt && l.Kind != LitDecimal {
			return nil, bad("expected a number")
		}
		d, err := parseDecimal(l.Text, t.Scale)
		if err != nil {
			return nil, bad(err.Error())
		}
		return d, nil
	case spec.StringType:
		if l.Kind != LitString {
			return nil, bad("expected a 'string'")
		}
		return l.Text, nil
	case spec.UUIDType:
		if l.Kind != LitString {
			return nil, bad("expected a 'uuid' string")
		}
		u, err := uuid.Parse(l.Text)
		if err != nil {
			return nil, bad("not a UUID")
		}
		return [16]byte(u), nil
	case spec.DateType:
		if l.Kind != LitString && l.Kind != LitDate {
			return nil, bad("expected DATE 'yyyy-mm-dd'")
		}
		d, err := time.Parse("2006-01-02", l.Text)
		if err != nil {
			return nil, bad("expected a date as yyyy-mm-dd")
		}
		days := floorDiv(d.Unix(), 86400)
		if days < math.MinInt32 || days > math.MaxInt32 {
			return nil, bad("date out of range")
		}
		return int32(days), nil
	case spec.TimeType:
		if l.Kind != LitString {
			return nil, bad("expected 'hh:mm:ss[.ffffff]'")
		}
		tm, err := time.Parse("15:04:05.999999999", l.Text)
		if err != nil {
			return nil, bad("expected a time as hh:mm:ss[.ffffff]")
		}
		return int64(tm.Hour()*3600+tm.Minute()*60+tm.Second())*1e6 + int64(tm.Nanosecond()/1e3), nil
	case spec.TimestampType, spec.TimestampTzType, spec.TimestampNsType, spec.TimestampTzNsType:
		if l.Kind != LitString && l.Kind != LitDate && l.Kind != LitTimestamp {
			return nil, bad("expected TIMESTAMP 'yyyy-mm-dd hh:mm:ss[.ffffff]'")
		}
		ts, err := parseTimestamp(l.Text)
		if err != nil {
			return nil, bad(err.Error())
		}
		switch t.(type) {
		case spec.TimestampNsType, spec.TimestampTzNsType:
			if ts.Year() < 1678 || ts.Year() > 2261 {
				return nil, bad("out of range for nanosecond timestamps")
			}
			return ts.UnixNano(), nil
		}
		return ts.UnixMicro(), nil
	}
	return nil, bad("columns of this type cannot be filtered")
}

var timestampLayouts = []string{
	"2006-01-02",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z07:00",
}

// parseTimestamp reads a date or date-time; without a zone it is UTC (the
// stored value of a timestamp without zone is its UTC reading).
func parseTimestamp(s string) (time.Time, error) {
	for _, layout := range timestampLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("expected yyyy-mm-dd[ hh:mm:ss[.ffffff]][Z|+hh:mm]")
}

// parseDecimal reads a decimal literal at the given scale; digits beyond
// the scale are refused rather than rounded, since rounding changes which
// partitions match.
func parseDecimal(s string, scale int) (spec.Decimal, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	intPart, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	if len(frac) > scale {
		return spec.Decimal{}, fmt.Errorf("more than %d digits after the point", scale)
	}
	digits := intPart + frac + strings.Repeat("0", scale-len(frac))
	v, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return spec.Decimal{}, fmt.Errorf("not a decimal")
	}
	if neg {
		v.Neg(v)
	}
	return spec.Decimal{Unscaled: v, Scale: scale}, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
