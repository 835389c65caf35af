package plan

import (
	"strconv"
	"strings"
	"time"
)

// ParseDuration accepts Go durations plus a "d" (24h) unit: 7d, 1d12h,
// 90m. Every command's duration flag and icectl maintain's policy file
// read durations with it.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var total time.Duration
	if i := strings.Index(s, "d"); i > 0 {
		days, err := strconv.Atoi(s[:i])
		if err != nil {
			return 0, err
		}
		total = time.Duration(days) * 24 * time.Hour
		s = s[i+1:]
		if s == "" {
			return total, nil
		}
	}
	d, err := time.ParseDuration(s)
	return total + d, err
}
