package claim

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeProcs is a host's processes as a test sets them.
type fakeProcs struct {
	self   Process
	booted time.Time

	mu      sync.Mutex
	running map[int]uint64 // pid → start time
	err     error          // what Started says of a running pid, when set
}

func (f *fakeProcs) Self() Process     { return f.self }
func (f *fakeProcs) Booted() time.Time { return f.booted }
func (f *fakeProcs) Started(pid int) (uint64, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	start, ok := f.running[pid]
	if ok && f.err != nil {
		return 0, false, f.err
	}
	return start, ok, nil
}

func (f *fakeProcs) set(pid int, start uint64, running bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if running {
		f.running[pid] = start
	} else {
		delete(f.running, pid)
	}
}

const (
	bootA = "9f1c0000-0000-4000-8000-00000000000a"
	bootB = "9f1c0000-0000-4000-8000-00000000000b"
	nsA   = "pid:[4026531836]"
)

// host is a fake host "h1" in boot bootA, pid namespace nsA, booted at
// booted, on which this process is pid 100.
func host(booted time.Time) *fakeProcs {
	return &fakeProcs{self: Process{Host: "h1", PID: 100, BootID: bootA, PIDNS: nsA, Start: 5000}, booted: booted,
		running: map[int]uint64{100: 5000}}
}

func TestHolderGone(t *testing.T) {
	booted := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	holder := func(edit func(p *Process)) Info {
		p := Process{Host: "h1", PID: 42, BootID: bootA, PIDNS: nsA, Start: 700}
		if edit != nil {
			edit(&p)
		}
		return Info{Owner: "h1:42", Since: booted.Add(time.Hour), Renewed: booted.Add(2 * time.Hour), Process: &p}
	}
	cases := []struct {
		name    string
		info    Info
		running map[int]uint64
		err     error
		self    func(p *Process)
		want    string // "" : not gone, else a part of why
	}{
		{name: "dead on this host", info: holder(nil), want: "its holder h1:42 no longer runs"},
		{name: "alive on this host", info: holder(nil), running: map[int]uint64{42: 700}},
		{name: "pid reused", info: holder(nil), running: map[int]uint64{42: 701}, want: "pid 42 is now another process's"},
		{name: "start time unreadable", info: holder(nil), running: map[int]uint64{42: 700}, err: errors.New("permission denied")},
		{name: "another host", info: holder(func(p *Process) { p.Host = "h2" })},
		{name: "another pid namespace", info: holder(func(p *Process) { p.PIDNS = "pid:[4026532001]" })},
		{name: "no pid namespace recorded", info: holder(func(p *Process) { p.PIDNS = "" })},
		{name: "no process recorded", info: Info{Owner: "h1:42", Since: booted.Add(time.Hour)}},
		{name: "no boot id recorded", info: holder(func(p *Process) { p.BootID = "" })},
		{name: "this OS tells no boot id", info: holder(nil), self: func(p *Process) { p.BootID, p.PIDNS, p.Start = "", "", 0 }},
		{name: "renewed before this host rebooted", want: "h1 rebooted at 2026-12-07T12:00:00Z",
			info: func() Info {
				i := holder(func(p *Process) { p.BootID = bootB })
				i.Since, i.Renewed = booted.Add(-2*time.Hour), booted.Add(-time.Minute)
				return i
			}()},
		{name: "taken before a reboot, no renewal recorded", want: "rebooted",
			info: func() Info {
				i := holder(func(p *Process) { p.BootID = bootB })
				i.Since, i.Renewed = booted.Add(-time.Minute), time.Time{}
				return i
			}()},
		// Renewed after this host booted, in another boot: a second
		// machine with the same host name, alive as far as we know.
		{name: "another boot renewed since", info: holder(func(p *Process) { p.BootID = bootB })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := host(booted)
			for pid, start := range c.running {
				p.set(pid, start, true)
			}
			p.err = c.err
			if c.self != nil {
				c.self(&p.self)
			}
			why, gone := HolderGone(c.info, p)
			if gone != (c.want != "") || !strings.Contains(why, c.want) {
				t.Errorf("HolderGone = %q, %v; want gone %v with %q", why, gone, c.want != "", c.want)
			}
		})
	}
}

// Takers on one host, their processes injected: a live holder blocks, a
// dead one or one whose pid another process now has is taken over at
// once, and a holder on another host blocks until its lease ends even
// when a process of this host had its pid.
func TestTakeOverGoneHolder(t *testing.T) {
	ctx := context.Background()
	b := sqliteBackend(t)
	cat := b.open(t)
	id := newTable(t, cat, 1)
	clk := &clock{now: time.Now()}
	booted := clk.Now().Add(-time.Hour)

	h1 := host(booted)     // this host: the takers run here
	holder := host(booted) // the holder's view: the same host, pid 42
	holder.self = Process{Host: "h1", PID: 42, BootID: bootA, PIDNS: nsA, Start: 700}
	h1.set(42, 700, true)
	a, err := Take(ctx, cat, id, Options{Verb: "compact", Procs: holder, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Info(); got.Owner != "h1:42" || got.Process == nil || *got.Process != holder.self {
		t.Fatalf("claim records %q, %+v; want owner h1:42 and its process", got.Owner, got.Process)
	}
	if info, err := Show(ctx, cat, id); err != nil || info.Process == nil || *info.Process != holder.self || !info.Renewed.Equal(clk.Now()) {
		t.Fatalf("show: %+v, %v; want the holder's process and the time it took it", info, err)
	}
	if _, err := Take(ctx, cat, id, Options{Procs: h1, Now: clk.Now}); !errors.Is(err, ErrHeld) {
		t.Fatalf("take while the holder runs: %v, want ErrHeld", err)
	}

	// The holder dies: taken over at once, the lease far from its end.
	h1.set(42, 0, false)
	c, err := Take(ctx, cat, id, Options{Verb: "maintain", Procs: h1, Now: clk.Now})
	if err != nil {
		t.Fatalf("take after the holder died: %v", err)
	}
	tk := c.TookOver()
	if tk == nil || tk.Previous.Owner != "h1:42" || tk.Previous.Verb != "compact" || tk.Previous.Token != a.Info().Token ||
		tk.Why != "its holder h1:42 no longer runs" {
		t.Fatalf("took over %+v, want h1:42's compact claim", tk)
	}
	if err := a.Renew(ctx); !errors.Is(err, ErrLost) {
		t.Errorf("renew by the dead holder's claim: %v, want ErrLost", err)
	}
	if err := c.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// A pid reused: a process of this host has the holder's pid but
	// started later.
	a, err = Take(ctx, cat, id, Options{Procs: holder, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	h1.set(42, 9000, true)
	c, err = Take(ctx, cat, id, Options{Procs: h1, Now: clk.Now})
	if err != nil || c.TookOver() == nil || !strings.Contains(c.TookOver().Why, "pid 42 is now another process's") {
		t.Fatalf("take from a holder whose pid was reused: %v, %+v", err, c)
	}
	if err := c.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// Another host's holder, with this host's dead pid: waits for its lease.
	other := host(booted)
	other.self = Process{Host: "h2", PID: 42, BootID: bootB, PIDNS: nsA, Start: 700}
	a, err = Take(ctx, cat, id, Options{Procs: other, Now: clk.Now, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	h1.set(42, 0, false)
	if _, err := Take(ctx, cat, id, Options{Procs: h1, Now: clk.Now}); !errors.Is(err, ErrHeld) {
		t.Fatalf("take from another host's holder: %v, want ErrHeld", err)
	}
	clk.add(time.Minute)
	c, err = Take(ctx, cat, id, Options{Procs: h1, Now: clk.Now})
	if err != nil || c.TookOver() == nil || !strings.Contains(c.TookOver().Why, "its lease ended at ") || c.TookOver().Previous.Owner != "h2:42" {
		t.Fatalf("take after the other host's lease ended: %v, %+v", err, c)
	}
	if err := c.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// A free table: nothing taken over.
	c, err = Take(ctx, cat, id, Options{Procs: h1, Now: clk.Now})
	if err != nil || c.TookOver() != nil {
		t.Fatalf("take of a free table: %v, took over %+v", err, c.TookOver())
	}
	c.Release(ctx)
}

// Do warns of a takeover, hands fn its claim in the context, runs the
// Held hook before fn, and releases the claim also when its caller's
// context was cancelled (SIGINT, SIGTERM).
func TestDoTakeoverHookAndInterrupt(t *testing.T) {
	b := sqliteBackend(t)
	cat := b.open(t)
	id := newTable(t, cat, 1)
	h1 := host(time.Now().Add(-time.Hour))
	holder := host(time.Now().Add(-time.Hour))
	holder.self.PID, holder.self.Start = 42, 700
	if _, err := Take(context.Background(), cat, id, Options{Verb: "compact", Procs: holder}); err != nil {
		t.Fatal(err)
	}
	var warned []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var hooked *Claim
	o := Options{Procs: h1, Warn: func(err error) { warned = append(warned, err.Error()) },
		Held: func(ctx context.Context, c *Claim) error { hooked = c; return nil }}
	err := Do(ctx, cat, id, o, func(ctx context.Context) error {
		c := FromContext(ctx)
		if c == nil || c != hooked || c.TookOver() == nil {
			t.Errorf("fn's claim %+v, the hook's %+v; want the one taken over", c, hooked)
		}
		cancel() // as SIGINT does
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Do = %v, want the cancelled work's error", err)
	}
	if len(warned) != 1 || warned[0] != "took over the claim on "+id.String()+" of h1:42 (compact): its holder h1:42 no longer runs" {
		t.Errorf("warnings %q", warned)
	}
	if info, err := Show(context.Background(), cat, id); err != nil || info != nil {
		t.Errorf("claim after an interrupted Do: %+v, %v; want released", info, err)
	}
	if FromContext(context.Background()) != nil {
		t.Error("a claim outside Do")
	}
	// A hook's error ends Do before fn, and the claim is released.
	boom := errors.New("boom")
	err = Do(context.Background(), cat, id, Options{Procs: h1, Held: func(context.Context, *Claim) error { return boom }},
		func(context.Context) error { t.Error("fn ran after the hook failed"); return nil })
	if err != boom {
		t.Errorf("Do = %v, want the hook's error", err)
	}
	if info, _ := Show(context.Background(), cat, id); info != nil {
		t.Errorf("claim left after the hook failed: %+v", info)
	}
}
