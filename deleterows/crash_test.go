package deleterows

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/killrun"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestDeleteRowsKilled SIGKILLs `icectl delete-rows` at a random moment,
// eight times in each delete mode, on the three-spec v3 table with DVs:
// merge-on-read (whole files removed, DVs merged) and copy-on-write
// (partial files copied without the deleted rows, their DVs dropped).
// After each kill the table reads exactly as before or exactly as after
// (one commit, never half of one), every file it references exists, and
// a re-run, which takes over the killed run's claim, leaves the rows the
// predicate keeps, as icectl and iceberg-go read them.
func TestDeleteRowsKilled(t *testing.T) {
	bin := testenv.Icectl(t)
	for _, mode := range []string{"merge-on-read", "copy-on-write"} {
		t.Run(mode, func(t *testing.T) {
			cmd := func(e *env) *exec.Cmd {
				// A killed run keeps its claim until its lease ends: a short
				// lease, and --wait, let the re-run take it over.
				c := exec.Command(bin, append([]string{"delete-rows", e.Name(), "--where", cutoff, "--wait", "1m"}, e.CatalogFlags()...)...)
				c.Env = append(os.Environ(), "ICECTL_CLAIM_LEASE=2s")
				return c
			}
			e := killFixture(t, mode)
			start := time.Now()
			if out, err := cmd(e).CombinedOutput(); err != nil {
				t.Fatalf("calibration run: %v\n%s", err, out)
			}
			full := time.Since(start)
			rng := rand.New(rand.NewPCG(36, uint64(len(mode))))
			outcomes := map[string]int{}
			for i := range 8 {
				delay := time.Duration(rng.Int64N(int64(full)))
				t.Run(fmt.Sprintf("run%d", i), func(t *testing.T) {
					outcomes[killedDelete(t, killFixture(t, mode), cmd, delay)]++
				})
			}
			t.Logf("a whole run takes %s; outcomes of 8 kills: %v", full, outcomes)
		})
	}
}

// killFixture is the three-spec table in the given delete mode.
func killFixture(t *testing.T, mode string) *env {
	e, _ := threeSpecTable(t)
	e.Update(t, spec.SetProperties{Updates: map[string]string{"write.delete.mode": mode}})
	return e
}

func killedDelete(t *testing.T, e *env, cmd func(*env) *exec.Cmd, delay time.Duration) string {
	before := e.modelRows()
	for id, r := range e.model {
		if r.TS != nil && *r.TS < *ts("2024-02-01 00:00") {
			e.forget(id)
		}
	}
	after := e.modelRows()
	head := *e.Load(t).Metadata.CurrentSnapshotID
	finished, out := killrun.Run(t, cmd(e), killrun.After(delay))
	got := e.rows(t)
	same := func(want []row) bool { return slices.EqualFunc(got, want, rowEqual) }
	outcome := "finished"
	switch moved := *e.Load(t).Metadata.CurrentSnapshotID != head; {
	case !finished && !moved:
		outcome = "killed before its commit"
		if !same(before) {
			t.Errorf("killed before its commit, the table reads %v, want the rows before %v", ids(got), ids(before))
		}
	case !finished:
		outcome = "killed after its commit"
		fallthrough
	default:
		if !same(after) {
			t.Errorf("%s: the table reads %v, want %v\n%s", outcome, ids(got), ids(after), out)
		}
	}
	var missing []string
	fs := e.LiveFiles(t, nil)
	for _, f := range append(fs.Data, fs.Deletes...) {
		if _, err := os.Stat(strings.TrimPrefix(f.Entry.DataFile.FilePath, "file://")); err != nil {
			missing = append(missing, f.Entry.DataFile.FilePath)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%s: referenced files missing: %v", outcome, missing)
	}
	// A re-run finishes (or finds nothing left to delete) and the table
	// holds exactly the rows the predicate keeps.
	if out, err := cmd(e).CombinedOutput(); err != nil {
		t.Fatalf("%s: re-run: %v\n%s", outcome, err, out)
	}
	e.checkModel(t)
	return outcome
}

func rowEqual(a, b row) bool {
	return a.ID == b.ID && a.Cat == b.Cat && (a.TS == nil) == (b.TS == nil) && (a.TS == nil || *a.TS == *b.TS)
}
