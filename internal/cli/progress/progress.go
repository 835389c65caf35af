// Package progress draws the progress of a run on a terminal. It never
// writes to anything but the writer it is given, and the CLI creates a bar
// only when that writer is a terminal (or a test forces one), so piped and
// redirected output stays clean.
//
// A bar is one line that a spinner redraws every 100ms with the steps done,
// the bytes processed and the elapsed time: the verbs report whole steps
// (a group, a partition, a manifest), not bytes within one, so a bar of
// percentages would sit at 0% until the first step ends. Log lines written
// through the bar are printed above it: the bar is cleared, the line
// printed whole, and the bar redrawn, all under the bar's lock, so a line
// never shares the terminal row of a bar frame.
package progress

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
)

// spinnerTick is how often the spinner and the elapsed time are redrawn.
const spinnerTick = 100 * time.Millisecond

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// Bars shows one run at a time as a spinner line described by the steps
// done ("groups 3/15") and the bytes they processed. It implements
// meter.Meter, and io.Writer for log lines printed above the bar.
type Bars struct {
	w    io.Writer
	unit string

	mu        sync.Mutex
	bar       *progressbar.ProgressBar
	steps     int
	done      int
	bytes     int64
	doneBytes int64
	pending   []byte // a log line not yet ended by '\n'
}

// New returns a bar drawing on w whose steps are called unit ("groups"),
// or nil when w is not a terminal and force is false.
func New(w io.Writer, unit string, force bool) *Bars {
	if !force && !IsTerminal(w) {
		return nil
	}
	return &Bars{w: w, unit: unit}
}

// Start begins a run of steps totalling bytes (0 when unknown). A run
// without steps draws nothing.
func (b *Bars) Start(steps int, bytes int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.finish()
	b.steps, b.done, b.bytes, b.doneBytes = steps, 0, bytes, 0
	if steps <= 0 {
		return
	}
	b.bar = progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetDescription(b.describe()),
		progressbar.OptionSetWidth(10),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionSetSpinnerChangeInterval(spinnerTick),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionClearOnFinish(),
	)
	b.bar.RenderBlank()
}

// describe is the text of the bar: steps done of all, and bytes done of
// all when the run knows its bytes.
func (b *Bars) describe() string {
	s := fmt.Sprintf("%s %d/%d", b.unit, b.done, b.steps)
	if b.bytes > 0 {
		s += fmt.Sprintf(", %s of %s", size(b.doneBytes), size(b.bytes))
	}
	return s
}

// Step records one finished step of bytes.
func (b *Bars) Step(bytes int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar == nil {
		return
	}
	b.done++
	b.doneBytes += bytes
	b.bar.Describe(b.describe())
}

// Done removes the bar, printing any unfinished log line first.
func (b *Bars) Done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.finish()
	if len(b.pending) > 0 {
		b.w.Write(append(b.pending, '\n'))
		b.pending = nil
	}
}

func (b *Bars) finish() {
	if b.bar != nil {
		b.bar.Finish()
		b.bar = nil
	}
}

// Write prints each complete line of p above the bar. A verb's log goes
// through it, so its lines and the bar never share a row. A line may come
// in pieces, but writers on several goroutines must write whole lines, as
// the verbs' logf does, or their pieces would join.
func (b *Bars) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.pending = append(b.pending, p...)
			break
		}
		line := append(b.pending, p[:i]...)
		b.pending = nil
		p = p[i+1:]
		if err := b.println(line); err != nil {
			return n - len(p), err
		}
	}
	return n, nil
}

// println prints one line above the bar: progressbar holds it until its
// next render, which clears the bar, writes the line and redraws, under
// the bar's own lock (the spinner renders from a goroutine of its own).
func (b *Bars) println(line []byte) error {
	if b.bar == nil {
		_, err := b.w.Write(append(line, '\n'))
		return err
	}
	if _, err := progressbar.Bprintln(b.bar, string(line)); err != nil {
		return err
	}
	return b.bar.RenderBlank()
}

// size renders a byte count with binary units.
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n)/unit, 0
	for v >= unit && u < 5 {
		v /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[u])
}
