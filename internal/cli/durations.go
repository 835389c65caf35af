package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/icectl/icectl/plan"
)

// Durations as every command reads them from flags and shows them.

// parseDuration accepts Go durations plus a "d" (24h) unit: 7d, 1d12h.
func parseDuration(s string) (time.Duration, error) { return plan.ParseDuration(s) }

// formatDuration writes d in parseDuration's grammar, largest units
// first (7d, 1d12h, 90s), as an operator typed it, rather than Go's
// 168h0m0s.
func formatDuration(d time.Duration) string {
	if d <= 0 || d%time.Second != 0 {
		return d.String()
	}
	var b strings.Builder
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.unit; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.unit
		}
	}
	return b.String()
}

// parseTimeOrAge reads a duration before now (7d, 36h), an RFC 3339
// timestamp or epoch milliseconds.
func parseTimeOrAge(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms > 0 {
		return time.UnixMilli(ms), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := parseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("not a duration or timestamp: %q", s)
	}
	return now.Add(-d), nil
}
