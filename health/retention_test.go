package health

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// TestRetention: with a retention setting, health counts the live data
// files wholly past it (every row, by bounds with no nulls or by an
// identity partition value; their rows less their DV's) and those that
// may hold rows past it (rows at most: live, less nulls), skips files
// their bounds, partition or nulls rule out, and recommends delete-rows
// with the expression maintain's retention runs.
func TestRetention(t *testing.T) {
	schema := spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "ts", Type: spec.TimestampType{}},
		{ID: 3, Name: "d", Type: spec.DateType{}},
	}}
	md := &spec.TableMetadata{FormatVersion: 3, Schemas: []spec.Schema{schema},
		PartitionSpecs: []spec.PartitionSpec{{ID: 0}, {ID: 1, Fields: []spec.PartitionField{
			{SourceID: 3, FieldID: 1000, Name: "d", Transform: spec.Transform{Kind: spec.TransformIdentity}}}}},
		DefaultSpecID: 0, Properties: map[string]string{},
		Snapshots: []spec.Snapshot{{SnapshotID: 1, SequenceNumber: 1, TimestampMS: now.UnixMilli()}}, CurrentSnapshotID: ptr(int64(1))}
	ago := func(days int) time.Time { return now.AddDate(0, 0, -days) }
	day := func(days int) int32 { return int32(ago(days).Unix() / 86400) }
	enc := func(typ spec.Type, v any) []byte {
		b, err := spec.EncodeValue(typ, v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// file: path, spec, records, nulls of ts and d (-1: no count), ts and
	// d bounds in days ago (-1: none), partition.
	file := func(path string, specID int32, records, nulls int64, tsFrom, tsTo, dFrom, dTo int, part ...any) table.FileEntry {
		df := manifest.DataFile{Content: manifest.ContentData, FilePath: path, SpecID: specID, Partition: part, FileSizeInBytes: 100, RecordCount: records,
			LowerBounds: map[int][]byte{}, UpperBounds: map[int][]byte{}, ValueCounts: map[int]int64{}, NullValueCounts: map[int]int64{}}
		if part == nil {
			df.Partition = []any{}
		}
		if nulls >= 0 {
			df.ValueCounts[2], df.NullValueCounts[2] = records, nulls
			df.ValueCounts[3], df.NullValueCounts[3] = records, nulls
		}
		if tsFrom >= 0 {
			df.LowerBounds[2], df.UpperBounds[2] = enc(spec.TimestampType{}, ago(tsFrom).UnixMicro()), enc(spec.TimestampType{}, ago(tsTo).UnixMicro())
		}
		if dFrom >= 0 {
			df.LowerBounds[3], df.UpperBounds[3] = enc(spec.DateType{}, day(dFrom)), enc(spec.DateType{}, day(dTo))
		}
		return table.FileEntry{Entry: manifest.Entry{DataFile: df, SequenceNumber: ptr(int64(1))}}
	}
	dv := manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: "dv.puffin", Partition: []any{}, FileSizeInBytes: 50, RecordCount: 3,
		ContentOffset: ptr(int64(4)), ContentSizeInBytes: ptr(int64(40)), ReferencedDataFile: ptr("old-dv")}
	fs := &table.FileSet{
		Data: []table.FileEntry{
			file("old", 0, 10, 0, 200, 100, 200, 100),           // wholly past
			file("old-dv", 0, 10, 0, 200, 91, 200, 91),          // wholly past, 3 rows deleted
			file("mixed", 0, 10, 2, 100, 10, 100, 10),           // partly: at most 8 (2 nulls)
			file("old-null", 0, 10, 1, 200, 100, 200, 100),      // a null row: partly, at most 9
			file("new", 0, 10, 0, 10, 0, 10, 0),                 // not past
			file("nulls", 0, 5, 5, -1, -1, -1, -1),              // only nulls: not past
			file("no-metrics", 0, 4, -1, -1, -1, -1, -1),        // nothing known: partly, at most 4
			file("part-old", 1, 6, 0, 95, 95, -1, -1, day(95)),  // d partition past
			file("part-new", 1, 6, 0, 200, 200, -1, -1, day(1)), // d partition not past
		},
		Deletes: []table.FileEntry{{Entry: manifest.Entry{DataFile: dv, SequenceNumber: ptr(int64(1))}}},
	}
	analyze := func(column string) Report {
		return Analyze(Input{Table: "db.t", Metadata: md, Files: fs, Now: now, Thresholds: thresholds(t, md),
			Retention: &Retention{Column: column, Keep: 90 * 24 * time.Hour}})
	}
	for _, c := range []struct {
		column      string
		whole       int
		wholeRows   int64
		partial     int
		partialRows int64
		where       string
	}{
		// ts: part-old and part-new have ts bounds, both wholly past.
		{"ts", 4, 10 + 7 + 6 + 6, 3, 8 + 9 + 4, `"ts" < TIMESTAMP '2024-12-01 12:00:00'`},
		// d: the identity partition decides part-old and part-new, the
		// bounds the others.
		{"d", 3, 10 + 7 + 6, 3, 8 + 9 + 4, `"d" < DATE '2024-12-01'`},
	} {
		r := analyze(c.column)
		s := r.Retention
		if s == nil || s.Error != "" || s.Where != c.where || s.WholeFiles != c.whole || s.WholeRows != c.wholeRows ||
			s.PartialFiles != c.partial || s.PartialRowsMax != c.partialRows || s.Keep != "90d" {
			t.Errorf("%s: retention %+v, want where %s, whole %d (%d rows), partial %d (%d rows)", c.column, s, c.where, c.whole, c.wholeRows, c.partial, c.partialRows)
		}
		var f *Finding
		for i := range r.Findings {
			if r.Findings[i].Kind == KindRowsPastRetention {
				f = &r.Findings[i]
			}
		}
		if f == nil || f.Recommendation != "icectl delete-rows db.t --where "+c.where || !strings.Contains(f.Message, fmt.Sprintf("%d data files (%d live rows)", c.whole, c.wholeRows)) {
			t.Errorf("%s: finding %+v", c.column, f)
		}
		b, _ := json.Marshal(r)
		if !strings.Contains(string(b), `"retention":{"column":"`+c.column) {
			t.Errorf("%s: json lacks retention: %s", c.column, b)
		}
	}

	// Nothing past: no finding, the counts say zero.
	fresh := *fs
	fresh.Data, fresh.Deletes = []table.FileEntry{fs.Data[4]}, nil
	r := Analyze(Input{Table: "db.t", Metadata: md, Files: &fresh, Now: now, Thresholds: thresholds(t, md),
		Retention: &Retention{Column: "ts", Keep: 90 * 24 * time.Hour}})
	if r.Retention.MayBePast() || len(r.Findings) != 0 {
		t.Errorf("fresh table: %+v, findings %+v", r.Retention, r.Findings)
	}
	// A column that is not a timestamp or date: not judged, said why.
	r = analyze("id")
	if !r.Retention.MayBePast() || !strings.Contains(r.Retention.Error, "not a timestamp or date") {
		t.Errorf("retention on id: %+v", r.Retention)
	}
	// Not asked: nothing in the report.
	r = Analyze(Input{Table: "db.t", Metadata: md, Files: fs, Now: now, Thresholds: thresholds(t, md)})
	if b, _ := json.Marshal(r); r.Retention != nil || strings.Contains(string(b), `"retention"`) {
		t.Errorf("no setting: %s", b)
	}
}
