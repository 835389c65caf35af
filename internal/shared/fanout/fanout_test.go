package fanout

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestEach: every index once, never more than width at a time.
func TestEach(t *testing.T) {
	for _, c := range []struct{ n, width int }{{0, 3}, {1, 3}, {10, 3}, {10, 1}, {5, 0}, {3, 10}} {
		var mu sync.Mutex
		seen := map[int]int{}
		var running, peak atomic.Int32
		Each(c.n, c.width, func(i int) {
			r := running.Add(1)
			for p := peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
			}
			mu.Lock()
			seen[i]++
			mu.Unlock()
			running.Add(-1)
		})
		if len(seen) != c.n {
			t.Errorf("n=%d width=%d: %d indexes called", c.n, c.width, len(seen))
		}
		for i, k := range seen {
			if k != 1 || i < 0 || i >= c.n {
				t.Errorf("n=%d: index %d called %d times", c.n, i, k)
			}
		}
		if int(peak.Load()) > max(c.width, 1) {
			t.Errorf("n=%d width=%d: %d calls at once", c.n, c.width, peak.Load())
		}
	}
}
