package maintain

import (
	"fmt"
	"strings"
)

// Statuses of a table and of a verb in a report.
const (
	StatusDone       = "done"        // everything due ran to the end
	StatusPartial    = "partial"     // some of it committed, some is left or failed
	StatusFailed     = "failed"      // it failed; see the error
	StatusSkipped    = "skipped"     // not run: another run holds the claim, or the table refuses it
	StatusNotStarted = "not-started" // not run: the budget ran out or something before it failed
	StatusNothingDue = "nothing-due" // the table is healthy under its policy
)

// Report is what a run did.
type Report struct {
	StartedMS  int64          `json:"started_ms"`
	DurationMS int64          `json:"duration_ms"`
	Tables     []*TableReport `json:"tables"`
	Summary    Summary        `json:"summary"`
}

// Summary counts the run's tables by status.
type Summary struct {
	Tables     int `json:"tables"`
	Due        int `json:"due"`
	Done       int `json:"done"`
	Partial    int `json:"partial"`
	Failed     int `json:"failed"`
	Skipped    int `json:"skipped"`
	NotStarted int `json:"not_started"`
	NothingDue int `json:"nothing_due"`
	// StoppedByBudget says which budget left work for the next run:
	// "max-duration", "max-rewrite-bytes", both, or "".
	StoppedByBudget string `json:"stopped_by_budget"`
	// Left names the tables with work left (partial, failed, skipped, not
	// started), in plan order. A table another run held is not among
	// them: that run is maintaining it.
	Left []string `json:"left"`
	// Claimed names the tables skipped because another live icectl run
	// held their claim, in plan order: being maintained, by that run.
	Claimed []string `json:"claimed_by_other_run"`
}

// TableReport is one table's part of the run.
type TableReport struct {
	Table     string   `json:"table"`
	Status    string   `json:"status"`
	Due       []Due    `json:"due"`
	Off       []Skip   `json:"off"`
	Attention []string `json:"attention"`
	// Stream is the streaming policy's decision (TablePlan.Stream).
	Stream *StreamDecision `json:"stream,omitempty"`
	Verbs  []VerbReport    `json:"verbs"`
	Held   *Held           `json:"claim_held,omitempty"`
	// TookOver is the claim of another run this run took over to work on
	// the table (its lease had ended, or its holder no longer ran).
	TookOver *TookOver `json:"claim_taken_over,omitempty"`
	Error    string    `json:"error,omitempty"`
	// The table's metadata file before and after the run: equal when
	// nothing was committed.
	MetadataLocationBefore string `json:"metadata_location_before"`
	MetadataLocationAfter  string `json:"metadata_location_after"`
	DurationMS             int64  `json:"duration_ms"`
}

// Held is the claim another run holds on a table.
type Held struct {
	Holder  string `json:"holder"`
	UntilMS int64  `json:"until_ms"`
}

// TookOver is a claim a run took over from another.
type TookOver struct {
	Holder string `json:"holder"` // "host:pid (verb)"
	Why    string `json:"why"`
}

// VerbReport is what one verb did on a table. Files and bytes "in" are
// what it read to replace or deleted, "out" what it wrote.
type VerbReport struct {
	Verb           string `json:"verb"`
	Status         string `json:"status"`
	Detail         string `json:"detail"`
	FilesIn        int64  `json:"files_in"`
	FilesOut       int64  `json:"files_out"`
	BytesIn        int64  `json:"bytes_in"`
	BytesOut       int64  `json:"bytes_out"`
	Rows           int64  `json:"rows"`
	Snapshots      int    `json:"snapshots_expired"`
	Orphans        int64  `json:"orphans"`
	Commits        int    `json:"commits"`
	LeftForNextRun int    `json:"left_for_next_run"`
	DurationMS     int64  `json:"duration_ms"`
	// SucceededMS is when it finished without failing (0: it failed or
	// did not run).
	SucceededMS int64  `json:"succeeded_ms"`
	Error       string `json:"error,omitempty"`
}

// settle sets the table's status from its verbs'.
func (tr *TableReport) settle() {
	if tr.Status != "" {
		return
	}
	var failed, partial, done, notStarted bool
	for _, v := range tr.Verbs {
		switch v.Status {
		case StatusFailed:
			failed = true
		case StatusPartial:
			partial = true
		case StatusNotStarted:
			notStarted = true
		case StatusDone, StatusSkipped:
			done = true
		}
	}
	switch {
	case failed || tr.Error != "":
		tr.Status = StatusFailed
		if done || partial {
			tr.Status = StatusPartial
		}
	case partial || notStarted && done:
		tr.Status = StatusPartial
	case notStarted:
		tr.Status = StatusNotStarted
	default:
		tr.Status = StatusDone
	}
}

func (r *Report) summarize(timeHit, bytesHit bool) {
	s := Summary{Left: []string{}, Claimed: []string{}}
	for _, t := range r.Tables {
		s.Tables++
		if t.Status != StatusNothingDue && len(t.Due) > 0 {
			s.Due++
		}
		switch t.Status {
		case StatusDone:
			s.Done++
		case StatusPartial:
			s.Partial++
		case StatusFailed:
			s.Failed++
		case StatusSkipped:
			s.Skipped++
		case StatusNotStarted:
			s.NotStarted++
		case StatusNothingDue:
			s.NothingDue++
		}
		switch {
		case t.Held != nil:
			s.Claimed = append(s.Claimed, t.Table)
		case t.Status != StatusDone && t.Status != StatusNothingDue:
			s.Left = append(s.Left, t.Table)
		}
	}
	var b []string
	if timeHit {
		b = append(b, "max-duration")
	}
	if bytesHit {
		b = append(b, "max-rewrite-bytes")
	}
	s.StoppedByBudget = strings.Join(b, ",")
	r.Summary = s
}

// Complete reports whether everything due was done, by this run or, for
// a table another live run held, by that one: no table is left with work
// (failed, partial, not started, or skipped for another reason).
func (r *Report) Complete() bool { return len(r.Summary.Left) == 0 }

// LeftText says what the run left for the next one and why, or "" when
// it left nothing.
func (r *Report) LeftText() string {
	s := r.Summary
	if len(s.Left) == 0 {
		return ""
	}
	var why []string
	if s.StoppedByBudget != "" {
		why = append(why, "the budget ("+s.StoppedByBudget+") ran out")
	}
	if s.Failed+s.Partial > 0 {
		why = append(why, fmt.Sprintf("%d tables failed or partly failed", s.Failed+s.Partial))
	}
	if n := s.Skipped - len(s.Claimed); n > 0 {
		why = append(why, fmt.Sprintf("%d tables were skipped", n))
	}
	if len(why) == 0 {
		why = append(why, "the run was interrupted")
	}
	return fmt.Sprintf("work left on %d of %d due tables (%s): %s; the next run continues",
		len(s.Left), s.Due, strings.Join(why, "; "), strings.Join(s.Left, ", "))
}

func dueText(ds []Due) string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.Verb
	}
	return strings.Join(names, ", ")
}
