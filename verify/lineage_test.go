package verify

import (
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
)

// RewriteOnly walks To's ancestry back to From: every snapshot after From
// must be a replace; an append between, a From that is no ancestor or a
// gap in the history is not a rewrite.
func TestRewriteOnly(t *testing.T) {
	snap := func(id int64, parent int64, op string) spec.Snapshot {
		s := spec.Snapshot{SnapshotID: id, Summary: map[string]string{"operation": op}}
		if parent != 0 {
			s.ParentSnapshotID = &parent
		}
		return s
	}
	md := &spec.TableMetadata{Snapshots: []spec.Snapshot{
		snap(1, 0, spec.OperationAppend),
		snap(2, 1, spec.OperationReplace),
		snap(3, 2, spec.OperationReplace),
		snap(4, 3, spec.OperationAppend),
		snap(5, 4, spec.OperationReplace),
		snap(6, 99, spec.OperationReplace), // its parent expired
		snap(7, 1, spec.OperationReplace),  // another branch
	}}
	by := func(id int64) *spec.Snapshot {
		s, ok := md.SnapshotByID(id)
		if !ok {
			t.Fatalf("no snapshot %d", id)
		}
		return s
	}
	for _, c := range []struct {
		from, to int64
		want     bool
	}{
		{1, 3, true}, {2, 3, true}, {3, 3, true}, {4, 5, true},
		{1, 5, false}, {3, 4, false}, {1, 6, false}, {2, 7, false}, {3, 1, false},
	} {
		if got := RewriteOnly(md, by(c.from), by(c.to)); got != c.want {
			t.Errorf("RewriteOnly(%d, %d) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
