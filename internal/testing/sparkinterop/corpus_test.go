package sparkinterop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// corpusIndex is the answer to "corpus": the tables Spark wrote.
type corpusIndex struct {
	Dir    string        `json:"dir"`
	Tables []corpusTable `json:"tables"`
	// HiveTables are the Hive-format tables Spark brought into Iceberg
	// (hive_test.go); no test of Tables walks them.
	HiveTables []corpusTable `json:"hive_tables"`
}

type corpusTable struct {
	Name          string   `json:"name"`
	Table         string   `json:"table"`
	FormatVersion int      `json:"format_version"`
	Features      []string `json:"features"`
	// Pristine is Spark's read of the table as Spark left it; AfterWrite
	// its read after Spark's writes (the "write" request) on that state.
	Pristine   readResult `json:"pristine"`
	AfterWrite readResult `json:"after_write"`
}

// readResult is Spark's read of a table: rows and checksum of every
// column, and on v3 the lineage checksum (every row with its _row_id and
// _last_updated_sequence_number) and how many rows have each.
type readResult struct {
	FormatVersion   int    `json:"format_version"`
	Rows            int64  `json:"rows"`
	Checksum        string `json:"checksum"`
	SnapshotID      string `json:"snapshot_id"` // main's head
	Snapshots       int64  `json:"snapshots"`
	Lineage         string `json:"lineage"`
	RowIDs          int64  `json:"row_ids"`
	DistinctRowIDs  int64  `json:"distinct_row_ids"`
	SequenceNumbers int64  `json:"sequence_numbers"`
}

var corpusOnce struct {
	sync.Once
	idx corpusIndex
	err error
}

// loadCorpus returns the corpus, built by Spark the first time (about 2
// minutes; scripts/test builds it while it installs), under
// $ICECTL_TEST_SPARK_CORPUS (scripts/test: the tools cache, so that a
// fresh clone on the same machine finds it), else the repository's
// .tools/spark-corpus.
func loadCorpus(t *testing.T) corpusIndex {
	t.Helper()
	testenv.Need(t, testenv.Spark, "PySpark and Iceberg's Spark runtime (scripts/install-spark)")
	c := &corpusOnce
	c.Do(func() {
		sched.corpusLoading.Store(true)
		defer close(sched.corpusLoaded)
		root, err := filepath.Abs(filepath.Join("..", "..", "..", ".tools", "spark-corpus"))
		if d := os.Getenv("ICECTL_TEST_SPARK_CORPUS"); d != "" {
			root = d
		}
		if err != nil {
			c.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		c.err = spark.call(ctx, t, "corpus", map[string]string{"root": root}, &c.idx)
	})
	if c.err != nil {
		t.Fatal(c.err)
	}
	if len(c.idx.Tables) == 0 {
		t.Fatalf("the corpus in %s has no tables", c.idx.Dir)
	}
	// Spark's writes add and delete rows on every table: a checksum that
	// did not change with them would compare nothing.
	for _, tab := range c.idx.Tables {
		p, w := tab.Pristine, tab.AfterWrite
		if p.Rows == 0 || p.Checksum == w.Checksum || (tab.FormatVersion >= 3 && (p.Lineage == "" || p.Lineage == w.Lineage)) {
			t.Fatalf("corpus table %s: %d rows, checksum %s and lineage %q; after Spark's writes %d rows, checksum %s and lineage %q",
				tab.Name, p.Rows, p.Checksum, p.Lineage, w.Rows, w.Checksum, w.Lineage)
		}
	}
	return c.idx
}

// tableCopy is a test's own copy of a corpus table.
type tableCopy struct {
	CatalogURI  string `json:"catalog_uri"`
	CatalogName string `json:"catalog_name"`
	Table       string `json:"table"`
}

// checkout copies a corpus table for the test, holding its link until
// the test ends.
func checkout(ctx context.Context, t *testing.T, idx corpusIndex, tab corpusTable) tableCopy {
	t.Helper()
	work(t, tab.Name)
	// Other test binaries on the machine (another checkout's run) may
	// hold the table.
	lockFile(t, filepath.Join(idx.Dir, "links", tab.Name+".lock"))
	var c tableCopy
	spark.must(ctx, t, "checkout", map[string]string{
		"corpus": idx.Dir, "table": tab.Name, "dest": filepath.Join(t.TempDir(), tab.Name),
	}, &c)
	return c
}

func (c tableCopy) args() map[string]string {
	return map[string]string{"catalog_uri": c.CatalogURI, "catalog_name": c.CatalogName, "table": c.Table}
}

func (c tableCopy) read(ctx context.Context, t *testing.T) readResult {
	t.Helper()
	var r readResult
	spark.must(ctx, t, "read", c.args(), &r)
	return r
}

// icectl runs `icectl VERB... TABLE FLAGS... --output json` on the copy
// and returns its output; the test fails unless it exits 0.
func (c tableCopy) icectl(ctx context.Context, t *testing.T, verb []string, flags ...string) []byte {
	t.Helper()
	args := slices.Concat([]string{"--output", "json"}, verb, []string{c.Table}, flags,
		[]string{"--catalog-uri", c.CatalogURI, "--catalog-name", c.CatalogName})
	cmd := exec.CommandContext(ctx, testenv.Icectl(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("icectl %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

// chain walks a table copy through icectl's verbs and Spark's writes,
// comparing each Spark read with the one before the verb.
type chain struct {
	ctx     context.Context
	t       *testing.T
	c       tableCopy
	want    readResult // the rows every verb must keep
	lineage bool       // compare the lineage checksum too (v3)
	broken  bool       // a verb changed the rows: want is what it left
	// noGo says why iceberg-go, the second reader, is not asked (it
	// refused the table as Spark wrote it); "" when it is.
	noGo string
}

// goRowCount is the number of rows iceberg-go reads of the table.
func (ch *chain) goRowCount() (int64, error) {
	out, err := testenv.TryIcebergGo(ch.ctx, ch.t, "scan", "--catalog-uri", ch.c.CatalogURI,
		"--catalog-name", ch.c.CatalogName, "--table", ch.c.Table)
	if err != nil {
		return 0, err
	}
	var res struct {
		Rows []json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return 0, fmt.Errorf("iceberg-read output: %w", err)
	}
	return int64(len(res.Rows)), nil
}

// checkGo has iceberg-go read the table after step: every row Spark
// reads, no more (its values decoded, which a file it cannot read fails).
func (ch *chain) checkGo(step string, sparkRows int64) {
	ch.t.Helper()
	if ch.noGo != "" {
		return
	}
	n, err := ch.goRowCount()
	switch {
	case err != nil:
		ch.t.Errorf("after %s iceberg-go cannot read the table it read before: %v", step, err)
	case n != sparkRows:
		ch.t.Errorf("after %s iceberg-go reads %d rows, Spark %d", step, n, sparkRows)
	}
}

// check reads the table after step and compares it with want: the same
// row count and checksum, and with lineage the same lineage checksum. On
// a difference it shows rows that differ (from Spark's time travel to the
// snapshot before step) and takes what step left as the rows to keep, so
// that each later step is judged on its own.
func (ch *chain) check(step string) readResult {
	t := ch.t
	t.Helper()
	got := ch.c.read(ch.ctx, t)
	bad := got.Rows != ch.want.Rows || got.Checksum != ch.want.Checksum
	if ch.lineage && (got.Lineage != ch.want.Lineage || got.RowIDs != ch.want.RowIDs ||
		got.SequenceNumbers != ch.want.SequenceNumbers) {
		bad = true
	}
	if bad {
		t.Errorf("after %s Spark reads %d rows, checksum %s, lineage %q (%d row ids, %d sequence numbers);\n"+
			"before it: %d rows, checksum %s, lineage %q (%d row ids, %d sequence numbers)%s",
			step, got.Rows, got.Checksum, got.Lineage, got.RowIDs, got.SequenceNumbers,
			ch.want.Rows, ch.want.Checksum, ch.want.Lineage, ch.want.RowIDs, ch.want.SequenceNumbers,
			ch.diff(ch.want.SnapshotID))
		ch.broken = true
	}
	ch.want = got
	ch.checkGo(step, got.Rows)
	return got
}

// diff lists rows of snapshot from that the current snapshot lost, and
// rows it has that from did not, as far as Spark can still time-travel.
func (ch *chain) diff(from string) string {
	var d struct {
		OnlyBefore []string `json:"only_before"`
		OnlyNow    []string `json:"only_now"`
	}
	args := ch.c.args()
	a := map[string]any{"from_snapshot": from, "limit": 5}
	for k, v := range args {
		a[k] = v
	}
	if err := spark.call(ch.ctx, ch.t, "diff", a, &d); err != nil {
		return "\n(no row diff: " + err.Error() + ")"
	}
	return "\nrows only before (up to 5):\n  " + strings.Join(d.OnlyBefore, "\n  ") +
		"\nrows only after (up to 5):\n  " + strings.Join(d.OnlyNow, "\n  ")
}

// run runs an icectl verb and checks Spark reads the same rows after it.
// When the verb committed nothing (the catalog's database, which holds
// the table's metadata location, is byte for byte as before), Spark would
// read the metadata it read before: only iceberg-go reads the table then,
// every live file, which finds any the verb deleted (on a table iceberg-go
// cannot read, Spark reads it as after any verb).
func (ch *chain) run(verb []string, flags ...string) []byte {
	ch.t.Helper()
	step := "icectl " + strings.Join(slices.Concat(verb, flags), " ")
	before, ok := ch.catalogBytes()
	out := ch.icectl(verb, flags...)
	if after, _ := ch.catalogBytes(); ok && ch.noGo == "" && bytes.Equal(before, after) {
		ch.checkGo(step, ch.want.Rows)
		return out
	}
	ch.check(step)
	return out
}

// catalogBytes is the copy's catalog database (sqlite:////abs.db), and
// its write-ahead log if it has one (Spark's are in rollback-journal mode,
// which icectl keeps: a commit changes the database file itself); false
// for a catalog of another kind (the Hive Metastore's, hms_test.go).
func (ch *chain) catalogBytes() ([]byte, bool) {
	ch.t.Helper()
	db, ok := strings.CutPrefix(ch.c.CatalogURI, "sqlite://")
	if !ok {
		return nil, false
	}
	b, err := os.ReadFile(db)
	if err != nil {
		ch.t.Fatalf("the copy's catalog: %v", err)
	}
	if wal, err := os.ReadFile(db + "-wal"); err == nil {
		b = append(b, wal...)
	}
	return b, true
}

func (ch *chain) icectl(verb []string, flags ...string) []byte {
	ch.t.Helper()
	return ch.c.icectl(ch.ctx, ch.t, verb, flags...)
}

// committed fails the test unless Spark reads a new head of main
// after step: a read of the old snapshot would compare nothing.
func (ch *chain) committed(step, before string) {
	ch.t.Helper()
	if ch.want.SnapshotID == before {
		ch.t.Errorf("after %s Spark still reads snapshot %s", step, before)
	}
}

// compact runs icectl compact with flags and fails unless it rewrote
// at least minFiles files and Spark reads the snapshot it committed.
func (ch *chain) compact(minFiles int, flags ...string) {
	ch.t.Helper()
	before := ch.want.SnapshotID
	out := ch.run([]string{"compact"}, flags...)
	var r struct {
		FilesIn  int `json:"files_in"`
		FilesOut int `json:"files_out"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		ch.t.Fatalf("icectl compact --output json: %v\n%s", err, out)
	}
	if r.FilesIn < minFiles {
		ch.t.Errorf("icectl compact %s rewrote %d files, want at least %d:\n%s", strings.Join(flags, " "), r.FilesIn, minFiles, out)
	}
	if r.FilesIn > 0 {
		ch.committed("icectl compact "+strings.Join(flags, " "), before)
	}
}

// rewriteManifests runs icectl rewrite-manifests; when it committed,
// Spark must read the new snapshot.
func (ch *chain) rewriteManifests() {
	ch.t.Helper()
	before := ch.want.SnapshotID
	out := ch.run([]string{"rewrite-manifests"})
	var r struct {
		Committed bool `json:"committed"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		ch.t.Fatalf("icectl rewrite-manifests --output json: %v\n%s", err, out)
	}
	if r.Committed {
		ch.committed("icectl rewrite-manifests", before)
	}
}

// upgrade runs icectl upgrade --to v; Spark must read format v and, for
// v3, the snapshot the upgrade committed.
func (ch *chain) upgrade(v int, flags ...string) {
	ch.t.Helper()
	before := ch.want.SnapshotID
	ch.run([]string{"upgrade"}, append([]string{"--to", strconv.Itoa(v)}, flags...)...)
	if ch.want.FormatVersion != v {
		ch.t.Fatalf("after icectl upgrade --to %d Spark reads format v%d", v, ch.want.FormatVersion)
	}
	if v == 3 {
		// Going to v2 changes only the metadata; to v3, a snapshot gives
		// the rows their ids.
		ch.committed("icectl upgrade --to 3", before)
	}
}

// write has Spark write on the table (append, merge-on-read delete,
// rewrite_data_files, expire_snapshots) and compares its read with what
// the same writes made of the table as Spark left it.
func (ch *chain) write(tab corpusTable) {
	t := ch.t
	t.Helper()
	var got readResult
	if err := spark.call(ch.ctx, t, "write", ch.c.args(), &got); err != nil {
		t.Fatalf("Spark's writes on the table icectl maintained: %v\n(Spark's log: %s)", err, spark.log())
	}
	want := tab.AfterWrite
	if got.Rows != want.Rows || got.Checksum != want.Checksum {
		if ch.broken {
			t.Logf("after Spark's writes: %d rows, checksum %s; on the table as Spark left it: %d rows, checksum %s (expected: an earlier step changed the rows)",
				got.Rows, got.Checksum, want.Rows, want.Checksum)
		} else {
			t.Errorf("after Spark's writes Spark reads %d rows, checksum %s; the same writes on the table as Spark left it: %d rows, checksum %s",
				got.Rows, got.Checksum, want.Rows, want.Checksum)
		}
	}
	ch.want = got
	if ch.lineage && (got.RowIDs != got.Rows || got.DistinctRowIDs != got.Rows) {
		t.Errorf("after Spark's writes %d of %d rows have a _row_id, %d distinct", got.RowIDs, got.Rows, got.DistinctRowIDs)
	}
}

// expireAll runs icectl expire on every snapshot but main's head, with
// --clean-expired-metadata, and fails unless it expired some and Spark
// sees fewer snapshots (and reads the same rows, as after every step,
// with the specs and schemas that remain). On the schema-evolution
// tables it must have removed the schemas of the expired history.
func (ch *chain) expireAll(tab corpusTable) {
	ch.t.Helper()
	before := ch.want.Snapshots
	now := strconv.FormatInt(time.Now().UnixMilli()+1, 10)
	out := ch.run([]string{"expire"}, "--older-than", now, "--retain-last", "1", "--clean-expired-metadata")
	var r struct {
		Expired        []json.RawMessage `json:"expired_snapshots"`
		RemovedSchemas []int             `json:"removed_schema_ids"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		ch.t.Fatalf("icectl expire --output json: %v\n%s", err, out)
	}
	if len(r.Expired) == 0 {
		ch.t.Errorf("icectl expire expired no snapshot:\n%s", out)
	}
	if strings.HasSuffix(tab.Name, "_schema_evolution") && len(r.RemovedSchemas) == 0 {
		ch.t.Errorf("icectl expire --clean-expired-metadata removed no schema of %s:\n%s", tab.Name, out)
	}
	if ch.want.Snapshots >= before {
		ch.t.Errorf("after icectl expire Spark reads %d snapshots, before it %d", ch.want.Snapshots, before)
	}
}

// metadataSteps runs icectl rewrite-manifests, expire (as expireAll) and
// orphan one after another, iceberg-go reading the table after each, and
// Spark once after the three. None of them writes a data or delete file,
// and none can undo what another did: expire and orphan keep the manifests
// rewrite-manifests wrote, orphan commits nothing, and a file either
// deleted stays gone. So Spark's read after the last sees what any of them
// broke, as a read after each would, and the snapshots Spark counts must
// be exactly those before, plus rewrite-manifests' commit, less those
// expire reports it expired.
func (ch *chain) metadataSteps(tab corpusTable) {
	t := ch.t
	t.Helper()
	head, snapshots := ch.want.SnapshotID, ch.want.Snapshots
	var rm struct {
		Committed bool `json:"committed"`
	}
	out := ch.icectl([]string{"rewrite-manifests"})
	if err := json.Unmarshal(out, &rm); err != nil {
		t.Fatalf("icectl rewrite-manifests --output json: %v\n%s", err, out)
	}
	ch.checkGo("icectl rewrite-manifests", ch.want.Rows)
	now := strconv.FormatInt(time.Now().UnixMilli()+1, 10)
	out = ch.icectl([]string{"expire"}, "--older-than", now, "--retain-last", "1", "--clean-expired-metadata")
	var ex struct {
		Expired        []json.RawMessage `json:"expired_snapshots"`
		RemovedSchemas []int             `json:"removed_schema_ids"`
	}
	if err := json.Unmarshal(out, &ex); err != nil {
		t.Fatalf("icectl expire --output json: %v\n%s", err, out)
	}
	if len(ex.Expired) == 0 {
		t.Errorf("icectl expire expired no snapshot:\n%s", out)
	}
	if strings.HasSuffix(tab.Name, "_schema_evolution") && len(ex.RemovedSchemas) == 0 {
		t.Errorf("icectl expire --clean-expired-metadata removed no schema of %s:\n%s", tab.Name, out)
	}
	ch.checkGo("icectl expire", ch.want.Rows)
	ch.icectl([]string{"orphan"}, "--older-than", "1s", "--unsafe-allow-recent")
	ch.check("icectl rewrite-manifests, expire --clean-expired-metadata and orphan")
	want := snapshots - int64(len(ex.Expired))
	if rm.Committed {
		ch.committed("icectl rewrite-manifests", head)
		want++
	}
	if ch.want.Snapshots != want {
		t.Errorf("after icectl rewrite-manifests (committed: %v) and expire (%d snapshots expired) Spark reads %d snapshots, before them %d",
			rm.Committed, len(ex.Expired), ch.want.Snapshots, snapshots)
	}
}

func newChain(t *testing.T, idx corpusIndex, tab corpusTable) *chain {
	work(t, tab.Name) // before the test's deadline starts
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	c := checkout(ctx, t, idx, tab)
	ch := &chain{ctx: ctx, t: t, c: c, lineage: tab.FormatVersion >= 3}
	// The copy is the corpus table's files and catalog byte for byte (the
	// catalog's name aside): Spark reads it as it read the corpus table
	// when it built it, which the corpus recorded; a copy that read
	// otherwise would fail the first step's read.
	got := tab.Pristine
	if ch.lineage && (got.RowIDs != got.Rows || got.DistinctRowIDs != got.Rows || got.SequenceNumbers != got.Rows) {
		t.Fatalf("Spark's v3 table: %d rows, %d with a _row_id (%d distinct), %d with a sequence number",
			got.Rows, got.RowIDs, got.DistinctRowIDs, got.SequenceNumbers)
	}
	ch.want = got
	if n, err := ch.goRowCount(); err != nil {
		ch.noGo = err.Error()
		t.Logf("iceberg-go does not read %s as Spark wrote it, so only Spark reads it back: %v", tab.Name, err)
	} else if n != got.Rows {
		t.Errorf("iceberg-go reads %d rows of %s as Spark wrote it, Spark %d", n, tab.Name, got.Rows)
	}
	return ch
}

func has(tab corpusTable, feature string) bool { return slices.Contains(tab.Features, feature) }

// TestMaintain walks every corpus table through icectl's maintenance at
// its format version (v1 tables upgraded to v2 first, as compact asks):
// after each verb Spark must read the same rows, on v3 with the same
// lineage (after rewrite-manifests, expire and orphan once:
// metadataSteps); then Spark's writes must give what they give on the table as
// Spark left it, and compaction after them must keep those rows and, as it
// rewrites every file, leave no delete file: those Spark's own
// rewrite_data_files left dangling (it keeps them by default) go in the
// same commit (remove-dangling-deletes, on by default in icectl).
//
// The tables of files imported without field ids (feature name_mapping)
// fail at compaction while icectl writes NULLs for columns it resolves
// through the name mapping.
func TestMaintain(t *testing.T) {
	t.Parallel()
	idx := loadCorpus(t)
	for _, tab := range idx.Tables {
		t.Run(tab.Name, func(t *testing.T) {
			t.Parallel()
			ch := newChain(t, idx, tab)
			ch.icectl([]string{"health"})
			ch.icectl([]string{"verify", "deletes"}, "--check-files")
			if tab.FormatVersion == 1 {
				ch.upgrade(2)
			}
			ch.compact(1)
			if tab.FormatVersion >= 3 {
				ch.run([]string{"dv", "merge"})
			}
			if has(tab, "sort") {
				ch.compact(1, "--rewrite-all", "--sort")
			} else {
				ch.compact(1, "--rewrite-all")
			}
			ch.metadataSteps(tab)
			ch.icectl([]string{"verify", "deletes"}, "--check-files")
			ch.write(tab)
			ch.compact(1, "--rewrite-all")
			ch.icectl([]string{"verify", "deletes"}, "--check-files")
			if n := ch.liveDeleteFiles(); n != 0 {
				t.Errorf("after icectl compact --rewrite-all on Spark's writes %d delete files are live, want none", n)
			}
		})
	}
}

// liveDeleteFiles counts the delete files and DVs of the current snapshot
// (icectl health).
func (ch *chain) liveDeleteFiles() int {
	ch.t.Helper()
	var h struct {
		Deletes map[string]json.RawMessage `json:"delete_files"`
	}
	out := ch.icectl([]string{"health"})
	if err := json.Unmarshal(out, &h); err != nil {
		ch.t.Fatalf("icectl health --output json: %v\n%s", err, out)
	}
	n := 0
	for _, kind := range []string{"position_deletes", "deletion_vectors", "equality_deletes"} {
		var k struct {
			Count *int `json:"count"`
		}
		if err := json.Unmarshal(h.Deletes[kind], &k); err != nil || k.Count == nil {
			ch.t.Fatalf("icectl health: no delete_files.%s.count in %s", kind, out)
		}
		n += *k.Count
	}
	return n
}

// TestUpgrade upgrades every v1 and v2 corpus table to v3 with icectl
// (every row gets a _row_id, position deletes become deletion vectors),
// runs dv merge (nothing left to merge) and compacts it: Spark must read the same rows after each verb,
// and after the upgrade the same lineage; then Spark keeps writing.
func TestUpgrade(t *testing.T) {
	t.Parallel()
	idx := loadCorpus(t)
	for _, tab := range idx.Tables {
		if tab.FormatVersion >= 3 {
			continue
		}
		t.Run(tab.Name, func(t *testing.T) {
			t.Parallel()
			ch := newChain(t, idx, tab)
			// As an operator upgrades a table with position deletes: they
			// become deletion vectors in the same run (upgrade refuses to
			// leave them for a v3 writer that would not fold them in).
			ch.upgrade(3, "--merge-deletes")
			up := ch.want
			if up.RowIDs != up.Rows || up.DistinctRowIDs != up.Rows || up.SequenceNumbers != up.Rows {
				t.Fatalf("after icectl upgrade --to 3 Spark reads %d rows, %d with a _row_id (%d distinct), %d with a sequence number",
					up.Rows, up.RowIDs, up.DistinctRowIDs, up.SequenceNumbers)
			}
			ch.lineage = true
			ch.run([]string{"dv", "merge"})
			ch.icectl([]string{"verify", "deletes"}, "--check-files")
			ch.compact(1)
			ch.compact(1, "--rewrite-all")
			ch.rewriteManifests()
			ch.icectl([]string{"verify", "lineage"}, "--from", up.SnapshotID, "--key", "id")
			ch.write(tab)
			ch.compact(1, "--rewrite-all")
			ch.icectl([]string{"verify", "deletes"}, "--check-files")
		})
	}
}
