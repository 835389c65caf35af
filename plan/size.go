package plan

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

// ParseSize parses a byte size: a plain number of bytes ("1048576"), or a
// number with a binary (KiB, MiB, GiB, TiB; also K, M, G, T) or decimal
// (KB, MB, GB, TB) unit, case-insensitive, optionally with a fraction
// ("1.5GiB") and a space before the unit. The result must fit an int64.
func ParseSize(s string) (int64, error) {
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

// FormatSize formats n bytes with the largest binary unit that keeps the
// value at least 1, with up to two decimals ("512MiB", "1.5GiB", "100B").
// ParseSize(FormatSize(n)) == n whenever the value is exact in two decimals.
func FormatSize(n int64) string {
	units := []struct {
		name string
		mult int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}
	neg := n < 0
	abs := n
	if neg {
		if n == math.MinInt64 {
			return strconv.FormatInt(n, 10) + "B"
		}
		abs = -n
	}
	for _, u := range units {
		if abs >= u.mult {
			s := strconv.FormatFloat(float64(abs)/float64(u.mult), 'f', 2, 64)
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
			if neg {
				s = "-" + s
			}
			return s + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
