package cli

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	icefx "github.com/icectl/icectl/internal/testing/fixture"
)

// planFixture builds a table in a fresh catalog on which a verb has work.
type planFixture func(t *testing.T) *icefx.Table

// smallFilesTable is v2 with six small data files, one append each: work
// for compact and rewrite-manifests.
func smallFilesTable(t *testing.T) *icefx.Table {
	c := icefx.NewSQLite(t, icefx.WithName("default"))
	return c.Table(t, icefx.TableOptions{Files: [][]int64{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}}})
}

// posDeletesTable is v2 with a data file and six small position-delete
// files committed one by one (work for rewrite-position-deletes), or v3
// after them (work for dv merge).
func posDeletesTable(v3 bool) planFixture {
	return func(t *testing.T) *icefx.Table {
		c := icefx.NewSQLite(t, icefx.WithName("default"))
		tb := c.Table(t, icefx.TableOptions{Files: [][]int64{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}})
		for k := range int64(6) {
			tb.AddDeletes(t, nil, tb.WritePositionDeletes(t, nil, fmt.Sprintf("pos%d", k), nil, map[string][]int64{tb.Data[0].FilePath: {k}}, false))
		}
		if v3 {
			tb.Update(t, spec.UpgradeFormatVersion{FormatVersion: 3})
		}
		return tb
	}
}

// TestClaimReusesPlan: compact, dv merge, rewrite-manifests and
// rewrite-position-deletes plan a table once before taking its claim
// (reading only) and run that plan under the claim when nothing but the
// claim was committed in between: one plan, counted through the
// Factory's onPlan seam. A writer that commits between the pre-check and
// the claim makes the verb plan again on the table as it is then: two
// plans, the rewrite committed and the writer's file still live. A table
// with nothing to do is planned once and left as it is.
func TestClaimReusesPlan(t *testing.T) {
	for _, c := range []struct {
		args  []string
		verb  string
		build planFixture
	}{
		{[]string{"compact"}, "compact", smallFilesTable},
		{[]string{"rewrite-manifests"}, "rewrite-manifests", smallFilesTable},
		{[]string{"rewrite-position-deletes"}, "rewrite-position-deletes", posDeletesTable(false)},
		{[]string{"dv", "merge"}, "dv merge", posDeletesTable(true)},
	} {
		for _, concurrent := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/concurrent=%v", c.verb, concurrent), func(t *testing.T) {
				tb := c.build(t)
				before := tb.Load(t)
				rowsBefore := tb.Checksum(t, before).RowCount
				var written manifest.DataFile
				plans := 0
				var out, errOut bytes.Buffer
				env := map[string]string{"HOME": t.TempDir()}
				f := &Factory{Out: &out, ErrOut: &errOut, Getenv: func(k string) string { return env[k] }, Output: outputText,
					onPlan: func(verb string) {
						if verb != c.verb {
							t.Errorf("onPlan(%q), want %q", verb, c.verb)
						}
						plans++
						if plans == 1 && concurrent {
							// Another writer lands after the table was
							// loaded for the pre-check, before the claim.
							written = tb.WriteIDs(t, nil, "late", nil, 100, 101)
							tb.Append(t, nil, written)
						}
					}}
				args := append(append(append([]string{}, c.args...), tb.Name()), tb.CatalogFlags()...)
				if code := Run(context.Background(), f, args); code != ExitOK {
					t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
				}
				want := 1
				if concurrent {
					want = 2
				}
				if plans != want {
					t.Errorf("planned %d times, want %d", plans, want)
				}
				after := tb.Load(t)
				snap := after.Metadata.CurrentSnapshot()
				if snap == nil || snap.Operation() != spec.OperationReplace {
					t.Fatalf("head after the run: %+v, want the verb's replace snapshot\n%s", snap, out.String())
				}
				// Every row as before, and the writer's two (compaction may
				// have rewritten its file: it was planned again with it).
				rows := tb.Checksum(t, after).RowCount
				if concurrent && rows != rowsBefore+2 || !concurrent && rows != rowsBefore {
					t.Errorf("%d rows after the run, %d before (concurrent writer: %v)", rows, rowsBefore, concurrent)
				}
				if concurrent {
					if c.verb != "compact" && !liveData(t, tb, after, written.FilePath) {
						t.Error("the concurrent writer's file is not live after the run")
					}
				} else if *snap.ParentSnapshotID != *before.Metadata.CurrentSnapshotID {
					t.Errorf("the run's snapshot's parent is %d, want the head it planned on, %d", *snap.ParentSnapshotID, *before.Metadata.CurrentSnapshotID)
				}
			})
		}
	}

	// Nothing to do: one plan, no claim, nothing committed.
	c := icefx.NewSQLite(t, icefx.WithName("default"))
	tb := c.Table(t, icefx.TableOptions{Files: [][]int64{{0, 1}}})
	loc := tb.Load(t).MetadataLocation
	plans := 0
	var out, errOut bytes.Buffer
	f := &Factory{Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }, Output: outputText,
		onPlan: func(string) { plans++ }}
	if code := Run(context.Background(), f, append([]string{"compact", tb.Name()}, tb.CatalogFlags()...)); code != ExitOK || plans != 1 {
		t.Errorf("idle compact: exit %d, %d plans, want 0 and 1: %s", code, plans, errOut.String())
	}
	if tb.Load(t).MetadataLocation != loc {
		t.Error("idle compact committed")
	}
}

// liveData reports whether path is a live data file of tbl.
func liveData(t *testing.T, tb *icefx.Table, tbl *catalog.Table, path string) bool {
	for _, d := range tb.LiveFiles(t, tbl).Data {
		if d.Entry.DataFile.FilePath == path {
			return true
		}
	}
	return false
}
