package progress

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/icectl/icectl/internal/shared/meter"
)

// screen is a writer that keeps what a terminal would show: '\r' returns
// to column 0 and later runes overwrite, '\n' ends a row.
type screen struct {
	mu   sync.Mutex
	raw  bytes.Buffer
	rows []string
	row  []rune
	col  int
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw.Write(p)
	for _, r := range string(p) {
		switch r {
		case '\r':
			s.col = 0
		case '\n':
			s.rows = append(s.rows, strings.TrimRight(string(s.row), " "))
			s.row, s.col = nil, 0
		default:
			if s.col < len(s.row) {
				s.row[s.col] = r
			} else {
				s.row = append(s.row, r)
			}
			s.col++
		}
	}
	return len(p), nil
}

// state returns the finished rows, the row under the cursor and all bytes
// written.
func (s *screen) state() (rows []string, current, raw string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.rows), strings.TrimRight(string(s.row), " "), s.raw.String()
}

func TestNewDrawsOnlyOnATerminalUnlessForced(t *testing.T) {
	var buf bytes.Buffer
	if IsTerminal(&buf) {
		t.Fatal("a buffer is not a terminal")
	}
	if b := New(&buf, "groups", false); b != nil {
		t.Fatal("a bar on a writer that is not a terminal")
	}
	if b := New(&buf, "groups", true); b == nil {
		t.Fatal("forced, no bar")
	}
}

// Log lines written while the bar runs, from several goroutines as the
// executors log, each end up on a row of their own, whole, and in the
// order each goroutine wrote them; the bar is gone after Done.
func TestLinesPrintAboveTheBar(t *testing.T) {
	var s screen
	b := New(&s, "groups", true)
	b.Start(40, 40<<20)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				// One Write per line, as the verbs' logf does: lines
				// of several goroutines cannot be told apart otherwise.
				fmt.Fprintf(b, "group g%d-%d: 3 files, 30 rows\n", g, i)
				b.Step(1 << 20)
			}
		}()
	}
	wg.Wait()
	_, current, raw := s.state()
	if !strings.Contains(current, "groups 40/40, 40.0 MiB of 40.0 MiB") {
		t.Errorf("the bar after the last step reads %q", current)
	}
	b.Done()
	rows, current, raw := s.state()
	if current != "" {
		t.Errorf("the bar is left on screen after Done: %q", current)
	}
	if len(rows) != 40 {
		t.Fatalf("%d rows, want the 40 lines:\n%s", len(rows), strings.Join(rows, "\n"))
	}
	next := make([]int, 4)
	for _, r := range rows {
		var g, i int
		if _, err := fmt.Sscanf(r, "group g%d-%d: 3 files, 30 rows", &g, &i); err != nil || r != fmt.Sprintf("group g%d-%d: 3 files, 30 rows", g, i) {
			t.Fatalf("row %q is not one whole log line (bar frames interleaved?)\nraw: %q", r, raw)
		}
		if i != next[g] {
			t.Errorf("goroutine %d: line %d printed, want %d", g, i, next[g])
		}
		next[g]++
	}
	// Every line starts its row: a '\r' or '\n' comes before it.
	for _, r := range rows {
		k := strings.Index(raw, r)
		if k > 0 && raw[k-1] != '\r' && raw[k-1] != '\n' {
			t.Errorf("%q does not start at column 0: %q", r, raw[max(0, k-20):k+len(r)])
		}
		if !strings.HasPrefix(raw[k+len(r):], "\n") {
			t.Errorf("%q is not followed by a newline", r)
		}
	}
}

// Before the first step ends the bar moves: the spinner and the elapsed
// time are redrawn, and it says how many steps there are, never 0%.
func TestBarMovesBeforeTheFirstStep(t *testing.T) {
	var s screen
	b := New(&s, "partitions", true)
	b.Start(3, 0)
	defer b.Done()
	frames := map[string]bool{}
	for deadline := time.Now().Add(10 * time.Second); len(frames) < 3 && time.Now().Before(deadline); {
		_, current, _ := s.state()
		if current != "" {
			frames[current] = true
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(frames) < 3 {
		t.Fatalf("the bar was redrawn as %d distinct frame(s) before any step: %v", len(frames), frames)
	}
	for f := range frames {
		if !strings.Contains(f, "partitions 0/3") || strings.Contains(f, "%") || !strings.Contains(f, "s]") {
			t.Errorf("frame %q: want the step count and the elapsed time, no percentage", f)
		}
	}
}

func TestWritesWithoutARunGoStraightThrough(t *testing.T) {
	var s screen
	b := New(&s, "files", true)
	fmt.Fprintf(b, "listed 3 files\n")
	b.Start(0, 0) // nothing to do: nothing drawn
	fmt.Fprintf(b, "no ")
	b.Step(10)
	fmt.Fprintf(b, "end")
	b.Done()
	rows, current, raw := s.state()
	if want := []string{"listed 3 files", "no end"}; !slices.Equal(rows, want) || current != "" {
		t.Errorf("rows %q current %q, want %q", rows, current, want)
	}
	if raw != "listed 3 files\nno end\n" {
		t.Errorf("raw output %q holds more than the lines", raw)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3 << 20: "3.0 MiB", 5 << 40: "5.0 TiB"} {
		if got := size(n); got != want {
			t.Errorf("size(%d) = %q, want %q", n, got, want)
		}
	}
}

// The bar is what the verbs' hook drives.
var _ meter.Meter = (*Bars)(nil)
