package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// collectOptions say how planVia feeds a Collector.
type collectOptions struct {
	sinks    int   // goroutines, each with its own sink
	runBytes int   // run size (0: the default)
	memory   int64 // CollectorOptions.MemoryLimit
	dir      string
}

// planVia plans in through a Collector as PlanTable does: in.Data is
// spread over several sinks fed concurrently, runs are small and records
// spill to dir.
func planVia(t testing.TB, in *Input, r Resolved, o collectOptions) (*Result, error) {
	t.Helper()
	c := NewCollector(in.Metadata, table.NewPartitions(), CollectorOptions{TempDir: o.dir, MemoryLimit: o.memory})
	t.Cleanup(func() { c.Close() })
	if o.runBytes > 0 {
		c.runBytes = o.runBytes
	}
	sinks := make([]table.DataFileSink, max(1, o.sinks))
	for i := range sinks {
		sinks[i] = c.NewSink()
	}
	var wg sync.WaitGroup
	errs := make([]error, len(sinks))
	for w, s := range sinks {
		wg.Go(func() {
			for i := w; i < len(in.Data); i += len(sinks) {
				lf := table.LiveDataFileOf(&in.Data[i], c.Partitions())
				lf.Pos = uint64(i)
				if err := s.Add(&lf); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	rest := *in
	rest.Data = nil
	if f := r.Filter(); f != nil {
		// As compact does: the files' metrics are read by the caller.
		rest.Unmatched = unmatchedFiles(f, in)
	}
	res, err := c.Plan(&rest, r, testNow)
	if err == nil {
		t.Cleanup(func() { res.Close() })
	}
	return res, err
}

// nastyPath is a path with characters JSON escapes.
func nastyPath(i int) string {
	return fmt.Sprintf("s3://bucket/db/t/data/<a&b>\"q\"\\\u2028\t%05d\xff.parquet", i)
}

// richInput is randomInput with what the planner must also get right:
// three specs (one unpartitioned, whose equality deletes are global), v1
// sequence numbers, missing file sequence numbers, row ids, formats, paths
// JSON must escape, several DVs of one file, bounds-scoped position deletes
// and deletes of partitions without data.
func richInput(rng *rand.Rand) *Input {
	var data, deletes []table.FileEntry
	nParts := 1 + rng.IntN(8)
	n := rng.IntN(150)
	for i := range n {
		var specID int32
		var part []any
		switch k := rng.IntN(nParts); {
		case k == 5:
			specID, part = 2, []any{}
		case k%3 == 2:
			specID, part = 1, []any{fmt.Sprint("p", k), int32(20000 + k)}
		default:
			specID, part = 0, []any{fmt.Sprint("p", k, "<&>")}
		}
		if rng.IntN(10) == 0 {
			part = make([]any, len(part))
		}
		p := path(i)
		if rng.IntN(7) == 0 {
			p = nastyPath(i)
		}
		size := int64(1+rng.IntN(300)) * mib
		records := int64(rng.IntN(10000))
		seq := int64(rng.IntN(6))
		e := dataFile(p, specID, part, size, records, seq)
		switch rng.IntN(4) {
		case 0:
			e.Entry.FileSequenceNumber = nil
		case 1:
			e.Entry.DataFile.FirstRowID = i64(int64(i) * 10000)
		}
		e.Entry.DataFile.FileFormat = []string{"PARQUET", "PARQUET", "AVRO", "ORC"}[rng.IntN(4)]
		if i%5 != 0 { // id bounds for a where on id; every fifth file has none
			lo, _ := spec.EncodeValue(spec.LongType{}, int64(i*10))
			hi, _ := spec.EncodeValue(spec.LongType{}, int64(i*10+25))
			e.Entry.DataFile.LowerBounds = map[int][]byte{1: lo}
			e.Entry.DataFile.UpperBounds = map[int][]byte{1: hi}
		}
		data = append(data, e)
		switch rng.IntN(9) {
		case 0:
			deletes = append(deletes, dv("s3://d/dv.puffin", int64(4+i*50), specID, part, records/int64(1+rng.IntN(4)), seq+int64(rng.IntN(2)), p))
		case 1:
			deletes = append(deletes, dv("s3://d/dv.puffin", int64(4+i*50), specID, part, 5, seq+1, p),
				dv("s3://d/dv2.puffin", int64(8+i*50), specID, part, 7, seq+int64(rng.IntN(3)), p))
		case 2:
			deletes = append(deletes, posDelete(fmt.Sprintf("s3://d/fs%d.parquet", i), specID, part, 1+int64(rng.IntN(100)), seq+int64(rng.IntN(2)), p))
		case 3:
			deletes = append(deletes, posDelete(fmt.Sprintf("s3://d/ps%d.parquet", i), specID, part, 3, int64(rng.IntN(7)), ""))
		case 4:
			deletes = append(deletes, eqDelete(fmt.Sprintf("s3://d/eq%d.parquet", i), specID, part, 3, int64(rng.IntN(7))))
		case 5:
			d := posDelete(fmt.Sprintf("s3://d/bs%d.parquet", i), specID, part, 2, seq+int64(rng.IntN(2)), "")
			d.Entry.DataFile.LowerBounds = map[int][]byte{spec.FieldIDFilePath: []byte(p)}
			d.Entry.DataFile.UpperBounds = map[int][]byte{spec.FieldIDFilePath: []byte(p)}
			deletes = append(deletes, d)
		case 6:
			deletes = append(deletes, eqDelete(fmt.Sprintf("s3://d/geq%d.parquet", i), 2, []any{}, 3, int64(rng.IntN(7))))
		case 7:
			// A DV of the file in another partition applies to nothing.
			deletes = append(deletes, dv("s3://d/dv3.puffin", int64(4+i*50), specID, []any{"elsewhere"}, 1, seq+1, p))
		}
	}
	if rng.IntN(3) == 0 {
		deletes = append(deletes, posDelete("s3://d/nodata.parquet", 0, []any{"nowhere<&>"}, 1, 9, ""))
	}
	in := testInput(data, deletes)
	in.Metadata.PartitionSpecs[0].Fields[0].Name = "cat<&>"
	return in
}

func richOptions(rng *rand.Rand) Options {
	o := randomOptions(rng)
	if rng.IntN(4) == 0 {
		o.Where = []string{"cat = 'p1<&>'", "cat IN ('p0<&>', 'p2', 'p3<&>')", "cat IS NULL",
			"id >= 500", "id < 300 OR cat = 'p2'", "NOT (id > 100 AND id < 900)"}[rng.IntN(6)]
	}
	if rng.IntN(4) == 0 {
		o.DeleteRatioThreshold = 0.01
	}
	return o
}

// TestMatchesReference plans random tables with New, and through a
// Collector with many small runs spilled to disk, and compares both with
// the planner as it was (reference_test.go), byte for byte: the plan JSON,
// JSON streamed group by group, and the text summary.
func TestMatchesReference(t *testing.T) {
	dir := t.TempDir()
	// Cleanups run last-in first-out: this one after every Close.
	t.Cleanup(func() {
		if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
			t.Errorf("spill files left behind: %v", left)
		}
	})
	var stats struct{ errs, groups, retired, conditional, applied, truncated, dangling int }
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 11))
		in := richInput(rng)
		o := richOptions(rng)
		r, err := o.Resolve(in.Metadata)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		want, werr := referenceNew(in, r, testNow)
		got, gerr := New(in, r, testNow)
		if (werr != nil) != (gerr != nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("seed %d: error %v, reference %v", seed, gerr, werr)
		}
		if werr != nil {
			stats.errs++
			continue
		}
		stats.groups += len(want.Groups)
		stats.retired += want.Totals.DeleteFilesRetired
		stats.conditional += len(want.RetireAfterGroups)
		stats.applied += want.Totals.DeleteFilesApplied
		stats.dangling += len(want.DanglingDeletes)
		if r.MaxFilesToRewrite != nil && want.Totals.InputFiles == *r.MaxFilesToRewrite {
			stats.truncated++
		}
		wantJSON, err := want.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		gotJSON, err := got.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gotJSON, wantJSON) {
			t.Fatalf("seed %d: plan differs from the reference:\n%s\n%s", seed, gotJSON, wantJSON)
		}
		var wantText bytes.Buffer
		if err := want.WriteText(&wantText); err != nil {
			t.Fatal(err)
		}

		co := collectOptions{sinks: 1 + rng.IntN(3), runBytes: 1 + rng.IntN(2000), memory: int64(rng.IntN(3000)) - 1, dir: dir}
		res, err := planVia(t, in, r, co)
		if err != nil {
			t.Fatalf("seed %d: collector: %v", seed, err)
		}
		var streamed, text bytes.Buffer
		if err := res.WriteJSON(&streamed); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(streamed.Bytes(), wantJSON) {
			t.Fatalf("seed %d (%+v): streamed JSON differs:\n%s\n%s", seed, co, streamed.Bytes(), wantJSON)
		}
		if err := res.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(text.Bytes(), wantText.Bytes()) {
			t.Fatalf("seed %d: text differs:\n%s\n%s", seed, text.Bytes(), wantText.Bytes())
		}
		full, err := res.Plan()
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := full.MarshalJSON(); !bytes.Equal(b, wantJSON) {
			t.Fatalf("seed %d: Result.Plan differs", seed)
		}
		if res.Summary().Totals != want.Totals {
			t.Fatalf("seed %d: summary totals %+v, want %+v", seed, res.Summary().Totals, want.Totals)
		}
	}
	t.Logf("%+v", stats)
	if stats.dangling == 0 {
		t.Errorf("no random plan lists a dangling delete: the rule went untested")
	}
}

// TestStreamedJSONCases compares streamed and materialized JSON on the
// cases the issue names: deletes, DVs, two specs, a where filter,
// max-files-to-rewrite and each job order.
func TestStreamedJSONCases(t *testing.T) {
	base := func() *Input {
		var data, deletes []table.FileEntry
		for i := range 40 {
			specID, part := int32(0), []any{fmt.Sprint("c", i%3)}
			if i%4 == 0 {
				specID, part = 1, []any{fmt.Sprint("c", i%3), int32(20450 + i%2)}
			}
			data = append(data, dataFile(path(i), specID, part, int64(1+i%7)*mib, 1000, int64(1+i%3)))
			switch i % 5 {
			case 0:
				deletes = append(deletes, dv("s3://d/dv.puffin", int64(4+i*40), specID, part, 300, 4, path(i)))
			case 1:
				deletes = append(deletes, posDelete(fmt.Sprintf("s3://d/p%d.parquet", i), specID, part, 10, 4, path(i)))
			case 2:
				deletes = append(deletes, eqDelete(fmt.Sprintf("s3://d/e%d.parquet", i), specID, part, 10, 3))
			}
		}
		deletes = append(deletes, posDelete("s3://d/part.parquet", 0, []any{"c1"}, 4, 2, ""))
		return testInput(data, deletes)
	}
	ten := 10
	cases := map[string]Options{
		"default":     smallOptions(),
		"where":       {TargetFileSize: 100 * mib, Where: "cat IN ('c0', 'c2')"},
		"max files":   {TargetFileSize: 100 * mib, MaxFilesToRewrite: &ten, MinInputFiles: 2},
		"bytes-asc":   {TargetFileSize: 100 * mib, JobOrder: "bytes-asc", MaxFileGroupSize: 12 * mib},
		"bytes-desc":  {TargetFileSize: 100 * mib, JobOrder: "bytes-desc", MaxFileGroupSize: 12 * mib},
		"files-asc":   {TargetFileSize: 100 * mib, JobOrder: "files-asc", MaxFileGroupInputFiles: 3},
		"files-desc":  {TargetFileSize: 100 * mib, JobOrder: "files-desc", MaxFileGroupInputFiles: 3, MaxFilesToRewrite: &ten},
		"rewrite all": {TargetFileSize: 100 * mib, RewriteAll: true},
	}
	for name, o := range cases {
		in := base()
		r := resolve(o)
		p, err := New(in, r, testNow)
		if err != nil {
			t.Fatal(err)
		}
		want, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Groups) == 0 {
			t.Fatalf("%s: no groups", name)
		}
		res, err := planVia(t, in, r, collectOptions{sinks: 2, runBytes: 500, memory: 100, dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := res.WriteJSON(&got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: streamed JSON differs:\n%s\n%s", name, got.Bytes(), want)
		}
	}
}

// TestCollectorErrors: bad files are refused with the error New gives, for
// the first bad file in LiveFiles order.
func TestCollectorErrors(t *testing.T) {
	cases := map[string][]table.FileEntry{
		"partition spec 7": {dataFile(path(0), 7, nil, 1, 1, 1)},
		"has 2 partition":  {dataFile(path(0), 0, []any{"a", "b"}, 1, 1, 1)},
		"is live twice": {dataFile(path(0), 0, partA(), 1, 1, 1), dataFile(path(1), 0, partA(), 1, 1, 1),
			dataFile(path(0), 0, []any{"b"}, 1, 1, 5)},
		"negative": {dataFile(path(0), 0, partA(), -1, 1, 1)},
	}
	for want, data := range cases {
		in := testInput(data, nil)
		for _, o := range []collectOptions{{sinks: 1}, {sinks: 3, runBytes: 1, memory: 1, dir: t.TempDir()}} {
			_, err := planVia(t, in, resolve(smallOptions()), o)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(want)) {
				t.Errorf("%+v: error %v, want %q", o, err, want)
			}
		}
	}
	// Many files, one listed twice: the bloom filter finds it.
	var data []table.FileEntry
	for i := range 5000 {
		data = append(data, dataFile(path(i), 0, partA(), mib, 1, int64(i%3)))
	}
	data = append(data, dataFile(path(1234), 0, []any{"z"}, mib, 1, 9))
	if _, err := New(testInput(data, nil), resolve(smallOptions()), testNow); err == nil || !bytes.Contains([]byte(err.Error()), []byte(path(1234)+" is live twice")) {
		t.Errorf("duplicate among 5000: %v", err)
	}
	in := testInput(nil, []table.FileEntry{dataFile(path(0), 0, partA(), 1, 1, 1)})
	if _, err := New(in, resolve(smallOptions()), testNow); err == nil || !bytes.Contains([]byte(err.Error()), []byte("listed as a delete file")) {
		t.Errorf("data file among deletes: %v", err)
	}
}

// TestSpillFileRemoved: records past the memory limit go to temporary
// files, which leave nothing behind in the directory (they are unlinked as
// soon as they are created, where the system allows it, else at Close),
// and a collector plans once.
func TestSpillFileRemoved(t *testing.T) {
	dir := t.TempDir()
	var data []table.FileEntry
	for i := range 300 {
		data = append(data, dataFile(path(i), 0, partA(), mib, 1, 1))
	}
	in := testInput(data, nil)
	c := NewCollector(in.Metadata, table.NewPartitions(), CollectorOptions{TempDir: dir, MemoryLimit: 1000})
	c.runBytes = 700
	res, err := c.Plan(in, resolve(smallOptions()), testNow)
	if err != nil {
		t.Fatal(err)
	}
	if c.runs.f == nil || res.spill.f == nil {
		t.Errorf("records not spilled to files (runs %v, groups %v)", c.runs.f, res.spill.f)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 && (c.runs.unlinked || res.spill.unlinked) {
		t.Errorf("unlinked spill files still listed: %v", files)
	}
	if _, err := c.Plan(testInput(nil, nil), resolve(smallOptions()), testNow); err == nil {
		t.Error("second Plan accepted")
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("spill files left: %v", files)
	}
}

// TestSpillWithoutTempDirStaysInMemory: when the temp directory cannot be
// written, the plan is still made (records stay in memory) and equals the
// one made with spilling.
func TestSpillWithoutTempDirStaysInMemory(t *testing.T) {
	var data []table.FileEntry
	for i := range 300 {
		data = append(data, dataFile(path(i), 0, partA(), mib, 1, 1))
	}
	plans := map[string]*Plan{}
	for name, dir := range map[string]string{"spilled": t.TempDir(), "no temp dir": filepath.Join(t.TempDir(), "missing", "dir")} {
		in := testInput(data, nil)
		c := NewCollector(in.Metadata, table.NewPartitions(), CollectorOptions{TempDir: dir, MemoryLimit: 1000})
		c.runBytes = 700
		res, err := c.Plan(in, resolve(smallOptions()), testNow)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if (name == "spilled") != (c.runs.f != nil) {
			t.Errorf("%s: spill file %v", name, c.runs.f)
		}
		p, err := res.Plan()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		plans[name] = p
		res.Close()
		c.Close()
	}
	a, _ := json.Marshal(plans["spilled"])
	b, _ := json.Marshal(plans["no temp dir"])
	if string(a) != string(b) || len(plans["spilled"].Groups) == 0 {
		t.Errorf("plans differ without a temp dir (%d groups)", len(plans["spilled"].Groups))
	}
}
