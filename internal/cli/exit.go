package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/expire"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/cli/config"
)

// Exit codes, the same for every command (documented in the root --help and
// the README).
const (
	ExitOK          = 0   // done, or nothing to do
	ExitFailure     = 1   // an error
	ExitUsage       = 2   // bad flags or arguments
	ExitPartial     = 3   // some batches committed, some failed, or the budget left work
	ExitFindings    = 3   // health --fail-on-findings: the report has findings
	ExitConflict    = 4   // commit conflict after all retries, or the table's claim is held
	ExitCommitState = 5   // commit state unknown: nothing was cleaned up
	ExitInterrupted = 130 // SIGINT or SIGTERM
)

const exitCodesHelp = `Exit codes:
  0    done, or nothing to do
  1    error
  2    usage error (bad flags or arguments)
  3    partial: some batches committed, some failed, or --max-duration left
       work for the next run; health --fail-on-findings: debt found
  4    commit conflict after all retries, or another icectl run holds the
       table's claim (--wait waits for it)
  5    commit state unknown (nothing that commit might reference was deleted)
  130  interrupted (SIGINT or SIGTERM)`

// ExitError carries the exit code an error must end the process with.
type ExitError struct {
	Code int
	Err  error
	// Quiet: the command has said all it had to (maintain --quiet on a
	// run that left work but had no failure); print no error line.
	Quiet bool
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// usageErrorf returns an error that ends the process with ExitUsage.
func usageErrorf(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// classify is the exit code of an error its command chose no code for,
// by its cause, so that every command gives the same cause the same code
// (the README's table): a commit whose outcome is unknown, a conflict that
// outlasted the retries, options a verb refused.
func classify(err error) int {
	switch {
	case errors.Is(err, catalog.ErrCommitStateUnknown):
		return ExitCommitState
	case errors.Is(err, catalog.ErrCommitConflict):
		return ExitConflict
	case errors.Is(err, compact.ErrInvalidOptions), errors.Is(err, expire.ErrInvalidOptions):
		return ExitUsage
	}
	return ExitFailure
}

// exitCode maps the error a command returned to the process exit code.
// ctx is the command's context: an error after it was cancelled by a signal
// means the run was interrupted, whatever the error says.
func exitCode(ctx context.Context, err error) int {
	if err == nil {
		return ExitOK
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	var e *ExitError
	if errors.As(err, &e) {
		return e.Code
	}
	return ExitFailure
}

// rewriteExit classifies the error of a rewrite's commit: commit state
// unknown (exit 5), conflict (exit 4), else as it is. unknown says what
// the table may have; conflict, with %s for the table, what was not done.
func rewriteExit(cfg *config.Catalog, id catalog.Ident, err error, unknown, conflict string) error {
	err = scrub(cfg, err)
	switch {
	case errors.Is(err, catalog.ErrCommitStateUnknown):
		return &ExitError{Code: ExitCommitState, Err: fmt.Errorf(
			"commit state unknown: %s %s; nothing was deleted; check it with `icectl table show %s` before retrying: %w", id, unknown, id, err)}
	case errors.Is(err, catalog.ErrCommitConflict), errors.Is(err, spec.ErrRequirementFailed):
		return &ExitError{Code: ExitConflict, Err: fmt.Errorf("commit conflict: "+conflict+": %w", id, err)}
	}
	return err
}

// scrubbedError hides secrets in the message of an error while keeping
// what it wraps (exit codes and errors.Is still see through it).
type scrubbedError struct {
	msg string
	err error
}

// scrub removes cfg's secret values from err's message: errors of
// drivers and servers may echo a URL or a request.
func scrub(cfg *config.Catalog, err error) error {
	if err == nil || cfg == nil {
		return err
	}
	msg := cfg.Scrub(err.Error())
	if msg == err.Error() {
		return err
	}
	return &scrubbedError{msg: msg, err: err}
}
