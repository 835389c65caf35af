package health

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/partstats"
)

// TestPartitionStatsChecked: a partition statistics file whose counts are
// the live files' is named in the report; one that differs in any count
// is a note; the rest of the report is the same in all three cases.
func TestPartitionStatsChecked(t *testing.T) {
	md := testMetadata(time.Hour)
	fs := &table.FileSet{
		Data: []table.FileEntry{dataFile(1, 10<<20, 100, int32(20000)), dataFile(1, 1<<20, 5, int32(20000)), dataFile(0, 3<<20, 50)},
		Deletes: []table.FileEntry{deleteFile(manifest.ContentPositionDeletes, false, 1, 3, int32(20000)),
			deleteFile(manifest.ContentEqualityDeletes, false, 0, 2)},
	}
	b, err := partstats.NewBuilder(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range [][]table.FileEntry{fs.Data, fs.Deletes} {
		for i := range set {
			if err := b.Add(set[i].Entry.DataFile.SpecID, &set[i].Entry, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	in := Input{Table: "ns.t", Metadata: md, Files: fs, Now: now, Thresholds: thresholds(t, md)}
	plain := Analyze(in)
	file := spec.PartitionStatisticsFile{SnapshotID: 1, StatisticsPath: "s3://b/t/metadata/partition-stats-1-x.parquet"}
	in.PartitionStats = &PartitionStats{File: file, Rows: b.Rows()}
	agree := Analyze(in)
	if agree.PartitionStatistics != file.StatisticsPath || len(agree.Notes) != 0 {
		t.Errorf("an agreeing file: partition_statistics %q, notes %v", agree.PartitionStatistics, agree.Notes)
	}
	rows := b.Rows()
	rows[len(rows)-1].EqualityDeleteRecordCount++
	in.PartitionStats = &PartitionStats{File: file, Rows: rows}
	off := Analyze(in)
	if off.PartitionStatistics != "" || len(off.Notes) != 1 || !strings.Contains(off.Notes[0], "disagrees with the manifests") {
		t.Errorf("a disagreeing file: partition_statistics %q, notes %v", off.PartitionStatistics, off.Notes)
	}
	agree.PartitionStatistics = ""
	for _, r := range []Report{agree, off} {
		a, _ := json.Marshal(plain)
		b, _ := json.Marshal(r)
		if string(a) != string(b) {
			t.Errorf("report with a file\n%s\nwithout\n%s", b, a)
		}
	}
}
