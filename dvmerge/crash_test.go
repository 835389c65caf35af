package dvmerge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/internal/testing/killrun"
	"github.com/icectl/icectl/internal/testing/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Finish(m.Run()))
}

// crashFixture is a partitioned v3 table with v2 debt in three partitions.
func crashFixture(t *testing.T) *env {
	e := newEnv(t, true)
	for _, c := range []string{"red", "green", "blue"} {
		v2Debt(t, e, c)
	}
	e.upgrade(t)
	return e
}

func (e *env) mergeCmd(bin string) *exec.Cmd {
	// A killed run leaves its claim on the table until its lease ends: a
	// short lease, and --wait, let the next run take it over.
	cmd := exec.Command(bin, "dv", "merge", "ns.t", "--catalog-uri", e.Cat.URI, "--catalog-name", testCatalog, "--partial-progress", "--max-commits", "3", "--wait", "1m")
	cmd.Env = append(os.Environ(), "ICECTL_CLAIM_LEASE=2s")
	return cmd
}

// TestMergeCrash SIGKILLs `icectl dv merge --partial-progress` at a random
// moment in 30 runs. After each kill the table reads exactly as before
// (a merge never changes rows) and every file it references exists; a
// re-run finishes the job, after which nothing is left to merge.
func TestMergeCrash(t *testing.T) {
	bin := testenv.Icectl(t)
	e := crashFixture(t)
	start := time.Now()
	if out, err := e.mergeCmd(bin).CombinedOutput(); err != nil {
		t.Fatalf("calibration run: %v\n%s", err, out)
	}
	full := time.Since(start)
	rng := rand.New(rand.NewPCG(9, 0xdead))
	outcomes := map[string]int{}
	for i := range 30 {
		delay := time.Duration(rng.Int64N(int64(full)))
		t.Run(fmt.Sprintf("run%02d", i), func(t *testing.T) { outcomes[crashRun(t, bin, delay)]++ })
	}
	t.Logf("a whole run takes %s; outcomes of 30 kills: %v", full, outcomes)
}

func crashRun(t *testing.T, bin string, delay time.Duration) string {
	e := crashFixture(t)
	before := e.Checksum(t, nil)
	head := *e.Load(t).Metadata.CurrentSnapshotID
	outcome := "killed"
	if finished, _ := killrun.Run(t, e.mergeCmd(bin), killrun.After(delay)); finished {
		outcome = "finished"
	}
	if outcome == "killed" {
		if *e.Load(t).Metadata.CurrentSnapshotID == head {
			outcome = "killed before a commit"
		} else {
			outcome = "killed after a commit"
		}
	}
	// The rows are the same, every referenced file exists and parses.
	e.checkSameRows(t, before)
	fs := liveFiles(t, e)
	var kept []string
	for _, d := range fs.Deletes {
		if d.Entry.DataFile.Content == manifest.ContentPositionDeletes {
			kept = append(kept, d.Entry.DataFile.FilePath)
		}
		if _, err := os.Stat(localPath(d.Entry.DataFile.FilePath)); err != nil {
			t.Errorf("referenced delete file: %v", err)
		}
	}
	checkMerged(t, e, kept...)
	// A re-run finishes the job.
	if out, err := e.mergeCmd(bin).CombinedOutput(); err != nil {
		t.Fatalf("re-run: %v\n%s", err, out)
	}
	e.checkSameRows(t, before)
	checkMerged(t, e)
	p, err := PlanTable(e.Ctx, e.Load(t), e.options())
	if err != nil || len(p.Partitions) != 0 || len(p.Dangling) != 0 {
		t.Errorf("after the re-run the plan is %+v, %v", p, err)
	}
	p.Close()
	return outcome
}

// TestHealthAndRepairThroughCLI: icectl health names the resurrected rows
// with their values, dv merge --repair-resurrected lists every row it
// deletes again, and health is clean afterwards.
func TestHealthAndRepairThroughCLI(t *testing.T) {
	bin := testenv.Icectl(t)
	e := newEnv(t, false)
	resurrected(t, e)
	run := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--catalog-uri", e.Cat.URI, "--catalog-name", testCatalog, "--output", "json")...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("icectl %v: %v\n%s", args, err, stderr.String())
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	h := run("health", "ns.t")
	rr := h["resurrected_rows"].(map[string]any)
	files := rr["files"].([]any)
	if rr["rows"].(float64) != 2 || len(files) != 1 {
		t.Fatalf("resurrected_rows = %v", rr)
	}
	f := files[0].(map[string]any)
	if fmt.Sprint(f["first_rows"]) != "[id=0, cat=x id=2, cat=x]" || fmt.Sprint(f["first_positions"]) != "[0 2]" {
		t.Errorf("resurrected file = %v", f)
	}
	if k := h["findings"].([]any)[0].(map[string]any)["kind"]; k != "resurrected-rows" {
		t.Errorf("first finding %v", k)
	}
	rep := run("dv", "merge", "ns.t", "--repair-resurrected")
	if fmt.Sprint(rep["repaired"]) == "[]" || fmt.Sprint(rep["operations"]) != "[delete]" {
		t.Errorf("repair report = %v", rep)
	}
	h = run("health", "ns.t")
	if rr := h["resurrected_rows"].(map[string]any); rr["rows"].(float64) != 0 {
		t.Errorf("after repair: %v", rr)
	}
}
