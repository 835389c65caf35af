package flinkinterop

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// streamPolicy makes maintain work on every pass over a streamed table:
// the streaming policy's threshold and compaction from two small files,
// expiry of every snapshot older than a second (what expiry keeps for
// Flink's restore is then all that stands between the job and its
// duplicates).
const streamPolicy = `defaults:
  stream:
    small-files: 2
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
// an append stream on v2), kills the job mid-checkpoint as a crash would,
// maintains once more (maintain, then expire of everything past a second
// and orphan removal), restores the job from its last checkpoint and lets
// it finish. Every state maintain leaves, and the final one, must be what
// the stream makes of a prefix of its sequence, as icectl's reader and
// iceberg-go read it (Spark too, at the end, when available): no key
// duplicated, none lost, no update lost. maintain must never fail on
// Flink's commits.
//
// The kill is placed (killMidCheckpoint): the v3 upsert table's commit is
// stopped after its checkpoint completed, so the restored job must commit
// files nothing references yet, while the other tables' next checkpoint
// has its files on disk and never completes. orphan runs with the job
// mid-checkpoint: its default grace deletes nothing, and a one-second
// grace would delete the files the restored job then commits (the grace
// period is all that protects a running writer's files). After the
// restored job ends, a one-second grace removes exactly the failed
// checkpoint's files.
//
// A fourth table, an append stream whose expiry does not keep the history
// down to Flink's last commit (icectl.expire.flink-restore-window-ms = 0),
// is the negative control of the restore: expired past that commit, it
// gets its last checkpoint committed twice, and the model check must see
// exactly that checkpoint's rows duplicated.
//
// About 50 s of streaming (ICECTL_TEST_LONG=1: 10 minutes).
func TestMaintainWhileFlinkWrites(t *testing.T) {
	testenv.Need(t, testenv.Flink, "PyFlink and Iceberg's Flink runtime (scripts/install-flink)")
	const rate = 100
	rows := int64(5000)
	if os.Getenv("ICECTL_TEST_LONG") == "1" {
		rows = 60000
	}
	base := t.TempDir()
	// 100 keys at 100 rows/s: every key twice within a checkpoint, so
	// Flink writes position deletes beside its equality deletes.
	up2 := newStream(t, base, "up2", 100, 2)
	// The control: maintained only once the job is stopped.
	control := newStream(t, base, "dup", 0, 2)
	control.props = map[string]string{expireFlinkWindow: "0"}
	// Iceberg 1.10's Flink sink cannot write a v3 table's position
	// deletes (it refuses: "Must use DVs for position deletes in V3"),
	// so no key may come twice within a checkpoint: 2000 keys at 100
	// rows/s come back every 20 s, checkpoints every 2 s. (Its commits
	// are the ones the kill stops: its task then takes no rows, and a
	// key cannot come twice while the checkpoints stand still.)
	up3 := newStream(t, base, "up3", 2000, 3)
	streams := []*stream{up2, up3, newStream(t, base, "app", 0, 2)}
	all := append(slices.Clone(streams), control)
	policy := filepath.Join(base, "policy.yaml")
	if err := os.WriteFile(policy, []byte(streamPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	chk := filepath.Join(base, "checkpoints")
	j := startJob(t, specOf(all, chk, rows, rate), "flink-1.log")
	kept := filepath.Join(base, "kept")
	stopKeeping := keepFlinkManifests(t, control, kept)

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

	// Stop as a crash would, mid-checkpoint.
	held, inFlight := killMidCheckpoint(t, j, all, up3, chk)
	stopKeeping()
	restore := latestCheckpoint(t, chk)
	if want := fmt.Sprintf("chk-%d", held); filepath.Base(restore) != want {
		t.Fatalf("the newest completed checkpoint is %s, want %s (the one whose commit was stopped)", restore, want)
	}

	// The control: a commit of icectl's on top of Flink's last one (the
	// manifests regrouped, every data file kept), then an expiry that
	// does not keep Flink's commit.
	controlAdded := controlExpirePastFlink(t, control, held, kept)

	// Maintain a stopped job's tables.
	stopped := map[string]int{}
	for _, s := range all {
		if s != control {
			icectl(t, append([]string{"maintain", "--policy", policy}, s.args()...)...)
			icectl(t, append([]string{"expire", tableIdent, "--older-than", "1s", "--retain-last", "1"}, s.args()...)...)
		}
		// The job is stopped, but its checkpoint may hold files it wrote
		// and has not committed yet: orphan's default grace keeps them,
		// and every other file the killed job left.
		if r := orphan(t, s); r.Summary.Deleted != 0 {
			t.Errorf("%s: orphan deleted %d files younger than its 3-day default grace", s.name, r.Summary.Deleted)
		}
		stopped[s.name] = len(orphan(t, s, "--dry-run", "--older-than", "1s", "--unsafe-allow-recent").Orphans)
		checkSnapshot(t, s, 0, "after the job stopped and maintain, expire and orphan ran")
		snaps, head := snapshots(t, s)
		if fc := flinkCommit(ancestors(snaps, head)); fc == nil && s != control {
			t.Fatalf("%s: no snapshot in the current one's history records a Flink checkpoint (%s): the restored job would commit again", s.name, "flink.max-committed-checkpoint-id")
		} else if fc != nil && s == control {
			t.Fatalf("%s: the control's history still reaches Flink's commit %d", s.name, fc.SnapshotID)
		}
	}

	// Restore from the last checkpoint and let the sequence finish.
	spec := specOf(all, chk, rows, rate)
	spec.Restore = restore
	j2 := startJob(t, spec, "flink-2.log")
	j2.wait(t, 20*time.Minute)

	// What orphan with a one-second grace listed mid-checkpoint: on the
	// table whose commit was stopped, the files the restored job has now
	// committed (the checkpoint's, in the snapshot that records it); on
	// the others, files no snapshot will ever reference.
	committed := map[string]map[string]bool{}
	for _, s := range all {
		snap := int64(0)
		if s == up3 {
			snaps, _ := snapshots(t, s)
			for _, v := range snaps {
				if v.Summary["flink.max-committed-checkpoint-id"] == strconv.FormatInt(held, 10) {
					snap = v.SnapshotID
				}
			}
			if snap == 0 {
				t.Fatalf("%s: the restored job recorded no commit of checkpoint %d", s.name, held)
			}
		} else {
			_, snap = snapshots(t, s)
		}
		live := liveFiles(t, s, snap)
		committed[s.name] = map[string]bool{}
		for p := range inFlight[s.name] {
			if live[p] {
				committed[s.name][p] = true
			}
		}
		switch {
		case s == up3 && len(committed[s.name]) == 0:
			t.Errorf("%s: the restored job committed none of the files orphan with a 1 s grace listed mid-checkpoint %d", s.name, held)
		case s == up3:
			t.Logf("%s: orphan with a 1 s grace would have deleted %d files that the restored job then committed (checkpoint %d, snapshot %d)",
				s.name, len(committed[s.name]), held, snap)
		case len(committed[s.name]) != 0:
			t.Errorf("%s: the restored job committed %v, which the failed checkpoint %d wrote", s.name, sortedPaths(committed[s.name]), held+1)
		}
	}

	final := map[string][]row{}
	for _, s := range streams {
		icectl(t, append([]string{"maintain", "--policy", policy}, s.args()...)...)
		m, _ := checkSnapshot(t, s, 0, "after the restored job finished")
		if m != rows {
			t.Errorf("%s: the table holds seq 0..%d, want 0..%d", s.name, m-1, rows-1)
		}
		final[s.name], _ = readIcectl(t, s, 0)
	}
	checkControl(t, control, rows, controlAdded)

	// The job is gone: what the killed one wrote for a checkpoint that
	// never completed, and nothing else, is garbage now, and orphan
	// removal with a short grace (safe with no writer) takes it away:
	// exactly the data and delete files listed mid-checkpoint that no
	// snapshot took in since.
	deleted := 0
	for _, s := range all {
		r := orphan(t, s, "--older-than", "1s", "--unsafe-allow-recent")
		deleted += int(r.Summary.Deleted)
		t.Logf("%s: at the stop %d files were unreferenced; after the restored job finished orphan deleted %d", s.name, stopped[s.name], r.Summary.Deleted)
		gone := r.paths("deleted")
		for p := range gone {
			// Besides the killed job's files, metadata files that
			// commits since pushed out of the metadata log.
			if !inFlight[s.name][p] && !strings.HasSuffix(p, ".metadata.json") {
				t.Errorf("%s: orphan deleted %s, which the killed job did not leave", s.name, p)
			}
		}
		for p := range inFlight[s.name] {
			if isDataDir(p) && !committed[s.name][p] && !gone[p] {
				t.Errorf("%s: orphan left %s, which the killed job wrote and no snapshot took in", s.name, p)
			}
		}
		if s == control {
			continue
		}
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

// expireFlinkWindow is expire's table property that bounds how long it
// keeps the history down to a Flink job's last commit (0: not at all).
const expireFlinkWindow = "icectl.expire.flink-restore-window-ms"

// killMidCheckpoint kills j at a chosen moment of a checkpoint. It stops
// held's commits (holdCommits) and waits until a checkpoint C completed
// whose commit to held's table is stopped half-way (its files written,
// the catalog's pointer not moved: the task is blocked in the commit),
// while every other table got C committed and has the next checkpoint's
// files written and snapshotted by its committer (that checkpoint never
// completes: held's task never acknowledges it). Then, the job running, orphan must delete
// nothing with its default grace; with a one-second grace it lists the
// files in flight, which it answers per table. Then SIGKILL, and C is
// returned.
func killMidCheckpoint(t *testing.T, j *job, streams []*stream, held *stream, chk string) (int64, map[string]map[string]bool) {
	t.Helper()
	start := time.Now()
	release := holdCommits(t, held)
	defer release()
	// Flink's committer skips a checkpoint with no files for its table,
	// so the stopped commit is the first non-empty one to complete.
	var c int64
	waitUntil(t, j, held.name+": a completed checkpoint's commit stopped", func() bool {
		k := checkpointID(latestCheckpoint(t, chk))
		// Its manifest still there and the catalog without it: the
		// commit is stopped (a commit just done deletes it soon).
		if snapshottedCheckpoints(t, held)[k] && committedCheckpoint(t, held) < k {
			c = k
			return true
		}
		return false
	})
	for _, s := range streams {
		if s == held {
			continue
		}
		waitUntil(t, j, fmt.Sprintf("%s: checkpoint %d committed and a later one's files snapshotted", s.name, c), func() bool {
			later := false
			for k := range snapshottedCheckpoints(t, s) {
				if k <= c {
					return false
				}
				later = true
			}
			return later
		})
	}
	if n := committedCheckpoint(t, held); n >= c {
		t.Fatalf("%s: checkpoint %d committed while its catalog was locked", held.name, n)
	}
	// Let the files in flight age past the one-second grace below.
	time.Sleep(1500 * time.Millisecond)
	inFlight := map[string]map[string]bool{}
	for _, s := range streams {
		if r := orphan(t, s); r.Summary.Deleted != 0 || len(r.Orphans) != 0 {
			t.Errorf("%s: mid-checkpoint, orphan with its default grace found %d files and deleted %d", s.name, len(r.Orphans), r.Summary.Deleted)
		}
		inFlight[s.name] = orphan(t, s, "--dry-run", "--older-than", "1s", "--unsafe-allow-recent").paths("")
		data := 0
		for p := range inFlight[s.name] {
			if isDataDir(p) {
				data++
			}
		}
		if data == 0 {
			t.Errorf("%s: mid-checkpoint, orphan with a 1 s grace found no data file in flight: %v", s.name, sortedPaths(inFlight[s.name]))
		}
		t.Logf("%s: mid-checkpoint, with the job running, orphan with a 1 s grace would delete %d files (%d data and delete files)", s.name, len(inFlight[s.name]), data)
	}
	if !j.running() {
		t.Fatalf("the flink job ended mid-checkpoint: %v\n%s", j.err, tail(j.log))
	}
	j.kill(t)
	t.Logf("killed mid-checkpoint %d, %.1f s after %s's commits were stopped", c+1, time.Since(start).Seconds(), held.name)
	return c, inFlight
}

// controlExpirePastFlink arms the negative control: held is the last
// checkpoint Flink committed to s's table (its restored state names that
// checkpoint's manifests); rewrite-manifests commits on top of it,
// keeping every data file, and expire with the Flink window off removes
// Flink's commit from the history the restored committer walks. The
// committer deleted the checkpoint's manifests after committing it; they
// are put back from kept (keepFlinkManifests), as a crash between the
// commit and their deletion leaves them. Without them the restored
// committer, which finds no record of the commit either, fails the
// job (NotFoundException on the manifest) instead of committing again.
// It answers the rows that commit added.
func controlExpirePastFlink(t *testing.T, s *stream, held int64, kept string) int64 {
	t.Helper()
	es, err := os.ReadDir(kept)
	if err != nil {
		t.Fatal(err)
	}
	back := 0
	for _, e := range es {
		if m := flinkManifestRE.FindStringSubmatch(e.Name()); m != nil && m[1] == strconv.FormatInt(held, 10) {
			dst := filepath.Join(s.metadataDir(), e.Name())
			if _, err := os.Stat(dst); err == nil {
				continue
			}
			if err := os.Link(filepath.Join(kept, e.Name()), dst); err != nil {
				t.Fatal(err)
			}
			back++
		}
	}
	if back == 0 {
		t.Fatalf("%s: no manifest of checkpoint %d was kept to put back (the poll missed it?)", s.name, held)
	}
	snaps, head := snapshots(t, s)
	fc := flinkCommit(ancestors(snaps, head))
	if fc == nil || fc.Summary["flink.max-committed-checkpoint-id"] != strconv.FormatInt(held, 10) {
		t.Fatalf("%s: the newest Flink commit is %+v, want checkpoint %d's", s.name, fc, held)
	}
	added, err := strconv.ParseInt(fc.Summary["added-records"], 10, 64)
	if err != nil || added == 0 {
		t.Fatalf("%s: Flink's commit %d added %q records", s.name, fc.SnapshotID, fc.Summary["added-records"])
	}
	icectl(t, append([]string{"rewrite-manifests", tableIdent}, s.args()...)...)
	if _, h := snapshots(t, s); h == head {
		t.Fatalf("%s: rewrite-manifests committed nothing on top of Flink's commit", s.name)
	}
	icectl(t, append([]string{"expire", tableIdent, "--older-than", "1s", "--retain-last", "1"}, s.args()...)...)
	return added
}

// checkControl checks that the negative control's restore committed its
// last checkpoint again: the model check fails on it, and the keys it
// finds twice are exactly that checkpoint's added rows, every other seq
// once. Were the restore's duplicates invisible to the model, the checks
// of the protected tables would prove nothing.
func checkControl(t *testing.T, s *stream, rows, added int64) {
	t.Helper()
	got, _ := readIcectl(t, s, 0)
	_, err := prefix(s, got)
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("%s: the model check passed (%v) on a table whose expiry dropped Flink's commit: it cannot see a restore's duplicates", s.name, err)
	}
	n := map[int64]int64{}
	for _, r := range got {
		n[r.ID]++
	}
	twice := int64(0)
	for k := range rows {
		switch n[k] {
		case 1:
		case 2:
			twice++
		default:
			t.Errorf("%s: seq %d read %d times", s.name, k, n[k])
		}
	}
	if twice != added || int64(len(got)) != rows+added {
		t.Errorf("%s: %d seqs twice in %d rows, want the %d the last checkpoint added, in %d", s.name, twice, len(got), added, rows+added)
	}
	t.Logf("%s (control, expiry past Flink's commit): the restored job committed its last checkpoint again; the model check sees %d seqs twice: %v", s.name, twice, err)
}

// sortedPaths is for messages.
func sortedPaths(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
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
