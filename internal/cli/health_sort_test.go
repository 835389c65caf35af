package cli

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
	icefx "github.com/icectl/icectl/internal/testing/fixture"
)

// TestUnsortedFindingClears: the command health recommends for data files
// not written in the table's sort order, run as printed, leaves no such
// finding, also when the files are not small (a target size below theirs:
// compaction's size rules alone would not pick them), and keeps every
// row.
func TestUnsortedFindingClears(t *testing.T) {
	c := icefx.NewSQLite(t, icefx.WithName("default"))
	order := spec.SortOrder{OrderID: 1, Fields: []spec.SortField{{SourceID: 1, Transform: spec.ParseTransform("identity"), Direction: "desc", NullOrder: "nulls-last"}}}
	tb := c.Table(t, icefx.TableOptions{SortOrder: order, Files: [][]int64{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}}})
	// Files of the target size: neither too small nor too large.
	tb.Update(t, spec.SetProperties{Updates: map[string]string{"write.target-file-size-bytes": strconv.FormatInt(tb.Data[0].FileSizeInBytes, 10)}})
	flags := tb.CatalogFlags()
	before := tb.Checksum(t, nil)

	findings := func() map[string]string {
		var rep struct {
			Findings []struct {
				Kind           string `json:"kind"`
				Recommendation string `json:"recommendation"`
			} `json:"findings"`
		}
		r := runCLI(t, nil, append([]string{"health", tb.Name(), "--output", "json"}, flags...)...).mustSucceed(t)
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, f := range rep.Findings {
			m[f.Kind] = f.Recommendation
		}
		return m
	}
	rec, ok := findings()["unsorted-files"]
	if !ok {
		t.Fatalf("no unsorted-files finding on six files written unsorted: %v", findings())
	}
	args := strings.Fields(rec)
	if len(args) < 2 || args[0] != "icectl" {
		t.Fatalf("recommendation %q", rec)
	}
	runCLI(t, nil, args[1:]...).mustSucceed(t)
	if rec, ok := findings()["unsorted-files"]; ok {
		t.Errorf("after `%s` the finding is still there", rec)
	}
	if after := tb.Checksum(t, nil); after != before {
		t.Errorf("rows %+v after, %+v before", after, before)
	}
}
