package verbrun_test

import (
	"context"
	"errors"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/internal/shared/batchrun"
	"github.com/icectl/icectl/internal/shared/verbrun"
	"github.com/icectl/icectl/internal/testing/fixture"
)

// countingClaims is verbrun.Claims that counts the claims taken and can
// let a writer commit just before the claim is taken.
type countingClaims struct {
	verbrun.Claims
	taken  int
	before func()
}

func (c *countingClaims) Do(ctx context.Context, id metastore.Ident, fn func(ctx context.Context) error) error {
	c.taken++
	if c.before != nil {
		c.before()
	}
	return c.Claims.Do(ctx, id, fn)
}

// testVerb plans the table's current snapshot id (idle when idle says
// so, refused when refuse is set), probes that its plan reads through
// an IO that refuses writes, and executes by recording what it got.
type testVerb struct {
	plans, executes int
	idle            bool
	refuse          error
	readOnly        bool  // the last plan's IO refused a write
	executed        int64 // the plan Execute got
	closed          int
}

func (tv *testVerb) verb() verbrun.Verb[int64, string] {
	return verbrun.Verb[int64, string]{Name: "test",
		Plan: func(ctx context.Context, t *catalog.Table) (int64, bool, error) {
			tv.plans++
			_, err := t.IO.Create(ctx, t.Metadata.Location+"/probe")
			tv.readOnly = errors.Is(err, fileio.ErrReadOnly)
			if tv.refuse != nil {
				return 0, false, tv.refuse
			}
			return *t.Metadata.CurrentSnapshotID, tv.idle, nil
		},
		Execute: func(ctx context.Context, t *catalog.Table, p int64) (string, error) {
			tv.executes++
			tv.executed = p
			return t.MetadataLocation, nil
		},
		Close: func(int64) { tv.closed++ },
	}
}

// TestRunSequence: a refusal and a run with nothing to do take no claim
// and execute nothing; a run with work executes its plan under the claim
// on the table as loaded then, planning once, or twice when a writer
// committed before the claim was taken (once for a verb that re-checks
// its plan itself); every plan is made through an IO that refuses writes.
func TestRunSequence(t *testing.T) {
	c := fixture.NewSQLite(t)
	tb := c.Table(t, fixture.TableOptions{Files: [][]int64{{1, 2}}})
	ctx := context.Background()
	newRun := func() (*testVerb, *countingClaims, verbrun.Options) {
		cl := &countingClaims{Claims: verbrun.Claims{Cat: c, Options: claim.Options{Verb: "test"}}}
		return &testVerb{}, cl, verbrun.Options{Claim: cl, Load: func(ctx context.Context, id metastore.Ident) (*catalog.Table, error) {
			return c.LoadTable(ctx, id)
		}}
	}

	tv, cl, o := newRun()
	tv.refuse = errors.New("bad input")
	before := tb.Load(t).MetadataLocation
	res := verbrun.Run(ctx, tv.verb(), tb.Load(t), o)
	if !errors.Is(res.Err, tv.refuse) || res.Outcome != batchrun.Failed || cl.taken != 0 || tv.executes != 0 || !tv.readOnly {
		t.Errorf("refusal: %+v, %d claims, %d executions, read-only plan %v", res, cl.taken, tv.executes, tv.readOnly)
	}
	if tb.Load(t).MetadataLocation != before {
		t.Error("a refusal changed the table")
	}

	tv, cl, o = newRun()
	tv.idle = true
	res = verbrun.Run(ctx, tv.verb(), tb.Load(t), o)
	if !res.Idle || res.Err != nil || cl.taken != 0 || tv.executes != 0 {
		t.Errorf("idle: %+v, %d claims, %d executions", res, cl.taken, tv.executes)
	}
	o.ExecuteIdle = true
	res = verbrun.Run(ctx, tv.verb(), tb.Load(t), o)
	if !res.Idle || !res.Executed || cl.taken != 0 || tv.executes != 1 {
		t.Errorf("idle, executed: %+v, %d claims, %d executions", res, cl.taken, tv.executes)
	}

	tv, cl, o = newRun()
	head := *tb.Load(t).Metadata.CurrentSnapshotID
	res = verbrun.Run(ctx, tv.verb(), tb.Load(t), o)
	if res.Err != nil || !res.Executed || cl.taken != 1 || tv.plans != 1 || tv.executed != head || tv.closed != 1 {
		t.Errorf("work: %+v, %d claims, %d plans, executed %d (head %d), %d closed", res, cl.taken, tv.plans, tv.executed, head, tv.closed)
	}
	if res.Report == before || res.Report != res.Table.MetadataLocation {
		t.Errorf("executed on %s, want the table as loaded under the claim (%s), not %s", res.Report, res.Table.MetadataLocation, before)
	}

	tv, cl, o = newRun()
	cl.before = func() { tb.Append(t, nil, tb.WriteIDs(t, nil, "late", nil, 3)) }
	res = verbrun.Run(ctx, tv.verb(), tb.Load(t), o)
	moved := *tb.Load(t).Metadata.CurrentSnapshotID
	if res.Err != nil || tv.plans != 2 || tv.executed != moved || moved == head || tv.closed != 2 || !tv.readOnly {
		t.Errorf("moved: %+v, %d plans, executed %d (head now %d), %d closed", res, tv.plans, tv.executed, moved, tv.closed)
	}

	// A verb that re-checks its plan itself is not planned again: it
	// executes the first plan on the table as loaded under the claim.
	tv, cl, o = newRun()
	first := *tb.Load(t).Metadata.CurrentSnapshotID
	cl.before = func() { tb.Append(t, nil, tb.WriteIDs(t, nil, "later", nil, 4)) }
	v := tv.verb()
	v.Rechecks = true
	res = verbrun.Run(ctx, v, tb.Load(t), o)
	if res.Err != nil || tv.plans != 1 || tv.executed != first || res.Report != res.Table.MetadataLocation || tv.closed != 1 {
		t.Errorf("moved, rechecks: %+v, %d plans, executed %d (planned %d), %d closed", res, tv.plans, tv.executed, first, tv.closed)
	}

	tv, cl, o = newRun()
	o.DryRun = true
	res = verbrun.Run(ctx, tv.verb(), tb.Load(t), o)
	if res.Err != nil || !res.Planned || res.Executed || cl.taken != 0 || tv.closed != 0 || !tv.readOnly {
		t.Errorf("dry run: %+v, %d claims, %d closed", res, cl.taken, tv.closed)
	}
}
