package maintain

import "github.com/icectl/icectl/health"

// Retention is the table's retention setting as health judges it, nil
// when the policy does not turn retention on: what maintain's plan and
// icectl health --policy count the rows past.
func (r *Resolved) Retention() *health.Retention {
	if !r.Enabled[VerbRetention] {
		return nil
	}
	return &health.Retention{Column: r.RetentionColumn, Keep: r.RetentionKeep}
}

// retentionDue says whether retention is due by health's count of the
// rows past it: when some live row may be past, or the setting cannot be
// judged (the run then refuses it with the reason, as delete-rows
// would). debt is the files it would touch.
func retentionDue(s *health.RetentionStats) (why string, debt int64, ok bool) {
	if !s.MayBePast() {
		return "", 0, false
	}
	return s.Summary(), int64(s.WholeFiles + s.PartialFiles), true
}
