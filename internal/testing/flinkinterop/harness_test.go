package flinkinterop

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogs"
	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// tableIdent is every stream's table, each in a catalog of its own.
const tableIdent = "ns.t"

// stream is one table a job writes: keys > 0 upserts seq % keys, keys 0
// appends every seq.
type stream struct {
	name          string // Flink's and icectl's catalog name
	keys          int64
	formatVersion int
	db            string // the catalog's SQLite file
	warehouse     string
	props         map[string]string // table properties beside Flink's
}

func (s *stream) uri() string { return caturi.SQLiteURI(s.db) }

// args are the catalog flags of every icectl and iceberg-go command on s.
func (s *stream) args() []string {
	return []string{"--catalog-uri", s.uri(), "--catalog-name", s.name}
}

// newStream creates s's catalog database under dir, in WAL mode (Iceberg
// 1.10's JdbcCatalog holds an SQLite read lock across calls, which in
// rollback-journal mode blocks every other writer).
func newStream(t *testing.T, dir, name string, keys int64, formatVersion int) *stream {
	t.Helper()
	s := &stream{name: name, keys: keys, formatVersion: formatVersion,
		db: filepath.Join(dir, name+".db"), warehouse: filepath.Join(dir, "wh", name)}
	if err := os.MkdirAll(s.warehouse, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := sqlcat.Create(context.Background(), catalog.Config{Name: name, URI: s.uri(), Warehouse: "file://" + s.warehouse}, sqlcat.WAL())
	if err != nil {
		t.Fatalf("create catalog %s: %v", name, err)
	}
	c.Close()
	return s
}

// jobSpec is flink_job.py's argument.
type jobSpec struct {
	CheckpointDir string       `json:"checkpoint_dir"`
	CheckpointMS  int          `json:"checkpoint_ms"`
	Restore       string       `json:"restore"`
	Rows          int64        `json:"rows"`
	RowsPerSecond int          `json:"rows_per_second"`
	Streams       []streamSpec `json:"streams"`
}

type streamSpec struct {
	CatalogDB     string            `json:"catalog_db"`
	CatalogName   string            `json:"catalog_name"`
	Warehouse     string            `json:"warehouse"`
	Table         string            `json:"table"`
	Keys          int64             `json:"keys"`
	FormatVersion int               `json:"format_version"`
	Properties    map[string]string `json:"properties,omitempty"`
}

func specOf(streams []*stream, chkDir string, rows int64, rate int) jobSpec {
	js := jobSpec{CheckpointDir: chkDir, CheckpointMS: 2000, Rows: rows, RowsPerSecond: rate}
	for _, s := range streams {
		js.Streams = append(js.Streams, streamSpec{CatalogDB: s.db, CatalogName: s.name, Warehouse: s.warehouse,
			Table: tableIdent, Keys: s.keys, FormatVersion: s.formatVersion, Properties: s.props})
	}
	return js
}

// flinkJVMArgs are the options of the job's JVM (PyFlink's gateway puts
// $JVM_ARGS first on its command line), as sparkinterop's sessions have
// them: C1 only and the serial collector. On 2 cores C2's compiler threads
// and G1's collector threads compete with the job and the tests; a job of
// the short form cost about half the JVM CPU-seconds with them (a job's
// start 17.6 -> 8.0, four streams for 30 s 28.1 -> 13.9). The job is light
// (100 rows a second): C2's faster code never pays back its compilation.
const flinkJVMArgs = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

// job is one running flink_job.py: a Python process and the JVM of its
// mini-cluster, in a process group of their own so that kill stops both.
type job struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// startJob starts flink_job.py with spec and waits until Flink accepted
// the job.
func startJob(t *testing.T, spec jobSpec, logName string) *job {
	t.Helper()
	dir := testenv.Need(t, testenv.Flink, "PyFlink and Iceberg's Flink runtime (scripts/install-flink)")
	jars, err := filepath.Glob(filepath.Join(dir, "jars", "*.jar"))
	if err != nil || len(jars) == 0 {
		t.Fatalf("%s=%s holds no jars/*.jar: run scripts/install-flink", testenv.Flink, dir)
	}
	arg, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	j := &job{log: filepath.Join(filepath.Dir(spec.CheckpointDir), logName), done: make(chan struct{})}
	logf, err := os.Create(j.log)
	if err != nil {
		t.Fatal(err)
	}
	j.cmd = exec.Command(filepath.Join(dir, "bin", "python"), "flink_job.py", string(arg))
	// Jars in Flink's pipeline.jars do not reach the catalog factory's
	// class loader; PyFlink puts HADOOP_CLASSPATH on the JVM's classpath.
	j.cmd.Env = append(os.Environ(), "HADOOP_CLASSPATH="+strings.Join(jars, ":"), "JVM_ARGS="+flinkJVMArgs)
	j.cmd.Stderr = logf
	j.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := j.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := j.cmd.Start(); err != nil {
		t.Fatalf("start flink_job.py: %v", err)
	}
	submitted := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "job "); ok {
				submitted <- id
			}
		}
		j.err = j.cmd.Wait()
		logf.Close()
		close(j.done)
	}()
	t.Cleanup(func() { j.kill(t) })
	select {
	case id := <-submitted:
		t.Logf("flink job %s submitted (log %s)", id, j.log)
	case <-j.done:
		t.Fatalf("flink_job.py ended before submitting its job: %v\n%s", j.err, tail(j.log))
	case <-time.After(5 * time.Minute):
		t.Fatalf("flink_job.py did not submit its job in 5 minutes\n%s", tail(j.log))
	}
	return j
}

func (j *job) running() bool {
	select {
	case <-j.done:
		return false
	default:
		return true
	}
}

// kill stops the job as a crash would: SIGKILL to its process group,
// which leaves its retained checkpoints in place.
func (j *job) kill(t *testing.T) {
	if !j.running() {
		return
	}
	if err := syscall.Kill(-j.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Errorf("kill flink job: %v", err)
	}
	<-j.done
}

// wait waits for the job to end by itself (its sequence ended).
func (j *job) wait(t *testing.T, limit time.Duration) {
	t.Helper()
	select {
	case <-j.done:
	case <-time.After(limit):
		j.kill(t)
		t.Fatalf("flink job still running after %v\n%s", limit, tail(j.log))
	}
	if j.err != nil {
		t.Fatalf("flink job failed: %v\n%s", j.err, tail(j.log))
	}
}

// tail is the end of a log, with the lines that say what went wrong.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "Exception") || strings.Contains(l, "Caused by") || strings.Contains(l, "Error") {
			keep = append(keep, l)
		}
	}
	if len(keep) > 30 {
		keep = keep[len(keep)-30:]
	}
	return strings.Join(keep, "\n")
}

// latestCheckpoint is the newest completed checkpoint (a chk-N directory
// with its _metadata) under dir.
func latestCheckpoint(t *testing.T, dir string) string {
	t.Helper()
	ms, err := filepath.Glob(filepath.Join(dir, "*", "chk-*", "_metadata"))
	if err != nil || len(ms) == 0 {
		t.Fatalf("no completed checkpoint under %s", dir)
	}
	best, bestN := "", -1
	for _, m := range ms {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(m)), "chk-"))
		if err == nil && n > bestN {
			best, bestN = filepath.Dir(m), n
		}
	}
	return best
}

// checkpointID is the N of a chk-N directory.
func checkpointID(dir string) int64 {
	n, _ := strconv.ParseInt(strings.TrimPrefix(filepath.Base(dir), "chk-"), 10, 64)
	return n
}

// row is one row of a stream's table.
type row struct {
	ID int64  `json:"id"`
	V  int64  `json:"v"`
	S  string `json:"s"`
}

// readIcectl reads snapshot snap (0: current) of s's table with icectl's
// reader; it also answers the snapshot read.
func readIcectl(t *testing.T, s *stream, snap int64) ([]row, int64) {
	t.Helper()
	ctx := context.Background()
	cat, err := catalogs.Open(ctx, catalog.Config{Name: s.name, URI: s.uri()})
	if err != nil {
		t.Fatalf("open catalog %s: %v", s.name, err)
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, catalog.Ident{Namespace: []string{"ns"}, Name: "t"})
	if err != nil {
		t.Fatalf("load %s.%s: %v", s.name, tableIdent, err)
	}
	sn := tbl.Metadata.CurrentSnapshot()
	if snap != 0 {
		var ok bool
		if sn, ok = tbl.Metadata.SnapshotByID(snap); !ok {
			t.Fatalf("%s: no snapshot %d", s.name, snap)
		}
	}
	if sn == nil {
		return nil, 0
	}
	var rows []row
	err = scan.Rows(ctx, tbl.IO, tbl.Metadata, sn, scan.Options{}, func(rec arrow.RecordBatch) error {
		sch := rec.Schema()
		col := func(name string) arrow.Array {
			is := sch.FieldIndices(name)
			if len(is) != 1 {
				return nil
			}
			return rec.Column(is[0])
		}
		ids, ok1 := col("id").(*array.Int64)
		vs, ok2 := col("v").(*array.Int64)
		ss, ok3 := col("s").(*array.String)
		if !ok1 || !ok2 || !ok3 {
			return fmt.Errorf("unexpected columns %v", sch)
		}
		for i := range int(rec.NumRows()) {
			rows = append(rows, row{ID: ids.Value(i), V: vs.Value(i), S: ss.Value(i)})
		}
		return nil
	})
	if err != nil {
		t.Fatalf("icectl: scan %s snapshot %d: %v", s.name, sn.SnapshotID, err)
	}
	return rows, sn.SnapshotID
}

// readIcebergGo reads snapshot snap of s's table with iceberg-go.
func readIcebergGo(t *testing.T, s *stream, snap int64) []row {
	t.Helper()
	args := append([]string{"scan"}, s.args()...)
	args = append(args, "--table", tableIdent, "--snapshot", strconv.FormatInt(snap, 10))
	out := testenv.IcebergGo(context.Background(), t, args...)
	var res struct {
		Rows []row `json:"rows"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("iceberg-go scan of %s: %v", s.name, err)
	}
	return res.Rows
}

// prefix checks that rows are what s's stream makes of the sequence
// 0..m-1 for some m, and answers m: an upsert table holds one row per key
// seen, its last value; an append table every seq once. Every state Flink
// commits is such a prefix (one source and one sink, at parallelism 1,
// barriers aligned), and so must every state icectl commits be.
func prefix(s *stream, rows []row) (int64, error) {
	m := int64(0)
	seen := make(map[int64]row, len(rows))
	for _, r := range rows {
		if d, ok := seen[r.ID]; ok {
			return 0, fmt.Errorf("key %d twice: %+v and %+v", r.ID, d, r)
		}
		seen[r.ID] = r
		if r.S != "v"+strconv.FormatInt(r.V, 10) {
			return 0, fmt.Errorf("row %+v: s is not v || v", r)
		}
		m = max(m, r.V+1)
	}
	want := m
	if s.keys > 0 {
		want = min(m, s.keys)
	}
	for k := range want {
		r, ok := seen[k]
		if !ok {
			return m, fmt.Errorf("key %d lost (the table holds seq %d)", k, m-1)
		}
		v := k
		if s.keys > 0 {
			v = k + (m-1-k)/s.keys*s.keys
		}
		if r.V != v {
			return m, fmt.Errorf("key %d holds v=%d, want %d: an update lost (the table holds seq %d)", k, r.V, v, m-1)
		}
	}
	if int64(len(rows)) != want {
		return m, fmt.Errorf("%d rows, want %d (seq 0..%d)", len(rows), want, m-1)
	}
	return m, nil
}

// checkSnapshot reads snapshot snap (0: current) with icectl's reader and
// iceberg-go, checks both against the model, and answers the prefix
// length and the snapshot.
func checkSnapshot(t *testing.T, s *stream, snap int64, what string) (int64, int64) {
	t.Helper()
	rows, id := readIcectl(t, s, snap)
	if id == 0 {
		return 0, 0
	}
	m, err := prefix(s, rows)
	if err != nil {
		t.Fatalf("%s: %s, snapshot %d, icectl's reader: %v", s.name, what, id, err)
	}
	gm, err := prefix(s, readIcebergGo(t, s, id))
	if err != nil {
		t.Fatalf("%s: %s, snapshot %d, iceberg-go: %v", s.name, what, id, err)
	}
	if gm != m {
		t.Fatalf("%s: %s, snapshot %d: icectl reads seq 0..%d, iceberg-go 0..%d", s.name, what, id, m-1, gm-1)
	}
	return m, id
}

// icectl runs the icectl binary and answers its stdout; a non-zero exit
// fails the test.
func icectl(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := testenv.Run(t, exec.Command(testenv.Icectl(t), args...))
	if code != 0 {
		t.Fatalf("icectl %s: exit %d\n%s%s", strings.Join(args, " "), code, errOut, out)
	}
	return out
}

type snapshotView struct {
	SnapshotID int64             `json:"snapshot_id"`
	ParentID   *int64            `json:"parent_snapshot_id"`
	Sequence   int64             `json:"sequence_number"`
	Operation  string            `json:"operation"`
	Summary    map[string]string `json:"summary"`
}

// snapshots lists s's snapshots, and the current one's id.
func snapshots(t *testing.T, s *stream) ([]snapshotView, int64) {
	t.Helper()
	var v struct {
		Current   int64          `json:"current_snapshot_id"`
		Snapshots []snapshotView `json:"snapshots"`
	}
	out := icectl(t, append([]string{"snapshots", tableIdent, "-o", "json"}, s.args()...)...)
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("icectl snapshots: %v\n%s", err, out)
	}
	return v.Snapshots, v.Current
}

type fileView struct {
	Path         string `json:"path"`
	DataSequence int64  `json:"data_sequence_number"`
	FileSequence int64  `json:"file_sequence_number"`
}

// dataFiles lists the live data files of snapshot snap.
func dataFiles(t *testing.T, s *stream, snap int64) []fileView {
	t.Helper()
	var v struct {
		Files []fileView `json:"files"`
	}
	out := icectl(t, append([]string{"files", tableIdent, "--snapshot", strconv.FormatInt(snap, 10), "-o", "json"}, s.args()...)...)
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("icectl files: %v\n%s", err, out)
	}
	return v.Files
}

// ancestors is head's history, newest first.
func ancestors(snaps []snapshotView, head int64) []snapshotView {
	by := map[int64]snapshotView{}
	for _, s := range snaps {
		by[s.SnapshotID] = s
	}
	var out []snapshotView
	for id, ok := head, true; ok; {
		var s snapshotView
		if s, ok = by[id]; ok {
			out = append(out, s)
			if s.ParentID == nil {
				break
			}
			id = *s.ParentID
		}
	}
	return out
}

// sparkRows reads s's table with Spark (sparkinterop's iceberg_spark.py),
// when $ICECTL_TEST_SPARK is set; nil without it outside CI (icectl's
// reader and iceberg-go read every state; Spark the final one).
func sparkRows(t *testing.T, streams []*stream) map[string][]row {
	t.Helper()
	dir := os.Getenv(testenv.Spark)
	if dir == "" && os.Getenv("CI") != "" {
		testenv.Need(t, testenv.Spark, "PySpark with Iceberg's runtime (scripts/install-spark)")
	}
	if dir == "" {
		t.Logf("%s not set: Spark does not read the tables", testenv.Spark)
		return nil
	}
	py := filepath.Join("..", "sparkinterop", "iceberg_spark.py")
	cmd := exec.Command(filepath.Join(dir, "bin", "python"), py, "--spark", dir, "serve")
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start Spark: %v", err)
	}
	defer func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("Spark: %v\n%s", err, stderr.String())
		}
	}()
	dec := json.NewDecoder(out)
	res := map[string][]row{}
	for i, s := range streams {
		req, _ := json.Marshal(map[string]any{"id": i, "cmd": "sql", "args": map[string]any{
			"catalog_uri": s.uri(), "catalog_name": s.name,
			"statements": []string{"SELECT id, v, s FROM {cat}." + tableIdent}}})
		if _, err := fmt.Fprintf(in, "%s\n", req); err != nil {
			t.Fatalf("Spark: %v", err)
		}
		var ans struct {
			Result struct {
				Rows []row `json:"rows"`
			} `json:"result"`
			Error string `json:"error"`
		}
		if err := dec.Decode(&ans); err != nil {
			t.Fatalf("Spark: %v\n%s", err, stderr.String())
		}
		if ans.Error != "" {
			t.Fatalf("Spark: read %s: %s", s.name, ans.Error)
		}
		res[s.name] = ans.Result.Rows
	}
	return res
}

// sortedKeys is for messages that name keys in a stable order.
func sortedKeys(m map[int64]bool) []int64 {
	ks := make([]int64, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}

type orphanRun struct {
	Orphans []struct {
		Path   string `json:"path"`
		Status string `json:"status"`
	} `json:"orphans"`
	Summary struct {
		Orphans int64 `json:"orphans"`
		Deleted int64 `json:"deleted"`
		Failed  int64 `json:"failed"`
	} `json:"summary"`
}

// orphan runs icectl orphan on s's table with the flags given.
func orphan(t *testing.T, s *stream, flags ...string) orphanRun {
	t.Helper()
	args := append([]string{"orphan", tableIdent, "-o", "json"}, flags...)
	out := icectl(t, append(args, s.args()...)...)
	var r orphanRun
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("icectl orphan: %v\n%s", err, out)
	}
	if r.Summary.Failed != 0 {
		t.Fatalf("%s: orphan failed to delete %d files\n%s", s.name, r.Summary.Failed, out)
	}
	return r
}

// holdCommits takes the write lock of s's catalog database and holds it
// until release is called: the job's next commit to s's table then waits
// (flink_job.py's busy_timeout) after its checkpoint completed and its
// files were written, right before the catalog's pointer moves, which is
// where a crash leaves a checkpoint completed and not committed. A fault
// at the catalog's IO seam, not a fake: Flink and SQLite are real.
func holdCommits(t *testing.T, s *stream) (release func()) {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: s.db}).EscapedPath()+"?_pragma=busy_timeout(30000)")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err == nil {
		_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
	}
	if err != nil {
		db.Close()
		t.Fatalf("%s: lock the catalog database: %v", s.name, err)
	}
	return func() {
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Errorf("%s: unlock the catalog database: %v", s.name, err)
		}
		conn.Close()
		db.Close()
	}
}

// committedCheckpoint is the newest checkpoint a Flink sink committed to
// s's table, as the current snapshot's history records it (-1: none).
func committedCheckpoint(t *testing.T, s *stream) int64 {
	t.Helper()
	snaps, head := snapshots(t, s)
	fc := flinkCommit(ancestors(snaps, head))
	if fc == nil {
		return -1
	}
	n, err := strconv.ParseInt(fc.Summary["flink.max-committed-checkpoint-id"], 10, 64)
	if err != nil {
		t.Fatalf("%s: snapshot %d: %v", s.name, fc.SnapshotID, err)
	}
	return n
}

// flinkManifestRE matches the manifests Iceberg's Flink committer writes
// into the table's metadata directory when it snapshots its state, one
// checkpoint's files each (ManifestOutputFileFactory:
// JOB-OPERATOR-SUBTASK-ATTEMPT-CHECKPOINT-COUNT.avro).
var flinkManifestRE = regexp.MustCompile(`-([0-9]+)-[0-9]{5}\.avro$`)

// snapshottedCheckpoints are the checkpoints whose files s's committer has
// written a manifest for and not yet committed (it deletes the manifest
// after the commit).
func snapshottedCheckpoints(t *testing.T, s *stream) map[int64]bool {
	t.Helper()
	out := map[int64]bool{}
	err := filepath.WalkDir(s.warehouse, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil // a file deleted while walking
			}
			return err
		}
		if m := flinkManifestRE.FindStringSubmatch(d.Name()); m != nil && filepath.Base(filepath.Dir(p)) == "metadata" {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			out[n] = true
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: walk %s: %v", s.name, s.warehouse, err)
	}
	return out
}

// liveFiles are the data and delete files of snapshot snap, their paths
// as pathKey makes them.
func liveFiles(t *testing.T, s *stream, snap int64) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, f := range dataFiles(t, s, snap) {
		out[pathKey(f.Path)] = true
	}
	var v struct {
		Files []fileView `json:"files"`
	}
	o := icectl(t, append([]string{"files", tableIdent, "--deletes", "--snapshot", strconv.FormatInt(snap, 10), "-o", "json"}, s.args()...)...)
	if err := json.Unmarshal([]byte(o), &v); err != nil {
		t.Fatalf("icectl files --deletes: %v\n%s", err, o)
	}
	for _, f := range v.Files {
		out[pathKey(f.Path)] = true
	}
	return out
}

// pathKey is a local file's path as both file:/p and file:///p spell it.
func pathKey(p string) string {
	return "/" + strings.TrimLeft(strings.TrimPrefix(p, "file:"), "/")
}

// isDataDir says whether p is under a table's data directory (data and
// delete files), not its metadata.
func isDataDir(p string) bool { return strings.Contains(p, "/data/") }

// waitUntil polls cond until it holds; the job must keep running, and it
// must hold within a minute.
func waitUntil(t *testing.T, j *job, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if !j.running() {
			t.Fatalf("the flink job ended while waiting until %s: %v\n%s", what, j.err, tail(j.log))
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within a minute: %s\n%s", what, tail(j.log))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// paths are r's orphans with status (any when ""), as pathKey makes them.
func (r orphanRun) paths(status string) map[string]bool {
	out := map[string]bool{}
	for _, o := range r.Orphans {
		if status == "" || o.Status == status {
			out[pathKey(o.Path)] = true
		}
	}
	return out
}

// metadataDir is the metadata directory of s's table (the JDBC catalog
// puts ns.t under WAREHOUSE/ns/t).
func (s *stream) metadataDir() string { return filepath.Join(s.warehouse, "ns", "t", "metadata") }

// keepFlinkManifests hard-links every manifest s's Flink committer writes
// into dir as soon as it appears, until stop is called: the committer
// deletes a checkpoint's manifests right after committing it, and the
// links let the test put them back (a crash between the commit and the
// deletion leaves them). It polls every 10 ms; a commit takes longer.
func keepFlinkManifests(t *testing.T, s *stream, dir string) (stop func()) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-time.After(10 * time.Millisecond):
			}
			es, _ := os.ReadDir(s.metadataDir())
			for _, e := range es {
				if flinkManifestRE.MatchString(e.Name()) {
					// An existing link or a file deleted meanwhile is no error.
					_ = os.Link(filepath.Join(s.metadataDir(), e.Name()), filepath.Join(dir, e.Name()))
				}
			}
		}
	}()
	return func() { close(quit); <-done }
}
