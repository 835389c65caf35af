package compact

import "fmt"

// errorsJoinf formats an options error that wraps ErrInvalidOptions.
func errorsJoinf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...)
}
