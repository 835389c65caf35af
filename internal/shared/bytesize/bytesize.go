// Package bytesize is the one way icectl reads and shows a number of
// bytes: Parse reads what an operator types (512MiB, 1.5GiB, 1048576),
// Format shows a size to people ("1.2 MiB (1231486 bytes)"), in every
// command's text and every plan alike. JSON keeps plain byte integers and
// never goes through Format. It imports nothing of icectl.
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	// Longest suffixes first so "MiB" is not read as "B".
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000}, {"tb", 1000 * 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// Parse parses a byte size: a plain number of bytes ("1048576"), or a
// number with a binary (KiB, MiB, GiB, TiB; also K, M, G, T) or decimal
// (KB, MB, GB, TB) unit, case-insensitive, optionally with a fraction
// ("1.5GiB") and a space before the unit. The result must fit an int64.
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("parse size %q: empty", s)
	}
	lower := strings.ToLower(t)
	num, mult := lower, int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(lower, u.suffix) {
			num, mult = strings.TrimSpace(lower[:len(lower)-len(u.suffix)]), u.mult
			break
		}
	}
	if num == "" {
		return 0, fmt.Errorf("parse size %q: missing number", s)
	}
	if n, err := strconv.ParseInt(num, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("parse size %q: negative", s)
		}
		if n > math.MaxInt64/mult {
			return 0, fmt.Errorf("parse size %q: too large", s)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || strings.ContainsAny(num, "xXpPeE_") || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("parse size %q: not a number with an optional unit (KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s)
	}
	if f < 0 {
		return 0, fmt.Errorf("parse size %q: negative", s)
	}
	v := f * float64(mult)
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("parse size %q: too large", s)
	}
	return int64(math.Round(v)), nil
}

// Format renders n bytes for people: below 1 KiB the exact count ("512
// bytes"), above it one decimal of the largest binary unit that keeps the
// value at least 1, followed by the exact count, so nothing is lost to
// rounding ("1.2 MiB (1231486 bytes)").
func Format(n int64) string {
	if n < 1024 && n > -1024 {
		if n == 1 || n == -1 {
			return fmt.Sprintf("%d byte", n)
		}
		return fmt.Sprintf("%d bytes", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n) / 1024
	u := 0
	for (v >= 1024 || v <= -1024) && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.1f %s (%d bytes)", v, units[u], n)
}
