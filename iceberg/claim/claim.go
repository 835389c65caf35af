package claim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/spec"
)

const (
	// DefaultLease is how long a claim lasts without renewal. Do renews it
	// every third of it, so two renewals in a row may fail (a catalog
	// restarting, a network blip) before the claim lapses; and a run
	// killed while holding it keeps others off the table for at most this
	// long, shorter than the hourly or daily interval of a cron schedule,
	// so the next scheduled run finds the table free.
	DefaultLease = 30 * time.Minute
	// DefaultPoll is how often a taker that waits (Options.Wait) looks
	// again at a held claim.
	DefaultPoll = 2 * time.Second
	// releaseTimeout bounds Do's release, which runs even when the
	// caller's context is done.
	releaseTimeout = time.Minute
	// interruptedReleaseTimeout bounds it when the caller's context was
	// cancelled (SIGINT, SIGTERM): the process is asked to stop, and
	// systemd's and Kubernetes' grace periods (90 s, 30 s) must not run
	// out before it does. A release that does not land in time leaves a
	// claim the next run on this host takes over at once (HolderGone).
	interruptedReleaseTimeout = 10 * time.Second
)

var (
	// ErrHeld: another live claim holds the table. A *HeldError wraps it.
	ErrHeld = errors.New("table is claimed by another icectl run")
	// ErrLost: the claim is no longer this process's (its lease ended and
	// another run took it over, or someone released it by force).
	ErrLost = errors.New("claim lost")
)

// HeldError says who holds the claim that stopped a Take.
type HeldError struct {
	Table  metastore.Ident
	Holder string    // Info.Owner ("" when unknown: a tag made by hand)
	Verb   string    // what the holder is doing
	Since  time.Time // zero when unknown
	Until  time.Time // when its lease ends unless renewed
	Waited time.Duration
}

func (e *HeldError) Error() string {
	who := e.Holder
	if who == "" {
		who = "an unknown holder"
	}
	if e.Verb != "" {
		who += " (" + e.Verb + ")"
	}
	s := fmt.Sprintf("%s is being maintained by %s", e.Table, who)
	if !e.Since.IsZero() {
		s += " since " + e.Since.UTC().Format(time.RFC3339)
	}
	s += ", claim until " + e.Until.UTC().Format(time.RFC3339)
	if e.Waited > 0 {
		s += fmt.Sprintf(" (waited %s)", e.Waited)
	}
	return s
}

func (e *HeldError) Unwrap() error { return ErrHeld }

// Options say who takes a claim and for how long.
type Options struct {
	// Owner says who holds the claim; empty is DefaultOwner().
	Owner string
	// Verb says what the holder does ("compact", "maintain"), for the
	// message another run gets.
	Verb string
	// Lease is how long the claim lasts without renewal (0:
	// DefaultLease).
	Lease time.Duration
	// Wait: 0 fails at once when the claim is held; > 0 looks again every
	// Poll until it is free or this long has passed.
	Wait time.Duration
	// Poll is how often a waiting Take looks again (0: DefaultPoll).
	Poll time.Duration
	// Now tells the time (nil: time.Now); for tests.
	Now func() time.Time
	// Procs tells this process and whether a holder on this host still
	// runs (nil: HostProcs()); for tests.
	Procs Procs
	// Held, when set, runs in Do once the claim is held, before fn; its
	// error ends Do as fn's would. The CLI's test hook pauses there, so
	// that a test can kill a run that holds its claim.
	Held func(ctx context.Context, c *Claim) error
	// Warn receives what went wrong without changing the result: a
	// renewal that failed and will be retried, a release that failed (the
	// claim then lapses at its lease's end). nil drops it.
	Warn func(error)
}

func (o Options) withDefaults() Options {
	if o.Procs == nil {
		o.Procs = HostProcs()
	}
	if o.Owner == "" {
		o.Owner = o.Procs.Self().owner()
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

func (o Options) warn(err error) {
	if o.Warn != nil {
		o.Warn(err)
	}
}

// DefaultOwner is "host:pid" of this process.
func DefaultOwner() string { return hostName() + ":" + strconv.Itoa(os.Getpid()) }

// commitOptions retry claim commits more and sooner than a data commit: a
// claim commit is one small metadata change, and the retry is what tells
// a losing taker that someone else won.
func commitOptions(warn func(error)) commit.Options {
	return commit.Options{NumRetries: 20, MinWait: 10 * time.Millisecond, MaxWait: time.Second,
		TotalTimeout: 2 * time.Minute, Warn: warn}
}

// Claim is a claim this process took.
type Claim struct {
	cat  metastore.Committer
	id   metastore.Ident
	o    Options
	held bool

	mu   sync.Mutex
	info Info
	prev *Takeover
}

// Takeover is the claim a Take replaced: another run's, whose lease had
// ended or whose holder no longer ran (HolderGone).
type Takeover struct {
	Previous Info
	// Why it could be taken over: "its lease ended at ...", "its holder
	// host:pid no longer runs", ...
	Why string
}

// TookOver is the claim this one replaced when it was taken, nil when it
// replaced none.
func (c *Claim) TookOver() *Takeover { return c.prev }

// Held reports whether the claim holds anything: false on a table without
// snapshots, where nothing is claimed (see the package doc).
func (c *Claim) Held() bool { return c.held }

// Info is the claim as last committed.
func (c *Claim) Info() Info {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

func (c *Claim) tokenRef() string { return tokenPrefix + c.Info().Token }

func newToken() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}

// Take claims table id: at once when no live claim holds it, taking over
// a claim whose lease ended; otherwise a *HeldError, after waiting up to
// o.Wait for it to be released or to lapse.
func Take(ctx context.Context, cat metastore.Committer, id metastore.Ident, o Options) (*Claim, error) {
	o = o.withDefaults()
	start := o.Now()
	for {
		c, err := take(ctx, cat, id, o)
		var held *HeldError
		if !errors.As(err, &held) || o.Wait <= 0 {
			return c, err
		}
		waited := o.Now().Sub(start)
		left := o.Wait - waited
		if left <= 0 {
			held.Waited = o.Wait
			return nil, held
		}
		d := min(o.Poll, left)
		if untilEnd := held.Until.Sub(o.Now()); untilEnd > 0 && untilEnd < d {
			d = untilEnd + 10*time.Millisecond
		}
		// Jitter keeps waiting takers from asking in lockstep.
		d += time.Duration(mrand.Int64N(int64(d)/10 + 1))
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the claim on %s: %w", id, ctx.Err())
		case <-time.After(d):
		}
	}
}

func take(ctx context.Context, cat metastore.Committer, id metastore.Ident, o Options) (*Claim, error) {
	c := &Claim{cat: cat, id: id, o: o}
	token := newToken()
	self := o.Procs.Self()
	var stop error // a build's verdict that ends the loop without a commit
	build := func(_ context.Context, base *metastore.Table, _ int) (*commit.Attempt, error) {
		md := base.Metadata
		snap := head(md)
		if snap == nil {
			stop = errNoSnapshot
			return nil, stop
		}
		s := read(md)
		now := o.Now()
		c.prev = nil
		if s.mutex != nil {
			// Only the verdict on whether the holder is done changes with
			// its kind; the takeover commit is the same (it asserts the
			// holder's token tag).
			why, gone := "", s.info.Expired(now)
			if gone {
				why = "its lease ended at " + s.info.Until.UTC().Format(time.RFC3339)
			} else {
				why, gone = HolderGone(s.info, o.Procs)
			}
			if !gone {
				stop = &HeldError{Table: id, Holder: s.info.Owner, Verb: s.info.Verb, Since: s.info.Since, Until: s.info.Until}
				return nil, stop
			}
			c.prev = &Takeover{Previous: s.info, Why: why}
		}
		info := Info{Owner: o.Owner, Verb: o.Verb, Since: now, Until: now.Add(o.Lease), Token: token, Renewed: now}
		if self.PID > 0 {
			info.Process = &self
		}
		reqs := []spec.Requirement{spec.AssertTableUUID{UUID: md.TableUUID}, assertRef(md, RefName)}
		var ups []spec.Update
		// Earlier claims' token tags go: the holder's (a takeover, which
		// asserting its tag makes safe against a concurrent one) and any
		// left by hand. Their holders find their claim lost.
		for _, name := range s.tokens {
			reqs = append(reqs, assertRef(md, name))
			ups = append(ups, spec.RemoveSnapshotRef{RefName: name})
		}
		tag := tagUntil(snap, info.Until)
		ups = append(ups,
			spec.SetSnapshotRef{RefName: RefName, Ref: tag},
			spec.SetSnapshotRef{RefName: tokenPrefix + token, Ref: tag},
			spec.SetProperties{Updates: map[string]string{Property: encodeProperty(info)}})
		c.info = info
		c.info.Until = time.UnixMilli(snap.TimestampMS + *tag.MaxRefAgeMS) // as read back from the tag
		return &commit.Attempt{Requirements: reqs, Updates: ups}, nil
	}
	err := commitOn(ctx, cat, id, build, o.Warn)
	switch {
	case stop != nil && errors.Is(err, stop):
		if stop == errNoSnapshot {
			return c, nil
		}
		return nil, stop
	case errors.Is(err, metastore.ErrCommitStateUnknown):
		if ok, lerr := hasTag(ctx, cat, id, tokenPrefix+token); lerr == nil && ok {
			c.held = true
			return c, nil
		}
		return nil, fmt.Errorf("claim %s: %w", id, err)
	case err != nil:
		return nil, fmt.Errorf("claim %s: %w", id, err)
	}
	c.held = true
	return c, nil
}

var errNoSnapshot = errors.New("table has no snapshot")

// commitOn loads table id and commits what build makes through the commit
// loop, which rebuilds on the reloaded table after each conflict.
func commitOn(ctx context.Context, cat metastore.Committer, id metastore.Ident, build commit.BuildFunc, warn func(error)) error {
	t, err := cat.LoadTable(ctx, id)
	if err != nil {
		return err
	}
	_, err = commit.Run(ctx, cat, t, build, commitOptions(warn))
	return err
}

// hasTag reloads the table to find out whether an unknown commit landed.
func hasTag(ctx context.Context, cat metastore.Committer, id metastore.Ident, name string) (bool, error) {
	t, err := cat.LoadTable(ctx, id)
	if err != nil {
		return false, err
	}
	_, ok := t.Metadata.Refs[name]
	return ok, nil
}

// Renew extends the lease to a full Lease from now and moves the tags to
// main's head (so they keep no older snapshot). ErrLost when the claim is
// no longer this one.
func (c *Claim) Renew(ctx context.Context) error {
	if !c.held {
		return nil
	}
	mine := c.tokenRef()
	var next Info
	build := func(_ context.Context, base *metastore.Table, _ int) (*commit.Attempt, error) {
		md := base.Metadata
		s := read(md)
		tok, ok := md.Refs[mine]
		if !ok || s.mutex == nil {
			return nil, c.lost()
		}
		snap := head(md)
		if snap == nil { // every snapshot went: keep the tag where it is
			snap, _ = md.SnapshotByID(tok.SnapshotID)
		}
		if snap == nil {
			return nil, c.lost()
		}
		next = c.Info()
		now := c.o.Now()
		next.Renewed = now
		tag := tagUntil(snap, now.Add(c.o.Lease))
		next.Until = time.UnixMilli(snap.TimestampMS + *tag.MaxRefAgeMS)
		return &commit.Attempt{
			Requirements: []spec.Requirement{spec.AssertTableUUID{UUID: md.TableUUID}, assertRef(md, RefName), assertRef(md, mine)},
			Updates: []spec.Update{
				spec.SetSnapshotRef{RefName: RefName, Ref: tag},
				spec.SetSnapshotRef{RefName: mine, Ref: tag},
				spec.SetProperties{Updates: map[string]string{Property: encodeProperty(next)}},
			},
		}, nil
	}
	err := commitOn(ctx, c.cat, c.id, build, c.o.Warn)
	if errors.Is(err, metastore.ErrCommitStateUnknown) {
		// Landed if the property now says our new lease.
		if t, lerr := c.cat.LoadTable(ctx, c.id); lerr == nil {
			if s := read(t.Metadata); s.info.Token == next.Token && s.mutex != nil && t.Metadata.Properties[Property] == encodeProperty(next) {
				err = nil
			}
		}
	}
	if errors.Is(err, ErrLost) {
		return c.lost()
	}
	if err != nil {
		return fmt.Errorf("renew claim on %s: %w", c.id, err)
	}
	c.mu.Lock()
	c.info = next
	c.mu.Unlock()
	return nil
}

func (c *Claim) lost() error {
	return fmt.Errorf("%s: %w: its lease ended and another run took it over, or it was released by force", c.id, ErrLost)
}

// Release gives the claim up. ErrLost when it is no longer this one: a
// release never removes another run's claim.
func (c *Claim) Release(ctx context.Context) error {
	if !c.held {
		return nil
	}
	mine := c.tokenRef()
	build := func(_ context.Context, base *metastore.Table, _ int) (*commit.Attempt, error) {
		md := base.Metadata
		if _, ok := md.Refs[mine]; !ok {
			return nil, c.lost()
		}
		reqs := []spec.Requirement{spec.AssertTableUUID{UUID: md.TableUUID}, assertRef(md, mine), assertRef(md, RefName)}
		ups := []spec.Update{spec.RemoveSnapshotRef{RefName: mine}}
		if _, ok := md.Refs[RefName]; ok {
			ups = append(ups, spec.RemoveSnapshotRef{RefName: RefName})
		}
		if p, ok := decodeProperty(md.Properties[Property]); !ok || p.Token == c.Info().Token {
			ups = append(ups, spec.RemoveProperties{Removals: []string{Property}})
		}
		return &commit.Attempt{Requirements: reqs, Updates: ups}, nil
	}
	err := commitOn(ctx, c.cat, c.id, build, c.o.Warn)
	if errors.Is(err, metastore.ErrCommitStateUnknown) {
		if ok, lerr := hasTag(ctx, c.cat, c.id, mine); lerr == nil && !ok {
			err = nil
		}
	}
	if errors.Is(err, ErrLost) {
		return c.lost()
	}
	if err != nil {
		return fmt.Errorf("release claim on %s: %w", c.id, err)
	}
	c.held = false
	return nil
}

// Do takes the claim, runs fn while renewing it every Lease/3 in the
// background, and releases it after, also when fn fails. A release that
// fails goes to o.Warn and does not change fn's result (the claim lapses
// at its lease's end). If the claim is lost while fn runs (a renewal finds
// it taken over, or the lease ends before a renewal succeeds), fn's
// context is cancelled and the error wraps ErrLost.
//
// fn's context carries the claim (FromContext). A claim taken over from
// another run is reported to o.Warn too: a run killed before it could
// release its claim is worth a line.
//
// The release runs also when ctx was cancelled (SIGINT, SIGTERM), on a
// context of its own bounded by a short timeout.
func Do(ctx context.Context, cat metastore.Committer, id metastore.Ident, o Options, fn func(ctx context.Context) error) error {
	o = o.withDefaults()
	c, err := Take(ctx, cat, id, o)
	if err != nil {
		return err
	}
	if t := c.TookOver(); t != nil {
		o.warn(fmt.Errorf("took over the claim on %s of %s: %s", id, t.Previous.Holder(), t.Why))
	}
	if !c.held {
		return fn(context.WithValue(ctx, claimKey{}, c))
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.keep(runCtx, done, cancel)
	}()
	fctx := context.WithValue(runCtx, claimKey{}, c)
	var ferr error
	if o.Held != nil {
		ferr = o.Held(fctx, c)
	}
	if ferr == nil {
		ferr = fn(fctx)
	}
	close(done)
	wg.Wait()
	cause := context.Cause(runCtx)
	lost := errors.Is(cause, ErrLost)
	timeout := releaseTimeout
	if ctx.Err() != nil {
		timeout = interruptedReleaseTimeout
	}
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer rcancel()
	if rerr := c.Release(rctx); rerr != nil && !lost {
		o.warn(fmt.Errorf("%w (it lapses at %s)", rerr, c.Info().Until.UTC().Format(time.RFC3339)))
	}
	if lost {
		return errors.Join(cause, ferr)
	}
	return ferr
}

type claimKey struct{}

// FromContext is the claim Do runs fn under, nil outside Do.
func FromContext(ctx context.Context) *Claim {
	c, _ := ctx.Value(claimKey{}).(*Claim)
	return c
}

// keep renews the claim every Lease/3 until done. A renewal that fails is
// retried sooner; once the lease ended without one, or the claim is found
// lost, fn's context is cancelled.
func (c *Claim) keep(ctx context.Context, done <-chan struct{}, cancel context.CancelCauseFunc) {
	every := c.o.Lease / 3
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := c.Renew(ctx)
		switch {
		case err == nil:
			t.Reset(every)
		case errors.Is(err, ErrLost):
			cancel(err)
			return
		case ctx.Err() != nil:
			return
		default:
			c.o.warn(err)
			left := c.Info().Until.Sub(c.o.Now())
			if left <= 0 {
				cancel(fmt.Errorf("%s: %w: the lease ended before a renewal succeeded: %w", c.id, ErrLost, err))
				return
			}
			t.Reset(min(every/4+1, left))
		}
	}
}

// Show returns the table's claim, or nil when it has none. It changes
// nothing.
func Show(ctx context.Context, cat metastore.Committer, id metastore.Ident) (*Info, error) {
	t, err := cat.LoadTable(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("claim %s: %w", id, err)
	}
	s := read(t.Metadata)
	if s.mutex == nil && len(s.tokens) == 0 {
		return nil, nil
	}
	return &s.info, nil
}

// ForceRelease removes the table's claim, whoever holds it: the escape
// hatch for a claim its holder cannot release (`icectl claim release
// --force`). It returns what it removed, nil when there was none. A holder
// still running finds its claim lost at its next renewal and stops.
func ForceRelease(ctx context.Context, cat metastore.Committer, id metastore.Ident) (*Info, error) {
	var removed *Info
	build := func(_ context.Context, base *metastore.Table, _ int) (*commit.Attempt, error) {
		md := base.Metadata
		s := read(md)
		_, prop := md.Properties[Property]
		if s.mutex == nil && len(s.tokens) == 0 && !prop {
			removed = nil
			return nil, errNothing
		}
		info := s.info
		removed = &info
		reqs := []spec.Requirement{spec.AssertTableUUID{UUID: md.TableUUID}}
		var ups []spec.Update
		for _, name := range append([]string{RefName}, s.tokens...) {
			if _, ok := md.Refs[name]; ok {
				reqs = append(reqs, assertRef(md, name))
				ups = append(ups, spec.RemoveSnapshotRef{RefName: name})
			}
		}
		if prop {
			ups = append(ups, spec.RemoveProperties{Removals: []string{Property}})
		}
		return &commit.Attempt{Requirements: reqs, Updates: ups}, nil
	}
	err := commitOn(ctx, cat, id, build, nil)
	if errors.Is(err, errNothing) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("release claim on %s: %w", id, err)
	}
	return removed, nil
}

var errNothing = errors.New("no claim")
