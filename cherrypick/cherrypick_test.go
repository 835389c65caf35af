package cherrypick

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/refs"
)

// env is a table partitioned by bucket[4](id), its partition values given
// by the test (readers do not check them against the rows).
type env struct {
	ctx context.Context
	tb  *fixture.Table
	n   int
}

func newEnv(t *testing.T, version int) *env {
	t.Helper()
	c := fixture.NewSQLite(t)
	ps := spec.PartitionSpec{Fields: []spec.PartitionField{
		{SourceID: 1, FieldID: 1000, Name: "id_bucket", Transform: spec.Transform{Kind: spec.TransformBucket, Param: 4}},
	}}
	return &env{ctx: context.Background(), tb: c.Table(t, fixture.TableOptions{FormatVersion: version, Spec: ps})}
}

func (e *env) file(t *testing.T, part int32, ids ...int64) manifest.DataFile {
	t.Helper()
	e.n++
	return e.tb.WriteIDs(t, nil, "f"+strconv.Itoa(e.n), []any{part}, ids...)
}

// stage commits ch as a snapshot no ref points at, whose parent is main's
// head (Java's stageOnly), and returns its id.
func (e *env) stage(t *testing.T, ch table.Change) int64 {
	t.Helper()
	tbl, err := refs.Commit(e.ctx, e.tb.Cat, e.tb.Load(t), refs.Create(spec.RefTypeBranch, "tmp", nil, refs.Retention{}), e.tb.Opts)
	if err != nil {
		t.Fatal(err)
	}
	ch.Branch = "tmp"
	_, snap, err := table.CommitChange(e.ctx, e.tb.Cat, tbl, ch, e.tb.Opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := refs.Commit(e.ctx, e.tb.Cat, e.tb.Load(t), refs.Drop(spec.RefTypeBranch, "tmp"), e.tb.Opts); err != nil {
		t.Fatal(err)
	}
	return snap.SnapshotID
}

func (e *env) pick(t *testing.T, id int64) (*Plan, *catalog.Table, error) {
	t.Helper()
	tbl := e.tb.Load(t)
	p, err := PlanPick(e.ctx, tbl.IO, tbl.Metadata, id)
	if err != nil {
		return nil, nil, err
	}
	res, err := Commit(e.ctx, e.tb.Cat, tbl, p, e.tb.Opts)
	return p, res, err
}

// A dynamic overwrite (replace-partitions) is picked onto a main that
// changed other partitions: its removals and additions are applied, and
// the rows are those of a table that got the same changes directly.
func TestDynamicOverwrite(t *testing.T) {
	for _, v := range []int{2, 3} {
		t.Run("v"+strconv.Itoa(v), func(t *testing.T) {
			e := newEnv(t, v)
			a, b := e.file(t, 0, 1, 2, 3), e.file(t, 1, 4, 5, 6)
			e.tb.Append(t, nil, a, b)
			b2 := e.file(t, 1, 40, 50)
			over := e.stage(t, table.Change{Operation: spec.OperationOverwrite, AddData: []manifest.DataFile{b2},
				Remove: []table.FileKey{table.KeyOf(&b)}, Summary: map[string]string{ReplacePartitionsProp: "true"}})
			c := e.file(t, 0, 7, 8)
			e.tb.Append(t, nil, c)
			p, res, err := e.pick(t, over)
			if err != nil {
				t.Fatal(err)
			}
			if p.Kind != DynamicOverwrite || len(p.Added) != 1 || len(p.Removed) != 1 {
				t.Fatalf("plan %s, %d added, %d removed", p.Kind, len(p.Added), len(p.Removed))
			}
			head := res.Metadata.CurrentSnapshot()
			if head.Summary["operation"] != spec.OperationOverwrite || head.Summary[SourceSnapshotIDProp] != strconv.FormatInt(over, 10) {
				t.Errorf("summary %v", head.Summary)
			}
			// The same rows as a table that got a, c, b2 directly.
			ctl := fixture.NewSQLite(t).Table(t, fixture.TableOptions{FormatVersion: v, Name: "ctl"})
			for _, ids := range [][]int64{{1, 2, 3}, {7, 8}, {40, 50}} {
				ctl.Append(t, nil, ctl.WriteIDs(t, nil, "c"+strconv.FormatInt(ids[0], 10), nil, ids...))
			}
			if got, want := e.tb.Checksum(t, res), ctl.Checksum(t, nil); got != want {
				t.Errorf("rows after the pick %+v, want %+v", got, want)
			}
			// Picked twice: refused.
			if _, _, err := e.pick(t, over); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "already cherrypicked") {
				t.Errorf("second pick: %v", err)
			}
		})
	}
}

// A dynamic overwrite whose partition changed on main since its parent,
// an overwrite that is not dynamic and a delete, when not fast-forwards,
// and an unknown snapshot are refused, nothing committed.
func TestRefused(t *testing.T) {
	e := newEnv(t, 2)
	a := e.file(t, 0, 1, 2)
	e.tb.Append(t, nil, a)
	over := e.stage(t, table.Change{Operation: spec.OperationOverwrite, AddData: []manifest.DataFile{e.file(t, 0, 10)},
		Remove: []table.FileKey{table.KeyOf(&a)}, Summary: map[string]string{ReplacePartitionsProp: "true"}})
	plain := e.stage(t, table.Change{Operation: spec.OperationOverwrite, AddData: []manifest.DataFile{e.file(t, 1, 11)},
		Remove: []table.FileKey{table.KeyOf(&a)}})
	del := e.stage(t, table.Change{Operation: spec.OperationDelete, Remove: []table.FileKey{table.KeyOf(&a)}})
	e.tb.Append(t, nil, e.file(t, 0, 3))
	loc := e.tb.Load(t).MetadataLocation
	for name, c := range map[string]struct {
		id   int64
		want string
	}{
		"partition changed": {over, "changed partition"},
		"plain overwrite":   {plain, "only a fast-forward"},
		"delete":            {del, "only a fast-forward"},
		"unknown":           {42, "no snapshot 42"},
	} {
		if _, _, err := e.pick(t, c.id); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal mentioning %q", name, err, c.want)
		}
	}
	if e.tb.Load(t).MetadataLocation != loc {
		t.Fatal("a refused cherrypick committed")
	}
}

// A snapshot whose parent is main's head is fast-forwarded to, whatever
// its operation; then it is in main's history and cannot be picked again.
func TestFastForward(t *testing.T) {
	e := newEnv(t, 3)
	a := e.file(t, 0, 1, 2)
	e.tb.Append(t, nil, a)
	del := e.stage(t, table.Change{Operation: spec.OperationDelete, Remove: []table.FileKey{table.KeyOf(&a)}})
	p, res, err := e.pick(t, del)
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != FastForward || *res.Metadata.CurrentSnapshotID != del {
		t.Fatalf("kind %s, main at %d, want fast-forward to %d", p.Kind, *res.Metadata.CurrentSnapshotID, del)
	}
	if _, _, err := e.pick(t, del); !errors.Is(err, ErrRefused) {
		t.Errorf("picking main's head: %v", err)
	}
}

// A concurrent commit between plan and commit is rebuilt on: the pick
// lands on top of it, and the checks run again (a concurrent pick of the
// same snapshot makes the second refuse).
func TestConcurrent(t *testing.T) {
	e := newEnv(t, 2)
	e.tb.Append(t, nil, e.file(t, 0, 1))
	staged := e.stage(t, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{e.file(t, 1, 2)}})
	e.tb.Append(t, nil, e.file(t, 0, 3))
	stale := e.tb.Load(t)
	p, err := PlanPick(e.ctx, stale.IO, stale.Metadata, staged)
	if err != nil {
		t.Fatal(err)
	}
	e.tb.Append(t, nil, e.file(t, 2, 4))
	res, err := Commit(e.ctx, e.tb.Cat, stale, p, e.tb.Opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.tb.Checksum(t, res).RowCount; got != 4 {
		t.Errorf("%d rows after a pick over a concurrent append, want 4", got)
	}
	if _, err := Commit(e.ctx, e.tb.Cat, stale, p, e.tb.Opts); !errors.Is(err, ErrRefused) {
		t.Errorf("the same pick from the stale table again: %v", err)
	}
}
