package cli

import (
	"fmt"
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
