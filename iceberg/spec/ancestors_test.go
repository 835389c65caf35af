package spec

import "testing"

// TestAncestors walks parents newest first and stops at a missing parent
// and at a cycle (crafted metadata), never looping.
func TestAncestors(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	md := &TableMetadata{Snapshots: []Snapshot{
		{SnapshotID: 1}, {SnapshotID: 2, ParentSnapshotID: p(1)}, {SnapshotID: 3, ParentSnapshotID: p(2)},
		{SnapshotID: 5, ParentSnapshotID: p(4)}, // 4 expired
		{SnapshotID: 6, ParentSnapshotID: p(7)}, {SnapshotID: 7, ParentSnapshotID: p(6)},
	}}
	for _, c := range []struct {
		id   int64
		want []int64
	}{{3, []int64{3, 2, 1}}, {5, []int64{5}}, {6, []int64{6, 7}}, {9, nil}} {
		var got []int64
		for _, s := range md.Ancestors(c.id) {
			got = append(got, s.SnapshotID)
		}
		if len(got) != len(c.want) {
			t.Errorf("Ancestors(%d) = %v, want %v", c.id, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("Ancestors(%d) = %v, want %v", c.id, got, c.want)
				break
			}
		}
	}
}
