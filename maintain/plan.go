package maintain

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/internal/shared/bytesize"
)

// Due is one verb due on a table, and why.
type Due struct {
	Verb   string `json:"verb"`
	Reason string `json:"reason"`
	// EstimatedBytes is what the verb reads to rewrite: data files for
	// compaction, delete files for dv merge, manifests for their rewrite;
	// 0 for expiry and orphan removal, which delete.
	EstimatedBytes int64 `json:"estimated_bytes"`
}

// TablePlan is the work planned for one table.
type TablePlan struct {
	Table            string `json:"table"`
	MetadataLocation string `json:"metadata_location"`
	FormatVersion    int    `json:"format_version"`
	// Debt is the table's score (see Plan) and Class its power-of-two
	// class, which orders the fleet.
	Debt  int64 `json:"debt"`
	Class int   `json:"debt_class"`
	// LastMaintainedMS breaks ties between tables of one class: the longest
	// since maintained first (0, never, before all).
	LastMaintainedMS int64 `json:"last_maintained_ms"`
	Due              []Due `json:"due"`
	// Off lists the verbs the policy or the table switched off, and why.
	Off []Skip `json:"off"`
	// Attention lists what maintain leaves to a person (resurrected rows:
	// repairing them changes what readers see).
	Attention []string `json:"attention"`
	// Stream is the streaming policy's decision when a writer streams to
	// the table (nil otherwise): whether its rewrites are due, and why.
	Stream *StreamDecision `json:"stream,omitempty"`
	// Retention is health's count of the rows past the table's retention
	// setting (nil: retention off).
	Retention *health.RetentionStats `json:"retention,omitempty"`

	state *TableState
}

// Skip is a verb not run, and why.
type Skip struct {
	Verb   string `json:"verb"`
	Reason string `json:"reason"`
}

// EstimatedBytes is the sum over the table's due verbs.
func (tp *TablePlan) EstimatedBytes() int64 {
	var n int64
	for _, d := range tp.Due {
		n += d.EstimatedBytes
	}
	return n
}

// Plan is the fleet's plan: the tables with work due, in the order they
// are started, then those with nothing due, then those that could not be
// read.
type Plan struct {
	NowMS   int64         `json:"now_ms"`
	Due     []*TablePlan  `json:"due"`
	Healthy []*TablePlan  `json:"nothing_due"`
	Failed  []TableFailed `json:"unreadable"`
}

// TableFailed is a table whose state could not be read.
type TableFailed struct {
	Table string `json:"table"`
	Error string `json:"error"`
}

// NewPlan decides, for every table state, which verbs are due and why,
// and orders the fleet. It is pure and deterministic: the same states give
// the same plan.
//
// A table's debt is what its readers and its catalog carry beyond a
// healthy table, counted in files and snapshots, over the verbs due: the
// small data files compaction would merge, the delete files (position
// deletes and DVs dv merge would merge, and the delete files compaction
// would apply), the small manifests a rewrite would merge, and the
// snapshots expiry would remove. The fleet is ordered by the debt's
// power-of-two class (so a table with a million small files outranks one
// with ten, but a table twice as bad as another does not always go first),
// then by the time since the table was last maintained, longest first: a
// large table that the previous run worked on goes after the tables of its
// class that it kept waiting. Names break the remaining ties.
func NewPlan(states []TableState, now time.Time) *Plan {
	p := &Plan{NowMS: now.UnixMilli(), Due: []*TablePlan{}, Healthy: []*TablePlan{}, Failed: []TableFailed{}}
	for i := range states {
		st := &states[i]
		if st.Err != nil {
			p.Failed = append(p.Failed, TableFailed{Table: st.Ident.String(), Error: st.Err.Error()})
			continue
		}
		tp := planTable(st)
		if len(tp.Due) > 0 {
			p.Due = append(p.Due, tp)
		} else {
			p.Healthy = append(p.Healthy, tp)
		}
	}
	slices.SortFunc(p.Due, func(a, b *TablePlan) int {
		return cmp.Or(cmp.Compare(b.Class, a.Class), cmp.Compare(a.LastMaintainedMS, b.LastMaintainedMS), cmp.Compare(a.Table, b.Table))
	})
	slices.SortFunc(p.Healthy, func(a, b *TablePlan) int { return cmp.Compare(a.Table, b.Table) })
	slices.SortFunc(p.Failed, func(a, b TableFailed) int { return cmp.Compare(a.Table, b.Table) })
	return p
}

// planTable decides what is due on one table.
func planTable(st *TableState) *TablePlan {
	h, pol := &st.Health, st.Policy
	tp := &TablePlan{Table: st.Ident.String(), MetadataLocation: st.MetadataLocation, FormatVersion: st.FormatVersion,
		LastMaintainedMS: st.LastMaintainedMS, Due: []Due{}, Off: []Skip{}, Attention: []string{}, state: st}
	findings := map[string]bool{}
	for _, f := range h.Findings {
		findings[f.Kind] = true
	}
	var debt int64
	tp.Stream = DecideStream(st)
	due := func(verb, reason string, bytes, d int64) {
		if !pol.Enabled[verb] {
			tp.Off = append(tp.Off, Skip{Verb: verb, Reason: fmt.Sprintf("%s would be due (%s), but it is %s", verb, reason, offText(pol.Off[verb]))})
			return
		}
		if tp.Stream != nil && !tp.Stream.Due && streamGated[verb] {
			// The decision's own line (tp.Stream.Reason) gives the numbers.
			tp.Off = append(tp.Off, Skip{Verb: verb, Reason: fmt.Sprintf("%s would be due (%s), but it waits until the streamed table is due", verb, reason)})
			return
		}
		tp.Due = append(tp.Due, Due{Verb: verb, Reason: reason, EstimatedBytes: bytes})
		debt += d
	}
	if why, d, ok := retentionDue(h.Retention); ok && pol.Enabled[VerbRetention] {
		due(VerbRetention, why, 0, d)
	}
	tp.Retention = h.Retention
	del := h.Deletes
	// v3: dv merge also resolves equality deletes into the DVs of the
	// data files they apply to (dv merge --equality).
	eqV3 := st.FormatVersion >= 3 && findings["equality-deletes"]
	if st.FormatVersion >= 3 && (del.Position.Count > 0 || st.MultiDVFiles > 0 || eqV3) {
		var whys []string
		if del.Position.Count > 0 {
			whys = append(whys, fmt.Sprintf("%d position delete files", del.Position.Count))
		}
		if st.MultiDVFiles > 0 {
			whys = append(whys, fmt.Sprintf("%d data files with several DVs", st.MultiDVFiles))
		}
		bytes, d := del.Position.Bytes+del.DV.Bytes, int64(del.Position.Count+st.MultiDVFiles)
		if eqV3 {
			whys = append(whys, fmt.Sprintf("%d equality delete files (v3: resolved into DVs)", del.Equality.Count))
			bytes, d = bytes+del.Equality.Bytes, d+int64(del.Equality.Count)
		}
		due(VerbDVMerge, joinReasons(whys), bytes, d)
	}
	// Equality deletes are resolved where they apply (reading no longer
	// joins them): on v2 into position deletes, on v3 into DVs;
	// compaction is left what remains. With that verb off, compaction
	// applies them.
	convertEq := findings["equality-deletes"] && (st.FormatVersion == 2 && pol.Enabled[VerbRewriteEqualityDeletes] ||
		st.FormatVersion >= 3 && pol.Enabled[VerbDVMerge])
	if st.FormatVersion == 2 && findings["equality-deletes"] {
		due(VerbRewriteEqualityDeletes, fmt.Sprintf("%d equality delete files (v2: converted into position deletes)", del.Equality.Count),
			del.Equality.Bytes, int64(del.Equality.Count))
	}
	var whys []string
	var cdebt int64
	for _, p := range h.Partitions {
		if p.Data.SmallFiles >= h.Thresholds.MinInputFiles {
			cdebt += int64(p.Data.SmallFiles)
		}
	}
	if findings["small-files"] {
		whys = append(whys, fmt.Sprintf("%d small files in partitions with %d or more", cdebt, h.Thresholds.MinInputFiles))
	}
	if findings["delete-ratio"] && st.FormatVersion >= 3 {
		whys = append(whys, fmt.Sprintf("delete ratio %.1f%% (threshold %.0f%% per partition)", del.DeleteRatio*100, h.Thresholds.DeleteRatio*100))
		cdebt += int64(del.DV.Count)
	}
	if st.V2DeleteHeavy > 0 {
		// v2: the data files compaction's planner rewrites for their
		// deletes, which it applies (partition-scoped position deletes are
		// rewrite-position-deletes' work, as in Spark).
		whys = append(whys, fmt.Sprintf("%d data files with %.0f%% or more of their rows deleted (v2: compaction applies the deletes)",
			st.V2DeleteHeavy, pol.DeleteRatio*100))
		cdebt += int64(st.V2DeleteHeavy)
	}
	if o := h.OtherSpecData; o.Files > 0 && pol.OutputSpec != "" {
		// Only when the policy asks: moving all old data is the
		// operator's decision (health reports it either way).
		whys = append(whys, fmt.Sprintf("%d data files (%s) in older partition specs (compact.output-spec: %s)", o.Files, bytesize.Format(o.Bytes), pol.OutputSpec))
		cdebt += int64(o.Files)
	}
	if findings["equality-deletes"] && !convertEq {
		whys = append(whys, fmt.Sprintf("%d equality delete files", del.Equality.Count))
		cdebt += int64(del.Equality.Count)
	}
	switch {
	case len(whys) > 0 && st.FormatVersion < 2:
		// compact refuses v1 tables; upgrading is the operator's call.
		tp.Off = append(tp.Off, Skip{Verb: VerbCompact, Reason: fmt.Sprintf("compact would be due (%s), but format v1 tables are not compacted: icectl upgrade %s --to 2 first", joinReasons(whys), tp.Table)})
	case len(whys) > 0:
		due(VerbCompact, joinReasons(whys), st.SmallBytes+st.DeleteBytes, cdebt)
	}
	if pd := st.PositionDeletes; st.FormatVersion == 2 && pd.Files+pd.Dangling > 0 {
		var rs []string
		if pd.Files > 0 {
			rs = append(rs, fmt.Sprintf("%d position-delete files below %s in partitions with %d or more", pd.Files,
				bytesize.Format(pol.DeleteTargetSize), pol.PosDeleteMinFiles))
		}
		if pd.Dangling > 0 {
			rs = append(rs, fmt.Sprintf("%d position-delete files that apply to no live data file", pd.Dangling))
		}
		due(VerbRewritePositionDeletes, joinReasons(rs), pd.Bytes, int64(pd.Files+pd.Dangling))
	}
	if findings["small-manifests"] {
		m := h.Manifests
		due(VerbRewriteManifests, fmt.Sprintf("%d of %d manifests below %s", m.SmallManifests, m.Count, bytesize.Format(m.SmallBelowBytes)),
			m.Bytes, int64(m.SmallManifests))
	}
	if st.ExpireSnapshots > 0 || st.ExpireRefs > 0 {
		why := fmt.Sprintf("%d snapshots past retention (older than %s, keeping %d)", st.ExpireSnapshots, durationText(pol.MaxSnapshotAge), pol.MinSnapshotsToKeep)
		if st.ExpireRefs > 0 {
			why += fmt.Sprintf(", %d refs past their max age", st.ExpireRefs)
		}
		due(VerbExpire, why, 0, int64(st.ExpireSnapshots+st.ExpireRefs))
	}
	if why, ok := statsColumnsDue(st, tp.Due); ok {
		due(VerbStatsColumns, why, 0, 0)
	}
	if pol.Enabled[VerbOrphan] {
		why := "enabled by policy (files older than " + durationText(pol.OlderThan()) + ")"
		if findings["untracked-metadata-files"] {
			why = "untracked metadata files; " + why
		}
		due(VerbOrphan, why, 0, 0)
	} else if findings["untracked-metadata-files"] {
		tp.Off = append(tp.Off, Skip{Verb: VerbOrphan, Reason: "untracked metadata files, but orphan removal is " + offText(pol.Off[VerbOrphan])})
	}
	if findings["resurrected-rows"] {
		tp.Attention = append(tp.Attention, fmt.Sprintf("%d deleted rows are visible again: icectl dv merge %s --repair-resurrected (it changes what readers see, so maintain leaves it to you)",
			h.Resurrected.Rows, tp.Table))
	}
	tp.Debt = debt
	tp.Class = bits.Len64(uint64(debt))
	return tp
}

// streamGated are the verbs the streaming policy holds back on a
// streamed table until it is due: the ones that rewrite files, each a
// replace commit racing the writer's. Retention, expiry and orphan
// removal keep their own rules.
var streamGated = map[string]bool{VerbDVMerge: true, VerbRewriteEqualityDeletes: true, VerbCompact: true,
	VerbRewritePositionDeletes: true, VerbRewriteManifests: true}

// StreamDecision is the streaming policy's decision on a streamed table.
type StreamDecision struct {
	// Commits are the writer commits of the last hour, and FlinkJobID the
	// Flink job that made the newest of them ("" when none did).
	Commits    int    `json:"commits_last_hour"`
	FlinkJobID string `json:"flink_job_id,omitempty"`
	// Fragments are the small data files and the position and equality
	// delete files: the files every read opens beyond a healthy table's
	// (Amoro's fragment files). SmallManifests are the manifests below
	// the small-manifest size, which every scan plan opens.
	Fragments      int `json:"fragments"`
	SmallManifests int `json:"small_manifests"`
	// EqualityDeleteRatio is the equality delete keys over the data rows.
	EqualityDeleteRatio float64 `json:"equality_delete_ratio"`
	// Due says the table's rewrites run in this run (by each verb's own
	// rules); when false they wait for a later one.
	Due    bool   `json:"due"`
	Reason string `json:"reason"`
}

// DecideStream applies the streaming policy to st: nil when the table is
// not streamed (fewer writer commits in the last hour than
// stream.commits-per-hour, or the policy off), else whether its rewrites
// are due: once its fragments or its small manifests reach
// stream.small-files, or its equality delete keys
// stream.equality-delete-ratio of its rows. Below all three, a rewrite
// now would merge a few files the writer's next commits add to again, in
// a replace commit racing the writer's: the verbs wait until the debt is
// worth a run. A writer that stops streaming drops out of the
// window within the hour, and the verbs' own rules apply again. Pure.
func DecideStream(st *TableState) *StreamDecision {
	pol, h, w := st.Policy, &st.Health, st.Writers
	if !pol.Stream || w.Commits < pol.StreamCommitsPerHour {
		return nil
	}
	d := &StreamDecision{Commits: w.Commits, FlinkJobID: w.FlinkJobID,
		Fragments: h.Data.SmallFiles + h.Deletes.Position.Count + h.Deletes.Equality.Count, SmallManifests: h.Manifests.SmallManifests}
	if eq := h.Deletes.Equality.Records; eq > 0 {
		d.EqualityDeleteRatio = 1 // no data rows: every one of them deleted
		if h.Data.Records > 0 {
			d.EqualityDeleteRatio = float64(eq) / float64(h.Data.Records)
		}
	}
	writer := fmt.Sprintf("%d writer commits in the last hour", w.Commits)
	if w.FlinkJobID != "" {
		writer += ", Flink job " + w.FlinkJobID
	}
	fragments := fmt.Sprintf("%d small data files and delete files", d.Fragments)
	manifests := fmt.Sprintf("%d small manifests", d.SmallManifests)
	ratio := "equality deletes " + percent(d.EqualityDeleteRatio) + " of the rows"
	var why []string
	if d.Fragments >= pol.StreamSmallFiles {
		why = append(why, fmt.Sprintf("%s (stream.small-files: %d)", fragments, pol.StreamSmallFiles))
	}
	if d.SmallManifests >= pol.StreamSmallFiles {
		why = append(why, fmt.Sprintf("%s (stream.small-files: %d)", manifests, pol.StreamSmallFiles))
	}
	if d.EqualityDeleteRatio >= pol.StreamEqualityDeleteRatio {
		why = append(why, fmt.Sprintf("%s (stream.equality-delete-ratio: %s)", ratio, percent(pol.StreamEqualityDeleteRatio)))
	}
	if d.Due = len(why) > 0; d.Due {
		d.Reason = fmt.Sprintf("streamed table (%s) is due: %s", writer, joinReasons(why))
	} else {
		d.Reason = fmt.Sprintf("streamed table (%s) not due yet: %s (due at %d), %s (due at %d), %s (due at %s)",
			writer, fragments, pol.StreamSmallFiles, manifests, pol.StreamSmallFiles, ratio, percent(pol.StreamEqualityDeleteRatio))
	}
	return d
}

// percent spells a ratio as a percentage, to a tenth.
func percent(r float64) string {
	return strconv.FormatFloat(math.Round(r*1000)/10, 'f', -1, 64) + "%"
}

// OlderThan is orphan removal's age.
func (r *Resolved) OlderThan() time.Duration { return r.OrphanOlderThan }

func offText(why string) string {
	if why == "" {
		return "off"
	}
	return why
}

func joinReasons(rs []string) string {
	s := rs[0]
	for _, r := range rs[1:] {
		s += "; " + r
	}
	return s
}

// durationText spells d in whole days, hours, minutes or seconds.
func durationText(d time.Duration) string {
	switch {
	case d >= 24*time.Hour && d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d >= time.Second && d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}
