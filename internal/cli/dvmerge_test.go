package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/dvmerge"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	icefx "github.com/icectl/icectl/internal/testing/fixture"
)

func TestDVMergeFlagsParse(t *testing.T) {
	var got *DVMergeOptions
	f := &Factory{Out: &discard{}, ErrOut: &discard{}, Getenv: func(string) string { return "" }}
	cmd := NewCmdDVMerge(f, func(o *DVMergeOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"db.t", "--where", "region = 'eu'", "--branch", "dev", "--puffin-target-size", "1MiB", "--repair-resurrected",
		"--equality", "--dry-run", "--plan-out", "p.json", "--partial-progress", "--max-commits", "4", "--max-failed-commits", "2", "--max-duration", "2h"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	m := got.Merge
	if got.Table != "db.t" || m.Where != "region = 'eu'" || m.Branch != "dev" || m.PuffinTargetSize != 1<<20 || !m.RepairResurrected ||
		!m.Equality || !got.DryRun || got.PlanOut != "p.json" || !m.PartialProgress || m.MaxCommits != 4 || m.MaxFailedCommits != 2 ||
		m.MaxDuration != 2*time.Hour {
		t.Errorf("options: %+v", got)
	}
	cmd = NewCmdDVMerge(f, func(o *DVMergeOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"db.t"})
	if err := cmd.Execute(); err != nil || got.Merge.PuffinTargetSize != 8<<20 {
		t.Errorf("default puffin target size %d, %v", got.Merge.PuffinTargetSize, err)
	}
	for _, bad := range [][]string{
		{"db.t", "--puffin-target-size", "0"},
		{"db.t", "--max-duration", "soon"},
		{"db.t", "--max-commits", "0"},
		{},
	} {
		cmd := NewCmdDVMerge(f, func(*DVMergeOptions) error { t.Fatalf("%v ran", bad); return nil })
		cmd.SetArgs(bad)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		err := cmd.Execute()
		var ee *ExitError
		if len(bad) > 0 && (!errors.As(err, &ee) || ee.Code != ExitUsage) {
			t.Errorf("%v: error %v, want a usage error", bad, err)
		}
		if len(bad) == 0 && err == nil {
			t.Errorf("no table accepted")
		}
	}
}

// dvFixture is db.t, partitioned by region, with data files in eu and us
// (manifest entries only: a merge reads delete files, not data) and a
// partition-scoped position-delete file in each partition; format v2
// unless upgraded.
func dvFixture(t *testing.T, upgrade bool) *fixture {
	t.Helper()
	fx, tb, tbl, files := regionFixture(t)
	defer tb.Cat.Close()
	var dels []manifest.DataFile
	for _, d := range []struct {
		region string
		pos    map[string][]int64
	}{{"eu", map[string][]int64{files[0].FilePath: {1, 2}, files[1].FilePath: {3}}}, {"us", map[string][]int64{files[2].FilePath: {4}}}} {
		dels = append(dels, tb.WritePositionDeletes(t, tbl, "region="+d.region+"/pos", []any{d.region}, d.pos, false))
	}
	tb.AddDeletes(t, tbl, dels...)
	if upgrade {
		tb.Update(t, spec.UpgradeFormatVersion{FormatVersion: 3})
	}
	return fx
}

// regionFixture is db.t, v2, partitioned by region, with data files a and
// b in eu and c in us (manifest entries only) and no deletes. The caller
// closes tb.Cat once done with it: the commands under test open it
// themselves.
func regionFixture(t *testing.T) (*fixture, *icefx.Table, *catalog.Table, []manifest.DataFile) {
	t.Helper()
	c := icefx.NewSQLite(t, icefx.WithName("default"))
	fx := &fixture{dir: c.Dir, uri: c.URI, env: map[string]string{"HOME": c.Dir}}
	schema := spec.Schema{ID: 0, Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "region", Type: spec.StringType{}, Required: true},
	}}
	tb := c.Table(t, icefx.TableOptions{Namespace: "db", Name: "t", Schema: &schema, Spec: byRegion()})
	loc := tb.Load(t).Metadata.Location
	data := func(name, region string) manifest.DataFile {
		return icefx.Listed(loc+"/data/region="+region+"/"+name+".parquet", []any{region}, 100, 2000)
	}
	files := []manifest.DataFile{data("a", "eu"), data("b", "eu"), data("c", "us")}
	return fx, tb, tb.Append(t, nil, files...), files
}

func TestDVMergeNeedsV3(t *testing.T) {
	fx := dvFixture(t, false)
	r := fx.run(t, "dv", "merge", "db.t")
	if r.code != ExitFailure || !strings.Contains(r.stderr, "format v2") || !strings.Contains(r.stderr, "icectl upgrade") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestDVMergeDryRunWritesNothing(t *testing.T) {
	fx := dvFixture(t, true)
	before := hashTree(t, fx.dir)
	planOut := filepath.Join(t.TempDir(), "plan.json")
	r := fx.run(t, "dv", "merge", "db.t", "--dry-run", "--plan-out", planOut, "--output", "json").mustSucceed(t)
	if saved, err := os.ReadFile(planOut); err != nil || string(saved) != r.stdout {
		t.Errorf("--plan-out differs from stdout (%v):\n%s\n%s", err, saved, r.stdout)
	}
	m := r.decodeJSON(t)
	if num(t, m, "data_files") != "3" || num(t, m, "position_delete_files") != "2" || len(m["partitions"].([]any)) != 2 {
		t.Errorf("plan = %v", m)
	}
	after := hashTree(t, fx.dir)
	if len(after) != len(before) {
		t.Fatalf("files before %d, after %d", len(before), len(after))
	}
	for p, h := range before {
		if after[p] != h {
			t.Errorf("%s changed", p)
		}
	}
	fx.run(t, "dv", "merge", "db.t", "--dry-run", "--where", "region = 'eu'").mustSucceed(t)
}

func TestDVMergeRuns(t *testing.T) {
	fx := dvFixture(t, true)
	m := fx.run(t, "dv", "merge", "db.t", "--partial-progress", "--max-commits", "2", "--output", "json").mustSucceed(t).decodeJSON(t)
	if num(t, m, "commits") != "2" || num(t, m, "dvs_written") != "3" || num(t, m, "position_delete_files_retired") != "2" ||
		num(t, m, "puffin_files") != "2" || m["table"] != "db.t" {
		t.Errorf("report = %v", m)
	}
	// A second run has nothing left and says so, not a table of zeros.
	if noop := fx.run(t, "dv", "merge", "db.t").mustSucceed(t); noop.stdout != "db.t: nothing to merge: no partition has position deletes, several DVs for a data file or dangling deletes\n" {
		t.Errorf("second run output: %q", noop.stdout)
	}
	health := fx.run(t, "health", "db.t", "--output", "json").mustSucceed(t).decodeJSON(t)
	if num(t, health, "delete_files", "position_deletes", "count") != "0" || num(t, health, "delete_files", "deletion_vectors", "count") != "3" {
		t.Errorf("health after merge: %v", health["delete_files"])
	}
}

func TestDVMergeWhere(t *testing.T) {
	fx := dvFixture(t, true)
	m := fx.run(t, "dv", "merge", "db.t", "--where", "region = 'us'", "--output", "json").mustSucceed(t).decodeJSON(t)
	if num(t, m, "dvs_written") != "1" || num(t, m, "position_delete_files_retired") != "1" {
		t.Errorf("report = %v", m)
	}
	r := fx.run(t, "dv", "merge", "db.t", "--where", "nosuch = 1")
	if r.code != ExitUsage {
		t.Errorf("bad --where: exit %d, %s", r.code, r.stderr)
	}
}

func TestDVMergeExitCodes(t *testing.T) {
	partial := &dvmerge.Report{Partitions: []dvmerge.PartitionResult{{Status: dvmerge.StatusCommitted}, {Status: dvmerge.StatusFailed}}}
	for _, tc := range []struct {
		opts dvmerge.Options
		rep  *dvmerge.Report
		err  error
		code int
	}{
		{dvmerge.Options{}, &dvmerge.Report{}, nil, ExitOK},
		{dvmerge.Options{PartialProgress: true}, partial, nil, ExitPartial},
		{dvmerge.Options{}, nil, fmt.Errorf("x: %w", catalog.ErrCommitStateUnknown), ExitCommitState},
		{dvmerge.Options{}, nil, fmt.Errorf("x: %w", catalog.ErrCommitConflict), ExitConflict},
		{dvmerge.Options{PartialProgress: true}, partial, fmt.Errorf("x: %w", dvmerge.ErrTooManyFailedCommits), ExitPartial},
		{dvmerge.Options{}, nil, fmt.Errorf("x: %w", dvmerge.ErrInvalidOptions), ExitUsage},
		{dvmerge.Options{}, nil, fmt.Errorf("x: %w", dvmerge.ErrPartitionsFailed), ExitFailure},
	} {
		if got := exitCode(context.Background(), dvMergeExit(tc.opts, tc.rep, tc.err)); got != tc.code {
			t.Errorf("%v / %+v: exit %d, want %d", tc.err, tc.rep, got, tc.code)
		}
	}
}
