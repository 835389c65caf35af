package expire

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
)

// TestExpirePartitionStatistics: the partition-statistics entries of the
// snapshots an expiry removes go with them and their files are deleted;
// the file of the retained head stays registered and in place, also when
// the entry of a removed snapshot names it too.
func TestExpirePartitionStatistics(t *testing.T) {
	e, tbl := linearTable(t, 6)
	snaps := tbl.Metadata.Snapshots
	head := snaps[len(snaps)-1].SnapshotID
	var ups []spec.Update
	reg := map[int64]spec.PartitionStatisticsFile{}
	for _, i := range []int{0, 2, len(snaps) - 1} {
		id := snaps[i].SnapshotID
		p, n := e.writeFile(t, tbl, fmt.Sprintf("partition-stats-%d.parquet", id))
		reg[id] = spec.PartitionStatisticsFile{SnapshotID: id, StatisticsPath: p, FileSizeInBytes: n}
	}
	// A removed snapshot's entry naming the head's file: still referenced.
	shared := reg[head]
	shared.SnapshotID = snaps[1].SnapshotID
	reg[shared.SnapshotID] = shared
	for _, f := range reg {
		ups = append(ups, spec.SetPartitionStatistics{PartitionStatistics: f})
	}
	tbl, err := e.Cat.CommitTable(e.Ctx, tbl, nil, ups)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(e.Ctx, e.Cat, tbl, Options{Policy: expireAllButLast(tbl), Commit: e.Opts})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Plan.Remove) != len(snaps)-1 {
		t.Fatalf("removed %d snapshots, want %d", len(rep.Plan.Remove), len(snaps)-1)
	}
	got, err := e.Cat.LoadTable(e.Ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ps := got.Metadata.PartitionStatistics; len(ps) != 1 || ps[0].SnapshotID != head || ps[0].StatisticsPath != reg[head].StatisticsPath {
		t.Errorf("partition statistics after expiry: %+v, want only the head's", ps)
	}
	deleted := map[string]bool{}
	for _, f := range reportFiles(t, rep) {
		deleted[f.Path] = true
	}
	for id, f := range reg {
		_, statErr := os.Stat(strings.TrimPrefix(f.StatisticsPath, "file://"))
		keep := f.StatisticsPath == reg[head].StatisticsPath
		switch {
		case keep && (statErr != nil || deleted[f.StatisticsPath]):
			t.Errorf("the head's file %s (entry of %d) was deleted", f.StatisticsPath, id)
		case !keep && (statErr == nil || !deleted[f.StatisticsPath]):
			t.Errorf("%s of removed snapshot %d: still there %v, reported deleted %v", f.StatisticsPath, id, statErr == nil, deleted[f.StatisticsPath])
		}
	}
}
