package flinkinterop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// streamPolicy makes maintain work on every pass over a streamed table:
// compaction from two small files, expiry of every snapshot older than a
// second (what expiry keeps for Flink's restore is then all that stands
// between the job and its duplicates).
const streamPolicy = `defaults:
  compact:
    min-input-files: 2
  rewrite-position-deletes:
    min-input-files: 2
  expire:
    max-snapshot-age: 1s
    min-snapshots-to-keep: 1
`

// TestMaintainWhileFlinkWrites runs icectl's maintain again and again while
// a Flink job streams into three tables (an upsert stream on v2 and on v3,
// an append stream on v2), kills the job as a crash would, maintains once
// more (maintain, then expire of everything past a second and orphan
// removal), restores the job from its last checkpoint and lets it finish.
// Every state maintain leaves, and the final one, must be what the stream
// makes of a prefix of its sequence, as icectl's reader and iceberg-go
// read it (Spark too, at the end, when available): no key duplicated, none
// lost, no update lost. maintain must never fail on Flink's commits.
//
// About 75 s of streaming (ICECTL_TEST_LONG=1: 10 minutes).
func TestMaintainWhileFlinkWrites(t *testing.T) {
	testenv.Need(t, testenv.Flink, "PyFlink and Iceberg's Flink runtime (scripts/install-flink)")
	const rate = 100
	rows := int64(7500)
	if os.Getenv("ICECTL_TEST_LONG") == "1" {
		rows = 60000
	}
	base := t.TempDir()
	streams := []*stream{
		// 100 keys at 100 rows/s: every key twice within a checkpoint,
		// so Flink writes position deletes beside its equality deletes.
		newStream(t, base, "up2", 100, 2),
		// Iceberg 1.10's Flink sink cannot write a v3 table's position
		// deletes (it refuses: "Must use DVs for position deletes in
		// V3"), so no key may come twice within a checkpoint: 2000 keys
		// at 100 rows/s come back every 20 s, checkpoints every 2 s.
		newStream(t, base, "up3", 2000, 3),
		newStream(t, base, "app", 0, 2),
	}
	policy := filepath.Join(base, "policy.yaml")
	if err := os.WriteFile(policy, []byte(streamPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	chk := filepath.Join(base, "checkpoints")
	j := startJob(t, specOf(streams, chk, rows, rate), "flink-1.log")

	// Maintain while the job writes, until 60% of the sequence is in.
	stopAt := rows * 6 / 10
	passes, updated := 0, 0
	for {
		if !j.running() {
			t.Fatalf("the flink job ended before it was stopped: %v\n%s", j.err, tail(j.log))
		}
		m := int64(-1)
		for _, s := range streams {
			// Every other pass begins with a compaction across a Flink
			// commit, on the files Flink wrote since the last pass.
			if s.keys > 0 && passes%2 == 1 {
				updated += compactAcrossFlinkCommit(t, s, j)
			}
			icectl(t, append([]string{"maintain", "--policy", policy, "--wait", "1m"}, s.args()...)...)
			n, _ := checkSnapshot(t, s, 0, "after maintain")
			if m < 0 || n < m {
				m = n
			}
		}
		passes++
		if m >= stopAt {
			break
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("%d maintain passes while the job wrote; %d keys updated during a compaction", passes, updated)
	if updated == 0 {
		t.Errorf("no key was updated during a compaction: the test did not exercise equality deletes committed meanwhile")
	}

	// Stop as a crash would, then maintain a stopped job's tables.
	j.kill(t)
	restore := latestCheckpoint(t, chk)
	stopped := map[string]int{}
	for _, s := range streams {
		icectl(t, append([]string{"maintain", "--policy", policy}, s.args()...)...)
		icectl(t, append([]string{"expire", tableIdent, "--older-than", "1s", "--retain-last", "1"}, s.args()...)...)
		// The job is stopped, but its checkpoint may hold files it wrote
		// and has not committed yet: orphan's default grace keeps them,
		// and every other file the killed job left.
		if r := orphan(t, s); r.Summary.Deleted != 0 {
			t.Errorf("%s: orphan deleted %d files younger than its 3-day default grace", s.name, r.Summary.Deleted)
		}
		stopped[s.name] = len(orphan(t, s, "--dry-run", "--older-than", "1s", "--unsafe-allow-recent").Orphans)
		checkSnapshot(t, s, 0, "after the job stopped and maintain, expire and orphan ran")
		snaps, head := snapshots(t, s)
		if flinkCommit(ancestors(snaps, head)) == nil {
			t.Fatalf("%s: no snapshot in the current one's history records a Flink checkpoint (%s): the restored job would commit again", s.name, "flink.max-committed-checkpoint-id")
		}
	}

	// Restore from the last checkpoint and let the sequence finish.
	spec := specOf(streams, chk, rows, rate)
	spec.Restore = restore
	j2 := startJob(t, spec, "flink-2.log")
	j2.wait(t, 20*time.Minute)

	final := map[string][]row{}
	for _, s := range streams {
		icectl(t, append([]string{"maintain", "--policy", policy}, s.args()...)...)
		m, _ := checkSnapshot(t, s, 0, "after the restored job finished")
		if m != rows {
			t.Errorf("%s: the table holds seq 0..%d, want 0..%d", s.name, m-1, rows-1)
		}
		final[s.name], _ = readIcectl(t, s, 0)
	}
	// The job is gone: what the killed one wrote for a checkpoint that
	// never completed, and nothing else, is garbage now, and orphan
	// removal with a short grace (safe with no writer) takes it away.
	deleted := 0
	for _, s := range streams {
		r := orphan(t, s, "--older-than", "1s", "--unsafe-allow-recent")
		deleted += int(r.Summary.Deleted)
		t.Logf("%s: at the stop %d files were unreferenced; after the restored job finished orphan deleted %d", s.name, stopped[s.name], r.Summary.Deleted)
		if m, _ := checkSnapshot(t, s, 0, "after orphan removal"); m != rows {
			t.Errorf("%s: after orphan removal the table holds seq 0..%d, want 0..%d", s.name, m-1, rows-1)
		}
		// A second look finds at most the metadata files the first run's
		// own claim commits pushed out of the metadata log (beyond
		// write.metadata.previous-versions-max, which Flink's hundreds
		// of commits reach).
		for _, o := range orphan(t, s, "--dry-run", "--older-than", "1s", "--unsafe-allow-recent").Orphans {
			if !strings.HasSuffix(o.Path, ".metadata.json") {
				t.Errorf("%s: orphan left %s", s.name, o.Path)
			}
		}
	}
	if deleted == 0 {
		t.Errorf("the killed job left no file behind: the test did not exercise the orphans of a failed checkpoint")
	}
	for name, got := range sparkRows(t, streams) {
		var s *stream
		for _, x := range streams {
			if x.name == name {
				s = x
			}
		}
		m, err := prefix(s, got)
		if err != nil || m != rows {
			t.Errorf("%s: Spark reads seq 0..%d: %v", name, m-1, err)
		} else if len(got) != len(final[name]) {
			t.Errorf("%s: Spark reads %d rows, icectl %d", name, len(got), len(final[name]))
		} else {
			t.Logf("%s: Spark reads the model's %d rows", name, len(got))
		}
	}
}

// flinkCommit is the newest snapshot of history (newest first) that
// Flink's sink committed.
func flinkCommit(history []snapshotView) *snapshotView {
	for i := range history {
		if _, ok := history[i].Summary["flink.max-committed-checkpoint-id"]; ok {
			return &history[i]
		}
	}
	return nil
}

// compactAcrossFlinkCommit plans a compaction of s's table and rewrites
// it (compact's sharded form: --plan-out, then one shard staged), lets
// Flink commit (upserts whose equality deletes then hit rows the rewrite
// holds), and only then commits it. The rewritten files must
// carry the plan's starting sequence number, so that the equality deletes
// Flink committed meanwhile still apply to them: every key Flink updated
// in between must read its new value at the compaction's snapshot. It
// answers how many keys were updated in between (0 when nothing was due).
func compactAcrossFlinkCommit(t *testing.T, s *stream, j *job) int {
	t.Helper()
	planFile := filepath.Join(t.TempDir(), "plan.json")
	stage := filepath.Join(t.TempDir(), "stage")
	var p struct {
		Base *struct {
			SnapshotID int64 `json:"snapshot_id"`
			Sequence   int64 `json:"sequence_number"`
		} `json:"base_snapshot"`
		Groups []json.RawMessage `json:"groups"`
	}
	// Plan until Flink has written enough small files for a group.
	for p.Base == nil || len(p.Groups) == 0 {
		if !j.running() {
			t.Fatalf("the flink job ended before it was stopped: %v\n%s", j.err, tail(j.log))
		}
		icectl(t, append([]string{"compact", tableIdent, "--min-input-files", "2", "--dry-run", "--plan-out", planFile}, s.args()...)...)
		if b, err := os.ReadFile(planFile); err != nil {
			t.Fatal(err)
		} else if err := json.Unmarshal(b, &p); err != nil {
			t.Fatalf("%s: %v", planFile, err)
		}
		if len(p.Groups) == 0 {
			time.Sleep(time.Second)
		}
	}
	base, baseSeq := p.Base.SnapshotID, p.Base.Sequence
	baseRows, _ := readIcectl(t, s, base)
	icectl(t, append([]string{"compact", tableIdent, "--plan", planFile, "--shard", "0/1", "--stage", stage}, s.args()...)...)
	for {
		if !j.running() {
			t.Fatalf("the flink job ended before it was stopped: %v\n%s", j.err, tail(j.log))
		}
		if _, head := snapshots(t, s); head != base {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	out := icectl(t, append([]string{"compact", tableIdent, "--plan", planFile, "--commit", stage}, s.args()...)...)
	snaps, head := snapshots(t, s)
	var comp *snapshotView
	for _, v := range ancestors(snaps, head) {
		if v.SnapshotID == base {
			break
		}
		if v.Operation == "replace" && v.Summary["icectl.compaction.groups"] != "" {
			comp = &v
			break
		}
	}
	if comp == nil {
		t.Fatalf("%s: the plan from snapshot %d committed no compaction", s.name, base)
	}
	for _, f := range dataFiles(t, s, comp.SnapshotID) {
		if f.FileSequence == comp.Sequence && f.DataSequence != baseSeq {
			t.Errorf("%s: compaction snapshot %d (sequence %d) wrote %s at data sequence number %d, want the plan's starting %d",
				s.name, comp.SnapshotID, comp.Sequence, f.Path, f.DataSequence, baseSeq)
		}
	}
	if comp.Sequence <= baseSeq+1 {
		var hist []string
		for _, v := range ancestors(snaps, head) {
			hist = append(hist, fmt.Sprintf("%d (seq %d, %s)", v.SnapshotID, v.Sequence, v.Operation))
			if v.SnapshotID == base {
				break
			}
		}
		t.Fatalf("%s: compaction snapshot %d has sequence %d: no Flink commit came between the plan (at %d, snapshot %d) and it; history: %s\ncommit said: %s",
			s.name, comp.SnapshotID, comp.Sequence, baseSeq, base, strings.Join(hist, " <- "), out)
	}
	m, _ := checkSnapshot(t, s, comp.SnapshotID, "the compaction that committed after Flink did")
	was := map[int64]int64{}
	for _, r := range baseRows {
		was[r.ID] = r.V
	}
	rows, _ := readIcectl(t, s, comp.SnapshotID)
	updated := 0
	for _, r := range rows {
		if v, ok := was[r.ID]; ok && v != r.V {
			updated++
		}
	}
	t.Logf("%s: compaction planned at sequence %d committed at %d; %d keys updated in between read their new values (table at seq %d)",
		s.name, baseSeq, comp.Sequence, updated, m-1)
	return updated
}
