package compact_test

import (
	"testing"
)

// TestFixtures checks the fixtures themselves before any compaction: the
// model's rows are what iceberg-go reads, and icectl's scan agrees with it.
// Every other test trusts them.
func TestFixtures(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			f := sc.build(t, 1)
			g := icebergGo(t, f, false)
			checkModel(t, f, g)
			if len(f.deleted) == 0 {
				t.Error("the fixture deletes nothing")
			}
			own := icectlChecksum(t, f)
			if own.RowCount != g.RowCount || own.Checksum != g.Checksum {
				t.Errorf("icectl scan: %d rows %s; iceberg-go: %d rows %s", own.RowCount, own.Checksum, g.RowCount, g.Checksum)
			}
		})
	}
}
