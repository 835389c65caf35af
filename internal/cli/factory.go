package cli

import (
	"io"
	"os"
)

// Factory holds what every command needs from its surroundings, so tests can
// run commands against buffers and a fake environment.
type Factory struct {
	Out    io.Writer // results only
	ErrOut io.Writer // errors, warnings, progress
	// Getenv reads the environment (os.Getenv outside tests).
	Getenv func(string) string
	// Output is the global --output format, set when flags are parsed.
	Output string
}

// NewFactory returns the Factory of a real process.
func NewFactory() *Factory {
	return &Factory{Out: os.Stdout, ErrOut: os.Stderr, Getenv: os.Getenv, Output: outputText}
}
