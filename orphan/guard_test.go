package orphan

import (
	"context"
	"errors"
	"testing"
)

// The removal runs inside Guard (the command layer's claim), only when
// the plan found orphans, and re-checks every orphan against the table as
// it is once inside: a commit that lands while Guard waits (another run
// holding the claim) and references an orphan keeps it.
func TestGuardRunsOnlyTheRemoval(t *testing.T) {
	f := newFixture(t, "")
	id, orphans := localTable(t, f)
	tbl := f.load(t, id)
	wh := f.Warehouse + "/"

	// A Guard that refuses (a claim held elsewhere): nothing removed, its
	// error returned, after one listing.
	before := files(t, tbl.IO, wh)
	held := errors.New("held by another run")
	calls := 0
	o := opts()
	o.Guard = func(ctx context.Context, remove func(context.Context) error) error {
		calls++
		return held
	}
	var s sink
	sum, err := Run(f.Ctx, f.loader(id), o, &s)
	if !errors.Is(err, held) || calls != 1 || sum == nil || sum.Orphans != int64(len(orphans)) {
		t.Fatalf("refusing guard: calls %d, summary %+v, err %v", calls, sum, err)
	}
	if d := diff(before, files(t, tbl.IO, wh)); len(d) != 0 {
		t.Fatalf("a refused removal changed files: %v", d)
	}

	// A Guard inside which a commit lands first, referencing an orphan.
	imported := orphans[0]
	calls = 0
	o.Guard = func(ctx context.Context, remove func(context.Context) error) error {
		calls++
		f.appendFiles(t, id, false, imported)
		return remove(ctx)
	}
	s = sink{}
	sum, err = Run(f.Ctx, f.loader(id), o, &s)
	if err != nil || calls != 1 {
		t.Fatalf("guard calls %d, err %v", calls, err)
	}
	got := s.byStatus()
	if !sameStrings(got[StatusKept], []string{imported}) || !sameStrings(got[StatusDeleted], orphans[1:]) || !sum.TableChanged {
		t.Errorf("reports %v (table changed %v), want %s kept and the rest deleted", got, sum.TableChanged, imported)
	}
	checkReferencedExist(t, f.load(t, id))

	// Nothing left: Guard is not called.
	calls = 0
	s = sink{}
	if sum, err := Run(f.Ctx, f.loader(id), o, &s); err != nil || sum.Orphans != 0 || calls != 0 {
		t.Errorf("run with nothing to remove: guard calls %d, %+v, %v", calls, sum, err)
	}
}
