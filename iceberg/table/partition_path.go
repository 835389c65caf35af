package table

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/icectl/icectl/iceberg/spec"
)

// PartitionPathOf is the directory of a partition under the data location,
// as Java's PartitionSpec.partitionToPath writes it: per field
// escape(name) + "=" + escape(human value), joined by "/", escape being
// Java's URLEncoder (form encoding, UTF-8) and the human value Java's
// Transform.toHumanString for the field's result type. schema is the
// table's current schema, the one Java binds specs to; with a nil schema,
// or a field whose source column is gone, the type comes from the Go value
// (as Java then types it unknown and prints the value's toString).
//
// Readers never parse the path; writers use it so that a table's files lie
// where Java would put them.
func PartitionPathOf(schema *spec.Schema, ps *spec.PartitionSpec, tuple []any) string {
	if ps == nil || len(ps.Fields) == 0 {
		return ""
	}
	var types []spec.NestedField
	if schema != nil {
		types = ps.PartitionType(schema).Fields
	}
	var b strings.Builder
	for i, f := range ps.Fields {
		var v any
		if i < len(tuple) {
			v = tuple[i]
		}
		var t spec.Type
		if i < len(types) {
			t = types[i].Type
		}
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(formEscape(f.Name))
		b.WriteByte('=')
		b.WriteString(formEscape(humanValue(f.Transform, t, v)))
	}
	return b.String()
}

// humanValue is Java's Transform.toHumanString(resultType, value): the
// text of a partition value in paths. t may be nil (unknown).
func humanValue(tr spec.Transform, t spec.Type, v any) string {
	if v == nil || tr.Kind == spec.TransformVoid {
		return "null"
	}
	if n, ok := v.(int32); ok {
		switch tr.Kind {
		case spec.TransformYear:
			return humanYear(n)
		case spec.TransformMonth:
			return humanMonth(n)
		case spec.TransformDay:
			return humanDay(n)
		case spec.TransformHour:
			return humanHour(n)
		}
	}
	switch t.(type) {
	case spec.DateType:
		if n, ok := v.(int32); ok {
			return humanDay(n)
		}
	case spec.TimeType:
		if n, ok := v.(int64); ok {
			return humanTime(n)
		}
	case spec.TimestampType:
		if n, ok := v.(int64); ok {
			return isoDateTime(time.UnixMicro(n).UTC())
		}
	case spec.TimestampTzType:
		if n, ok := v.(int64); ok {
			return isoDateTime(time.UnixMicro(n).UTC()) + "+00:00"
		}
	case spec.TimestampNsType:
		if n, ok := v.(int64); ok {
			return isoDateTime(time.Unix(0, n).UTC())
		}
	case spec.TimestampTzNsType:
		if n, ok := v.(int64); ok {
			return isoDateTime(time.Unix(0, n).UTC()) + "+00:00"
		}
	}
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float32:
		return javaFloat(float64(x), 32)
	case float64:
		return javaFloat(x, 64)
	case string:
		return x
	case []byte:
		// Java encodes fixed and binary so; for any other type it would
		// print a ByteBuffer's debug text, which no writer relies on.
		return base64.StdEncoding.EncodeToString(x)
	case [16]byte:
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16])
	case spec.Decimal:
		return javaBigDecimal(x)
	}
	return fmt.Sprint(v)
}

// epoch is 1970-01-01T00:00:00Z, which Java's TransformUtil counts from.
var epoch = time.Unix(0, 0).UTC()

// humanYear, humanMonth, humanDay and humanHour are TransformUtil's:
// String.format("%04d", ...), which pads a negative year to "-001".
func humanYear(n int32) string { return fmt.Sprintf("%04d", 1970+int64(n)) }

func humanMonth(n int32) string {
	y, m := int64(n)/12, int64(n)%12
	if m < 0 { // floorDiv, floorMod
		y, m = y-1, m+12
	}
	return fmt.Sprintf("%04d-%02d", 1970+y, 1+m)
}

func humanDay(n int32) string {
	d := epoch.AddDate(0, 0, int(n))
	return fmt.Sprintf("%04d-%02d-%02d", d.Year(), int(d.Month()), d.Day())
}

func humanHour(n int32) string {
	d := time.Unix(int64(n)*3600, 0).UTC()
	return fmt.Sprintf("%04d-%02d-%02d-%02d", d.Year(), int(d.Month()), d.Day(), d.Hour())
}

// humanTime is java.time.LocalTime.toString: HH:mm, seconds only when
// not zero, and a fraction in groups of three digits.
func humanTime(micros int64) string {
	nanos := micros * 1000
	h, m := nanos/int64(time.Hour), nanos/int64(time.Minute)%60
	s, ns := nanos/int64(time.Second)%60, nanos%int64(time.Second)
	out := fmt.Sprintf("%02d:%02d", h, m)
	if s > 0 || ns > 0 {
		out += fmt.Sprintf(":%02d", s)
		switch {
		case ns == 0:
		case ns%1e6 == 0:
			out += fmt.Sprintf(".%03d", ns/1e6)
		case ns%1e3 == 0:
			out += fmt.Sprintf(".%06d", ns/1e3)
		default:
			out += fmt.Sprintf(".%09d", ns)
		}
	}
	return out
}

// isoDateTime is DateTimeFormatter.ISO_LOCAL_DATE_TIME: seconds always,
// the fraction with its trailing zeros cut (none when zero), and years
// outside 0000-9999 signed.
func isoDateTime(t time.Time) string {
	y := t.Year()
	var year string
	switch {
	case y > 9999:
		year = "+" + strconv.Itoa(y)
	case y < 0:
		year = fmt.Sprintf("-%04d", -y)
	default:
		year = fmt.Sprintf("%04d", y)
	}
	out := fmt.Sprintf("%s-%02d-%02dT%02d:%02d:%02d", year, int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second())
	if ns := t.Nanosecond(); ns > 0 {
		out += "." + strings.TrimRight(fmt.Sprintf("%09d", ns), "0")
	}
	return out
}

// javaFloat is Java's Float.toString (bits 32) and Double.toString (64):
// the shortest digits that round-trip, plain between 10^-3 and 10^7, else
// d.dddE±n, always with a digit after the point.
func javaFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, bits) // -d.ddde±XX
	mant, exp, _ := strings.Cut(e, "e")
	n, _ := strconv.Atoi(exp)
	if n >= -3 && n < 7 {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	return mant + "E" + strconv.Itoa(n)
}

// javaBigDecimal is Java's BigDecimal.toString: plain when the scale is
// not negative and the adjusted exponent (the exponent of the first digit)
// is at least -6, scientific otherwise ("1E-7", "0E-10", "1.23E+5").
func javaBigDecimal(d spec.Decimal) string {
	if d.Unscaled == nil {
		return "null"
	}
	digits := new(big.Int).Abs(d.Unscaled).String()
	sign := ""
	if d.Unscaled.Sign() < 0 {
		sign = "-"
	}
	adjusted := len(digits) - 1 - d.Scale
	if d.Scale == 0 {
		return sign + digits
	}
	if d.Scale > 0 && adjusted >= -6 {
		for len(digits) <= d.Scale {
			digits = "0" + digits
		}
		return sign + digits[:len(digits)-d.Scale] + "." + digits[len(digits)-d.Scale:]
	}
	out := sign + digits[:1]
	if len(digits) > 1 {
		out += "." + digits[1:]
	}
	out += "E"
	if adjusted >= 0 {
		out += "+"
	}
	return out + strconv.Itoa(adjusted)
}

// formEscape is Java's URLEncoder.encode(s, UTF_8): letters, digits and
// ".-*_" stay, a space becomes "+", every other byte of the UTF-8 encoding
// is %XX (upper case). Invalid UTF-8 is encoded as U+FFFD, as a Java
// string decoded from it holds.
func formEscape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '.', r == '-', r == '*', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('+')
		default:
			var buf [utf8.UTFMax]byte
			n := utf8.EncodeRune(buf[:], r)
			for _, c := range buf[:n] {
				b.WriteByte('%')
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			}
		}
	}
	return b.String()
}
