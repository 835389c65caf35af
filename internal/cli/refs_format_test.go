package cli

import (
	"testing"
	"time"
)

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		7 * 24 * time.Hour:            "7d",
		36 * time.Hour:                "1d12h",
		90 * time.Second:              "1m30s",
		12 * time.Hour:                "12h",
		1500 * time.Millisecond:       "1.5s",
		24*time.Hour + 30*time.Minute: "1d30m",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
		if d%time.Second == 0 {
			back, err := parseDuration(want)
			if err != nil || back != d {
				t.Errorf("parseDuration(%q) = %v, %v; want %v", want, back, err, d)
			}
		}
	}
	for typ, want := range map[string]string{"tag": "tags", "branch": "branches"} {
		if got := plural(typ); got != want {
			t.Errorf("plural(%q) = %q, want %q", typ, got, want)
		}
	}
}
