package refs

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/fixture"
)

// history is a table whose snapshots 1 <- 2 <- 3 are main's history and
// 4 (parent 2) is on another line; only metadata, no files.
func history(t *testing.T) (catalog.Catalog, *catalog.Table, commit.Options) {
	t.Helper()
	c := fixture.NewSQLite(t)
	s := spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}, Required: true}}}
	tb := c.Table(t, fixture.TableOptions{Schema: &s})
	var ups []spec.Update
	for i, parent := range []int64{0, 1, 2, 2} {
		s := spec.Snapshot{SnapshotID: int64(i + 1), SequenceNumber: int64(i + 1), TimestampMS: int64(1000 * (i + 1)),
			ManifestList: c.Dir + "/l.avro", Summary: map[string]string{"operation": "append"}}
		if parent != 0 {
			s.ParentSnapshotID = &parent
		}
		ups = append(ups, spec.AddSnapshot{Snapshot: s})
	}
	ups = append(ups, spec.SetSnapshotRef{RefName: "main", Ref: spec.SnapshotRef{SnapshotID: 3, Type: spec.RefTypeBranch}})
	return c, tb.Update(t, ups...), tb.Opts
}

func TestCreateDropList(t *testing.T) {
	cat, tbl, opts := history(t)
	ctx := context.Background()
	id := int64(2)
	tbl, err := Commit(ctx, cat, tbl, Create(spec.RefTypeTag, "month-end", &id, Retention{MaxRefAgeMS: ptr(int64(1000))}), opts)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err = Commit(ctx, cat, tbl, Create(spec.RefTypeBranch, "audit", nil, Retention{MinSnapshotsToKeep: ptr(2), MaxSnapshotAgeMS: ptr(int64(5))}), opts)
	if err != nil {
		t.Fatal(err)
	}
	got := List(tbl.Metadata, "")
	if len(got) != 3 || got[0].Name != "audit" || got[0].SnapshotID != 3 || *got[0].MinSnapshotsToKeep != 2 ||
		got[1].Name != "main" || got[2].Name != "month-end" || got[2].SnapshotID != 2 || *got[2].MaxRefAgeMS != 1000 || got[2].TimestampMS != 2000 {
		t.Fatalf("refs %+v", got)
	}
	if tags := List(tbl.Metadata, spec.RefTypeTag); len(tags) != 1 {
		t.Errorf("tags %+v", tags)
	}
	for _, c := range []struct {
		name string
		ch   Change
	}{
		{"tag exists", Create(spec.RefTypeTag, "month-end", nil, Retention{})},
		{"unknown snapshot", Create(spec.RefTypeTag, "x", ptr(int64(42)), Retention{})},
		{"tag with branch retention", Create(spec.RefTypeTag, "y", nil, Retention{MinSnapshotsToKeep: ptr(1)})},
		{"drop main", Drop(spec.RefTypeBranch, "main")},
		{"drop a tag as a branch", Drop(spec.RefTypeBranch, "month-end")},
		{"drop missing", Drop(spec.RefTypeTag, "nope")},
	} {
		before := tbl.MetadataLocation
		if _, err := Commit(ctx, cat, tbl, c.ch, opts); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v", c.name, err)
		}
		if cur, _ := cat.LoadTable(ctx, tbl.Ident); cur.MetadataLocation != before {
			t.Errorf("%s: committed", c.name)
		}
	}
	tbl, err = Commit(ctx, cat, tbl, Drop(spec.RefTypeTag, "month-end"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tbl.Metadata.Refs["month-end"]; ok {
		t.Error("tag not dropped")
	}
	if _, ok := tbl.Metadata.SnapshotByID(2); !ok {
		t.Error("dropping a tag removed its snapshot")
	}
}

// A stale table (someone moved the tag meanwhile) is rebuilt on the fresh
// one: dropping it asserts where it points now.
func TestDropAfterConcurrentMove(t *testing.T) {
	cat, tbl, opts := history(t)
	ctx := context.Background()
	tbl, err := Commit(ctx, cat, tbl, Create(spec.RefTypeTag, "t1", ptr(int64(1)), Retention{}), opts)
	if err != nil {
		t.Fatal(err)
	}
	moved, err := cat.CommitTable(ctx, tbl, nil, []spec.Update{spec.SetSnapshotRef{RefName: "t1", Ref: spec.SnapshotRef{SnapshotID: 2, Type: spec.RefTypeTag}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Commit(ctx, cat, tbl, Drop(spec.RefTypeTag, "t1"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Metadata.Refs["t1"]; ok || res.Metadata.LastUpdatedMS < moved.Metadata.LastUpdatedMS {
		t.Errorf("drop did not build on the moved tag: %+v", res.Metadata.Refs)
	}
}

func TestRollback(t *testing.T) {
	cat, tbl, opts := history(t)
	ctx := context.Background()
	if _, err := Commit(ctx, cat, tbl, Rollback(4, false), opts); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "not an ancestor") {
		t.Fatalf("non-ancestor: %v", err)
	}
	if _, err := Commit(ctx, cat, tbl, Rollback(99, true), opts); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unknown snapshot: %v", err)
	}
	res, err := Commit(ctx, cat, tbl, Rollback(1, false), opts)
	if err != nil {
		t.Fatal(err)
	}
	if *res.Metadata.CurrentSnapshotID != 1 || res.Metadata.Refs["main"].SnapshotID != 1 {
		t.Fatalf("current %d", *res.Metadata.CurrentSnapshotID)
	}
	if _, ok := res.Metadata.SnapshotByID(3); !ok {
		t.Error("rollback removed a snapshot")
	}
	res, err = Commit(ctx, cat, res, Rollback(4, true), opts)
	if err != nil || *res.Metadata.CurrentSnapshotID != 4 {
		t.Fatalf("forced: %v", err)
	}
	for _, c := range []struct {
		ts   int64
		want int64
		ok   bool
	}{{4500, 4, true}, {3999, 2, true}, {2000, 2, true}, {999, 0, false}} {
		got, err := SnapshotAsOf(res.Metadata, c.ts)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("as of %d: %d, %v; want %d", c.ts, got, err, c.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestCreateOrReplaceOrKeep: a runbook that creates a ref twice says what
// the second run does: replace moves it (same type only, never main),
// keep leaves it and says so with ErrKept, and neither commits a change
// of type.
func TestCreateOrReplaceOrKeep(t *testing.T) {
	cat, tbl, opts := history(t)
	ctx := context.Background()
	one, two := int64(1), int64(2)
	tbl, err := Commit(ctx, cat, tbl, CreateOr(spec.RefTypeTag, "release", &one, Retention{}, ReplaceExisting), opts)
	if err != nil || tbl.Metadata.Refs["release"].SnapshotID != 1 {
		t.Fatalf("replace of a missing tag creates it: %v %+v", err, tbl.Metadata.Refs["release"])
	}
	tbl, err = Commit(ctx, cat, tbl, CreateOr(spec.RefTypeTag, "release", &two, Retention{}, ReplaceExisting), opts)
	if err != nil || tbl.Metadata.Refs["release"].SnapshotID != 2 {
		t.Fatalf("replace moves the tag: %v %+v", err, tbl.Metadata.Refs["release"])
	}
	before := tbl.MetadataLocation
	if _, err := Commit(ctx, cat, tbl, CreateOr(spec.RefTypeTag, "release", &one, Retention{}, KeepExisting), opts); !errors.Is(err, ErrKept) {
		t.Fatalf("keep of an existing tag: %v, want ErrKept", err)
	}
	for name, ch := range map[string]Change{
		"replace a tag by a branch": CreateOr(spec.RefTypeBranch, "release", &one, Retention{}, ReplaceExisting),
		"replace main":              CreateOr(spec.RefTypeBranch, "main", &one, Retention{}, ReplaceExisting),
		"create an existing tag":    CreateOr(spec.RefTypeTag, "release", &one, Retention{}, FailIfExists),
	} {
		if _, err := Commit(ctx, cat, tbl, ch, opts); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if cur, _ := cat.LoadTable(ctx, tbl.Ident); cur.MetadataLocation != before || cur.Metadata.Refs["release"].SnapshotID != 2 {
		t.Errorf("refused or kept changes committed: tag at %d", cur.Metadata.Refs["release"].SnapshotID)
	}
	// Replacing asserts where the ref was: a stale table is rebuilt on
	// the fresh one, not committed over another writer's move.
	moved, err := Commit(ctx, cat, tbl, CreateOr(spec.RefTypeTag, "release", &one, Retention{}, ReplaceExisting), opts)
	if err != nil || moved.Metadata.Refs["release"].SnapshotID != 1 {
		t.Fatalf("second replace: %v", err)
	}
	if _, err := Commit(ctx, cat, tbl, CreateOr(spec.RefTypeTag, "release", &two, Retention{}, ReplaceExisting), opts); err != nil {
		t.Fatalf("replace from a stale table: %v", err)
	}
	if cur, _ := cat.LoadTable(ctx, tbl.Ident); cur.Metadata.Refs["release"].SnapshotID != 2 {
		t.Errorf("tag at %d, want 2", cur.Metadata.Refs["release"].SnapshotID)
	}
}

// TestFastForward: history 1 <- 2 <- 3 (main), 4 (parent 2). A branch at
// 2 fast-forwards to main (3) and to 4; main cannot fast-forward to 4
// (diverged), nor to a missing ref; a missing branch is created; a branch
// already there is ErrNothingToDo; a tag is never the branch moved.
func TestFastForward(t *testing.T) {
	cat, tbl, opts := history(t)
	ctx := context.Background()
	two, four := int64(2), int64(4)
	tbl, err := Commit(ctx, cat, tbl, Create(spec.RefTypeBranch, "audit", &two, Retention{MinSnapshotsToKeep: ptr(3)}), opts)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err = Commit(ctx, cat, tbl, Create(spec.RefTypeTag, "side", &four, Retention{}), opts)
	if err != nil {
		t.Fatal(err)
	}
	before := tbl.MetadataLocation
	for name, c := range map[string]struct {
		ch   Change
		want error
	}{
		"diverged":        {FastForward("main", "side"), ErrInvalid},
		"missing source":  {FastForward("audit", "nope"), ErrInvalid},
		"tag as branch":   {FastForward("side", "main"), ErrInvalid},
		"already there":   {FastForward("main", "main"), ErrNothingToDo},
		"backwards (3→2)": {FastForward("main", "audit"), ErrInvalid},
	} {
		if _, err := Commit(ctx, cat, tbl, c.ch, opts); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if cur, _ := cat.LoadTable(ctx, tbl.Ident); cur.MetadataLocation != before {
		t.Fatal("a refused fast-forward committed")
	}
	res, err := Commit(ctx, cat, tbl, FastForward("audit", "main"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Metadata.Refs["audit"]; r.SnapshotID != 3 || r.MinSnapshotsToKeep == nil || *r.MinSnapshotsToKeep != 3 {
		t.Errorf("audit after fast-forward: %+v (retention must stay)", r)
	}
	res, err = Commit(ctx, cat, res, FastForward("fresh", "side"), opts)
	if err != nil || res.Metadata.Refs["fresh"].SnapshotID != 4 || res.Metadata.Refs["fresh"].Type != spec.RefTypeBranch {
		t.Fatalf("a missing branch is created at the source's head: %v %+v", err, res.Metadata.Refs["fresh"])
	}
	// A stale table is rebuilt on the fresh one: the fast-forward asserts
	// where both refs were, so a concurrent move is never overwritten.
	res, err = Commit(ctx, cat, res, Create(spec.RefTypeBranch, "x", &two, Retention{}), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CommitTable(ctx, res, nil, []spec.Update{spec.SetSnapshotRef{RefName: "side", Ref: spec.SnapshotRef{SnapshotID: 1, Type: spec.RefTypeTag}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Commit(ctx, cat, res, FastForward("x", "side"), opts); !errors.Is(err, ErrInvalid) {
		t.Errorf("fast-forward to a tag moved backwards meanwhile: %v, want ErrInvalid", err)
	}
}

func TestRollbackBranch(t *testing.T) {
	cat, tbl, opts := history(t)
	ctx := context.Background()
	four := int64(4)
	tbl, err := Commit(ctx, cat, tbl, Create(spec.RefTypeBranch, "b", &four, Retention{}), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Commit(ctx, cat, tbl, RollbackBranch("b", 3, false), opts); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "not an ancestor of b's head") {
		t.Fatalf("non-ancestor: %v", err)
	}
	if _, err := Commit(ctx, cat, tbl, RollbackBranch("nope", 1, true), opts); !errors.Is(err, ErrInvalid) {
		t.Fatalf("missing branch: %v", err)
	}
	res, err := Commit(ctx, cat, tbl, RollbackBranch("b", 1, false), opts)
	if err != nil || res.Metadata.Refs["b"].SnapshotID != 1 || *res.Metadata.CurrentSnapshotID != 3 {
		t.Fatalf("rollback of b: %v; b at %d, main at %d", err, res.Metadata.Refs["b"].SnapshotID, *res.Metadata.CurrentSnapshotID)
	}
	if got, err := SnapshotAsOfBranch(tbl.Metadata, "b", 4500); err != nil || got != 4 {
		t.Errorf("as of 4500 on b: %d %v", got, err)
	}
	if got, err := SnapshotAsOfBranch(tbl.Metadata, "b", 3500); err != nil || got != 2 {
		t.Errorf("as of 3500 on b (3 is not b's): %d %v", got, err)
	}
}
