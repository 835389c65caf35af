// Package progress draws progress bars on a terminal. It never writes to
// anything but the writer it is given, and the CLI gives it stderr only
// when stderr is a terminal, so piped and redirected output stays clean.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
)

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// Bars shows the groups done and the bytes rewritten of a run as one bar
// of bytes described by the group count. It implements compact.Progress.
type Bars struct {
	w      io.Writer
	mu     sync.Mutex
	bar    *progressbar.ProgressBar
	groups int
	done   int
}

// NewBars draws on w.
func NewBars(w io.Writer) *Bars { return &Bars{w: w} }

// Start begins a run of groups totalling bytes.
func (b *Bars) Start(groups int, bytes int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.groups, b.done = groups, 0
	b.bar = progressbar.NewOptions64(bytes,
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetDescription(b.describe()),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
	)
}

func (b *Bars) describe() string { return fmt.Sprintf("groups %d/%d", b.done, b.groups) }

// GroupDone advances by one group of bytes.
func (b *Bars) GroupDone(bytes int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar == nil {
		return
	}
	b.done++
	b.bar.Describe(b.describe())
	b.bar.Add64(bytes)
}

// Finish removes the bar.
func (b *Bars) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar != nil {
		b.bar.Finish()
		b.bar = nil
	}
}
