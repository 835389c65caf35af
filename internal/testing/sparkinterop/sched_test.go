package sparkinterop

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The package's tests all run in parallel (every top-level test calls
// t.Parallel), and work admits workers of them at a time, in an order of
// its own. Go's -test.parallel cannot do this: a parallel test holds its
// place while it waits for a corpus table's link (a table's copies are
// used one at a time, lockFile), and the order in which paused tests
// resume is the runtime's. Before (docs/bench/tests.md, 2026-12-07), each
// top-level test waited for the one before it to end, its last subtests
// running alone beside idle sessions, and a test waiting for a table held
// one of the four places.

// workers is how many tests work at a time: a test alternates between
// its Spark requests and icectl's processes, so that with four both
// Spark sessions (sparkSessions) have a request most of the time.
const workers = 4

// firstTests are the tests whose subtests hold the corpus tables most of
// the package's time (several checkouts of one table, one after
// another; the publish tests two per table within one subtest): they
// start first, so that the package ends soon after its longest chain of
// one table's checkouts. Tests not listed (those on tables of their own)
// fill in last, in the order they asked.
var firstTests = []string{
	"TestPublishVersusSpark",
	"TestMoveCorpusTable",
	"TestSortRewriteBesideSpark",
	"TestHiveMigratedPartitions",
	"TestMaintain",
	"TestUpgrade",
	"TestRewritePositionDeletes",
	"TestDeleteRowsWithSpark",
	"TestCompactOutputSpec",
}

var sched = newWorkGate(workers)

func newWorkGate(n int) *workGate {
	return &workGate{free: n, held: map[string]string{}, tables: map[string]bool{}, corpusLoaded: make(chan struct{})}
}

// workGate admits tests to work: the highest priority waiter whose table
// no admitted test of this process holds, first come first served among
// equals.
type workGate struct {
	mu      sync.Mutex
	free    int
	seq     int
	held    map[string]string // the admitted tests' tables, by test name
	tables  map[string]bool   // corpus tables an admitted test holds
	waiting []*workWaiter
	// The gate opens once every test has asked: those on the corpus ask
	// only after it is loaded (loadCorpus), and would otherwise find the
	// places taken by the tests of their own tables.
	opening       sync.Once
	open          bool
	corpusLoading atomic.Bool   // a test began to load the corpus
	corpusLoaded  chan struct{} // closed when it is loaded (or failed to)
}

type workWaiter struct {
	prio, seq int
	table     string // "" when the test uses no corpus table
	ready     chan struct{}
}

// work blocks until t may work, holding table (a corpus table's name, or
// "") for it, and lets the next test in when t ends. A test calls it
// before its deadline starts (the wait may be minutes); a test admitted
// once, or within an admitted test, is not admitted again.
func work(t *testing.T, table string) {
	t.Helper()
	sched.work(t, table)
}

func (g *workGate) work(t *testing.T, table string) {
	t.Helper()
	g.mu.Lock()
	if have, ok := g.held[t.Name()]; ok {
		g.mu.Unlock()
		if have != table {
			t.Fatalf("%s asks to work on corpus table %q, admitted with %q: a test works on one table, named when it starts", t.Name(), table, have)
		}
		return
	}
	// A subtest of an admitted test works in its parent's place, on its
	// table (the two checkouts of one table in TestPublishVersusSpark's
	// subtests, one after the other, with no other test between them).
	for name, have := range g.held {
		if strings.HasPrefix(t.Name(), name+"/") {
			g.mu.Unlock()
			if have != table {
				t.Fatalf("%s asks to work on corpus table %q within %s, admitted with %q", t.Name(), table, name, have)
			}
			return
		}
	}
	g.seq++
	w := &workWaiter{prio: priority(t.Name()), seq: g.seq, table: table, ready: make(chan struct{})}
	g.waiting = append(g.waiting, w)
	g.opening.Do(func() { go g.openSoon() })
	g.admit()
	g.mu.Unlock()
	<-w.ready
	g.mu.Lock()
	g.held[t.Name()] = table
	g.mu.Unlock()
	t.Cleanup(func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		delete(g.held, t.Name())
		delete(g.tables, w.table)
		g.free++
		g.admit()
	})
}

// openSoon opens the gate when the tests have asked: a second after the
// first asked, or, when a test is loading the corpus by then, a second
// after it is loaded (the parallel tests all start at once, and ask within
// milliseconds of it).
func (g *workGate) openSoon() {
	time.Sleep(time.Second)
	if g.corpusLoading.Load() {
		<-g.corpusLoaded
		time.Sleep(time.Second)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = true
	g.admit()
}

// admit lets in waiters while places are free and the gate is open; g.mu
// is held.
func (g *workGate) admit() {
	for g.open && g.free > 0 {
		slices.SortFunc(g.waiting, func(a, b *workWaiter) int {
			if a.prio != b.prio {
				return b.prio - a.prio
			}
			return a.seq - b.seq
		})
		i := slices.IndexFunc(g.waiting, func(w *workWaiter) bool { return w.table == "" || !g.tables[w.table] })
		if i < 0 {
			return
		}
		w := g.waiting[i]
		g.waiting = slices.Delete(g.waiting, i, i+1)
		if w.table != "" {
			g.tables[w.table] = true
		}
		g.free--
		close(w.ready)
	}
}

// priority is the rank of a test's top-level test in firstTests, higher
// first; 0 when it is not listed.
func priority(name string) int {
	top, _, _ := strings.Cut(name, "/")
	if i := slices.Index(firstTests, top); i >= 0 {
		return len(firstTests) - i
	}
	return 0
}

// TestWorkGate: at most its places work at once, never two tests on one
// table, and subtests work in their parent's place.
func TestWorkGate(t *testing.T) {
	t.Parallel()
	g := newWorkGate(2)
	var mu sync.Mutex
	working, most := 0, 0
	tables := map[string]int{}
	var order []string
	busy := func(t *testing.T, table string) {
		mu.Lock()
		working++
		most = max(most, working)
		tables[table]++
		if table != "" && tables[table] > 1 {
			t.Errorf("two tests work on table %s", table)
		}
		order = append(order, t.Name())
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		working--
		tables[table]--
		mu.Unlock()
	}
	t.Run("group", func(t *testing.T) {
		for i, table := range []string{"a", "a", "b", "", "", "a"} {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				g.work(t, table)
				busy(t, table)
			})
		}
		t.Run("nested", func(t *testing.T) {
			t.Parallel()
			g.work(t, "b")
			for i := range 2 {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					g.work(t, "b") // the parent's place
					busy(t, "b")
				})
			}
		})
	})
	if most != 2 {
		t.Errorf("%d tests worked at once, want the gate's 2", most)
	}
	if len(order) != 8 {
		t.Errorf("%d tests worked, want 8: %v", len(order), order)
	}
}
