package compact_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogs"
	"github.com/icectl/icectl/compact"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/testenv"
	"github.com/icectl/icectl/plan"
)

// The sharded run (plan once, N worker processes, one committer) on the
// suite's REST catalog with its files on the S3 server, checked through
// iceberg-go against the single-process run of the same table and against
// the fixture's model of its rows.

// newRESTFixture is newFixture's table in the REST catalog, in a namespace
// of its own, its files on the catalog's S3.
func newRESTFixture(tb testing.TB, v int, seed uint64, props map[string]string) *fixture {
	tb.Helper()
	r := testenv.NeedREST(tb)
	uri, wh, cprops := r.URI, r.Warehouse, r.Props
	cred, s3, key, secret := cprops["credential"], cprops[fileio.S3Endpoint], cprops[fileio.S3AccessKeyID], cprops[fileio.S3SecretAccessKey]
	ctx := context.Background()
	cat, err := catalogs.Create(ctx, catalog.Config{Name: "rest", URI: uri, Warehouse: wh, Props: cprops})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cat.Close() })
	var rnd [6]byte
	rand.Read(rnd[:])
	ns := "shard_" + hex.EncodeToString(rnd[:])
	if err := cat.CreateNamespace(ctx, []string{ns}, nil); err != nil {
		tb.Fatal(err)
	}
	id := catalog.Ident{Namespace: []string{ns}, Name: fxTable}
	loc, err := cat.(catalog.LocationProvider).DefaultLocation(ctx, id)
	if err != nil {
		tb.Fatal(err)
	}
	all := map[string]string{"write.delete.mode": "merge-on-read", "write.parquet.compression-codec": "zstd"}
	maps.Copy(all, props)
	md, err := spec.NewTableMetadata(fxSchema(), fxSpecCat(), spec.SortOrder{OrderID: 0}, loc, all, v)
	if err != nil {
		tb.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, id, md)
	if err != nil {
		tb.Fatal(err)
	}
	f := newFixtureIn(tb, tb.TempDir(), v, seed, props) // the model and helpers; its SQLite table is not used
	f.cat, f.ident, f.tbl = cat, id, tbl
	f.goArgs = []string{"--rest-uri", uri, "--warehouse", wh, "--catalog-name", "rest", "--prop", "s3.region=us-east-1"}
	for k, v := range cprops {
		f.goArgs = append(f.goArgs, "--prop", k+"="+v)
	}
	f.cliArgs = []string{"--catalog", "rest"}
	f.env = []string{"ICECTL_CATALOG__REST__URI=" + uri, "ICECTL_CATALOG__REST__WAREHOUSE=" + wh,
		"ICECTL_CATALOG__REST__CREDENTIAL=" + cred, "ICECTL_CATALOG__REST__S3__ENDPOINT=" + s3,
		"ICECTL_CATALOG__REST__S3__ACCESS_KEY_ID=" + key, "ICECTL_CATALOG__REST__S3__SECRET_ACCESS_KEY=" + secret,
		"ICECTL_CATALOG__REST__S3__PATH_STYLE_ACCESS=true", "ICECTL_CATALOG__REST__CLIENT__REGION=us-east-1"}
	return f
}

// shardGroupBytes makes groups of a few files each, so a table of a few
// hundred small files has tens of groups to share out.
const shardGroupBytes = "40KiB"

// shardTable is the table of the sharded tests: v3, files in three
// partitions, DVs on some.
func shardTable(t *testing.T, seed uint64, files int) *fixture {
	f := newRESTFixture(t, 3, seed, smallFiles)
	parts := f.partitions(3)
	f.must(f.appendFiles(parts, files/2, 30))
	f.must(f.appendFiles(parts, files-files/2, 30))
	f.must(f.deleteIDs(delDV, f.pickLive(files/3)))
	return f
}

// run runs icectl with the fixture's catalog environment and env; it
// returns stdout, stderr and the exit code.
func (f *fixture) run(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := f.icectlCmd(t, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

func (f *fixture) icectlCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(testenv.Icectl(t), args...)
	cmd.Env = append(append(os.Environ(), f.env...), env...)
	return cmd
}

// stageDir is a stage next to the table, on the same S3.
func (f *fixture) stageDir(name string) string {
	return f.tbl.Metadata.Location + "-" + name
}

// planOnce saves the plan of f's table at planPath and returns it.
func (f *fixture) planOnce(t *testing.T, planPath string) *plan.Plan {
	t.Helper()
	args := append([]string{"compact", f.tableName(), "--dry-run", "--plan-out", planPath, "--max-file-group-size", shardGroupBytes}, cliArgs(f)...)
	if _, stderr, code := f.run(t, nil, args...); code != 0 {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}
	data, err := fileio.ReadFile(f.ctx, f.tbl.IO, planPath)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.ParsePlan(data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type shardView struct {
	PlanID        string `json:"plan_id"`
	Staged        int    `json:"staged"`
	AlreadyStaged int    `json:"already_staged"`
	Dropped       int    `json:"dropped"`
	Failed        int    `json:"failed"`
	Groups        []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"groups"`
}

type commitView struct {
	Commits int `json:"commits"`
	Groups  []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	} `json:"groups"`
}

func (c commitView) count(status string) int {
	n := 0
	for _, g := range c.Groups {
		if g.Status == status {
			n++
		}
	}
	return n
}

// worker runs shard index of n (the index from $JOB_COMPLETION_INDEX) and
// returns its JSON report.
func (f *fixture) worker(t *testing.T, planPath, stage string, index, n int) shardView {
	t.Helper()
	args := append([]string{"compact", f.tableName(), "--plan", planPath, "--shard", fmt.Sprint(n), "--stage", stage, "--output", "json"}, cliArgs(f)...)
	out, stderr, code := f.run(t, []string{fmt.Sprintf("JOB_COMPLETION_INDEX=%d", index)}, args...)
	if code != 0 {
		t.Fatalf("worker %d/%d: exit %d: %s", index, n, code, stderr)
	}
	var v shardView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("worker report: %v\n%s", err, out)
	}
	return v
}

// commitStage runs the committer and returns its report and exit code.
func (f *fixture) commitStage(t *testing.T, stage string) (commitView, int, string) {
	t.Helper()
	// --wait: a committer killed by a test leaves its claim until its
	// lease (ICECTL_CLAIM_LEASE, short in those tests) lapses.
	args := append([]string{"compact", f.tableName(), "--commit", stage, "--output", "json", "--wait", "1m"}, cliArgs(f)...)
	out, stderr, code := f.run(t, nil, args...)
	var v commitView
	if out != "" {
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("commit report: %v\n%s\n%s", err, out, stderr)
		}
	}
	return v, code, stderr
}

// committedOnce checks that no snapshot commits a group of plan p that
// another snapshot committed, and returns the groups committed.
func committedOnce(t *testing.T, f *fixture, p *plan.Plan) map[string]int64 {
	t.Helper()
	md := f.reload().Metadata
	seen := map[string]int64{}
	id := p.ID()
	for _, s := range md.Snapshots {
		if s.Summary[compact.SummaryPlanID] != id {
			continue
		}
		for _, g := range strings.Split(s.Summary[compact.SummaryGroupIDs], ",") {
			if prev, dup := seen[g]; dup {
				t.Errorf("group %s committed twice: snapshots %d and %d", g, prev, s.SnapshotID)
			}
			seen[g] = s.SnapshotID
		}
	}
	return seen
}

// noStrayOutputs checks that every data file a sharded run of p wrote
// (named by the plan's id) is live in the table: none of a dropped group,
// a killed worker or a duplicate is left behind.
func noStrayOutputs(t *testing.T, f *fixture, p *plan.Plan) {
	t.Helper()
	tbl := f.reload()
	live := map[string]bool{}
	for _, e := range mustLive(t, f).Data {
		live[e.Entry.DataFile.FilePath] = true
	}
	prefix := p.ID() + "-"
	err := tbl.IO.(fileio.Lister).List(f.ctx, table.DataLocation(tbl.Metadata)+"/", func(fi fileio.FileInfo) error {
		if strings.HasPrefix(path.Base(fi.Path), prefix) && !live[fi.Path] {
			t.Errorf("output %s of the sharded run is left behind, not in the table", fi.Path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestShardedCompactREST: a table of a few hundred files planned once,
// rewritten by four worker processes (indexes from JOB_COMPLETION_INDEX),
// committed once, reads through iceberg-go exactly as the same table
// compacted by one process: rows, checksum, and every row's lineage.
func TestShardedCompactREST(t *testing.T) {
	const seed, files = 24, 300
	single := shardTable(t, seed, files)
	sharded := shardTable(t, seed, files)
	before := icebergGo(t, sharded, true)
	if b1 := icebergGo(t, single, true); b1.Checksum != before.Checksum {
		t.Fatalf("the two tables differ before compaction: %s vs %s", b1.Checksum, before.Checksum)
	}

	args := append([]string{"compact", single.tableName(), "--max-file-group-size", shardGroupBytes}, cliArgs(single)...)
	if _, stderr, code := single.run(t, nil, args...); code != 0 {
		t.Fatalf("single-process compact: exit %d: %s", code, stderr)
	}

	planPath := sharded.stageDir("plan.json")
	stage := sharded.stageDir("stage")
	p := sharded.planOnce(t, planPath)
	if len(p.Groups) < 8 {
		t.Fatalf("the plan has %d groups, want enough for four shards", len(p.Groups))
	}
	var wg sync.WaitGroup
	views := make([]shardView, 4)
	for i := range views {
		wg.Add(1)
		go func() {
			defer wg.Done()
			views[i] = sharded.worker(t, planPath, stage, i, 4)
		}()
	}
	wg.Wait()
	staged := 0
	for i, v := range views {
		if v.Staged == 0 || v.Failed+v.Dropped != 0 {
			t.Errorf("worker %d: %+v", i, v)
		}
		staged += v.Staged
	}
	if staged != len(p.Groups) {
		t.Fatalf("workers staged %d groups, the plan has %d", staged, len(p.Groups))
	}
	v, code, stderr := sharded.commitStage(t, stage)
	if code != 0 || v.count(compact.StatusCommitted) != len(p.Groups) {
		t.Fatalf("commit: exit %d, %d of %d committed: %s", code, v.count(compact.StatusCommitted), len(p.Groups), stderr)
	}

	want, got := icebergGo(t, single, true), icebergGo(t, sharded, true)
	if got.RowCount != want.RowCount || got.Checksum != want.Checksum || got.Checksum != before.Checksum {
		t.Errorf("sharded: %d rows %s; single process: %d rows %s; before: %s", got.RowCount, got.Checksum, want.RowCount, want.Checksum, before.Checksum)
	}
	if w, g := want.lineageByID(t), got.lineageByID(t); !maps.EqualFunc(w, g, func(a, b lineage) bool { return a.String() == b.String() }) {
		t.Errorf("lineage differs from the single-process run's (%d vs %d rows)", len(g), len(w))
		n := 0
		for id, l := range w {
			if g[id].String() != l.String() && n < 5 {
				n++
				t.Errorf("row %d: single %s, sharded %s", id, l, g[id])
			}
		}
	}
	checkModel(t, sharded, got)
	if c := icectlChecksum(t, sharded); c.Checksum != icebergGo(t, sharded, false).Checksum {
		t.Errorf("icectl's scan disagrees with iceberg-go's: %+v", c)
	}
	if n := len(committedOnce(t, sharded, p)); n != len(p.Groups) {
		t.Errorf("%d groups recorded as committed, want %d", n, len(p.Groups))
	}
	if a, b := len(mustLive(t, single).Data), len(mustLive(t, sharded).Data); a != b {
		t.Errorf("sharded run leaves %d data files, the single process %d", b, a)
	}
	noStrayOutputs(t, sharded, p)

	// Run again, the committer commits nothing and says so, and takes no
	// claim: not one metadata version.
	loc := sharded.reload().MetadataLocation
	v, code, stderr = sharded.commitStage(t, stage)
	if code != 0 || v.count(compact.StatusAlreadyCommitted) != len(p.Groups) || v.Commits != 0 {
		t.Errorf("second commit: exit %d, %d commits, %d already committed: %s", code, v.Commits, v.count(compact.StatusAlreadyCommitted), stderr)
	}
	if again := sharded.reload().MetadataLocation; again != loc {
		t.Errorf("a second commit with nothing to commit changed the table: %s", again)
	}
}

// faultTable is a smaller sharded table for the fault cases.
func faultTable(t *testing.T, seed uint64) *fixture { return shardTable(t, seed, 90) }

// checkRows checks the table against its model through iceberg-go and
// that its rows are those read before (rows, as a sum, unchanged).
func checkRows(t *testing.T, f *fixture, before *goScan) {
	t.Helper()
	g := icebergGo(t, f, false)
	checkModel(t, f, g)
	if before != nil && (g.RowCount != before.RowCount || g.Checksum != before.Checksum) {
		t.Errorf("reads %d rows %s, before %d rows %s", g.RowCount, g.Checksum, before.RowCount, before.Checksum)
	}
}

// TestShardedCompactFaultsREST: a worker SIGKILLed mid-shard and run again,
// a worker run twice, the committer killed mid-commit and run again: the
// table reads as before, every group is committed once, nothing is left.
func TestShardedCompactFaultsREST(t *testing.T) {
	t.Setenv("ICECTL_CLAIM_LEASE", "2s") // the killed committer's claim lapses soon
	f := faultTable(t, 31)
	before := icebergGo(t, f, false)
	planPath, stage := f.stageDir("plan.json"), f.stageDir("stage")
	p := f.planOnce(t, planPath)

	// Worker 0 of 2, one group at a time, killed once it has staged one.
	args := append([]string{"compact", f.tableName(), "--plan", planPath, "--shard", "0/2", "--stage", stage, "--max-concurrent-groups", "1"}, cliArgs(f)...)
	cmd := f.icectlCmd(t, nil, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lister := f.tbl.IO.(fileio.Lister)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		n := 0
		lister.List(f.ctx, stage+"/groups/", func(fileio.FileInfo) error { n++; return nil })
		if n > 0 {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	again := f.worker(t, planPath, stage, 0, 2)
	if again.AlreadyStaged == 0 {
		t.Errorf("the re-run worker found nothing staged by the killed one: %+v", again)
	}
	t.Logf("the killed worker had staged %d of its %d groups", again.AlreadyStaged, len(again.Groups))
	if again.Staged == 0 {
		t.Errorf("the worker finished before the kill: the case is not exercised (%+v)", again)
	}
	f.worker(t, planPath, stage, 1, 2)
	twice := f.worker(t, planPath, stage, 1, 2)
	if twice.Staged != 0 || twice.AlreadyStaged != len(twice.Groups) {
		t.Errorf("worker 1 run twice rewrote again: %+v", twice)
	}

	// The committer, one group per commit, killed after its first commit.
	args = append([]string{"compact", f.tableName(), "--commit", stage, "--max-commits", fmt.Sprint(len(p.Groups))}, cliArgs(f)...)
	cmd = f.icectlCmd(t, nil, args...)
	head := *f.tbl.Metadata.CurrentSnapshotID
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for time.Now().Before(deadline.Add(time.Minute)) {
		if *f.reload().Metadata.CurrentSnapshotID != head {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	firstRun := len(committedOnce(t, f, p))
	checkRows(t, f, before)
	v, code, stderr := f.commitStage(t, stage)
	if code != 0 {
		t.Fatalf("commit after the kill: exit %d: %s", code, stderr)
	}
	if v.count(compact.StatusAlreadyCommitted) != firstRun || v.count(compact.StatusCommitted) != len(p.Groups)-firstRun {
		t.Errorf("the killed committer committed %d groups; the re-run says %d already and commits %d, of %d",
			firstRun, v.count(compact.StatusAlreadyCommitted), v.count(compact.StatusCommitted), len(p.Groups))
	}
	t.Logf("the killed committer had committed %d of %d groups", firstRun, len(p.Groups))
	if firstRun == 0 || firstRun == len(p.Groups) {
		t.Errorf("the committer was killed with %d of %d groups committed: not mid-commit", firstRun, len(p.Groups))
	}
	if n := len(committedOnce(t, f, p)); n != len(p.Groups) {
		t.Errorf("%d groups committed, want %d", n, len(p.Groups))
	}
	checkRows(t, f, before)
	checkConsistentREST(t, f)
	noStrayOutputs(t, f, p)
}

// checkConsistentREST checks that every file the table's snapshots reach
// can be opened.
func checkConsistentREST(t *testing.T, f *fixture) {
	t.Helper()
	tbl := f.reload()
	live := mustLive(t, f)
	for _, e := range append(live.Data, live.Deletes...) {
		r, err := tbl.IO.Open(f.ctx, e.Entry.DataFile.FilePath)
		if err != nil {
			t.Errorf("referenced file missing: %v", err)
			continue
		}
		r.Close()
	}
}

// TestShardedCompactWriterREST: a writer commits deletes and appends after
// the plan (before the workers, and between workers and commit), and in
// another table the plan goes stale (another compaction rewrote its
// inputs): no deleted row comes back, no row is lost, the dropped groups'
// outputs are gone.
func TestShardedCompactWriterREST(t *testing.T) {
	t.Run("writer", func(t *testing.T) {
		f := faultTable(t, 41)
		planPath, stage := f.stageDir("plan.json"), f.stageDir("stage")
		p := f.planOnce(t, planPath)
		f.must(f.deleteIDs(delDV, f.pickLive(15))) // before the workers: they apply it
		f.worker(t, planPath, stage, 0, 2)
		f.worker(t, planPath, stage, 1, 2)
		f.must(f.deleteIDs(delDV, f.pickLive(15))) // after: the committer rebases
		f.must(f.appendFiles(f.partitions(3), 6, 30))
		f.must(f.deleteIDs(delEquality, f.pickLive(10)))
		v, code, stderr := f.commitStage(t, stage)
		if code != 0 {
			t.Fatalf("commit: exit %d: %s", code, stderr)
		}
		if v.count(compact.StatusRebased) == 0 {
			t.Errorf("no group was rebased after the deletes: %+v", v.Groups)
		}
		checkRows(t, f, nil)
		committedOnce(t, f, p)
		noStrayOutputs(t, f, p)
	})
	t.Run("stale", func(t *testing.T) {
		f := faultTable(t, 43)
		planPath, stage := f.stageDir("plan.json"), f.stageDir("stage")
		p := f.planOnce(t, planPath)
		f.worker(t, planPath, stage, 0, 1)
		// Another compaction rewrites every input of the plan.
		args := append([]string{"compact", f.tableName(), "--rewrite-all"}, cliArgs(f)...)
		if _, stderr, code := f.run(t, nil, args...); code != 0 {
			t.Fatalf("compact: exit %d: %s", code, stderr)
		}
		before := icebergGo(t, f, false)
		head := *f.reload().Metadata.CurrentSnapshotID
		v, code, _ := f.commitStage(t, stage)
		if code != 4 || v.count(compact.StatusDropped) != len(p.Groups) {
			t.Errorf("stale plan: exit %d, %d of %d groups dropped", code, v.count(compact.StatusDropped), len(p.Groups))
		}
		if *f.reload().Metadata.CurrentSnapshotID != head {
			t.Error("a stale plan committed")
		}
		checkRows(t, f, before)
		noStrayOutputs(t, f, p)
		// Its workers run again drop every group and stage nothing.
		if w := f.worker(t, planPath, stage, 0, 1); w.Dropped != len(p.Groups) {
			t.Errorf("worker on the stale plan: %+v", w)
		}
		noStrayOutputs(t, f, p)
	})
}

// TestShardedCompactBadInputREST: a plan of another table, a truncated
// staged result, a shard index out of range: a clear error, exit 2 or 1,
// nothing committed.
func TestShardedCompactBadInputREST(t *testing.T) {
	f := faultTable(t, 51)
	other := faultTable(t, 52)
	planPath, stage := f.stageDir("plan.json"), f.stageDir("stage")
	f.planOnce(t, planPath)
	head := *f.reload().Metadata.CurrentSnapshotID
	otherHead := *other.reload().Metadata.CurrentSnapshotID

	expect := func(name string, wantCode int, wantErr string, env []string, args ...string) {
		t.Helper()
		_, stderr, code := f.run(t, env, args...)
		if code != wantCode || !strings.Contains(stderr, wantErr) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and one line with %q", name, code, stderr, wantCode, wantErr)
		}
	}
	worker := func(tbl, shard string) []string {
		return append([]string{"compact", tbl, "--plan", planPath, "--shard", shard, "--stage", stage}, cliArgs(f)...)
	}
	expect("plan of another table", 2, "the plan is of table", nil, worker(other.tableName(), "0/2")...)
	expect("index out of range", 2, "out of range", []string{"JOB_COMPLETION_INDEX=2"}, worker(f.tableName(), "2")...)
	expect("index out of range", 2, "out of range", nil, worker(f.tableName(), "5/4")...)
	expect("no index", 2, "names only the count", []string{"JOB_COMPLETION_INDEX="}, worker(f.tableName(), "4")...)

	f.worker(t, planPath, stage, 0, 1)
	expect("commit into another table", 2, "the plan is of table", nil,
		append([]string{"compact", other.tableName(), "--commit", stage}, cliArgs(f)...)...)
	// A plan made with other options is another plan: its worker and its
	// committer refuse the first plan's stage.
	plan2 := f.stageDir("plan2.json")
	args := append([]string{"compact", f.tableName(), "--dry-run", "--plan-out", plan2, "--max-file-group-size", "80KiB"}, cliArgs(f)...)
	if _, stderr, code := f.run(t, nil, args...); code != 0 {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}
	expect("worker of another plan", 1, "stage each plan in a directory of its own", nil,
		append([]string{"compact", f.tableName(), "--plan", plan2, "--shard", "0/1", "--stage", stage}, cliArgs(f)...)...)
	expect("commit of another plan", 1, "stage each plan in a directory of its own", nil,
		append([]string{"compact", f.tableName(), "--plan", plan2, "--commit", stage}, cliArgs(f)...)...)

	var victim string
	f.tbl.IO.(fileio.Lister).List(f.ctx, stage+"/groups/", func(fi fileio.FileInfo) error { victim = fi.Path; return nil })
	data, err := fileio.ReadFile(f.ctx, f.tbl.IO, victim)
	if err != nil {
		t.Fatal(err)
	}
	if err := fileio.WriteFile(f.ctx, f.tbl.IO, victim, data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	expect("truncated staged result", 1, "does not parse", nil, append([]string{"compact", f.tableName(), "--commit", stage}, cliArgs(f)...)...)

	if *f.reload().Metadata.CurrentSnapshotID != head || *other.reload().Metadata.CurrentSnapshotID != otherHead {
		t.Error("bad input committed something")
	}
	checkRows(t, f, nil)
	checkRows(t, other, nil)
	if slices.ContainsFunc(f.tbl.Metadata.Snapshots, func(s spec.Snapshot) bool { return s.Summary[compact.SummaryPlanID] != "" }) {
		t.Error("a snapshot of the sharded run exists")
	}
}

// TestShardedCompactLocal runs the sharded steps in process on the SQLite
// fixture, whose paths are file:///...: the committed outputs all exist
// afterwards (the committer's sweep compares paths spelt in more than one
// way), rows and checksum are those before, and only the attempts no
// commit took are gone.
func TestShardedCompactLocal(t *testing.T) {
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { shardedLocal(t, v) })
	}
}

// shardedLocal is TestShardedCompactLocal on a table of format v: v2 with
// partition-scoped position deletes, which the plan retires only once
// every group of their partition is committed (RetireAfterGroups), v3
// with DVs.
func shardedLocal(t *testing.T, v int) {
	f := newFixture(t, v, 61, smallFiles)
	f.must(f.appendFiles(f.partitions(3), 30, 40))
	if v == 2 {
		f.must(f.deleteIDs(delPartitionPos, f.pickLive(30)))
	} else {
		f.must(f.deleteIDs(delDV, f.pickLive(30)))
	}
	before := icebergGo(t, f, false)
	opts := compact.Options{Commit: f.copts, MaxConcurrentGroups: 2}
	opts.Plan.MaxFileGroupSize = 20 << 10
	opts.Plan.RewriteAll, opts.Plan.MinInputFiles = true, 1 // every file in some group
	p, err := compact.PlanTable(f.ctx, f.reload(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Groups) < 3 {
		t.Fatalf("%d groups planned", len(p.Groups))
	}
	st := compact.Stage{IO: fileio.NewLocal(), Dir: "file://" + t.TempDir()}
	for i := range 2 {
		rep, err := compact.RewriteShard(f.ctx, f.reload(), p, compact.Shard{Index: i, Count: 2}, st, opts)
		if err != nil || rep.Count(compact.StatusFailed) > 0 {
			t.Fatalf("shard %d: %v %+v", i, err, rep)
		}
	}
	// A second attempt at a group whose result went missing: the first
	// attempt's files are what the sweep must remove, the second's what it
	// must keep.
	var victim string
	st.IO.(fileio.Lister).List(f.ctx, st.Dir+"/groups/", func(fi fileio.FileInfo) error { victim = fi.Path; return nil })
	if err := st.IO.Remove(f.ctx, victim); err != nil {
		t.Fatal(err)
	}
	restaged, kept := 0, 0
	for i := range 2 {
		rep, err := compact.RewriteShard(f.ctx, f.reload(), p, compact.Shard{Index: i, Count: 2}, st, opts)
		if err != nil {
			t.Fatalf("second run of shard %d: %v", i, err)
		}
		restaged += rep.Count(compact.ShardStaged)
		kept += rep.Count(compact.ShardAlreadyStaged)
	}
	if restaged != 1 || kept != len(p.Groups)-1 {
		t.Fatalf("second runs: %d staged again, %d kept; want 1 and %d", restaged, kept, len(p.Groups)-1)
	}
	// A group whose worker died after writing its files, before staging
	// it, and was not run again: the commit leaves the group for the next
	// run and its files are removed.
	if err := st.IO.Remove(f.ctx, victim); err != nil {
		t.Fatal(err)
	}
	rep, err := compact.CommitStaged(f.ctx, f.cat, f.reload(), p, st, opts)
	if err != nil || rep.Committed() != len(p.Groups)-1 || rep.LeftForNextRun != 1 {
		t.Fatalf("commit: %v, %d of %d committed, %d left", err, rep.Committed(), len(p.Groups), rep.LeftForNextRun)
	}
	checkConsistent(t, f)
	checkRows(t, f, before)
	noStrayOutputs(t, f, p)
	if v == 2 && len(p.RetireAfterGroups) == 0 {
		t.Error("the v2 plan retires no partition-scoped delete after its groups: the case is not exercised")
	}
	// The group left over is committed by a second round: its worker
	// stages it, the committer commits it and, with it, the retirements
	// that waited for it; the table then has no delete file left.
	for i := range 2 {
		if _, err := compact.RewriteShard(f.ctx, f.reload(), p, compact.Shard{Index: i, Count: 2}, st, opts); err != nil {
			t.Fatal(err)
		}
	}
	rep, err = compact.CommitStaged(f.ctx, f.cat, f.reload(), p, st, opts)
	if err != nil || rep.Committed() != 1 || rep.LeftForNextRun != 0 {
		t.Fatalf("second commit: %v, %d committed, %d left", err, rep.Committed(), rep.LeftForNextRun)
	}
	checkConsistent(t, f)
	checkRows(t, f, before)
	noStrayOutputs(t, f, p)
	if n := len(mustLive(t, f).Deletes); n != 0 {
		t.Errorf("%d delete files are left after every group was committed", n)
	}
}
