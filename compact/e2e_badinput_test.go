package compact_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/plan"
)

// badInputFixture has three partitions, one group each; it then corrupts
// an input of the first group's partition and deletes one of the second's.
// It returns the group ids and the two broken paths.
func badInputFixture(t *testing.T) (f *fixture, p *plan.Plan, corrupt, missing string, opts compact.Options) {
	f = newFixture(t, 2, 7, smallFiles)
	f.must(f.appendFiles(f.partitions(3), 18, 30))
	f.must(f.deleteIDs(delPartitionPos, f.pickLive(12)))
	opts = compact.Options{MaxConcurrentGroups: 2, Commit: f.copts}
	var err error
	if p, err = compact.PlanTable(f.ctx, f.tbl, opts); err != nil {
		t.Fatal(err)
	}
	if len(p.Groups) != 3 {
		t.Fatalf("planned %d groups, want 3", len(p.Groups))
	}
	corrupt = p.Groups[0].Inputs[len(p.Groups[0].Inputs)/2].Path
	missing = p.Groups[1].Inputs[0].Path
	// Clobber the Parquet footer: the file keeps its size but cannot be
	// decoded.
	data, err := os.ReadFile(localPath(corrupt))
	if err != nil {
		t.Fatal(err)
	}
	for i := len(data) - 12; i < len(data); i++ {
		data[i] = 0xee
	}
	if err := os.WriteFile(localPath(corrupt), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(localPath(missing)); err != nil {
		t.Fatal(err)
	}
	return f, p, corrupt, missing, opts
}

// TestCompactBadInput: with partial progress, the groups with a corrupt or
// missing input fail with an error naming the file and the healthy group
// commits; without it nothing commits.
func TestCompactBadInput(t *testing.T) {
	t.Run("partial-progress", func(t *testing.T) {
		f, p, corrupt, missing, opts := badInputFixture(t)
		opts.PartialProgress = true
		rep, err := compact.Execute(f.ctx, f.cat, f.tbl, p, opts)
		if rep == nil {
			t.Fatalf("no report; err = %v", err)
		}
		t.Logf("execute: err = %v", err)
		want := map[string]string{p.Groups[0].ID: corrupt, p.Groups[1].ID: missing, p.Groups[2].ID: ""}
		for _, g := range rep.Groups {
			file, ok := want[g.ID]
			switch {
			case !ok:
				t.Errorf("unknown group %s", g.ID)
			case file == "" && g.Status != compact.StatusCommitted:
				t.Errorf("healthy group %s: %s (%s), want committed", g.ID, g.Status, g.Reason)
			case file != "" && g.Status != compact.StatusFailed:
				t.Errorf("group %s with bad input %s: %s, want failed", g.ID, file, g.Status)
			case file != "" && !strings.Contains(g.Reason, file):
				t.Errorf("group %s failed with %q, which does not name %s", g.ID, g.Reason, file)
			}
		}
		if rep.Commits != 1 {
			t.Errorf("%d commits, want 1", rep.Commits)
		}
		// The healthy group's inputs are gone, the broken groups' stay.
		live := liveDataPaths(t, f)
		for i, g := range p.Groups {
			for _, in := range g.Inputs {
				if live[in.Path] != (i < 2) {
					t.Errorf("group %d input %s live = %v", i, in.Path, live[in.Path])
				}
			}
		}
	})
	t.Run("all-or-nothing", func(t *testing.T) {
		f, p, corrupt, missing, opts := badInputFixture(t)
		loc := f.tbl.MetadataLocation
		rep, err := compact.Execute(f.ctx, f.cat, f.tbl, p, opts)
		if err == nil {
			t.Fatal("execute succeeded with a corrupt and a missing input")
		}
		if !strings.Contains(err.Error(), corrupt) && !strings.Contains(err.Error(), missing) {
			t.Errorf("error %q names neither %s nor %s", err, corrupt, missing)
		}
		if rep != nil && rep.Commits != 0 {
			t.Errorf("%d commits without partial progress", rep.Commits)
		}
		if now := f.reload().MetadataLocation; now != loc {
			t.Errorf("table changed: metadata %s, was %s", now, loc)
		}
	})
}

func liveDataPaths(t *testing.T, f *fixture) map[string]bool {
	t.Helper()
	live := map[string]bool{}
	for _, e := range mustLive(t, f).Data {
		live[e.Entry.DataFile.FilePath] = true
	}
	return live
}

// TestCompactDryRun: `icectl compact --dry-run` (text and JSON) prints a
// plan with groups and leaves every byte of the catalog and warehouse as
// it was.
func TestCompactDryRun(t *testing.T) {
	bin := testenv.Icectl(t)
	f := buildV2Deletes(t, 21)
	f.cat.Close() // no open handle of ours touches the database meanwhile
	beforeHashes := hashTree(t, f.dir)
	for _, extra := range [][]string{{"--dry-run"}, {"--dry-run", "--output", "json"}, {"--dry-run", "--rewrite-all"}} {
		args := append(append([]string{"compact", f.tableName()}, cliArgs(f)...), extra...)
		cmd := exec.Command(bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("icectl %v: %v\n%s", args, err, stderr.String())
		}
		if len(out) == 0 {
			t.Errorf("icectl %v printed nothing", extra)
		}
		if len(extra) == 3 && extra[2] == "json" {
			var doc struct {
				Groups []json.RawMessage `json:"groups"`
			}
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatalf("--dry-run --output json: %v\n%s", err, out)
			}
			if len(doc.Groups) == 0 {
				t.Error("the dry run planned no groups: the test would prove nothing")
			}
		}
	}
	if after := hashTree(t, f.dir); !maps.Equal(beforeHashes, after) {
		for p, h := range after {
			if beforeHashes[p] != h {
				t.Errorf("dry run changed or created %s", p)
			}
		}
		for p := range beforeHashes {
			if _, ok := after[p]; !ok {
				t.Errorf("dry run removed %s", p)
			}
		}
	}
}
