package maintain

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/fixture"
)

func TestRetentionPolicyParse(t *testing.T) {
	p, err := ParsePolicy("p.yaml", []byte("namespaces:\n  ns:\n    retention: {column: ts, keep: 90d}\ntables:\n  ns.other:\n    retention: {enabled: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Resolve(metastore.Ident{Namespace: []string{"ns"}, Name: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Enabled[VerbRetention] || r.RetentionColumn != "ts" || r.RetentionKeep != 90*24*time.Hour {
		t.Errorf("ns.t: %+v", r)
	}
	for _, id := range []metastore.Ident{{Namespace: []string{"ns"}, Name: "other"}, {Namespace: []string{"db"}, Name: "t"}} {
		r, err := p.Resolve(id, nil)
		if err != nil || r.Enabled[VerbRetention] || r.Off[VerbRetention] == "" {
			t.Errorf("%s: retention on (%v, %v)", id, r.Enabled, err)
		}
	}
	// --enable retention alone has no column: it stays off.
	var q Policy
	on := true
	q.Flags.Retention.Enabled = &on
	if r, _ := q.Resolve(metastore.Ident{Namespace: []string{"ns"}, Name: "t"}, nil); r.Enabled[VerbRetention] {
		t.Error("retention on without a column")
	}
	for _, bad := range []string{
		"defaults:\n  retention: {column: ts, keep: soon}\n",
		"defaults:\n  retention: {column: '', keep: 1d}\n",
		"defaults:\n  retention: {column: ts, keep: 1d, drop: all}\n",
	} {
		if _, err := ParsePolicy("p.yaml", []byte(bad)); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestRetentionRun: maintain with a retention policy deletes the rows
// past it and reports them; on a column that is not a timestamp or date
// the verb fails and nothing changes.
func TestRetentionRun(t *testing.T) {
	s := spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "ts", Type: spec.TimestampType{}},
	}}
	c := fixture.NewSQLite(t)
	tb := c.Table(t, fixture.TableOptions{Schema: &s, FormatVersion: 3, Props: map[string]string{"write.delete.mode": "merge-on-read"}})
	now := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	micros := func(days int) any { return now.AddDate(0, 0, -days).UnixMicro() }
	tb.Append(t, nil, tb.WriteRows(t, nil, "a", []any{}, &s, [][]any{{int64(1), micros(200)}, {int64(2), micros(10)}, {int64(3), nil}, {int64(4), micros(91)}}))
	run := func(policy string) *TableReport {
		p, err := ParsePolicy("p.yaml", []byte(policy))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		states := ReadStates(ctx, c.Catalog, []metastore.Ident{tb.ID}, p, now, 1)
		rep := Run(ctx, c.Catalog, NewPlan(states, now), Options{Now: func() time.Time { return now }, Policy: p})
		for _, tr := range rep.Tables {
			return tr
		}
		t.Fatalf("no table in the report: %+v", rep)
		return nil
	}
	before := tb.Load(t).MetadataLocation
	tr := run("defaults:\n  retention: {column: id, keep: 90d}\n")
	if tb.Load(t).MetadataLocation != before || tr.Status != StatusFailed || !strings.Contains(tr.Error+verbErrors(tr), "not a timestamp or date") {
		t.Errorf("retention on id: %+v", tr)
	}
	planOf := func(policy string) *TablePlan {
		p, err := ParsePolicy("p.yaml", []byte(policy))
		if err != nil {
			t.Fatal(err)
		}
		plan := NewPlan(ReadStates(context.Background(), c.Catalog, []metastore.Ident{tb.ID}, p, now, 1), now)
		return slices.Concat(plan.Due, plan.Healthy)[0]
	}
	// The file holds rows 200, 10 and 91 days old and a null: partly past,
	// at most 3 rows.
	if tp := planOf("defaults:\n  retention: {column: ts, keep: 90d}\n"); dueVerbs(tp) != VerbRetention ||
		!strings.Contains(tp.Due[0].Reason, "0 data files (0 live rows) wholly past retention (ts before 2024-02-01T00:00:00Z, keep 90d), 1 more may hold rows past it (at most 3 rows)") {
		t.Errorf("plan before: %+v", tp.Due)
	}
	tr = run("defaults:\n  retention: {column: ts, keep: 90d}\n")
	var got *VerbReport
	for i := range tr.Verbs {
		if tr.Verbs[i].Verb == VerbRetention {
			got = &tr.Verbs[i]
		}
	}
	if got == nil || got.Status != StatusDone || got.Rows != 2 || got.Commits != 1 {
		t.Fatalf("retention: %+v", tr)
	}
	tbl := tb.Load(t)
	var ids []int64
	err := scan.SnapshotRows(context.Background(), tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), nil, func(row []any) error {
		ids = append(ids, row[0].(int64))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []int64{2, 3}) {
		t.Errorf("rows after retention: ids %v, want [2 3] (10 days old, and null)", ids)
	}
	// No row is 300 days old: retention is not due. (At 90 days it still
	// is: the file's bounds still span the rows its DV deleted, so health
	// counts it as partly past; the run's own plan then finds it idle.)
	if tp := planOf("defaults:\n  retention: {column: ts, keep: 300d}\n"); strings.Contains(dueVerbs(tp), VerbRetention) || tp.Retention == nil || tp.Retention.MayBePast() {
		t.Errorf("plan at 300d: %+v", tp)
	}
}

func verbErrors(tr *TableReport) string {
	var b strings.Builder
	for _, v := range tr.Verbs {
		b.WriteString(v.Error)
	}
	return b.String()
}

// TestRetentionDue: retention is due only when health's count says some
// live row may be past it (the reason gives the counts), or the setting
// cannot be judged; with nothing past it is not due, and the plan carries
// the counts either way.
func TestRetentionDue(t *testing.T) {
	p, err := ParsePolicy("p.yaml", []byte("defaults:\n  retention: {column: ts, keep: 90d}\n"))
	if err != nil {
		t.Fatal(err)
	}
	withRetention := func(s health.RetentionStats) func(*TableState) {
		return func(st *TableState) {
			st.Policy, _ = p.Resolve(st.Ident, nil)
			st.Health.Retention = &s
		}
	}
	cutoff := testNow.Add(-90 * 24 * time.Hour).UnixMilli()
	states := []TableState{
		state(t, "db.fresh", 3, nil, withRetention(health.RetentionStats{Column: "ts", Keep: "90d", CutoffMS: cutoff, Where: "w"})),
		state(t, "db.old", 3, nil, withRetention(health.RetentionStats{Column: "ts", Keep: "90d", CutoffMS: cutoff, Where: "w",
			WholeFiles: 2, WholeRows: 20, PartialFiles: 1, PartialRowsMax: 7})),
		state(t, "db.bad", 3, nil, withRetention(health.RetentionStats{Column: "id", Keep: "90d", Error: `retention column "id" is long, not a timestamp or date`})),
		state(t, "db.off", 3, nil, nil),
	}
	plan := NewPlan(states, testNow)
	got := map[string]*TablePlan{}
	for _, tp := range slices.Concat(plan.Due, plan.Healthy) {
		got[tp.Table] = tp
	}
	if tp := got["db.fresh"]; dueVerbs(tp) != "" || tp.Retention == nil || tp.Retention.WholeFiles != 0 {
		t.Errorf("db.fresh: due %q, retention %+v", dueVerbs(tp), tp.Retention)
	}
	want := "2 data files (20 live rows) wholly past retention (ts before 2025-12-01T12:00:00Z, keep 90d), 1 more may hold rows past it (at most 7 rows)"
	if tp := got["db.old"]; dueVerbs(tp) != VerbRetention || tp.Due[0].Reason != want || tp.Debt != 3 {
		t.Errorf("db.old: %+v, want the reason %q", tp.Due, want)
	}
	if tp := got["db.bad"]; dueVerbs(tp) != VerbRetention || !strings.Contains(tp.Due[0].Reason, "not a timestamp or date") {
		t.Errorf("db.bad: %+v", tp.Due)
	}
	if tp := got["db.off"]; dueVerbs(tp) != "" || tp.Retention != nil {
		t.Errorf("db.off: %+v", tp)
	}
}
