package dvmerge

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/shard"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// shardFixture is a partitioned v3 table with v2 position-delete debt in
// four partitions and, in green, a data file with two DVs on top.
func shardFixture(t *testing.T) *env {
	e := newEnv(t, true)
	var green manifest.DataFile
	for _, c := range []string{"red", "green", "blue", "yellow"} {
		if fs := v2Debt(t, e, c); c == "green" {
			green = fs[1]
		}
	}
	e.upgrade(t)
	e.AddDeletes(t, nil, e.writeDVs(t, "green-dv1", green, map[string][]int64{green.FilePath: {1, 5}})...)
	e.AddDeletes(t, nil, e.writeDVs(t, "green-dv2", green, map[string][]int64{green.FilePath: {3, 5}})...)
	return e
}

// icectl runs the binary on e's table; it returns stdout, stderr and the
// exit code.
func (e *env) icectl(t *testing.T, bin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, append(append([]string{"dv", "merge", "ns.t"}, args...), "--catalog-uri", e.Cat.URI, "--catalog-name", testCatalog)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		code = xe.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func (e *env) mustIcectl(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	out, errOut, code := e.icectl(t, bin, env, args...)
	if code != 0 {
		t.Fatalf("icectl dv merge %v: exit %d\n%s%s", args, code, out, errOut)
	}
	return out
}

// planAndStage plans e's table into dir/plan.json and runs n workers with
// JOB_COMPLETION_INDEX=0..n-1; it returns the plan's path and the stage.
func (e *env) planAndStage(t *testing.T, bin string, n int) (string, string) {
	t.Helper()
	dir := t.TempDir()
	planPath, stage := filepath.Join(dir, "plan.json"), filepath.Join(dir, "stage")
	e.mustIcectl(t, bin, nil, "--dry-run", "--plan-out", planPath)
	for i := range n {
		e.mustIcectl(t, bin, []string{"JOB_COMPLETION_INDEX=" + strconv.Itoa(i)}, "--plan", planPath, "--shard", strconv.Itoa(n), "--stage", stage, "--output", "json")
	}
	return planPath, stage
}

// checkNoStrays fails when a Puffin file under the table that a run of
// icectl wrote (not one of the fixture's, named *-dv*.puffin) is not a live
// DV.
func checkNoStrays(t *testing.T, e *env) {
	t.Helper()
	live := map[string]bool{}
	for _, d := range liveFiles(t, e).Deletes {
		live[localPath(d.Entry.DataFile.FilePath)] = true
	}
	for _, p := range puffinFiles(t, e) {
		if !live[p] && strings.Contains(filepath.Base(p), "-dv-") {
			t.Errorf("Puffin file %s is not live", p)
		}
	}
}

// committedTwice fails when a partition id is in two snapshots' summaries.
func checkCommittedOnce(t *testing.T, e *env) int {
	t.Helper()
	seen := map[string]int64{}
	for _, s := range e.Load(t).Metadata.Snapshots {
		var ids []string
		if v := s.Summary[SummaryPartitionIDs]; v != "" {
			if err := json.Unmarshal([]byte(v), &ids); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range ids {
			if prev, ok := seen[id]; ok {
				t.Errorf("partition %s committed by snapshots %d and %d", id, prev, s.SnapshotID)
			}
			seen[id] = s.SnapshotID
		}
	}
	return len(seen)
}

// TestShardedMergeThroughCLI: a plan, three worker processes indexed by
// JOB_COMPLETION_INDEX (one run twice), one committer: the table reads
// as before through icectl and iceberg-go, the same as a single-process
// dv merge of a twin table, every data file has at most one DV, no
// position-delete file or stray Puffin file is left, and a second commit
// commits nothing.
func TestShardedMergeThroughCLI(t *testing.T) {
	bin := testenv.Icectl(t)
	// Merging green's two DVs deletes the rows of both (readers apply
	// one): the sharded run must read as the single-process run does.
	single := shardFixture(t)
	single.mustMerge(t, single.options())
	before := single.Checksum(t, nil)

	e := shardFixture(t)
	planPath, stage := e.planAndStage(t, bin, 3)
	head := *e.Load(t).Metadata.CurrentSnapshotID
	out := e.mustIcectl(t, bin, []string{"JOB_COMPLETION_INDEX=1"}, "--plan", planPath, "--shard", "3", "--stage", stage, "--output", "json")
	var rep ShardReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Count(StatusStaged) != 0 || rep.Count(StatusAlreadyStaged) != len(rep.Partitions) || len(rep.Partitions) == 0 {
		t.Errorf("worker run twice: %+v", rep)
	}
	if *e.Load(t).Metadata.CurrentSnapshotID != head {
		t.Fatal("a worker committed")
	}
	// A worker killed after writing a Puffin file, before staging it:
	// the committer removes the stray.
	data, err := os.ReadFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParsePlan(data)
	if err != nil {
		t.Fatal(err)
	}
	pp := d.Partitions[0]
	stray := filepath.Join(localPath(table.DataLocation(e.Load(t).Metadata)), pp.Partition, puffinPrefix(d, pp.ID)+"killed-dv-00001.puffin")
	if err := os.WriteFile(stray, []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.mustIcectl(t, bin, nil, "--commit", stage)
	if _, err := os.Stat(stray); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stray Puffin file of a killed worker is left: %v", err)
	}
	e.checkSameRows(t, before)
	checkMerged(t, e)
	checkNoStrays(t, e)
	if n := checkCommittedOnce(t, e); n != 4 {
		t.Errorf("%d partitions committed, want 4", n)
	}
	p, err := PlanTable(e.Ctx, e.Load(t), e.options())
	if err != nil || len(p.Partitions) != 0 {
		t.Errorf("after the commit the plan has %d partitions (%v)", len(p.Partitions), err)
	}
	p.Close()
	head = *e.Load(t).Metadata.CurrentSnapshotID
	out = e.mustIcectl(t, bin, nil, "--commit", stage, "--output", "json")
	if *e.Load(t).Metadata.CurrentSnapshotID != head || !strings.Contains(out, StatusAlreadyCommitted) {
		t.Errorf("a second commit committed again:\n%s", out)
	}
}

// TestShardedCommitterKilled SIGKILLs the committer at moments through a
// commit of four batches; the table reads as before after each kill, and
// a re-run (taking over the claim) finishes: every partition committed
// once, no stray file.
func TestShardedCommitterKilled(t *testing.T) {
	bin := testenv.Icectl(t)
	for i, delay := range []time.Duration{50 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond} {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			single := shardFixture(t)
			single.mustMerge(t, single.options())
			want := single.Checksum(t, nil)
			e := shardFixture(t)
			before := e.Checksum(t, nil)
			_, stage := e.planAndStage(t, bin, 2)
			cmd := exec.Command(bin, "dv", "merge", "ns.t", "--commit", stage, "--max-commits", "4", "--catalog-uri", e.Cat.URI, "--catalog-name", testCatalog)
			cmd.Env = append(os.Environ(), "ICECTL_CLAIM_LEASE=2s")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(delay)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
				t.Fatal(err)
			}
			cmd.Wait()
			// icectl's reader only: iceberg-go refuses a data file with
			// two DVs, which the table has until green is committed.
			if got := e.Checksum(t, nil); got != before && got != want {
				t.Errorf("after the kill the table reads %+v, want %+v or %+v", got, before, want)
			}
			e.mustIcectl(t, bin, []string{"ICECTL_CLAIM_LEASE=2s"}, "--commit", stage, "--wait", "1m")
			e.checkSameRows(t, want)
			checkMerged(t, e)
			checkNoStrays(t, e)
			if n := checkCommittedOnce(t, e); n != 4 {
				t.Errorf("%d partitions committed, want 4", n)
			}
		})
	}
}

// stageLib plans e and stages every shard of n through the library.
func (e *env) stageLib(t *testing.T, n int) (*PlanDoc, Stage) {
	t.Helper()
	p, err := PlanTable(e.Ctx, e.Load(t), e.options())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	err = p.WriteJSON(e.Ctx, &b, "ns.t")
	p.Close()
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParsePlan(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	fio, err := fileio.Load(e.Ctx, "file://"+e.Cat.Dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := Stage{IO: fio, Dir: t.TempDir()}
	for i := range n {
		rep, err := MergeShard(e.Ctx, e.Load(t), d, shard.Shard{Index: i, Count: n}, st, e.options())
		if err != nil || rep.Count(StatusFailed) > 0 {
			t.Fatalf("shard %d: %+v, %v", i, rep, err)
		}
	}
	return d, st
}

// TestShardedCommitRebuildsOnConcurrentDelete: a writer deletes a row of
// a staged partition's data file (a DV holding its earlier deletes too)
// between the workers and the commit: the committer merges that partition
// again, so the row stays deleted, and commits the others as staged.
func TestShardedCommitRebuildsOnConcurrentDelete(t *testing.T) {
	// The writer's DV on the twin, merged in one process: what the
	// sharded run must read.
	writer := func(e *env) string {
		for _, f := range liveFiles(t, e).Data {
			if p := f.Entry.DataFile.FilePath; strings.HasSuffix(p, "/red-d3.parquet") {
				e.AddDeletes(t, nil, e.writeDVs(t, "writer", f.Entry.DataFile, map[string][]int64{p: {0, 9}})...)
				return p
			}
		}
		t.Fatal("no red-d3")
		return ""
	}
	single := shardFixture(t)
	writer(single)
	single.mustMerge(t, single.options())
	want := single.Checksum(t, nil)

	e := shardFixture(t)
	d, st := e.stageLib(t, 2)
	red := writer(e)
	rep, err := CommitStaged(e.Ctx, e.Cat.Catalog, e.Load(t), d, st, e.options())
	if err != nil {
		t.Fatalf("commit: %v (%+v)", err, rep)
	}
	e.checkSameRows(t, want)
	rebuilt := 0
	for _, p := range rep.Partitions {
		switch p.Status {
		case StatusRebuilt:
			rebuilt++
		case StatusCommitted:
		default:
			t.Errorf("partition %s: %s %s", p.ID, p.Status, p.Reason)
		}
	}
	if rebuilt != 1 {
		t.Errorf("%d partitions rebuilt, want 1: %+v", rebuilt, rep.Partitions)
	}
	checkMerged(t, e)
	checkNoStrays(t, e)
	if got := dvOf(t, e, red); got == nil || !slices.Equal(got.ToArray(), []uint64{0, 9}) {
		t.Errorf("DV of red-d3 = %v, want [0 9]", got)
	}
}

// TestShardedBadInput: a plan of another table, a stage of another plan,
// a truncated staged result and a shard out of range are refused with a
// clear error and commit nothing.
func TestShardedBadInput(t *testing.T) {
	bin := testenv.Icectl(t)
	e := shardFixture(t)
	other := shardFixture(t)
	otherPlan := filepath.Join(t.TempDir(), "other.json")
	other.mustIcectl(t, bin, nil, "--dry-run", "--plan-out", otherPlan)
	planPath, stage := e.planAndStage(t, bin, 2)
	head := *e.Load(t).Metadata.CurrentSnapshotID
	check := func(name string, wantCode int, wantMsg string, args ...string) {
		t.Helper()
		out, errOut, code := e.icectl(t, bin, nil, args...)
		if code != wantCode || !strings.Contains(errOut, wantMsg) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit %d and %q", name, code, errOut, out, wantCode, wantMsg)
		}
		if *e.Load(t).Metadata.CurrentSnapshotID != head {
			t.Fatalf("%s: committed", name)
		}
	}
	check("plan of another table", 2, "the plan is of table", "--plan", otherPlan, "--shard", "0/2", "--stage", t.TempDir())
	check("shard out of range", 2, "out of range", "--plan", planPath, "--shard", "5/2", "--stage", stage)
	check("shard index only in neither flag nor env", 2, "names only the count", "--plan", planPath, "--shard", "2", "--stage", stage)
	check("commit with a plan of another table", 2, "the plan is of table", "--plan", otherPlan, "--commit", stage)
	redPlan := filepath.Join(t.TempDir(), "red.json")
	e.mustIcectl(t, bin, nil, "--dry-run", "--plan-out", redPlan, "--where", "cat = 'red'")
	check("stage of another plan", 1, "stage each plan in a directory of its own", "--plan", redPlan, "--shard", "0/1", "--stage", stage)
	results, _ := filepath.Glob(filepath.Join(stage, "partitions", "*.json"))
	if len(results) == 0 {
		t.Fatal("nothing staged")
	}
	data, err := os.ReadFile(results[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(results[0], data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	check("truncated staged result", 1, "does not parse", "--commit", stage)
}

// TestShardedWorkerKilled SIGKILLs a worker at moments through its shard
// and runs it again: the commit that follows reads as a single-process
// merge, and no Puffin file of the killed attempt is left.
func TestShardedWorkerKilled(t *testing.T) {
	bin := testenv.Icectl(t)
	single := shardFixture(t)
	single.mustMerge(t, single.options())
	want := single.Checksum(t, nil)
	for i, delay := range []time.Duration{20 * time.Millisecond, 80 * time.Millisecond, 200 * time.Millisecond} {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			e := shardFixture(t)
			dir := t.TempDir()
			planPath, stage := filepath.Join(dir, "plan.json"), filepath.Join(dir, "stage")
			e.mustIcectl(t, bin, nil, "--dry-run", "--plan-out", planPath)
			args := []string{"dv", "merge", "ns.t", "--plan", planPath, "--shard", "1", "--stage", stage, "--catalog-uri", e.Cat.URI, "--catalog-name", testCatalog}
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "JOB_COMPLETION_INDEX=0")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(delay)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
				t.Fatal(err)
			}
			cmd.Wait()
			e.mustIcectl(t, bin, []string{"JOB_COMPLETION_INDEX=0"}, "--plan", planPath, "--shard", "1", "--stage", stage)
			e.mustIcectl(t, bin, nil, "--commit", stage)
			e.checkSameRows(t, want)
			checkMerged(t, e)
			checkNoStrays(t, e)
		})
	}
}
