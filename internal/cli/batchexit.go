package cli

import "github.com/icectl/icectl/internal/shared/batchrun"

// batchExit maps how a batched run (compact, dv merge) ended to the
// process exit code.
func batchExit(r batchrun.Run, err error) error {
	out, err := r.Outcome(err)
	code := ExitFailure
	switch out {
	case batchrun.Done:
		return nil
	case batchrun.Failed:
		return err
	case batchrun.Usage:
		code = ExitUsage
	case batchrun.Partial:
		code = ExitPartial
	case batchrun.Conflict:
		code = ExitConflict
	case batchrun.StateUnknown:
		code = ExitCommitState
	}
	return &ExitError{Code: code, Err: err}
}
