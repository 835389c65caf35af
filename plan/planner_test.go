package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/table"
)

func mustPlan(t *testing.T, in *Input, o Options) *Plan {
	t.Helper()
	r, err := o.Resolve(in.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(in, r, testNow)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func partA() []any { return []any{"a"} }

func TestMinInputFiles(t *testing.T) {
	var data []table.FileEntry
	for i := range 4 {
		data = append(data, dataFile(path(i), 0, partA(), 10*mib, 100, 1))
	}
	if p := mustPlan(t, testInput(data, nil), smallOptions()); len(p.Groups) != 0 {
		t.Fatalf("4 small files (40 MiB < target) formed %d groups, want 0", len(p.Groups))
	}
	data = append(data, dataFile(path(4), 0, partA(), 10*mib, 100, 1))
	p := mustPlan(t, testInput(data, nil), smallOptions())
	if len(p.Groups) != 1 || p.Groups[0].InputFiles != 5 || p.Groups[0].ExpectedOutputFiles != 1 {
		t.Fatalf("5 small files: %+v", p.Groups)
	}
	o := smallOptions()
	o.MinInputFiles = 1
	one := []table.FileEntry{dataFile(path(0), 0, partA(), 10*mib, 100, 1)}
	if p := mustPlan(t, testInput(one, nil), o); len(p.Groups) != 0 {
		t.Fatalf("a single small file must not form a group even with min-input-files 1 (Java needs > 1 file)")
	}
}

func TestEnoughContent(t *testing.T) {
	// Two 60 MiB files: too small each, 120 MiB together > target.
	data := []table.FileEntry{
		dataFile(path(0), 0, partA(), 60*mib, 100, 1),
		dataFile(path(1), 0, partA(), 60*mib, 100, 1),
	}
	p := mustPlan(t, testInput(data, nil), smallOptions())
	if len(p.Groups) != 1 || p.Groups[0].InputFiles != 2 {
		t.Fatalf("groups = %+v", p.Groups)
	}
	// Right-sized files are not candidates.
	data = append(data, dataFile(path(2), 0, partA(), 100*mib, 100, 1))
	p = mustPlan(t, testInput(data, nil), smallOptions())
	if len(p.Groups) != 1 || slices.Contains(inputPaths(p.Groups[0]), path(2)) {
		t.Fatalf("a right-sized file was selected: %+v", p.Groups)
	}
}

func TestTooLargeSingleFile(t *testing.T) {
	data := []table.FileEntry{dataFile(path(0), 0, partA(), 400*mib, 1000, 1)}
	p := mustPlan(t, testInput(data, nil), smallOptions())
	if len(p.Groups) != 1 {
		t.Fatalf("a file above max must be split: %+v", p.Groups)
	}
	g := p.Groups[0]
	if g.ExpectedOutputFiles != 4 || g.Inputs[0].Reasons[0] != ReasonTooLarge {
		t.Errorf("expected 4 outputs for 400 MiB at 100 MiB target, got %d (%v)", g.ExpectedOutputFiles, g.Inputs[0].Reasons)
	}
}

func TestDeleteFileThreshold(t *testing.T) {
	target := path(0)
	data := []table.FileEntry{dataFile(target, 0, partA(), 100*mib, 1000, 1)}
	deletes := []table.FileEntry{
		posDelete("s3://d/p1.parquet", 0, partA(), 1, 2, ""),
		posDelete("s3://d/p2.parquet", 0, partA(), 1, 3, ""),
		eqDelete("s3://d/e1.parquet", 0, partA(), 1, 4),
	}
	o := smallOptions()
	if p := mustPlan(t, testInput(data, deletes), o); len(p.Groups) != 0 {
		t.Fatalf("threshold off: %+v", p.Groups)
	}
	three, four := 3, 4
	o.DeleteFileThreshold = &four
	if p := mustPlan(t, testInput(data, deletes), o); len(p.Groups) != 0 {
		t.Fatalf("3 deletes < threshold 4 selected the file")
	}
	o.DeleteFileThreshold = &three
	p := mustPlan(t, testInput(data, deletes), o)
	if len(p.Groups) != 1 || !slices.Contains(p.Groups[0].Inputs[0].Reasons, ReasonTooManyDeletes) {
		t.Fatalf("3 deletes >= threshold 3: %+v", p.Groups)
	}
	in := p.Groups[0].Inputs[0]
	if len(in.Deletes.Position) != 2 || len(in.Deletes.Equality) != 1 || in.Deletes.DV != nil {
		t.Errorf("applicable deletes = %+v", in.Deletes)
	}
}

func TestDeleteRatio(t *testing.T) {
	target := path(0)
	data := []table.FileEntry{dataFile(target, 0, partA(), 100*mib, 1000, 1)}
	cases := []struct {
		name    string
		deletes []table.FileEntry
		want    bool
	}{
		{"dv at ratio", []table.FileEntry{dv("s3://d/x.puffin", 4, 0, partA(), 300, 2, target)}, true},
		{"dv below ratio", []table.FileEntry{dv("s3://d/x.puffin", 4, 0, partA(), 299, 2, target)}, false},
		{"file-scoped pos", []table.FileEntry{posDelete("s3://d/p.parquet", 0, partA(), 400, 2, target)}, true},
		// Partition-scoped and equality deletes do not count, as in Java.
		{"partition-scoped pos", []table.FileEntry{posDelete("s3://d/p.parquet", 0, partA(), 900, 2, "")}, false},
		{"equality", []table.FileEntry{eqDelete("s3://d/e.parquet", 0, partA(), 900, 2)}, false},
	}
	for _, c := range cases {
		p := mustPlan(t, testInput(data, c.deletes), smallOptions())
		if got := len(p.Groups) == 1; got != c.want {
			t.Errorf("%s: selected = %v, want %v", c.name, got, c.want)
		}
	}
	// File-scoped by bounds: equal lower and upper file_path bounds.
	d := posDelete("s3://d/p.parquet", 0, partA(), 500, 2, "")
	d.Entry.DataFile.LowerBounds = map[int][]byte{2147483546: []byte(target)}
	d.Entry.DataFile.UpperBounds = map[int][]byte{2147483546: []byte(target)}
	p := mustPlan(t, testInput(data, []table.FileEntry{d}), smallOptions())
	if len(p.Groups) != 1 || !p.Groups[0].Inputs[0].Deletes.Position[0].FileScoped {
		t.Errorf("bounds-scoped delete not counted: %+v", p.Groups)
	}
}

func TestRewriteAll(t *testing.T) {
	data := []table.FileEntry{dataFile(path(0), 0, partA(), 100*mib, 100, 1)}
	o := smallOptions()
	o.RewriteAll = true
	p := mustPlan(t, testInput(data, nil), o)
	if len(p.Groups) != 1 || p.Groups[0].Inputs[0].Reasons[0] != ReasonRewriteAll {
		t.Fatalf("rewrite-all: %+v", p.Groups)
	}
}

func TestGroupsBySpecAndPartition(t *testing.T) {
	var data []table.FileEntry
	for i := range 5 {
		data = append(data, dataFile(path(i), 0, []any{"a"}, mib, 10, 1))
		data = append(data, dataFile(path(10+i), 0, []any{"b"}, mib, 10, 1))
		data = append(data, dataFile(path(20+i), 1, []any{"a", int32(20000)}, mib, 10, 1))
		data = append(data, dataFile(path(30+i), 1, []any{"a", nil}, mib, 10, 1))
	}
	p := mustPlan(t, testInput(data, nil), smallOptions())
	if len(p.Groups) != 4 {
		t.Fatalf("got %d groups, want 4", len(p.Groups))
	}
	// Default order: spec, then partition (null first).
	want := []struct {
		spec  int
		first string
	}{{0, path(0)}, {0, path(10)}, {1, path(30)}, {1, path(20)}}
	for i, w := range want {
		g := p.Groups[i]
		if g.SpecID != w.spec || g.Inputs[0].Path != w.first || g.Index != i+1 {
			t.Errorf("group %d: spec %d first %s index %d", i, g.SpecID, g.Inputs[0].Path, g.Index)
		}
	}
	if got := p.Groups[3].Partition["ts_day"]; got != "2024-10-04" {
		t.Errorf("human day partition = %v", got)
	}
}

func TestMaxFileGroupSize(t *testing.T) {
	var data []table.FileEntry
	for i := range 10 {
		data = append(data, dataFile(path(i), 0, partA(), 30*mib, 10, 1))
	}
	o := smallOptions()
	o.MaxFileGroupSize = 100 * mib
	o.MinInputFiles = 2
	p := mustPlan(t, testInput(data, nil), o)
	// Lookback-1 packing: 3+3+3+1; the last bin of one file is dropped.
	if len(p.Groups) != 3 {
		t.Fatalf("groups = %d", len(p.Groups))
	}
	for _, g := range p.Groups {
		if g.InputBytes > 100*mib || g.InputFiles != 3 {
			t.Errorf("group %s: %d files, %d bytes", g.ID, g.InputFiles, g.InputBytes)
		}
		if g.PartitionIndex < 1 || g.PartitionIndex > 3 {
			t.Errorf("partition index %d", g.PartitionIndex)
		}
	}
	o.MaxFileGroupInputFiles = 2
	p = mustPlan(t, testInput(data, nil), o)
	if len(p.Groups) != 5 {
		t.Fatalf("max-file-group-input-files 2: %d groups", len(p.Groups))
	}
}

func TestJobOrderAndMaxFiles(t *testing.T) {
	var data []table.FileEntry
	n := 0
	for part, count := range map[string]int{"a": 5, "b": 7, "c": 6} {
		for range count {
			data = append(data, dataFile(path(n), 0, []any{part}, mib*int64(1+n%3), 10, 1))
			n++
		}
	}
	o := smallOptions()
	o.JobOrder = "files-desc"
	p := mustPlan(t, testInput(data, nil), o)
	var counts []int
	for _, g := range p.Groups {
		counts = append(counts, g.InputFiles)
	}
	if !slices.Equal(counts, []int{7, 6, 5}) {
		t.Fatalf("files-desc order = %v", counts)
	}
	o.JobOrder = "bytes-asc"
	p = mustPlan(t, testInput(data, nil), o)
	for i := 1; i < len(p.Groups); i++ {
		if p.Groups[i-1].InputBytes > p.Groups[i].InputBytes {
			t.Fatalf("bytes-asc out of order")
		}
	}
	limit := 10
	o.JobOrder = "files-desc"
	o.MaxFilesToRewrite = &limit
	p = mustPlan(t, testInput(data, nil), o)
	if p.Totals.InputFiles != 10 || len(p.Groups) != 2 || p.Groups[0].InputFiles != 7 || p.Groups[1].InputFiles != 3 {
		t.Fatalf("max-files-to-rewrite 10: %d files in %d groups", p.Totals.InputFiles, len(p.Groups))
	}
}

func TestExpectedOutputFiles(t *testing.T) {
	r := resolve(Options{TargetFileSize: 1000, MaxFileSize: 1800, MinFileSize: new(int64(750))})
	cases := map[int64]int{
		0: 1, 999: 1, 1000: 1,
		1099: 1, 1760: 2, 1751: 2, 1750: 2, 10100: 10, 2000: 2, 2150: 2, 2300: 3,
	}
	cases[1100] = 2 // 1.1 x target exactly keeps the remainder (strict <)
	for in, want := range cases {
		if got := expectedOutputFiles(in, r); got != want {
			t.Errorf("expectedOutputFiles(%d) = %d, want %d", in, got, want)
		}
	}
	if got := inputSplitSize(10100, r); got != 1000+5*1024 && got != r.WriteMaxFileSize {
		t.Errorf("split size = %d", got)
	}
}

func TestPackLookback1(t *testing.T) {
	w := func(x int64) int64 { return x }
	got := packLookback1([]int64{5, 5, 5, 20, 1, 9, 1}, w, 10, 100)
	want := [][]int64{{5, 5}, {5}, {20}, {1, 9}, {1}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestInputErrors(t *testing.T) {
	cases := map[string][]table.FileEntry{
		"partition spec 7":      {dataFile(path(0), 7, nil, 1, 1, 1)},
		"has 2 partition":       {dataFile(path(0), 0, []any{"a", "b"}, 1, 1, 1)},
		"is live twice":         {dataFile(path(0), 0, partA(), 1, 1, 1), dataFile(path(0), 0, partA(), 1, 1, 1)},
		"listed as a data file": {posDelete(path(0), 0, partA(), 1, 1, "")},
	}
	for want, data := range cases {
		_, err := New(testInput(data, nil), resolve(smallOptions()), testNow)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	if _, err := New(testInput(nil, nil), Resolved{}, testNow); err == nil {
		t.Error("unresolved options accepted")
	}
}
