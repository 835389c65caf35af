package cli

import (
	"io"
	"os"
	"runtime/debug"

	"github.com/icectl/icectl/iceberg/commit"
)

// Factory holds what every command needs from its surroundings, so tests can
// run commands against buffers and a fake environment.
type Factory struct {
	Out    io.Writer // results only
	ErrOut io.Writer // errors, warnings, progress
	// Getenv reads the environment (os.Getenv outside tests).
	Getenv func(string) string
	// Environ lists the environment's variables as KEY=VALUE; nil is
	// os.Environ. Only the names are used (catalog variables are found by
	// name, their values read through Getenv): a test that hands
	// variables to Getenv names them here, so it need not set them in
	// the process and can run in parallel.
	Environ func() []string
	// Output is the global --output format, set when flags are parsed.
	Output string
	// ForceProgress draws progress bars on ErrOut even when it is not a
	// terminal (tests).
	ForceProgress bool
	// onPlan, when set, is called each time a verb run through the verb
	// runner (runVerb: every verb that changes a table) plans the table:
	// tests count plans and commit between the plan and the claim
	// through it.
	onPlan func(verb string)
}

// notePlan tells onPlan that verb plans the table.
func (f *Factory) notePlan(verb string) {
	if f.onPlan != nil {
		f.onPlan(verb)
	}
}

// NewFactory returns the Factory of a real process.
func NewFactory() *Factory {
	return &Factory{Out: os.Stdout, ErrOut: os.Stderr, Getenv: os.Getenv, Output: outputText}
}

// CommitOptions are the commit loop's options for a table with the given
// properties, with what goes wrong after a commit landed (old metadata
// files that could not be deleted) printed as a warning on stderr. Every
// command that commits uses it, so no such failure is silent.
func (f *Factory) CommitOptions(props map[string]string) commit.Options {
	o := commit.OptionsFromProperties(props)
	o.Warn = func(err error) { printf(f.ErrOut, "icectl: warning: %v\n", err) }
	return o
}

// compactMemoryLimit is the Go runtime's soft memory limit while a
// compaction runs (issue 4: under 1 GiB whatever the table's size).
const compactMemoryLimit = 768 << 20

// limitCompactionMemory sets the soft memory limit of a run that
// compacts (compact, its sharded runs, maintain) and returns what
// restores the previous one. A compaction holds about one row group of
// inputs and one of outputs per group at a time; the limit keeps the
// garbage collector from letting the heap grow to twice that before it
// runs. GOMEMLIMIT, when set, is the operator's choice instead.
func (f *Factory) limitCompactionMemory() (restore func()) {
	if f.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	old := debug.SetMemoryLimit(compactMemoryLimit)
	return func() { debug.SetMemoryLimit(old) }
}
