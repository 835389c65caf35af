package where

import (
	"fmt"
	"strings"
	"time"

	"github.com/icectl/icectl/iceberg/spec"
)

// Retention is the expression of a retention policy that keeps the rows
// of column no older than keep at now: column < now - keep, as a
// timestamp (UTC for a timestamp without zone, whose stored value is its
// UTC reading), or for a date column the day of that instant (a row
// dated that day is kept). A NULL is never past retention. It refuses a
// column that is not a top-level timestamp or date, and a keep that is
// not positive, so a policy never deletes by a column it cannot bound.
// The one spelling of the policy: delete-rows runs it (maintain's
// retention) and health counts the rows it would delete.
func Retention(schema *spec.Schema, column string, keep time.Duration, now time.Time) (string, error) {
	if keep <= 0 {
		return "", fmt.Errorf("retention keep %s: want a positive age like 90d", keep)
	}
	var fld *spec.NestedField
	for i := range schema.Fields {
		if schema.Fields[i].Name == column {
			fld = &schema.Fields[i]
		}
	}
	if fld == nil {
		return "", fmt.Errorf("retention column %q is not a top-level column of the table", column)
	}
	cutoff := now.Add(-keep).UTC()
	ident := `"` + strings.ReplaceAll(column, `"`, `""`) + `"`
	var expr string
	switch fld.Type.(type) {
	case spec.DateType:
		expr = fmt.Sprintf("%s < DATE '%s'", ident, cutoff.Format("2006-01-02"))
	case spec.TimestampType, spec.TimestampTzType, spec.TimestampNsType, spec.TimestampTzNsType:
		expr = fmt.Sprintf("%s < TIMESTAMP '%s'", ident, cutoff.Format("2006-01-02 15:04:05.999999999"))
	default:
		return "", fmt.Errorf("retention column %q is %s, not a timestamp or date", column, fld.Type)
	}
	// The expression must bind: a check, not a guess.
	if _, err := Compile(expr, schema); err != nil {
		return "", fmt.Errorf("retention on %q: %v", column, err)
	}
	return expr, nil
}
