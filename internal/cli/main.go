package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// Main runs icectl with the process arguments and returns the exit code.
// ICECTL_CPUPROFILE=FILE writes a CPU profile of the run to FILE, and
// ICECTL_MEMPROFILE=FILE an allocation profile (for go tool pprof): slow
// runs on an operator's table can then be diagnosed without a special
// build.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if path := os.Getenv("ICECTL_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "icectl: cpu profile: %v\n", err)
			return ExitFailure
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "icectl: cpu profile: %v\n", err)
			return ExitFailure
		}
		defer pprof.StopCPUProfile()
	}
	if path := os.Getenv("ICECTL_MEMPROFILE"); path != "" {
		// Every allocation, not a sample: the profile is for finding
		// what churns memory, and runs with it are not timed.
		runtime.MemProfileRate = 1
		defer func() {
			f, err := os.Create(path)
			if err == nil {
				err = errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "icectl: memory profile: %v\n", err)
			}
		}()
	}
	return Run(ctx, NewFactory(), os.Args[1:])
}

// Run runs icectl with args and returns the exit code. Errors are printed as
// one line "icectl: <message>" on f.ErrOut.
func Run(ctx context.Context, f *Factory, args []string) int {
	root := NewCmdRoot(f)
	markRunErrors(root)
	root.SetArgs(args)
	root.SetOut(f.Out)
	root.SetErr(f.ErrOut)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	// Errors of running commands are all ExitErrors (markRunErrors), so any
	// other error is cobra's own: an unknown command or flag, a wrong
	// argument count, a missing required flag. Those are usage errors.
	var e *ExitError
	if !errors.As(err, &e) {
		err = &ExitError{Code: ExitUsage, Err: err}
	}
	code := exitCode(ctx, err)
	msg := err.Error()
	if code == ExitInterrupted {
		msg = "interrupted"
	}
	if e != nil && e.Quiet && code != ExitInterrupted {
		return code
	}
	fmt.Fprintf(f.ErrOut, "icectl: %s\n", oneLine(msg))
	return code
}

// markRunErrors makes every error returned by a command's RunE an
// *ExitError, which tells it apart from cobra's usage errors.
func markRunErrors(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			var e *ExitError
			if err != nil && !errors.As(err, &e) {
				err = &ExitError{Code: classify(err), Err: err}
			}
			return err
		}
	}
	for _, sub := range c.Commands() {
		markRunErrors(sub)
	}
}

// oneLine keeps an error message to the single line the output contract
// promises, whatever the error text contains: its lines are joined (a line
// ending in ":" or "?" runs on with a space, as in cobra's "Did you mean
// this?" and pgx's connection errors; others with "; "; a line said
// before is left out), control characters
// are escaped, and a message longer than maxErrorLine loses its middle, so
// that both what was being done and the root cause, which Go errors put
// last, stay (the end more of it than the start).
func oneLine(s string) string {
	var b strings.Builder
	sep := ""
	seen := map[string]bool{}
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" || seen[line] {
			continue // pgx lists each fallback's failure, often the same
		}
		seen[line] = true
		b.WriteString(sep)
		b.WriteString(line)
		sep = "; "
		if strings.HasSuffix(line, ":") || strings.HasSuffix(line, "?") {
			sep = " "
		}
	}
	s = escapeText(b.String())
	if len(s) <= maxErrorLine {
		return s
	}
	// The tail keeps two thirds: it holds the root cause and what to
	// type (a list of accepted forms, a command), the head what was
	// being done.
	const cut = " … "
	head := (maxErrorLine - len(cut)) / 3
	tail := len(s) - (maxErrorLine - len(cut) - head)
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + cut + s[tail:]
}

// maxErrorLine bounds an error line: a few lines of a wide terminal. Errors
// that quote what a file holds (a schema, a path) must not flood it.
const maxErrorLine = 512
