package health

import (
	"fmt"
	"time"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan/where"
)

// KindRowsPastRetention is the finding of live rows older than the
// retention setting the report was asked about.
const KindRowsPastRetention = "rows-past-retention"

// Retention is a retention setting to judge the table against: rows whose
// Column (a timestamp or date) is older than Keep are past it. maintain's
// policy gives it (retention: {column, keep}).
type Retention struct {
	Column string
	Keep   time.Duration
}

// RetentionStats are the live data files with rows past a retention
// setting, judged from their metadata alone with delete-rows' own
// evaluation of the policy's expression (Where): partition values and
// column metrics (lower and upper bounds, null counts) prove a file wholly
// past (every row matches: where.Filter.AllMatchIn) or rule it out
// (where.PartitionFilter.MatchFile); the others may hold some rows past.
type RetentionStats struct {
	Column   string `json:"column"`
	Keep     string `json:"keep"`
	CutoffMS int64  `json:"cutoff_ms"`
	// Where is the expression maintain's retention runs through
	// delete-rows at the report's time ("" when Error says why none).
	Where string `json:"where"`
	// WholeFiles hold only rows past retention, WholeRows of them live:
	// the file's records less the rows its deletion vector deletes (other
	// delete files are not read: with them it is an upper bound).
	WholeFiles int   `json:"whole_files"`
	WholeRows  int64 `json:"whole_rows"`
	// PartialFiles may hold rows past retention; PartialRowsMax bounds
	// those rows from above (live rows, less the column's nulls, which are
	// never past).
	PartialFiles   int   `json:"partial_files"`
	PartialRowsMax int64 `json:"partial_rows_at_most"`
	// Error says why the setting could not be judged (a column that is
	// not a top-level timestamp or date): maintain's retention refuses it
	// the same way.
	Error string `json:"error,omitempty"`
}

// MayBePast reports whether some live row may be past retention, or the
// setting could not be judged.
func (s *RetentionStats) MayBePast() bool {
	return s != nil && (s.Error != "" || s.WholeFiles+s.PartialFiles > 0)
}

// retention judges in's live data files against in.Retention (nil: not
// asked).
func retention(in Input) *RetentionStats {
	rt := in.Retention
	if rt == nil {
		return nil
	}
	md := in.Metadata
	out := &RetentionStats{Column: rt.Column, Keep: durationText(rt.Keep), CutoffMS: in.Now.Add(-rt.Keep).UnixMilli()}
	schema := md.CurrentSchema()
	expr, err := where.Retention(schema, rt.Column, rt.Keep, in.Now)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	f, err := where.Compile(expr, schema)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.Where = expr
	if in.Files == nil {
		return out
	}
	fieldID := -1
	for _, fld := range f.Fields() {
		fieldID = fld.ID
	}
	ix := table.DeletesForTable(md, in.Files)
	pfs := map[int32]*where.PartitionFilter{}
	for _, e := range in.Files.Data {
		df := &e.Entry.DataFile
		live := df.RecordCount
		if dv := ix.For(e).DV; dv != nil {
			live -= dv.Entry.DataFile.RecordCount
		}
		if live <= 0 {
			continue // delete-rows leaves a file with no live row alone
		}
		ps, _ := md.SpecByID(int(df.SpecID))
		psp := ps
		may := true
		if ps != nil {
			pf := pfs[df.SpecID]
			if pf == nil {
				if pf, err = f.ForSpec(ps, schema); err == nil {
					pfs[df.SpecID] = pf
				}
			}
			if pf != nil {
				if m, err := pf.MatchFile(df); err == nil {
					may = m
				}
			}
		}
		switch {
		case !may:
		case f.AllMatchIn(df, psp):
			out.WholeFiles++
			out.WholeRows += live
		default:
			bound := live
			if nulls, ok := df.NullValueCounts[fieldID]; ok && !identitySource(psp, fieldID) {
				bound = min(bound, df.RecordCount-nulls)
			}
			if bound > 0 { // else every row is null: none is past
				out.PartialFiles++
				out.PartialRowsMax += bound
			}
		}
	}
	return out
}

// identitySource reports whether field id is the source of an identity
// field of ps: the partition value, not the file's metrics, is then the
// column's value in every row.
func identitySource(ps *spec.PartitionSpec, id int) bool {
	if ps == nil {
		return false
	}
	for _, pf := range ps.Fields {
		if pf.Transform.Kind == spec.TransformIdentity && pf.SourceID == id {
			return true
		}
	}
	return false
}

// retentionFinding is the rows-past-retention finding's message and
// command, or ok false when no row may be past.
func retentionFinding(t string, s *RetentionStats) (msg string, c Command, ok bool) {
	if s == nil || s.Where == "" || s.WholeFiles+s.PartialFiles == 0 {
		return "", Command{}, false
	}
	cutoff := time.UnixMilli(s.CutoffMS).UTC().Format(time.RFC3339)
	msg = fmt.Sprintf("%d data %s (%d live rows) hold only rows with %s before %s (retention %s), and %d more may hold some (at most %d rows); deleting the rows past retention is recommended",
		s.WholeFiles, plural(s.WholeFiles, "file", "files"), s.WholeRows, s.Column, cutoff, s.Keep, s.PartialFiles, s.PartialRowsMax)
	return msg, retentionCommand(t, s.Where), true
}

func retentionCommand(t, whereExpr string) Command {
	return Command{Verb: []string{"delete-rows"}, Args: []string{t, "--where", whereExpr}}
}

// Summary spells the counts in one line, as maintain's plan gives them.
func (s *RetentionStats) Summary() string {
	if s.Error != "" {
		return fmt.Sprintf("retention on %s not judged: %s", s.Column, s.Error)
	}
	return fmt.Sprintf("%d data %s (%d live rows) wholly past retention (%s before %s, keep %s), %d more may hold rows past it (at most %d rows)",
		s.WholeFiles, plural(s.WholeFiles, "file", "files"), s.WholeRows, s.Column, time.UnixMilli(s.CutoffMS).UTC().Format(time.RFC3339), s.Keep,
		s.PartialFiles, s.PartialRowsMax)
}
