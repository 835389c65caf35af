package plan

import (
	"fmt"
	"testing"

	"github.com/icectl/icectl/iceberg/table"
)

// TestMaxBytesToRewrite: the byte cap keeps whole groups in job order while
// they fit, skips one that does not and keeps a smaller one after it.
func TestMaxBytesToRewrite(t *testing.T) {
	// Three partitions of 5 small files each: 5, 10 and 15 MiB of input.
	in := func() *Input {
		var data []table.FileEntry
		for p := range 3 {
			for i := range 5 {
				data = append(data, dataFile(path(p*5+i), 0, []any{fmt.Sprint("c", p)}, int64(p+1)*mib, 100, 1))
			}
		}
		return testInput(data, nil)
	}
	all, err := New(in(), resolve(Options{TargetFileSize: 100 * mib, JobOrder: "bytes-desc"}), testNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Groups) != 3 || all.Totals.InputBytes != 30*mib {
		t.Fatalf("uncapped plan: %d groups, %d bytes", len(all.Groups), all.Totals.InputBytes)
	}
	for _, c := range []struct {
		limit int64
		want  []int64 // input bytes of the kept groups, in order
	}{
		{30 * mib, []int64{15 * mib, 10 * mib, 5 * mib}},
		{21 * mib, []int64{15 * mib, 5 * mib}}, // 10 MiB does not fit after 15; 5 does
		{12 * mib, []int64{10 * mib}},
		{4 * mib, nil},
	} {
		limit := c.limit
		p, err := New(in(), resolve(Options{TargetFileSize: 100 * mib, JobOrder: "bytes-desc", MaxBytesToRewrite: &limit}), testNow)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, g := range p.Groups {
			got = append(got, g.InputBytes)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("limit %d MiB: groups %v, want %v", limit/mib, got, c.want)
		}
		if p.Totals.InputBytes > limit {
			t.Errorf("limit %d: plan rewrites %d bytes", limit, p.Totals.InputBytes)
		}
	}
	zero := int64(0)
	if _, err := (Options{MaxBytesToRewrite: &zero}).Resolve(nil); err == nil {
		t.Error("a zero byte cap was accepted")
	}
}
