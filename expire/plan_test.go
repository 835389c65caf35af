package expire

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/iceberg/spec"
)

// planTable: main 1 <- 2 <- 3 <- 4 (t=1000..4000), branch b at 6 <- 5 <- 2
// (t=6000, 5000), tag old at 1 with max-ref-age 500, tag keep at 2, and
// an unreferenced snapshot 7 (t=7000).
func planTable() *spec.TableMetadata {
	md := &spec.TableMetadata{Properties: map[string]string{}, Refs: map[string]spec.SnapshotRef{}}
	add := func(id, parent, ts int64) {
		s := spec.Snapshot{SnapshotID: id, TimestampMS: ts}
		if parent != 0 {
			s.ParentSnapshotID = &parent
		}
		md.Snapshots = append(md.Snapshots, s)
	}
	add(1, 0, 1000)
	add(2, 1, 2000)
	add(3, 2, 3000)
	add(4, 3, 4000)
	add(5, 2, 5000)
	add(6, 5, 6000)
	add(7, 0, 7000)
	cur := int64(4)
	md.CurrentSnapshotID = &cur
	md.Refs["main"] = spec.SnapshotRef{SnapshotID: 4, Type: spec.RefTypeBranch}
	md.Refs["b"] = spec.SnapshotRef{SnapshotID: 6, Type: spec.RefTypeBranch}
	age := int64(500)
	md.Refs["old"] = spec.SnapshotRef{SnapshotID: 1, Type: spec.RefTypeTag, MaxRefAgeMS: &age}
	md.Refs["keep"] = spec.SnapshotRef{SnapshotID: 2, Type: spec.RefTypeTag}
	return md
}

func TestPlanJavaRules(t *testing.T) {
	md := planTable()
	at := func(ms int64) *time.Time { v := time.UnixMilli(ms); return &v }
	for _, c := range []struct {
		name       string
		pol        Policy
		remove     []int64
		removeRefs []string
	}{
		// Cutoff 10000: main keeps 1 (its head), b keeps its head 6, tag
		// keep keeps 2; old tag is past its age; 7 is unreferenced and old.
		{"everything old", Policy{Now: time.UnixMilli(10000), OlderThan: at(10000)}, []int64{1, 3, 5, 7}, []string{"old"}},
		// retain-last 2: main keeps 4, 3; b keeps 6, 5.
		{"retain last 2", Policy{Now: time.UnixMilli(10000), OlderThan: at(10000), RetainLast: ptr(2)}, []int64{1, 7}, []string{"old"}},
		// Cutoff 3500: 4 of main is newer anyway; 5, 6 newer; 7 newer.
		{"cutoff 3500", Policy{Now: time.UnixMilli(10000), OlderThan: at(3500)}, []int64{1, 3}, []string{"old"}},
		{"ids only", Policy{Now: time.UnixMilli(10000), SnapshotIDs: []int64{3, 7}}, []int64{3, 7}, nil},
	} {
		p, err := NewPlan(md, c.pol)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := sorted(p.RemovedIDs())
		if !slices.Equal(got, c.remove) {
			t.Errorf("%s: removes %v, want %v", c.name, got, c.remove)
		}
		var refs []string
		for _, r := range p.RemoveRefs {
			refs = append(refs, r.Name)
		}
		if !slices.Equal(refs, c.removeRefs) {
			t.Errorf("%s: removes refs %v, want %v", c.name, refs, c.removeRefs)
		}
		if len(p.Remove)+len(p.Retain) != len(md.Snapshots) {
			t.Errorf("%s: plan does not partition the snapshots", c.name)
		}
	}
	// Per-branch policy: b keeps 3 snapshots whatever the defaults.
	md.Refs["b"] = spec.SnapshotRef{SnapshotID: 6, Type: spec.RefTypeBranch, MinSnapshotsToKeep: ptr(3)}
	p, _ := NewPlan(md, Policy{Now: time.UnixMilli(10000), OlderThan: at(10000)})
	if got := sorted(p.RemovedIDs()); !slices.Equal(got, []int64{1, 3, 7}) {
		t.Errorf("branch min-snapshots-to-keep: removes %v", got)
	}
	// main is never removed, however old; a head is never expired by id.
	md.Properties[PropMaxRefAgeMS] = "1"
	p, _ = NewPlan(md, Policy{Now: time.UnixMilli(100000)})
	if slices.ContainsFunc(p.RemoveRefs, func(r Ref) bool { return r.Name == "main" }) || slices.Contains(p.RemovedIDs(), 4) {
		t.Errorf("main expired: %+v", p)
	}
	if _, err := NewPlan(md, Policy{Now: time.UnixMilli(10000), SnapshotIDs: []int64{6}}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("expiring a branch head: %v", err)
	}
	if _, err := NewPlan(md, Policy{Now: time.UnixMilli(10000), SnapshotIDs: []int64{99}}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("unknown id: %v", err)
	}
	md.Properties[PropMinSnapshotsToKeep] = "x"
	if _, err := NewPlan(md, Policy{Now: time.UnixMilli(10000)}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("bad property: %v", err)
	}
}

// A claim's tags (iceberg/claim) keep no snapshot: expiry removes their
// snapshot and moves them to main's head, keeping the instant their lease
// ends; a tag past its lease is still not expired by age here.
func TestPlanMovesClaimTags(t *testing.T) {
	md := planTable()
	age := int64(9000) // lease ends at 1000 + 9000 = 10000
	for _, name := range []string{claim.RefName, claim.RefName + "-0123456789abcdef"} {
		md.Refs[name] = spec.SnapshotRef{SnapshotID: 1, Type: spec.RefTypeTag, MaxRefAgeMS: &age}
	}
	at := time.UnixMilli(10000)
	p, err := NewPlan(md, Policy{Now: time.UnixMilli(20000), OlderThan: &at})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.RemovedIDs(), 1) {
		t.Fatalf("removes %v: the claim tags kept snapshot 1", p.RemovedIDs())
	}
	for _, r := range p.RemoveRefs {
		if claim.IsRef(r.Name) {
			t.Errorf("claim tag %s removed by age", r.Name)
		}
	}
	got := &spec.TableMetadata{Refs: maps.Clone(md.Refs)}
	for _, u := range p.Updates(md) {
		switch u := u.(type) {
		case spec.SetSnapshotRef:
			got.Refs[u.RefName] = u.Ref
		case spec.RemoveSnapshotRef:
			delete(got.Refs, u.RefName)
		}
	}
	for _, name := range []string{claim.RefName, claim.RefName + "-0123456789abcdef"} {
		r, ok := got.Refs[name]
		if !ok || r.SnapshotID != 4 || r.MaxRefAgeMS == nil || 4000+*r.MaxRefAgeMS != 10000 {
			t.Errorf("claim tag %s after expiry: %+v (present %v), want on 4 ending at 10000", name, r, ok)
		}
	}
}

// TestPlanKeepsFlinkRestoreHistory: a Flink sink's restore walks main's
// history from the head to its job's newest commit, so expiry keeps that
// stretch (compactions committed on top while the job was stopped) and
// expires what lies below it as before; without a Flink commit in the
// history nothing more is kept.
func TestPlanKeepsFlinkRestoreHistory(t *testing.T) {
	md := planTable()
	// 2 is the Flink job's last commit; 3 and 4 are maintenance on top.
	md.Snapshots[1].Summary = map[string]string{FlinkCheckpointKey: "17", "flink.job-id": "j1", "flink.operator-id": "op"}
	at := func(ms int64) *time.Time { v := time.UnixMilli(ms); return &v }
	p, err := NewPlan(md, Policy{Now: time.UnixMilli(10000), OlderThan: at(10000)})
	if err != nil {
		t.Fatal(err)
	}
	// Without the rule: [1 3 5 7] (TestPlanJavaRules). main's 3 and branch
	// b's 5 lie between a head and the Flink commit 2.
	if got := sorted(p.RemovedIDs()); !slices.Equal(got, []int64{1, 7}) {
		t.Errorf("removes %v, want [1 7]", got)
	}
	for _, s := range p.Retain {
		if (s.SnapshotID == 3 || s.SnapshotID == 5) && s.Reason != ReasonFlinkRestore {
			t.Errorf("snapshot %d kept for %q, want %q", s.SnapshotID, s.Reason, ReasonFlinkRestore)
		}
	}
	// Expiring exactly the ids asked for is the operator's decision.
	p, err = NewPlan(md, Policy{Now: time.UnixMilli(10000), SnapshotIDs: []int64{3}})
	if err != nil {
		t.Fatal(err)
	}
	if got := sorted(p.RemovedIDs()); !slices.Equal(got, []int64{3}) {
		t.Errorf("ids only: removes %v, want [3]", got)
	}
}

// TestPlanFlinkRestoreWindow: a Flink commit older than the window (or a
// window of 0) keeps nothing more.
func TestPlanFlinkRestoreWindow(t *testing.T) {
	at := func(ms int64) *time.Time { v := time.UnixMilli(ms); return &v }
	for _, c := range []struct {
		window string
		remove []int64
	}{{"", []int64{1, 7}}, {"0", []int64{1, 3, 5, 7}}, {"7999", []int64{1, 3, 5, 7}}, {"8001", []int64{1, 7}}} {
		md := planTable()
		md.Snapshots[1].Summary = map[string]string{FlinkCheckpointKey: "17"}
		if c.window != "" {
			md.Properties[PropFlinkRestoreWindowMS] = c.window
		}
		p, err := NewPlan(md, Policy{Now: time.UnixMilli(10000), OlderThan: at(10000)})
		if err != nil {
			t.Fatal(err)
		}
		if got := sorted(p.RemovedIDs()); !slices.Equal(got, c.remove) {
			t.Errorf("window %q: removes %v, want %v", c.window, got, c.remove)
		}
	}
	md := planTable()
	md.Properties[PropFlinkRestoreWindowMS] = "-1"
	if _, err := NewPlan(md, Policy{Now: time.UnixMilli(10000)}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("window -1: %v, want ErrInvalidOptions", err)
	}
}
