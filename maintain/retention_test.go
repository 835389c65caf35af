package maintain

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

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
}

func verbErrors(tr *TableReport) string {
	var b strings.Builder
	for _, v := range tr.Verbs {
		b.WriteString(v.Error)
	}
	return b.String()
}
