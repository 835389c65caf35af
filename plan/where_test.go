package plan

import (
	"slices"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

func TestWhereSelectsPartitions(t *testing.T) {
	var data []table.FileEntry
	for i := range 5 {
		data = append(data, dataFile(path(i), 0, []any{"a"}, mib, 10, 1))
		data = append(data, dataFile(path(10+i), 0, []any{"b"}, mib, 10, 1))
	}
	o := smallOptions()
	o.Where = "cat = 'b'"
	p := mustPlan(t, testInput(data, nil), o)
	if len(p.Groups) != 1 || p.Groups[0].Partition["cat"] != "b" || p.Totals.SelectedByWhere != 5 {
		t.Fatalf("where cat = 'b': %+v", p.Totals)
	}
}

// TestWhereOnAnyColumn: a filter on a source column is projected onto its
// day partitions, and files of a selected partition are then selected by
// their bounds; a column no spec partitions is decided by bounds alone,
// and files without bounds are kept.
func TestWhereOnAnyColumn(t *testing.T) {
	day := func(s string) int32 {
		tm, _ := time.Parse("2006-01-02", s)
		return int32(tm.Unix() / 86400)
	}
	bounded := func(e table.FileEntry, id int, t spec.Type, lo, hi any) table.FileEntry {
		l, _ := spec.EncodeValue(t, lo)
		u, _ := spec.EncodeValue(t, hi)
		e.Entry.DataFile.LowerBounds = map[int][]byte{id: l}
		e.Entry.DataFile.UpperBounds = map[int][]byte{id: u}
		return e
	}
	micros := func(s string) int64 {
		tm, _ := time.Parse("2006-01-02 15:04", s)
		return tm.UnixMicro()
	}
	ts := spec.TimestampTzType{}
	var data []table.FileEntry
	for i := range 3 {
		// 06-05: every file is before the cut.
		data = append(data, bounded(dataFile(path(i), 1, []any{"a", day("2024-06-05")}, mib, 10, 1), 3, ts, micros("2024-06-05 01:00"), micros("2024-06-05 23:00")))
		// 06-06, morning files: before the cut despite their partition.
		data = append(data, bounded(dataFile(path(10+i), 1, []any{"a", day("2024-06-06")}, mib, 10, 1), 3, ts, micros("2024-06-06 01:00"), micros("2024-06-06 11:00")))
		// 06-06, afternoon files.
		data = append(data, bounded(dataFile(path(20+i), 1, []any{"a", day("2024-06-06")}, mib, 10, 1), 3, ts, micros("2024-06-06 13:00"), micros("2024-06-06 20:00")))
		// 06-07, no bounds: kept.
		data = append(data, dataFile(path(30+i), 1, []any{"a", day("2024-06-07")}, mib, 10, 1))
	}
	o := smallOptions()
	o.MinInputFiles = 1
	o.Where = "ts >= '2024-06-06 12:00:00'"
	p := mustPlan(t, testInput(data, nil), o)
	var got []string
	for _, g := range p.Groups {
		got = append(got, inputPaths(g)...)
	}
	slices.Sort(got)
	want := []string{path(20), path(21), path(22), path(30), path(31), path(32)}
	if !slices.Equal(got, want) || p.Totals.SelectedByWhere != 6 {
		t.Fatalf("where ts >= 06-06 12:00 rewrites %v (selected %d), want %v", got, p.Totals.SelectedByWhere, want)
	}

	// The same through a Collector, which sees no metrics: the caller
	// passes the files their metrics rule out.
	r := resolve(o)
	in := testInput(nil, nil)
	in.Unmatched = map[string]bool{}
	for _, e := range data {
		if !r.Filter().MatchMetrics(&e.Entry.DataFile) {
			in.Unmatched[e.Entry.DataFile.FilePath] = true
		}
	}
	c := NewCollector(in.Metadata, table.NewPartitions(), CollectorOptions{})
	defer c.Close()
	s := c.NewSink()
	for i := range data {
		lf := table.LiveDataFileOf(&data[i], c.Partitions())
		lf.Pos = uint64(i)
		if err := s.Add(&lf); err != nil {
			t.Fatal(err)
		}
	}
	res, err := c.Plan(in, r, testNow)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := res.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if p2.Totals != p.Totals || len(p2.Groups) != len(p.Groups) {
		t.Fatalf("collector plan %+v, want %+v", p2.Totals, p.Totals)
	}

	// A column no spec partitions: bounds alone decide, in every spec.
	o.Where = "id >= 100"
	data = []table.FileEntry{
		bounded(dataFile(path(40), 0, []any{"a"}, mib, 10, 1), 1, spec.LongType{}, int64(1), int64(50)),
		bounded(dataFile(path(41), 0, []any{"a"}, mib, 10, 1), 1, spec.LongType{}, int64(60), int64(150)),
		bounded(dataFile(path(42), 2, []any{}, mib, 10, 1), 1, spec.LongType{}, int64(1), int64(99)),
		dataFile(path(43), 2, []any{}, mib, 10, 1),
	}
	p = mustPlan(t, testInput(data, nil), o)
	if p.Totals.SelectedByWhere != 2 {
		t.Fatalf("where id >= 100 selected %d files, want 2 (f00041, f00043)", p.Totals.SelectedByWhere)
	}
}
