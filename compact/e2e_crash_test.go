package compact_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/killrun"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// crashRuns is the number of SIGKILLed runs.
const crashRuns = 30

// crashFixture is a small table with three partitions of eight too-small
// files each and some deletes: three groups under the default planner.
func crashFixture(t *testing.T, seed uint64) *fixture {
	f := newFixture(t, 2+int(seed%2), seed, smallFiles)
	parts := f.partitions(3)
	f.must(f.appendFiles(parts, 12, 40))
	f.must(f.appendFiles(parts, 12, 40))
	if f.tbl.Metadata.FormatVersion == 3 {
		f.must(f.deleteIDs(delDV, f.pickLive(20)))
	} else {
		f.must(f.deleteIDs(delPartitionPos, f.pickLive(20)))
	}
	return f
}

func compactCmd(bin string, f *fixture, partial bool) *exec.Cmd {
	args := append([]string{"compact", f.tableName()}, cliArgs(f)...)
	if partial {
		args = append(args, "--partial-progress")
	}
	// A killed run leaves its claim on the table until its lease ends: a
	// short lease, and --wait, let the next run take it over.
	cmd := exec.Command(bin, append(args, "--wait", "1m")...)
	cmd.Env = append(os.Environ(), "ICECTL_CLAIM_LEASE=2s")
	return cmd
}

// TestCompactCrash SIGKILLs `icectl compact` at a random moment in 30 runs
// (half of them with --partial-progress). After each kill the table must
// read exactly as before through iceberg-go with consistent metadata, and a
// re-run must finish the job: afterwards nothing is left to plan.
func TestCompactCrash(t *testing.T) {
	bin := testenv.Icectl(t)
	// Calibrate: how long a whole run takes, so kills spread over it.
	f := crashFixture(t, 1000)
	start := time.Now()
	if out, err := compactCmd(bin, f, true).CombinedOutput(); err != nil {
		t.Fatalf("calibration run: %v\n%s", err, out)
	}
	full := time.Since(start)
	t.Logf("a whole run takes %s", full)

	rng := rand.New(rand.NewPCG(42, 0xdead))
	outcomes := map[string]int{}
	for i := range crashRuns {
		partial := i%2 == 1
		delay := time.Duration(rng.Int64N(int64(full) * 9 / 10))
		t.Run(fmt.Sprintf("run%02d", i), func(t *testing.T) {
			outcomes[crashRun(t, bin, uint64(i), partial, delay)]++
		})
	}
	t.Logf("outcomes of %d kills: %v", crashRuns, outcomes)
}

// crashRun returns what the kill left: "before", "partly" (some partial
// commits) or "after" (the run had finished).
func crashRun(t *testing.T, bin string, seed uint64, partial bool, delay time.Duration) string {
	f := crashFixture(t, seed)
	b := icebergGo(t, f, false)
	checkModel(t, f, b)
	head := *f.tbl.Metadata.CurrentSnapshotID

	outcome := ""
	if finished, _ := killrun.Run(t, compactCmd(bin, f, partial), killrun.After(delay)); finished {
		outcome = "after"
	}

	// The table reads as before (compaction never changes rows) and every
	// file its metadata references exists.
	checkConsistent(t, f)
	g := icebergGo(t, f, false)
	if g.RowCount != b.RowCount || g.Checksum != b.Checksum {
		t.Fatalf("after SIGKILL at %s: iceberg-go reads %d rows %s, before %d rows %s", delay, g.RowCount, g.Checksum, b.RowCount, b.Checksum)
	}
	md := f.tbl.Metadata
	if outcome == "" {
		outcome = "before"
		if *md.CurrentSnapshotID != head {
			outcome = "partly"
		}
	}
	for s := md.CurrentSnapshot(); s != nil && s.SnapshotID != head; {
		if op := s.Operation(); op != spec.OperationReplace {
			t.Errorf("snapshot %d after the kill is a %q, want replace", s.SnapshotID, op)
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s, _ = md.SnapshotByID(*s.ParentSnapshotID)
	}
	if !partial && outcome == "partly" {
		// Without partial progress the run is one commit: once it is in,
		// the job is done.
		outcome = "after"
	}

	// A re-run completes the job.
	if out, err := compactCmd(bin, f, partial).CombinedOutput(); err != nil {
		t.Fatalf("re-run after the kill: %v\n%s", err, out)
	}
	checkConsistent(t, f)
	g = icebergGo(t, f, false)
	if g.RowCount != b.RowCount || g.Checksum != b.Checksum {
		t.Fatalf("after the re-run: iceberg-go reads %d rows %s, before %d rows %s", g.RowCount, g.Checksum, b.RowCount, b.Checksum)
	}
	p, err := compact.PlanTable(f.ctx, f.reload(), compact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Groups) != 0 {
		t.Errorf("after the re-run %d groups are still planned", len(p.Groups))
	}
	return outcome
}
