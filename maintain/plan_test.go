package maintain

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/iceberg/spec"
)

var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// state is a table of format v with the given findings and counts.
func state(t *testing.T, name string, v int, props map[string]string, edit func(*TableState)) TableState {
	t.Helper()
	r, err := (&Policy{}).Resolve(ident(name), props)
	if err != nil {
		t.Fatal(err)
	}
	th, _ := health.ThresholdsFor(&spec.TableMetadata{})
	st := TableState{Ident: ident(name), FormatVersion: v, Policy: r, MetadataLocation: "s3://b/" + name + "/v1.metadata.json",
		Health: health.Report{Thresholds: thresholds(th, r), Findings: []health.Finding{}}}
	if edit != nil {
		edit(&st)
	}
	return st
}

func finding(kinds ...string) func(*TableState) {
	return func(st *TableState) {
		for _, k := range kinds {
			st.Health.Findings = append(st.Health.Findings, health.Finding{Kind: k})
		}
	}
}

func smallFiles(n int) func(*TableState) {
	return func(st *TableState) {
		finding("small-files")(st)
		st.Health.Partitions = append(st.Health.Partitions, health.Partition{Data: health.FileStats{SmallFiles: n}})
		st.SmallBytes = int64(n) << 10
	}
}

func dueVerbs(tp *TablePlan) string {
	var vs []string
	for _, d := range tp.Due {
		vs = append(vs, d.Verb)
	}
	return strings.Join(vs, ",")
}

func TestPlanDueVerbs(t *testing.T) {
	states := []TableState{
		state(t, "db.healthy", 2, nil, nil),
		state(t, "db.small", 2, nil, smallFiles(20)),
		state(t, "db.v3pos", 3, nil, func(st *TableState) {
			st.Health.Deletes.Position = health.KindStats{Count: 4, Bytes: 400}
			smallFiles(6)(st)
			finding("small-manifests")(st)
			st.Health.Manifests = health.ManifestStats{Count: 12, SmallManifests: 12, Bytes: 1200}
			st.ExpireSnapshots = 3
		}),
		state(t, "db.v2pos", 2, nil, func(st *TableState) {
			st.Health.Deletes.Position = health.KindStats{Count: 7, Bytes: 700}
			st.PositionDeletes = PosDeleteDebt{Files: 6, Partitions: 1, Dangling: 1, Bytes: 600}
		}),
		// Partition-scoped deletes past the ratio: compaction's planner
		// would not count them, so compaction is not due for them.
		state(t, "db.v2scoped", 2, nil, func(st *TableState) {
			finding("delete-ratio")(st)
			st.Health.Deletes.Position = health.KindStats{Count: 2, Bytes: 200}
		}),
		state(t, "db.v2heavy", 2, nil, func(st *TableState) {
			finding("delete-ratio")(st)
			st.V2DeleteHeavy, st.DeleteBytes = 2, 2<<20
		}),
		state(t, "db.v2both", 2, nil, func(st *TableState) {
			st.V2DeleteHeavy = 1
			st.PositionDeletes = PosDeleteDebt{Files: 5, Partitions: 1, Bytes: 500}
		}),
		state(t, "db.v2off", 2, nil, func(st *TableState) {
			off := false
			st.Policy, _ = (&Policy{Flags: Settings{RewritePositionDeletes: PosDeleteSettings{Enabled: &off}}}).Resolve(st.Ident, nil)
			st.PositionDeletes = PosDeleteDebt{Files: 5, Partitions: 1, Bytes: 500}
		}),
		// Equality deletes are resolved, not compacted: into position
		// deletes on v2, into DVs by dv merge on v3; with that verb off,
		// compaction applies them.
		state(t, "db.v2eq", 2, nil, func(st *TableState) {
			finding("equality-deletes")(st)
			st.Health.Deletes.Equality = health.KindStats{Count: 3, Bytes: 300}
		}),
		state(t, "db.v3eq", 3, nil, finding("equality-deletes")),
		state(t, "db.v3eqoff", 3, nil, func(st *TableState) {
			off := false
			st.Policy, _ = (&Policy{Flags: Settings{DVMerge: Switch{Enabled: &off}}}).Resolve(st.Ident, nil)
			finding("equality-deletes")(st)
		}),
		state(t, "db.v2eqoff", 2, nil, func(st *TableState) {
			off := false
			st.Policy, _ = (&Policy{Flags: Settings{RewriteEqualityDeletes: Switch{Enabled: &off}}}).Resolve(st.Ident, nil)
			finding("equality-deletes")(st)
		}),
		state(t, "db.v1small", 1, nil, smallFiles(9)),
		state(t, "db.multidv", 3, nil, func(st *TableState) { st.MultiDVFiles = 1 }),
		state(t, "db.nogc", 2, map[string]string{PropGCEnabled: "false"}, func(st *TableState) { st.ExpireSnapshots = 5 }),
		state(t, "db.resurrected", 3, nil, func(st *TableState) {
			finding("resurrected-rows")(st)
			st.Health.Resurrected.Rows = 2
		}),
		{Ident: ident("db.broken"), Err: errors.New("load: boom")},
	}
	p := NewPlan(states, testNow)
	got := map[string]string{}
	for _, tp := range slices.Concat(p.Due, p.Healthy) {
		got[tp.Table] = dueVerbs(tp)
	}
	want := map[string]string{
		"db.healthy": "", "db.small": "compact", "db.v3pos": "dv-merge,compact,rewrite-manifests,expire",
		"db.v2pos": "rewrite-position-deletes", "db.v2scoped": "", "db.v2heavy": "compact", "db.v2both": "compact,rewrite-position-deletes",
		"db.v2off": "", "db.v2eq": "rewrite-equality-deletes", "db.v3eq": "dv-merge", "db.v2eqoff": "compact", "db.v3eqoff": "compact", "db.v1small": "", "db.multidv": "dv-merge", "db.nogc": "", "db.resurrected": "",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("due verbs\n got %v\nwant %v", got, want)
	}
	for _, tp := range p.Due {
		for _, d := range tp.Due {
			switch {
			case tp.Table == "db.v2pos" && (d.EstimatedBytes != 600 || d.Reason != "6 position-delete files below 64.0 MiB (67108864 bytes) in partitions with 5 or more; 1 position-delete files that apply to no live data file"):
				t.Errorf("db.v2pos: %+v", d)
			case tp.Table == "db.v2eq" && (d.EstimatedBytes != 300 || d.Reason != "3 equality delete files (v2: converted into position deletes)"):
				t.Errorf("db.v2eq: %+v", d)
			case tp.Table == "db.v2heavy" && (d.EstimatedBytes != 2<<20 || !strings.Contains(d.Reason, "2 data files with 30% or more of their rows deleted")):
				t.Errorf("db.v2heavy: %+v", d)
			}
		}
	}
	if len(p.Failed) != 1 || p.Failed[0].Table != "db.broken" {
		t.Errorf("failed: %+v", p.Failed)
	}
	for _, tp := range p.Healthy {
		switch tp.Table {
		case "db.nogc":
			if len(tp.Off) != 1 || !strings.Contains(tp.Off[0].Reason, "gc.enabled=false") {
				t.Errorf("db.nogc off: %+v", tp.Off)
			}
		case "db.v2off":
			if len(tp.Off) != 1 || tp.Off[0].Verb != VerbRewritePositionDeletes || !strings.Contains(tp.Off[0].Reason, "off by flag") {
				t.Errorf("db.v2off off: %+v", tp.Off)
			}
		case "db.v1small":
			if len(tp.Off) != 1 || !strings.Contains(tp.Off[0].Reason, "upgrade db.v1small --to 2") {
				t.Errorf("db.v1small off: %+v", tp.Off)
			}
		case "db.resurrected":
			if len(tp.Attention) != 1 || !strings.Contains(tp.Attention[0], "--repair-resurrected") {
				t.Errorf("db.resurrected attention: %+v", tp.Attention)
			}
		}
	}
	// Orphan removal is due only where the policy enables it.
	on := true
	pol := &Policy{Flags: Settings{Orphan: OrphanSettings{Enabled: &on}}}
	st := state(t, "db.healthy", 2, nil, nil)
	st.Policy, _ = pol.Resolve(st.Ident, nil)
	if p := NewPlan([]TableState{st}, testNow); len(p.Due) != 1 || dueVerbs(p.Due[0]) != "orphan" {
		t.Errorf("orphan enabled: %+v", p.Due)
	}
}

// TestPlanOrder: the debt class first, then the longest since last
// maintained, then the name; the same states in any order give the same
// plan.
func TestPlanOrder(t *testing.T) {
	states := []TableState{
		state(t, "db.a", 2, nil, smallFiles(6)),                                        // class 3
		state(t, "db.b", 2, nil, smallFiles(7)),                                        // class 3
		state(t, "db.huge", 2, nil, smallFiles(100000)),                                // class 17
		state(t, "db.c", 2, nil, smallFiles(5)),                                        // class 3
		state(t, "db.recent", 2, nil, smallFiles(6)),                                   // class 3, maintained recently
		state(t, "db.old", 2, nil, smallFiles(6)),                                      // class 3, maintained long ago
		state(t, "db.mid", 2, nil, smallFiles(40)),                                     // class 6
		state(t, "db.expire", 2, nil, func(st *TableState) { st.ExpireSnapshots = 2 }), // class 2
	}
	states[4].LastMaintainedMS = testNow.Add(-time.Hour).UnixMilli()
	states[5].LastMaintainedMS = testNow.Add(-30 * 24 * time.Hour).UnixMilli()
	want := "db.huge db.mid db.a db.b db.c db.old db.recent db.expire"
	var first []byte
	for i := range 5 {
		shuffled := slices.Clone(states)
		slices.Reverse(shuffled[:i+1])
		p := NewPlan(shuffled, testNow)
		var names []string
		for _, tp := range p.Due {
			names = append(names, tp.Table)
		}
		if got := strings.Join(names, " "); got != want {
			t.Fatalf("order %s, want %s", got, want)
		}
		js, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = js
		} else if string(js) != string(first) {
			t.Fatalf("plan differs with the input order:\n%s\n%s", js, first)
		}
	}
}
