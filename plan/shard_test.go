package plan

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAssignBalancesBytes: every group goes to exactly one shard, the
// split depends only on the groups (the same in every worker), and no
// shard carries more bytes than the least loaded one plus one group: the
// greedy split's bound, which a split by count does not meet when sizes
// differ.
func TestAssignBalancesBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 24))
	for trial := range 200 {
		groups := make([]Group, 1+rng.IntN(60))
		var largest int64
		for i := range groups {
			groups[i].InputBytes = 1 + rng.Int64N(1<<30)
			if rng.IntN(4) == 0 {
				groups[i].InputBytes = groups[max(i-1, 0)].InputBytes // ties
			}
			largest = max(largest, groups[i].InputBytes)
		}
		n := 1 + rng.IntN(8)
		got := Assign(groups, n)
		if again := Assign(slices.Clone(groups), n); !slices.Equal(got, again) {
			t.Fatalf("trial %d: two assignments of the same groups differ", trial)
		}
		load := make([]int64, n)
		for i, s := range got {
			if s < 0 || s >= n {
				t.Fatalf("trial %d: group %d in shard %d of %d", trial, i, s, n)
			}
			load[s] += groups[i].InputBytes
		}
		if hi, lo := slices.Max(load), slices.Min(load); len(groups) >= n && hi-lo > largest {
			t.Errorf("trial %d: shards of %v bytes: spread %d exceeds the largest group %d", trial, load, hi-lo, largest)
		}
	}
	// Sizes 8, 5, 4, 3 in two shards: greedy gives {8, 3} and {5, 4}.
	got := Assign([]Group{{InputBytes: 3}, {InputBytes: 8}, {InputBytes: 4}, {InputBytes: 5}}, 2)
	if want := []int{0, 0, 1, 1}; !slices.Equal(got, want) {
		t.Errorf("Assign = %v, want %v", got, want)
	}
}

// TestPlanID: the id is the plan's: the same document gives the same id,
// a plan of another base snapshot, table, time, options or groups another.
func TestPlanID(t *testing.T) {
	p := Plan{Format: DocumentFormat, TableRef: TableRef{UUID: "u", Name: "db.t", MetadataLocation: "m1"}, Branch: "main",
		Base: &BaseSnapshot{SnapshotID: 1, SequenceNumber: 2}, Groups: []Group{{ID: "a"}, {ID: "b"}}}
	id := p.ID()
	if len(id) != 16 {
		t.Errorf("id %q: want 16 hex digits", id)
	}
	same := p
	same.Groups = slices.Clone(p.Groups)
	if same.ID() != id {
		t.Error("the same plan, another id")
	}
	for name, change := range map[string]func(*Plan){
		"base":     func(q *Plan) { q.Base = &BaseSnapshot{SnapshotID: 9, SequenceNumber: 2} },
		"table":    func(q *Plan) { q.TableRef.UUID = "v" },
		"name":     func(q *Plan) { q.TableRef.Name = "db.t2" },
		"metadata": func(q *Plan) { q.TableRef.MetadataLocation = "m2" },
		"time":     func(q *Plan) { q.CreatedAt = q.CreatedAt.Add(1) },
		"groups":   func(q *Plan) { q.Groups = []Group{{ID: "a"}} },
		"options":  func(q *Plan) { q.Options.TargetFileSize = 1 },
		"sort":     func(q *Plan) { q.Sort = true },
		"branch":   func(q *Plan) { q.Branch = "dev" },
	} {
		q := p
		change(&q)
		if q.ID() == id {
			t.Errorf("another %s, the same id", name)
		}
	}
}
