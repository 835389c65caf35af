package compact

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/plan"
)

// TestStagedOutputRoundTrip: a written file's manifest entry survives the
// staged result's JSON exactly, partition values with their types.
func TestStagedOutputRoundTrip(t *testing.T) {
	so := int32(3)
	df := manifest.DataFile{Content: manifest.ContentData, FilePath: "s3://b/t/data/x.parquet", FileFormat: "PARQUET", SpecID: 1,
		Partition: []any{"eu", int32(19900), int64(-5), nil, []byte{0, 1}}, RecordCount: 10, FileSizeInBytes: 1234,
		ColumnSizes: map[int]int64{1: 10, 2: 20}, ValueCounts: map[int]int64{1: 10}, NullValueCounts: map[int]int64{1: 0},
		NaNValueCounts: map[int]int64{4: 1}, LowerBounds: map[int][]byte{1: {1, 0, 0, 0}}, UpperBounds: map[int][]byte{1: {9, 0, 0, 0}},
		SplitOffsets: []int64{4}, SortOrderID: &so}
	out := outputOf(&df)
	data, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var back stagedOutput
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.dataFile(); !reflect.DeepEqual(got, df) {
		t.Errorf("round trip:\n got %#v\nwant %#v", got, df)
	}
}

// TestParseStagedRefuses: a staged result of another table or plan, of a
// group the plan lacks, with other inputs, truncated or with unknown
// fields is refused with ErrBadStage.
func TestParseStagedRefuses(t *testing.T) {
	p := &plan.Plan{TableRef: plan.TableRef{UUID: "u1"}, Groups: []plan.Group{{ID: "g1", SpecID: 0, Inputs: []plan.InputFile{{Path: "a"}, {Path: "b"}}}}}
	groups := map[string]*plan.Group{"g1": &p.Groups[0]}
	good := stagedGroup{Format: stagedFormat, Version: stagedVersion, TableUUID: "u1", PlanID: "p1", GroupID: "g1",
		Inputs: []stagedInput{{Path: "a"}, {Path: "b"}}, Outputs: []stagedOutput{{Path: "s3://b/t/data/p1-g1-abcd-00001.parquet", SpecID: 0}}}
	enc := func(s stagedGroup) []byte { b, _ := json.Marshal(s); return b }
	if _, err := parseStaged(enc(good), "d/groups/g1.json", p, "p1", groups); err != nil {
		t.Fatalf("a good result: %v", err)
	}
	for name, c := range map[string]struct {
		data []byte
		file string
		msg  string
	}{
		"other table": {enc(func() stagedGroup { s := good; s.TableUUID = "u2"; return s }()), "g1.json", "of table u2"},
		"other plan":  {enc(func() stagedGroup { s := good; s.PlanID = "p2"; return s }()), "g1.json", "of plan p2"},
		"no group":    {enc(func() stagedGroup { s := good; s.GroupID = "g9"; return s }()), "g9.json", "does not have"},
		"other name":  {enc(good), "g2.json", "holds group g1"},
		"inputs":      {enc(func() stagedGroup { s := good; s.Inputs = s.Inputs[:1]; return s }()), "g1.json", "lists 1 inputs"},
		"truncated":   {enc(good)[:40], "g1.json", "does not parse"},
		"foreign":     {enc(func() stagedGroup { s := good; s.Outputs = []stagedOutput{{Path: "s3://b/other/x.parquet"}}; return s }()), "g1.json", "not a file of its group"},
		"other spec": {enc(func() stagedGroup {
			s := good
			s.Outputs = []stagedOutput{{Path: good.Outputs[0].Path, SpecID: 1}}
			return s
		}()), "g1.json", "not a file of its group"},
		"unknown": {[]byte(strings.Replace(string(enc(good)), `"format"`, `"formatt":1,"format"`, 1)), "g1.json", "does not parse"},
	} {
		_, err := parseStaged(c.data, c.file, p, "p1", groups)
		if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), ErrBadStage.Error()) {
			t.Errorf("%s: %v, want ErrBadStage with %q", name, err, c.msg)
		}
	}
}
