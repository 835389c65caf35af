package maintain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/metastore"
)

// Claimer keeps two runs off one table: Do runs fn while holding table
// id's claim, taken through the catalog (package iceberg/claim), and
// returns an error Held recognizes when another run holds it.
type Claimer interface {
	Do(ctx context.Context, id metastore.Ident, fn func(ctx context.Context) error) error
	// Held reports whether err says another run holds the claim, with
	// what the claim says of its holder and when it expires.
	Held(err error) (holder string, until time.Time, ok bool)
}

// Options configure Run.
type Options struct {
	// Concurrency is how many tables are maintained at once (default 1).
	Concurrency int
	// MaxDuration is the run's budget: no table and no verb starts after
	// it, and the batched verbs in flight start no new group or
	// partition (what they finished is committed). 0: none.
	MaxDuration time.Duration
	// MaxRewriteBytes bounds the data bytes compaction reads over the
	// whole run; 0: none.
	MaxRewriteBytes int64
	// Claim takes each table's claim around its work; nil takes none (a
	// single run at a time is then the caller's promise).
	Claim Claimer
	// Policy, when set, re-plans a table whose main branch moved between
	// planning and taking its claim (see runner.replan).
	Policy *Policy
	// CommitOptions are the commit loop's options for a table with the
	// given properties (nil: commit.OptionsFromProperties).
	CommitOptions func(props map[string]string) commit.Options
	// CreatedBy is written into the Puffin files dv merge writes.
	CreatedBy string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Log receives a line as each table starts and ends (nil: none).
	Log io.Writer
}

func (o *Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

// Run maintains the tables p has work for, in p's order, and reports what
// it did. It returns once every started table has finished. A cancelled
// ctx stops the verbs in flight (each leaves its table as before or after
// its commits) and starts nothing more.
func Run(ctx context.Context, cat catalog.Catalog, p *Plan, o Options) *Report {
	r := &runner{cat: cat, o: o, start: o.now()}
	if o.MaxDuration > 0 {
		r.deadline = r.start.Add(o.MaxDuration)
	}
	rep := &Report{StartedMS: r.start.UnixMilli(), Tables: make([]*TableReport, len(p.Due))}
	n := max(o.Concurrency, 1)
	next := make(chan int)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rep.Tables[i] = r.table(ctx, p.Due[i])
			}
		}()
	}
	for i := range p.Due {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, tp := range p.Healthy {
		rep.Tables = append(rep.Tables, &TableReport{Table: tp.Table, Status: StatusNothingDue, Due: tp.Due, Off: tp.Off,
			Attention: tp.Attention, Stream: tp.Stream, Verbs: []VerbReport{}, MetadataLocationBefore: tp.MetadataLocation, MetadataLocationAfter: tp.MetadataLocation})
	}
	for _, f := range p.Failed {
		rep.Tables = append(rep.Tables, &TableReport{Table: f.Table, Status: StatusFailed, Error: f.Error, Due: []Due{},
			Off: []Skip{}, Attention: []string{}, Verbs: []VerbReport{}})
	}
	rep.DurationMS = o.now().Sub(r.start).Milliseconds()
	rep.summarize(r.budgetHit())
	return rep
}

// runner is one Run's shared state.
type runner struct {
	cat      catalog.Catalog
	o        Options
	start    time.Time
	deadline time.Time // zero: none

	mu        sync.Mutex
	bytesUsed int64 // compaction input bytes planned so far
	bytesHit  bool  // the byte budget left work undone
	timeHit   bool  // the time budget left work undone
}

func (r *runner) budgetHit() (time, bytes bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.timeHit, r.bytesHit
}

// expired reports whether the time budget is spent, noting that it left
// work undone.
func (r *runner) expired() bool {
	if r.deadline.IsZero() || r.o.now().Before(r.deadline) {
		return false
	}
	r.mu.Lock()
	r.timeHit = true
	r.mu.Unlock()
	return true
}

// remaining is what is left of the time budget (0: no budget).
func (r *runner) remaining() time.Duration {
	if r.deadline.IsZero() {
		return 0
	}
	return max(r.deadline.Sub(r.o.now()), time.Nanosecond)
}

const budgetReason = "not started: the run's --max-duration was reached; the next run does it"

// table maintains one table: its due verbs in order, under its claim.
func (r *runner) table(ctx context.Context, tp *TablePlan) *TableReport {
	tr := &TableReport{Table: tp.Table, Due: tp.Due, Off: tp.Off, Attention: tp.Attention, Stream: tp.Stream, Verbs: []VerbReport{},
		MetadataLocationBefore: tp.MetadataLocation, MetadataLocationAfter: tp.MetadataLocation}
	cur := tp // the plan the work follows: re-planned if the table moved while its claim was awaited
	notStarted := func(from int, why string) {
		for _, d := range cur.Due[from:] {
			tr.Verbs = append(tr.Verbs, VerbReport{Verb: d.Verb, Status: StatusNotStarted, Detail: why})
		}
	}
	if ctx.Err() != nil {
		tr.Status = StatusNotStarted
		notStarted(0, "not started: the run was interrupted")
		return tr
	}
	if r.expired() {
		tr.Status = StatusNotStarted
		notStarted(0, budgetReason)
		return tr
	}
	start := r.o.now()
	r.logf("maintain: %s: %s\n", tp.Table, dueText(tp.Due))
	work := func(ctx context.Context) error {
		tr.TookOver = tookOver(ctx)
		if err := r.replan(ctx, tp, &cur); err != nil {
			return err
		}
		tr.Due = cur.Due
		for i, d := range cur.Due {
			if ctx.Err() != nil {
				notStarted(i, "not started: the run was interrupted")
				return nil
			}
			if i > 0 && r.expired() {
				notStarted(i, budgetReason)
				return nil
			}
			vr := r.verb(ctx, cur, d)
			tr.Verbs = append(tr.Verbs, vr)
			if vr.Status == StatusFailed {
				notStarted(i+1, "not started: "+d.Verb+" failed before it")
				return nil
			}
		}
		return nil
	}
	var err error
	id := tp.state.Ident
	switch {
	case r.o.Claim == nil:
		err = work(ctx)
	case r.precheck(ctx, tp, tr):
		// Refused, or nothing to do: decided before the claim, nothing
		// was written.
	default:
		err = r.o.Claim.Do(ctx, id, work)
	}
	if err != nil {
		if holder, until, ok := r.held(err); ok {
			tr.Status = StatusSkipped
			tr.Held = &Held{Holder: holder, UntilMS: until.UnixMilli()}
			tr.Error = err.Error()
			notStarted(len(tr.Verbs), "not started: another run holds the table's claim")
		} else {
			tr.Error = err.Error()
			notStarted(len(tr.Verbs), "not started: "+err.Error())
		}
	}
	if t, lerr := r.cat.LoadTable(context.WithoutCancel(ctx), id); lerr == nil {
		tr.MetadataLocationAfter = t.MetadataLocation
	}
	tr.DurationMS = r.o.now().Sub(start).Milliseconds()
	tr.settle()
	r.logf("maintain: %s: %s in %s\n", tp.Table, tr.Status, time.Duration(tr.DurationMS)*time.Millisecond)
	return tr
}

// precheck plans the verbs due on tp's table, reading only, before its
// claim is taken, as a single verb's run does: when one refuses the table
// (files no reader can read, say), or every one has nothing to do, the
// table is not claimed, so a cron run that meets it every hour writes
// nothing, and tr reports the verbs; it returns true then. It returns
// false as soon as a verb has work: the run then claims the table and
// runs the verbs, each planning again on the table as it is.
func (r *runner) precheck(ctx context.Context, tp *TablePlan, tr *TableReport) bool {
	t, err := r.cat.LoadTable(ctx, tp.state.Ident)
	if err != nil {
		return false // met again under the claim, and reported there
	}
	var verbs []VerbReport
	for i, d := range tp.Due {
		idle, err := r.planVerb(ctx, t, tp, d)
		switch {
		case err != nil:
			tr.Verbs = append(verbs, VerbReport{Verb: d.Verb, Status: StatusFailed, Error: err.Error(),
				Detail: "refused before the table was claimed: nothing was written"})
			for _, d := range tp.Due[i+1:] {
				tr.Verbs = append(tr.Verbs, VerbReport{Verb: d.Verb, Status: StatusNotStarted, Detail: "not started: " + tp.Due[i].Verb + " failed before it"})
			}
			return true
		case !idle:
			return false
		}
		verbs = append(verbs, VerbReport{Verb: d.Verb, Status: StatusDone, Detail: "nothing to do (checked before the claim)", SucceededMS: r.o.now().UnixMilli()})
	}
	tr.Verbs = verbs
	return true
}

func (r *runner) logf(format string, args ...any) {
	if r.o.Log != nil {
		fmt.Fprintf(r.o.Log, format, args...)
	}
}

// verb runs one verb on the table as it is now.
// replan plans tp's table again when its main branch moved since it was
// planned (another run maintained it while this one waited for its claim,
// or a writer committed): the verbs then run on what is due now, so a table
// two runs both planned is maintained once. The claim's own commits move
// no branch, so a table nobody else touched is not read twice.
func (r *runner) replan(ctx context.Context, tp *TablePlan, cur **TablePlan) error {
	if r.o.Policy == nil {
		return nil
	}
	t, err := r.cat.LoadTable(ctx, tp.state.Ident)
	if err != nil {
		return err
	}
	if headID(t.Metadata) == tp.state.SnapshotID {
		return nil
	}
	st := ReadState(ctx, r.cat, tp.state.Ident, r.o.Policy, r.o.now())
	if st.Err != nil {
		return st.Err
	}
	np := planTable(&st)
	if len(np.Due) == 0 {
		np.Due = []Due{}
	}
	r.logf("maintain: %s: changed since planned, now due: %s\n", tp.Table, dueText(np.Due))
	*cur = np
	return nil
}

func (r *runner) verb(ctx context.Context, tp *TablePlan, d Due) VerbReport {
	start := r.o.now()
	vr := VerbReport{Verb: d.Verb}
	t, err := r.cat.LoadTable(ctx, tp.state.Ident)
	if err == nil {
		err = r.runVerb(ctx, t, tp, d, &vr)
	}
	vr.DurationMS = r.o.now().Sub(start).Milliseconds()
	if err != nil {
		vr.Error = err.Error()
		if vr.Status == "" || vr.Status == StatusDone {
			vr.Status = StatusFailed
		}
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			vr.Detail = joinNonEmpty(vr.Detail, "interrupted")
		}
	} else if vr.Status == "" {
		vr.Status = StatusDone
	}
	if vr.Status == StatusDone || vr.Status == StatusPartial {
		vr.SucceededMS = r.o.now().UnixMilli()
	}
	return vr
}

func (r *runner) commitOptions(props map[string]string) commit.Options {
	if r.o.CommitOptions != nil {
		return r.o.CommitOptions(props)
	}
	return commit.OptionsFromProperties(props)
}

// reserveBytes gives compaction the byte budget left, or false when it is
// spent; planned is then charged with what the plan reads.
func (r *runner) reserveBytes(plan func(limit *int64) (int64, error)) (bool, error) {
	if r.o.MaxRewriteBytes <= 0 {
		_, err := plan(nil)
		return true, err
	}
	// Planning under the lock keeps concurrent tables from each planning
	// against the same remainder.
	r.mu.Lock()
	defer r.mu.Unlock()
	left := r.o.MaxRewriteBytes - r.bytesUsed
	if left <= 0 {
		r.bytesHit = true
		return false, nil
	}
	n, err := plan(&left)
	r.bytesUsed += n
	return true, err
}

// noteBytesHit records that the byte budget left a table's work undone.
func (r *runner) noteBytesHit() {
	r.mu.Lock()
	r.bytesHit = true
	r.mu.Unlock()
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// held asks the claimer whether err says the claim is held.
func (r *runner) held(err error) (string, time.Time, bool) {
	if r.o.Claim == nil {
		return "", time.Time{}, false
	}
	return r.o.Claim.Held(err)
}
