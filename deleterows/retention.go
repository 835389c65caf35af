package deleterows

import (
	"fmt"
	"time"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/plan/where"
)

// RetentionWhere is the --where of a retention policy that keeps the rows
// of column no older than keep at now (where.Retention: column < now -
// keep; a NULL is never past). A column that is not a top-level timestamp
// or date, or a keep that is not positive, wraps ErrInvalidOptions, so a
// policy never deletes by a column it cannot bound.
func RetentionWhere(schema *spec.Schema, column string, keep time.Duration, now time.Time) (string, error) {
	expr, err := where.Retention(schema, column, keep, now)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidOptions, err)
	}
	return expr, nil
}
