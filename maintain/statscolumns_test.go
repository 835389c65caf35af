package maintain

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/colstats"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/fixture"
)

// TestStatsColumnsPolicy: stats-columns is off by default; enabled, it is
// due when the snapshot lacks a sketch of an asked column, or after a
// verb that commits a new snapshot (then last but orphan), and not due
// otherwise; a column that cannot be sketched makes it due with the
// reason, so its run refuses it.
func TestStatsColumnsPolicy(t *testing.T) {
	p, err := ParsePolicy("p.yaml", []byte("defaults:\n  stats-columns: {enabled: true, columns: [id, ts]}\n  orphan: {enabled: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	on := func(edit func(*TableState)) func(*TableState) {
		return func(st *TableState) {
			st.Policy, _ = p.Resolve(st.Ident, nil)
			if edit != nil {
				edit(st)
			}
		}
	}
	if r, _ := (&Policy{}).Resolve(ident("db.t"), nil); r.Enabled[VerbStatsColumns] || r.Off[VerbStatsColumns] == "" {
		t.Errorf("stats-columns on by default: %+v", r.Off)
	}
	if r, _ := p.Resolve(ident("db.t"), nil); strings.Join(r.StatsColumns, ",") != "id,ts" || r.Sources["stats-columns.columns"] != "policy defaults" {
		t.Errorf("resolved columns %v, sources %v", r.StatsColumns, r.Sources)
	}
	states := []TableState{
		state(t, "db.missing", 2, nil, on(func(st *TableState) { st.StatsColumns.Missing = []string{"ts"}; st.SnapshotID = 7 })),
		state(t, "db.has", 2, nil, on(nil)),
		state(t, "db.compacted", 2, nil, on(smallFiles(20))),
		state(t, "db.bad", 2, nil, on(func(st *TableState) { st.StatsColumns.Err = colstats.ErrColumn })),
		state(t, "db.off", 2, nil, func(st *TableState) { st.StatsColumns.Missing = []string{"id"} }),
	}
	got := map[string]*TablePlan{}
	plan := NewPlan(states, testNow)
	for _, tp := range append(plan.Due, plan.Healthy...) {
		got[tp.Table] = tp
	}
	for name, want := range map[string]string{
		"db.missing": "stats-columns,orphan", "db.has": "orphan", "db.compacted": "compact,stats-columns,orphan", "db.bad": "stats-columns,orphan", "db.off": "",
	} {
		if dueVerbs(got[name]) != want {
			t.Errorf("%s: due %q, want %q", name, dueVerbs(got[name]), want)
		}
	}
	for name, reason := range map[string]string{
		"db.missing": "snapshot 7 has no sketch of ts", "db.compacted": "compact commits a new snapshot", "db.bad": "cannot be computed: bad column",
	} {
		if d := got[name].Due; !strings.Contains(d[len(d)-2].Reason, reason) {
			t.Errorf("%s: %+v, want the reason %q", name, d, reason)
		}
	}
	for _, bad := range []string{
		"defaults:\n  stats-columns: {columns: id}\n",
		"defaults:\n  stats-columns: {columns: [id, id]}\n",
		"defaults:\n  stats-columns: {enabled: yes please}\n",
		"defaults:\n  stats-columns: {ndv: true}\n",
	} {
		if _, err := ParsePolicy("p.yaml", []byte(bad)); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestStatsColumnsRun: maintain writes and registers the sketches of the
// asked columns on the current snapshot; a second run finds nothing due
// and changes nothing; a column the table lacks fails the verb before
// anything is written.
func TestStatsColumnsRun(t *testing.T) {
	s := spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "name", Type: spec.StringType{}},
	}}
	c := fixture.NewSQLite(t)
	tb := c.Table(t, fixture.TableOptions{Schema: &s, FormatVersion: 2})
	tb.Append(t, nil, tb.WriteRows(t, nil, "a", []any{}, &s, [][]any{{int64(1), "x"}, {int64(2), "y"}, {int64(2), nil}}))
	now := time.Now()
	run := func(policy string) (*TablePlan, *TableReport) {
		p, err := ParsePolicy("p.yaml", []byte(policy))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		plan := NewPlan(ReadStates(ctx, c.Catalog, []metastore.Ident{tb.ID}, p, now, 1), now)
		tp := append(plan.Due, plan.Healthy...)[0]
		rep := Run(ctx, c.Catalog, plan, Options{Now: func() time.Time { return now }, Policy: p})
		return tp, rep.Tables[0]
	}
	before := tb.Load(t).MetadataLocation
	if _, tr := run("defaults:\n  stats-columns: {enabled: true, columns: [nope]}\n"); tb.Load(t).MetadataLocation != before || tr.Status != StatusFailed ||
		!strings.Contains(verbErrors(tr), "nope") {
		t.Errorf("column nope: %+v", tr)
	}
	policy := "defaults:\n  stats-columns: {enabled: true, columns: [id]}\n"
	tp, tr := run(policy)
	if dueVerbs(tp) != VerbStatsColumns || len(tr.Verbs) != 1 || tr.Verbs[0].Status != StatusDone || tr.Verbs[0].Commits != 1 {
		t.Fatalf("first run: due %q, report %+v", dueVerbs(tp), tr)
	}
	md := tb.Load(t).Metadata
	f, ok := colstats.Registered(md, md.CurrentSnapshot().SnapshotID)
	if !ok || len(f.BlobMetadata) != 1 || f.BlobMetadata[0].Fields[0] != 1 || f.BlobMetadata[0].Properties["ndv"] != "2" {
		t.Fatalf("registered statistics: %+v (ok %v)", f, ok)
	}
	after := tb.Load(t).MetadataLocation
	if tp, tr := run(policy); dueVerbs(tp) != "" || tr.Status != StatusNothingDue || tb.Load(t).MetadataLocation != after {
		t.Errorf("second run: due %q, %+v", dueVerbs(tp), tr)
	}
}
