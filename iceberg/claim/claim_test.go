package claim

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogtest"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/spec"
)

// clock is a settable time for lease tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func load(t testing.TB, cat catalog.Catalog, id catalog.Ident) *catalog.Table {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// Many goroutines, each with its own catalog connection, take and release
// one table's claim over and over: never two holders at once, and every
// take eventually succeeds.
func TestConcurrentTakers(t *testing.T) {
	forEach(t, func(t *testing.T, b backend) {
		id := newTable(t, b.open(t), 1)
		const takers, rounds = 6, 4
		var ex exclusive
		var wg sync.WaitGroup
		var taken atomic.Int32
		errs := make(chan error, takers)
		for range takers {
			cat := b.open(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				o := Options{Verb: "test", Wait: 2 * time.Minute, Poll: 5 * time.Millisecond}
				for range rounds {
					err := Do(context.Background(), cat, id, o, func(context.Context) error {
						ex.enter()
						defer ex.leave()
						taken.Add(1)
						time.Sleep(2 * time.Millisecond)
						return nil
					})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if m := ex.max.Load(); m != 1 {
			t.Errorf("at most %d holders at once, want 1", m)
		}
		if n := taken.Load(); n != takers*rounds {
			t.Errorf("%d claims taken, want %d", n, takers*rounds)
		}
		md := load(t, b.open(t), id).Metadata
		if s := read(md); s.mutex != nil || len(s.tokens) > 0 || md.Properties[Property] != "" {
			t.Errorf("claim left after every release: refs %v, property %q", md.Refs, md.Properties[Property])
		}
	})
}

// Separate processes take and release the claim: a marker file created
// exclusively while held proves no two held it at once.
func TestConcurrentProcesses(t *testing.T) {
	forEach(t, func(t *testing.T, b backend) {
		id := newTable(t, b.open(t), 1)
		marker := filepath.Join(t.TempDir(), "held")
		const procs = 4
		var cmds []*exec.Cmd
		for range procs {
			cmd := startChild(t, child{Config: b.cfg, Table: id.String(), Mode: "loop", Rounds: 3, Marker: marker})
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, cmd)
		}
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Errorf("child %d: %v (its stderr says why)", i, err)
			}
		}
		if exists(marker) {
			t.Error("marker left: a holder did not finish")
		}
	})
}

func TestHeldAndTakeoverAfterExpiry(t *testing.T) {
	forEach(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		cat := b.open(t)
		id := newTable(t, cat, 2)
		clk := &clock{now: time.Now()}
		a, err := Take(ctx, cat, id, Options{Owner: "host-a:1", Verb: "compact", Lease: time.Minute, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		if !a.Held() {
			t.Fatal("claim on a table with snapshots holds nothing")
		}
		clk.add(30 * time.Second)
		_, err = Take(ctx, cat, id, Options{Owner: "host-b:2", Lease: time.Minute, Now: clk.Now})
		var held *HeldError
		if !errors.As(err, &held) || !errors.Is(err, ErrHeld) {
			t.Fatalf("second take: %v, want a HeldError", err)
		}
		if held.Holder != "host-a:1" || held.Verb != "compact" || !held.Until.Equal(a.Info().Until) || held.Since.Unix() != a.Info().Since.Unix() {
			t.Errorf("held error %+v, want holder host-a:1, verb compact, until %s", held, a.Info().Until)
		}
		clk.add(31 * time.Second)
		bc, err := Take(ctx, cat, id, Options{Owner: "host-b:2", Lease: time.Minute, Now: clk.Now})
		if err != nil {
			t.Fatalf("take over an expired claim: %v", err)
		}
		// The first holder lost it: it can neither renew nor release.
		if err := a.Renew(ctx); !errors.Is(err, ErrLost) {
			t.Errorf("renew by the old holder: %v, want ErrLost", err)
		}
		if err := a.Release(ctx); !errors.Is(err, ErrLost) {
			t.Errorf("release by a non-holder: %v, want ErrLost", err)
		}
		info, err := Show(ctx, cat, id)
		if err != nil || info == nil || info.Owner != "host-b:2" || info.Token != bc.Info().Token {
			t.Fatalf("show after takeover: %+v, %v; want host-b:2's claim", info, err)
		}
		md := load(t, cat, id).Metadata
		if n := len(read(md).tokens); n != 1 {
			t.Errorf("%d token tags after takeover, want 1 (refs %v)", n, md.Refs)
		}
		if err := bc.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if info, err := Show(ctx, cat, id); err != nil || info != nil {
			t.Errorf("show after release: %+v, %v; want none", info, err)
		}
	})
}

func TestRenewKeepsTheClaim(t *testing.T) {
	ctx := context.Background()
	b := sqliteBackend(t)
	cat := b.open(t)
	id := newTable(t, cat, 1)
	clk := &clock{now: time.Now()}
	o := Options{Owner: "a", Lease: time.Minute, Now: clk.Now}
	a, err := Take(ctx, cat, id, o)
	if err != nil {
		t.Fatal(err)
	}
	clk.add(50 * time.Second)
	if err := a.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	clk.add(40 * time.Second) // 90s after the take: past the first lease, inside the renewed one
	if _, err := Take(ctx, cat, id, Options{Owner: "b", Now: clk.Now}); !errors.Is(err, ErrHeld) {
		t.Fatalf("take after renewal: %v, want ErrHeld", err)
	}
	clk.add(21 * time.Second)
	if _, err := Take(ctx, cat, id, Options{Owner: "b", Now: clk.Now}); err != nil {
		t.Fatalf("take after the renewed lease ended: %v", err)
	}
}

// A process SIGKILLed while it holds the claim: a taker on the same host
// takes it over at once, long before its lease ends; while it ran, the
// same taker was refused.
func TestKilledHolder(t *testing.T) {
	forEach(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		cat := b.open(t)
		id := newTable(t, cat, 1)
		cmd := holdInChild(t, b, id, time.Hour)
		_, err := Take(ctx, cat, id, Options{})
		var held *HeldError
		if !errors.As(err, &held) {
			t.Fatalf("take while the holder runs: %v, want a HeldError", err)
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		c, err := Take(ctx, cat, id, Options{})
		if err != nil {
			t.Fatalf("take right after the kill: %v, want the dead holder's claim taken over", err)
		}
		tk := c.TookOver()
		if tk == nil || tk.Previous.Owner != held.Holder || tk.Previous.Process == nil || tk.Previous.Process.PID != cmd.Process.Pid ||
			!strings.Contains(tk.Why, "no longer runs") {
			t.Fatalf("took over %+v, want %s's claim, whose holder no longer runs", tk, held.Holder)
		}
		if !c.Info().Since.Before(held.Until) {
			t.Errorf("taken at %s, not before the dead claim's lease ended at %s", c.Info().Since, held.Until)
		}
		if err := c.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// Do renews in the background: a claim with a lease much shorter than
// the work stays held throughout, and is released after.
func TestDoRenewsAndReleases(t *testing.T) {
	ctx := context.Background()
	b := sqliteBackend(t)
	cat := b.open(t)
	id := newTable(t, cat, 1)
	other := b.open(t)
	var tries, refused int
	err := Do(ctx, cat, id, Options{Owner: "worker", Lease: 4 * time.Second}, func(ctx context.Context) error {
		deadline := time.Now().Add(9 * time.Second)
		for time.Now().Before(deadline) {
			tries++
			if _, err := Take(ctx, other, id, Options{Owner: "other"}); errors.Is(err, ErrHeld) {
				refused++
			} else {
				return err
			}
			time.Sleep(200 * time.Millisecond)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if refused != tries {
		t.Errorf("%d of %d takes during the work were refused, want all", refused, tries)
	}
	if info, err := Show(ctx, cat, id); err != nil || info != nil {
		t.Errorf("claim after Do: %+v, %v; want released", info, err)
	}
	// fn's error is Do's, and the claim is released after it too.
	boom := errors.New("boom")
	if err := Do(ctx, cat, id, Options{}, func(context.Context) error { return boom }); err != boom {
		t.Errorf("Do = %v, want fn's error", err)
	}
	if info, _ := Show(ctx, cat, id); info != nil {
		t.Errorf("claim left after a failed fn: %+v", info)
	}
}

// A claim lost while fn runs (released by force) cancels fn's context.
func TestDoStopsWhenLost(t *testing.T) {
	ctx := context.Background()
	b := sqliteBackend(t)
	cat := b.open(t)
	id := newTable(t, cat, 1)
	err := Do(ctx, cat, id, Options{Lease: 900 * time.Millisecond}, func(ctx context.Context) error {
		if _, err := ForceRelease(ctx, b.open(t), id); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Minute):
			return errors.New("not stopped")
		}
	})
	if !errors.Is(err, ErrLost) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Do = %v, want ErrLost and the cancelled work", err)
	}
}

// A verb's commits and the claim's renewals race: both land through the
// conflict/retry path, no snapshot and no claim is lost.
func TestCommitsRaceRenewals(t *testing.T) {
	forEach(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		cat := b.open(t)
		id := newTable(t, cat, 1)
		c, err := Take(ctx, cat, id, Options{Owner: "holder"})
		if err != nil {
			t.Fatal(err)
		}
		const appends, renewals = 8, 8
		var wg sync.WaitGroup
		errs := make(chan error, appends+renewals)
		wg.Add(2)
		go func() {
			defer wg.Done()
			wcat := b.open(t)
			for i := range appends {
				sid := int64(1000 + i)
				build := func(_ context.Context, base *catalog.Table, _ int) (*commit.Attempt, error) {
					reqs, ups := catalogtest.AppendSnapshot(base.Metadata, sid)
					return &commit.Attempt{Requirements: reqs, Updates: ups}, nil
				}
				o := commit.DefaultOptions()
				o.NumRetries, o.MinWait = 20, time.Millisecond
				if _, err := commit.Run(ctx, wcat, load(t, wcat, id), build, o); err != nil {
					errs <- err
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range renewals {
				if err := c.Renew(ctx); err != nil {
					errs <- err
				}
			}
		}()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		md := load(t, cat, id).Metadata
		if n := len(md.Snapshots); n != 1+appends {
			t.Errorf("%d snapshots, want %d", n, 1+appends)
		}
		s := read(md)
		if s.mutex == nil || s.info.Token != c.Info().Token || s.info.Owner != "holder" {
			t.Errorf("claim after the race: %+v, refs %v; want the holder's", s.info, md.Refs)
		}
		if err := c.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// The claim's tags carry the lease as max-ref-age-ms from their snapshot,
// so Java's ref-age rule expires them when the lease ends.
func TestTagsCarryTheLease(t *testing.T) {
	ctx := context.Background()
	cat := sqliteBackend(t).open(t)
	id := newTable(t, cat, 3)
	c, err := Take(ctx, cat, id, Options{Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	md := load(t, cat, id).Metadata
	for _, name := range []string{RefName, tokenPrefix + c.Info().Token} {
		r, ok := md.Refs[name]
		if !ok || r.Type != spec.RefTypeTag || r.SnapshotID != *md.CurrentSnapshotID || r.MaxRefAgeMS == nil {
			t.Fatalf("tag %s = %+v (present %v), want a tag on main's head with max-ref-age-ms", name, r, ok)
		}
		snap, _ := md.SnapshotByID(r.SnapshotID)
		if got := time.UnixMilli(snap.TimestampMS + *r.MaxRefAgeMS); got.UnixMilli() != c.Info().Until.UnixMilli() {
			t.Errorf("tag %s expires at %s, want the lease's end %s", name, got, c.Info().Until)
		}
	}
	p, ok := decodeProperty(md.Properties[Property])
	if !ok || p.Token != c.Info().Token || p.Owner != DefaultOwner() {
		t.Errorf("property %q, want the holder's JSON", md.Properties[Property])
	}
}

// A table without snapshots cannot carry a tag: nothing is claimed and
// nothing is committed.
func TestNoSnapshotClaimsNothing(t *testing.T) {
	ctx := context.Background()
	cat := sqliteBackend(t).open(t)
	id := newTable(t, cat, 0)
	before := load(t, cat, id).MetadataLocation
	ran := false
	err := Do(ctx, cat, id, Options{}, func(context.Context) error { ran = true; return nil })
	if err != nil || !ran {
		t.Fatalf("Do on a table without snapshots: %v (ran %v)", err, ran)
	}
	if after := load(t, cat, id).MetadataLocation; after != before {
		t.Errorf("metadata changed from %s to %s", before, after)
	}
}

func TestForceRelease(t *testing.T) {
	ctx := context.Background()
	cat := sqliteBackend(t).open(t)
	id := newTable(t, cat, 1)
	if info, err := ForceRelease(ctx, cat, id); err != nil || info != nil {
		t.Fatalf("force release without a claim: %+v, %v", info, err)
	}
	c, err := Take(ctx, cat, id, Options{Owner: "stuck", Verb: "compact"})
	if err != nil {
		t.Fatal(err)
	}
	info, err := ForceRelease(ctx, cat, id)
	if err != nil || info == nil || info.Owner != "stuck" || info.Verb != "compact" {
		t.Fatalf("force release: %+v, %v; want the stuck claim", info, err)
	}
	md := load(t, cat, id).Metadata
	if s := read(md); s.mutex != nil || len(s.tokens) > 0 || md.Properties[Property] != "" {
		t.Errorf("claim left: refs %v", md.Refs)
	}
	if err := c.Renew(ctx); !errors.Is(err, ErrLost) {
		t.Errorf("renew after a forced release: %v, want ErrLost", err)
	}
	if _, err := Take(ctx, cat, id, Options{}); err != nil {
		t.Errorf("take after a forced release: %v", err)
	}
}

// Wait polls until the holder releases.
func TestWaitForRelease(t *testing.T) {
	ctx := context.Background()
	b := sqliteBackend(t)
	cat := b.open(t)
	id := newTable(t, cat, 1)
	a, err := Take(ctx, cat, id, Options{Owner: "a"})
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		a.Release(ctx)
		close(released)
	}()
	c, err := Take(ctx, b.open(t), id, Options{Owner: "b", Wait: time.Minute, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-released:
	default:
		t.Error("taken before the holder released")
	}
	c.Release(ctx)
	// A wait that runs out reports the holder and how long it waited.
	a, _ = Take(ctx, cat, id, Options{Owner: "a"})
	_, err = Take(ctx, cat, id, Options{Owner: "b", Wait: 50 * time.Millisecond, Poll: 10 * time.Millisecond})
	var held *HeldError
	if !errors.As(err, &held) || held.Waited != 50*time.Millisecond || held.Holder != "a" {
		t.Errorf("wait ran out: %v, want a HeldError naming a, waited 50ms", err)
	}
}

// Unchanged: a claim taken, renewed and released changes nothing a plan
// reads; a snapshot, a property or a ref committed beside it does.
func TestUnchanged(t *testing.T) {
	ctx := context.Background()
	b := sqliteBackend(t)
	cat := b.open(t)
	id := newTable(t, cat, 1)
	before := load(t, cat, id)
	c, err := Take(ctx, cat, id, Options{Owner: "me"})
	if err != nil {
		t.Fatal(err)
	}
	held := load(t, cat, id)
	if held.MetadataLocation == before.MetadataLocation || !Unchanged(before.Metadata, held.Metadata) {
		t.Fatalf("claim taken: moved %v, unchanged %v; want a new metadata file that changes nothing a plan reads",
			held.MetadataLocation != before.MetadataLocation, Unchanged(before.Metadata, held.Metadata))
	}
	if err := c.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if after := load(t, cat, id); !Unchanged(before.Metadata, after.Metadata) {
		t.Error("claim renewed and released: changed")
	}
	base := load(t, cat, id)
	for name, ups := range map[string][]spec.Update{
		"property": {spec.SetProperties{Updates: map[string]string{"write.target-file-size-bytes": "1000"}}},
		"branch":   {spec.SetSnapshotRef{RefName: "audit", Ref: spec.SnapshotRef{SnapshotID: *base.Metadata.CurrentSnapshotID, Type: spec.RefTypeBranch}}},
	} {
		if _, err := cat.CommitTable(ctx, base, nil, ups); err != nil {
			t.Fatal(err)
		}
		now := load(t, cat, id)
		if Unchanged(base.Metadata, now.Metadata) {
			t.Errorf("%s committed: unchanged", name)
		}
		base = now
	}
	reqs, ups := catalogtest.AppendSnapshot(base.Metadata, 999)
	if _, err := cat.CommitTable(ctx, base, reqs, ups); err != nil {
		t.Fatal(err)
	}
	if Unchanged(base.Metadata, load(t, cat, id).Metadata) {
		t.Error("snapshot appended: unchanged")
	}
}
