package plan

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/icectl/icectl/iceberg/table"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

type goldenCase struct {
	name string
	in   func() *Input
	opts Options
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{"basic", func() *Input {
			var data []table.FileEntry
			for i := range 6 {
				data = append(data, dataFile(path(i), 0, []any{"a"}, int64(10+i)*mib, 1000, int64(1+i%2)))
			}
			data = append(data, dataFile(path(10), 0, []any{"b"}, 100*mib, 9000, 2))
			data = append(data, dataFile(path(11), 0, []any{"b"}, 300*mib, 27000, 2))
			data = append(data, dataFile(path(12), 0, []any{nil}, 1*mib, 10, 3))
			return testInput(data, nil)
		}, smallOptions()},
		{"deletes_v3", func() *Input {
			var data []table.FileEntry
			for i := range 8 {
				data = append(data, dataFile(path(i), 1, []any{"a", int32(20450)}, 30*mib, 1000, 2))
			}
			data = append(data, dataFile(path(20), 1, []any{"b", int32(20450)}, 100*mib, 1000, 2))
			for i := range data {
				data[i].Entry.DataFile.FirstRowID = i64(int64(i) * 1000)
			}
			deletes := []table.FileEntry{
				dv("s3://d/dv-1.puffin", 4, 1, []any{"a", int32(20450)}, 10, 5, path(0)),
				dv("s3://d/dv-1.puffin", 90, 1, []any{"b", int32(20450)}, 400, 5, path(20)),
				posDelete("s3://d/pos-fs.parquet", 1, []any{"a", int32(20450)}, 5, 3, path(1)),
				posDelete("s3://d/pos-part.parquet", 1, []any{"a", int32(20450)}, 7, 4, ""),
				eqDelete("s3://d/eq-part.parquet", 1, []any{"a", int32(20450)}, 3, 6),
			}
			return testInput(data, deletes)
		}, Options{TargetFileSize: 100 * mib, MaxFileGroupSize: 150 * mib, MinInputFiles: 3}},
		{"where_day", func() *Input {
			var data []table.FileEntry
			for d := range 4 {
				for i := range 5 {
					data = append(data, dataFile(path(d*10+i), 1, []any{"a", int32(20450 + d)}, 2*mib, 100, 1))
				}
			}
			return testInput(data, nil)
		}, Options{TargetFileSize: 100 * mib, Where: "ts >= '2025-12-29 12:00:00' AND cat IN ('a', 'c')", JobOrder: "bytes-desc"}},
		{"empty", func() *Input {
			in := testInput(nil, nil)
			in.BaseSnapshot = nil
			in.Branch = "audit"
			return in
		}, Options{}},
	}
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			p := mustPlan(t, c.in(), c.opts)
			js, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := p.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			got := append(append(js, "\n\n"...), text.Bytes()...)
			file := filepath.Join("testdata", c.name+".golden")
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("plan differs from %s (run with -update after checking):\n%s", file, got)
			}
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, c := range goldenCases() {
		p := mustPlan(t, c.in(), c.opts)
		a, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		q, err := ParsePlan(a)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, err := q.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: round trip changed the plan:\n%s\n%s", c.name, a, b)
		}
		for i := range p.Groups {
			if !tupleEqual(p.Groups[i].PartitionTuple, q.Groups[i].PartitionTuple) {
				t.Errorf("%s: tuple %v became %v", c.name, p.Groups[i].PartitionTuple, q.Groups[i].PartitionTuple)
			}
		}
	}
}

func TestParsePlanErrors(t *testing.T) {
	p := mustPlan(t, goldenCases()[0].in(), smallOptions())
	good, _ := p.MarshalJSON()
	mutate := func(f func(m map[string]any)) []byte {
		var m map[string]any
		_ = json.Unmarshal(good, &m)
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	bad := map[string][]byte{
		"not json":  []byte("{"),
		"format":    mutate(func(m map[string]any) { m["format"] = "other" }),
		"version":   mutate(func(m map[string]any) { m["version"] = 99 }),
		"no inputs": mutate(func(m map[string]any) { m["groups"].([]any)[0].(map[string]any)["inputs"] = []any{} }),
		"bytes":     mutate(func(m map[string]any) { m["groups"].([]any)[0].(map[string]any)["input_bytes"] = 1 }),
		"trailing":  append(append([]byte{}, good...), "{}"...),
	}
	for name, b := range bad {
		if _, err := ParsePlan(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestTupleTypes(t *testing.T) {
	in := Tuple{nil, true, int32(-3), int64(1 << 60), float32(1.5), float64(-0.25), "x", []byte{1, 2}, [16]byte{1, 15: 9}}
	b, err := in.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var out Tuple
	if err := out.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	if !tupleEqual(in, out) || out[3] != int64(1<<60) {
		t.Errorf("round trip: %v -> %s -> %v", in, b, out)
	}
	if _, err := (Tuple{struct{}{}}).MarshalJSON(); err == nil {
		t.Error("unsupported value accepted")
	}
}
