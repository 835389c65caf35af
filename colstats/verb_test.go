package colstats

import (
	"context"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/internal/shared/verbrun"
	"github.com/icectl/icectl/internal/testing/fixture"
)

// TestVerbTableMoved: when a writer commits while the run takes the
// table's claim, the sketches computed before it are registered as they
// are, for the snapshot they were computed for (they stay true of it),
// without reading the table a second time; the snapshot the writer made
// has none.
func TestVerbTableMoved(t *testing.T) {
	c := fixture.NewSQLite(t)
	tb := c.Table(t, fixture.TableOptions{})
	tb.Append(t, nil, tb.WriteIDs(t, nil, "a", nil, 1, 2, 3))
	start := tb.Load(t)
	planned := 0
	v := Verb(c.Catalog, RunOptions{CreatedBy: "test", Commit: tb.Opts}, nil)
	plan := v.Plan
	v.Plan = func(ctx context.Context, t *catalog.Table) (*Plan, bool, error) {
		planned++
		return plan(ctx, t)
	}
	res := verbrun.Run(tb.Ctx, v, start, verbrun.Options{
		Claim: verbrun.Claims{Cat: c.Catalog, Options: claim.Options{Verb: v.Name}},
		Load: func(ctx context.Context, id catalog.Ident) (*catalog.Table, error) {
			tb.Append(t, nil, tb.WriteIDs(t, nil, "b", nil, 4)) // a writer, just before the claim is held
			return c.Catalog.LoadTable(ctx, id)
		},
	})
	if res.Err != nil || !res.Executed {
		t.Fatalf("run: %v (executed %v)", res.Err, res.Executed)
	}
	if planned != 1 {
		t.Errorf("planned %d times, want once", planned)
	}
	md := tb.Load(t).Metadata
	id := *start.Metadata.CurrentSnapshotID
	f, ok := Registered(md, id)
	if !ok {
		t.Fatalf("no statistics file for snapshot %d", id)
	}
	for _, b := range f.BlobMetadata {
		if b.Fields[0] == 1 && b.Properties[NDVProperty] != "3" {
			t.Errorf("column id: ndv %s, want 3 (the planned snapshot's rows)", b.Properties[NDVProperty])
		}
	}
	if _, ok := Registered(md, *md.CurrentSnapshotID); ok || *md.CurrentSnapshotID == id {
		t.Errorf("the writer's snapshot %d has a statistics file, or is the planned one", *md.CurrentSnapshotID)
	}
}
