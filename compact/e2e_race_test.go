package compact_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/plan"
)

// racesEnv overrides the number of races (default 50, the figure).
const racesEnv = "ICECTL_COMPACT_RACES"

// hookCatalog runs hook once, just before the first commit attempt that
// goes through it: the writer lands between the compactor's rewrite and its
// commit.
type hookCatalog struct {
	catalog.Catalog
	once sync.Once
	hook func()
}

func (h *hookCatalog) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	h.once.Do(h.hook)
	return h.Catalog.CommitTable(ctx, t, reqs, ups)
}

// Ways the writer races the compactor.
const (
	raceBeforeExecute = iota // after PlanTable, before Execute reads anything
	raceBeforeCommit         // after the rewrite, before the compactor's first commit
	raceConcurrent           // in another goroutine, at a random moment
	raceModes
)

// TestCompactConcurrentWriterRaces runs seeded races in which a writer
// deletes rows (v2: position deletes, partition- or file-scoped; v3: DVs
// merged with the file's existing DV), drops whole data files and appends
// while a compaction runs. After each: no deleted row is back, no row is
// lost, and every group's status agrees with what the writer committed
// before the group's commit.
func TestCompactConcurrentWriterRaces(t *testing.T) {
	n := 50
	if v := os.Getenv(racesEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", racesEnv, v)
		}
	}
	stats := map[string]int{}
	ran := 0
	for i := range n {
		t.Run(fmt.Sprintf("race%02d", i), func(t *testing.T) {
			ran++
			for status, k := range runRace(t, uint64(i)) {
				stats[status] += k
			}
		})
	}
	t.Logf("group statuses over %d races: %v", ran, stats)
	// The races must exercise every path, or they prove nothing.
	for _, s := range []string{compact.StatusCommitted, compact.StatusRebased, compact.StatusDropped} {
		if ran >= 20 && stats[s] == 0 {
			t.Errorf("no group was %s in %d races", s, ran)
		}
	}
}

func runRace(t *testing.T, seed uint64) map[string]int {
	rng := rand.New(rand.NewPCG(seed, 0x7ace))
	version := 2 + int(seed%2)
	f := newFixture(t, version, seed, smallFiles)
	parts := f.partitions(1 + rng.IntN(2))
	f.must(f.appendFiles(parts, 6, 15))
	f.must(f.appendFiles(parts, 4, 15))
	delKinds := []deleteKind{delPartitionPos, delFilePos}
	if version == 3 {
		delKinds = []deleteKind{delDV}
	}
	if rng.IntN(2) == 0 {
		f.must(f.deleteIDs(delKinds[rng.IntN(len(delKinds))], f.pickLive(5)))
	}
	startEvents := len(f.events)

	opts := compact.Options{Plan: plan.Options{RewriteAll: true}, MaxConcurrentGroups: 2, Commit: f.copts,
		PartialProgress: rng.IntN(2) == 0}
	if rng.IntN(2) == 0 {
		// Several groups per partition.
		opts.Plan.MaxFileGroupSize = 3 * f.avgDataFileSize()
	}
	base := f.tbl
	p, err := compact.PlanTable(f.ctx, base, opts)
	if err != nil {
		t.Fatal(err)
	}

	// The writer's actions are drawn before the race starts, so the seed
	// alone decides them.
	type action struct {
		kind int // 0 delete rows, 1 drop a file, 2 append
		del  deleteKind
		n    int
	}
	var actions []action
	for range 1 + rng.IntN(3) {
		// Deletes are the likeliest: 3 in 6, drops 1 in 6, appends 2 in 6.
		a := action{kind: [6]int{0, 0, 0, 1, 2, 2}[rng.IntN(6)], del: delKinds[rng.IntN(len(delKinds))], n: 1 + rng.IntN(6)}
		actions = append(actions, a)
	}
	wrng := rand.New(rand.NewPCG(seed, 0x3)) // the writer's own picks
	writerErr := make(chan error, 1)
	writer := func() {
		for _, a := range actions {
			var err error
			switch a.kind {
			case 0:
				f.rng = wrng
				err = f.deleteIDs(a.del, f.pickLive(a.n))
			case 1:
				// After a compaction one file may hold every row: dropping
				// it empties the table.
				f.rng = wrng
				if id := f.pickLive(1); len(id) == 1 {
					err = f.dropFile(id[0])
				}
			case 2:
				f.reload()
				err = f.appendFiles(parts[:1], 1, 10)
			}
			if err != nil {
				writerErr <- err
				return
			}
		}
		writerErr <- nil
	}
	mode := rng.IntN(raceModes)
	cat := catalog.Catalog(f.cat)
	var wg sync.WaitGroup
	switch mode {
	case raceBeforeExecute:
		writer()
	case raceBeforeCommit:
		cat = &hookCatalog{Catalog: f.cat, hook: writer}
	case raceConcurrent:
		delay := time.Duration(rng.IntN(40)) * time.Millisecond
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(delay)
			writer()
		}()
	}
	rep, err := compact.Execute(f.ctx, cat, base, p, opts)
	wg.Wait()
	select {
	case werr := <-writerErr:
		if werr != nil {
			t.Fatalf("writer (mode %d): %v", mode, werr)
		}
	default:
		if mode != raceBeforeCommit {
			t.Fatal("writer did not run")
		}
		// Every group was dropped before any commit: run it now so the
		// model and table agree on the writer's actions.
		writer()
		if werr := <-writerErr; werr != nil {
			t.Fatal(werr)
		}
	}
	if err != nil {
		t.Fatalf("execute (mode %d, partial %v): %v", mode, opts.PartialProgress, err)
	}
	t.Logf("v%d mode %d partial %v: %d groups, writer %v", version, mode, opts.PartialProgress, len(p.Groups), actions)

	stats := checkStatuses(t, f, p, rep, f.events[startEvents:])
	checkConsistent(t, f)
	checkModel(t, f, icebergGo(t, f, false))
	return stats
}

// avgDataFileSize is the mean size of the live data files.
func (f *fixture) avgDataFileSize() int64 {
	snap := f.tbl.Metadata.CurrentSnapshot()
	var n, size int64
	for k, v := range snap.Summary {
		switch k {
		case "total-data-files":
			n, _ = strconv.ParseInt(v, 10, 64)
		case "total-files-size":
			size, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if n == 0 {
		return 1
	}
	return size / n
}

// checkStatuses compares each group's reported status with the writer's
// commits that came before the group's own commit (by sequence number):
//   - committed: no earlier writer commit deleted rows of its inputs or
//     removed one;
//   - rebased: some earlier writer commit added deletes in its partition,
//     and none removed an input;
//   - dropped: the writer removed one of its inputs.
func checkStatuses(t *testing.T, f *fixture, p *plan.Plan, rep *compact.Report, events []writeEvent) map[string]int {
	t.Helper()
	md := f.reload().Metadata
	seq := func(id int64) int64 {
		s, ok := md.SnapshotByID(id)
		if !ok {
			t.Fatalf("snapshot %d is not in the table", id)
		}
		return s.SequenceNumber
	}
	groups := map[string]plan.Group{}
	for _, g := range p.Groups {
		groups[g.ID] = g
	}
	stats := map[string]int{}
	if len(rep.Groups) != len(p.Groups) {
		t.Errorf("report has %d groups, the plan %d", len(rep.Groups), len(p.Groups))
	}
	for _, r := range rep.Groups {
		stats[r.Status]++
		g, ok := groups[r.ID]
		if !ok {
			t.Errorf("report group %s is not in the plan", r.ID)
			continue
		}
		inputs := map[string]bool{}
		for _, in := range g.Inputs {
			inputs[in.Path] = true
		}
		part := fmt.Sprintf("%d/%v", g.SpecID, []any(g.PartitionTuple))
		var limit int64 = 1 << 62
		if r.SnapshotID != 0 {
			limit = seq(r.SnapshotID)
		}
		var touched, scoped, removed bool
		for _, ev := range events {
			if seq(ev.snapshotID) >= limit {
				continue
			}
			touched = touched || slices.ContainsFunc(ev.touched, func(p string) bool { return inputs[p] })
			scoped = scoped || slices.Contains(ev.parts, part)
			removed = removed || slices.ContainsFunc(ev.removed, func(p string) bool { return inputs[p] })
		}
		switch r.Status {
		case compact.StatusCommitted:
			if touched || removed {
				t.Errorf("group %s committed although the writer deleted rows of its inputs (%v) or removed one (%v) first", r.ID, touched, removed)
			}
		case compact.StatusRebased:
			if !scoped || removed {
				t.Errorf("group %s rebased: earlier writer deletes in its partition %v, inputs removed %v", r.ID, scoped, removed)
			}
		case compact.StatusDropped:
			if !removed {
				t.Errorf("group %s dropped but the writer removed none of its inputs (%s)", r.ID, r.Reason)
			}
		default:
			t.Errorf("group %s: %s (%s)", r.ID, r.Status, r.Reason)
		}
		if (r.Status == compact.StatusCommitted || r.Status == compact.StatusRebased) && r.SnapshotID == 0 {
			t.Errorf("group %s %s without a snapshot id", r.ID, r.Status)
		}
	}
	return stats
}
