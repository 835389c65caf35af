package sparkinterop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// hmsTable creates a database of its own in the test Hive Metastore and,
// in it, a table Spark creates through Iceberg's HiveCatalog (catalog
// "hms" of the Spark session, iceberg_spark.py's hive_catalog): format v2,
// partitioned by region and day, merge-on-read deletes and updates, its
// files under the test's temp dir. Spark writes rows with ids [0, 400)
// in four inserts, then deletes and updates some: position delete files.
// The metastore is shared by every package of a run, hence the database
// name unique to the run.
func hmsTable(t *testing.T) *chain {
	uri := testenv.Need(t, testenv.HiveMetastore, "a Hive Metastore (scripts/install-hms, scripts/start-hms)")
	work(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	db := fmt.Sprintf("spark_%d", time.Now().UnixNano())
	c := tableCopy{CatalogURI: uri, CatalogName: "hms", Table: db + ".events"}
	// iceberg-go v0.7.0 has no Hive catalog: Spark is the only reader.
	ch := &chain{ctx: ctx, t: t, c: c, noGo: "no Hive catalog in iceberg-go"}
	stmts := []string{
		fmt.Sprintf("CREATE NAMESPACE {cat}.%s LOCATION 'file://%s'", db, t.TempDir()),
		"CREATE TABLE {cat}." + c.Table + ` (id bigint, region string, ts timestamp, amount decimal(10,2), note string)
			USING iceberg PARTITIONED BY (region, days(ts))
			TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read',
				'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')`,
	}
	for i := range 4 {
		stmts = append(stmts, hmsInsert(c.Table, int64(100*i), int64(100*i+100)))
	}
	stmts = append(stmts,
		"DELETE FROM {cat}."+c.Table+" WHERE id % 7 = 3",
		"UPDATE {cat}."+c.Table+" SET note = concat(note, '!') WHERE id % 11 = 5")
	ch.sparkSQL(stmts...)
	ch.want = c.read(ctx, t)
	if ch.want.FormatVersion != 2 || ch.want.Rows == 0 {
		t.Fatalf("Spark's table in the metastore reads %+v", ch.want)
	}
	return ch
}

// hmsInsert is Spark's INSERT of the rows with ids [lo, hi): three
// regions, a day each 40 ids apart.
func hmsInsert(table string, lo, hi int64) string {
	return fmt.Sprintf(`INSERT INTO {cat}.%s SELECT id,
		element_at(array('eu', 'us', 'ap'), CAST(id %% 3 + 1 AS INT)),
		timestamp_seconds(1717200000 + id * 2160),
		CAST(id * 1.25 AS DECIMAL(10,2)),
		concat('n', CAST(id AS STRING))
		FROM range(%d, %d)`, table, lo, hi)
}

// TestHiveMetastoreSpark: a table Spark creates in the Hive Metastore is
// maintained by every icectl verb that rewrites or removes (compact,
// rewrite-position-deletes, rewrite-manifests, expire, orphan) and by
// maintain, all through the metastore (catalog thrift://); Spark, which
// loads the table from the metastore for every read, must read the same
// rows and checksum after each, and the snapshot icectl committed. Then
// Spark and icectl race on the table (hmsRace). One table for both, as
// the package's time budget is spent.
func TestHiveMetastoreSpark(t *testing.T) {
	t.Parallel()
	ch := hmsTable(t)
	// Spark's DELETE and UPDATE left two position delete files in most
	// partitions: merged first, before compaction applies them.
	if r := ch.rewritePositionDeletes("--min-input-files", "2"); !r.Committed {
		t.Errorf("icectl rewrite-position-deletes --min-input-files 2 committed nothing: %+v", r)
	}
	ch.compact(2)
	ch.rewriteManifests()
	ch.expireAll(corpusTable{Name: "hms"})
	ch.run([]string{"orphan"}, "--older-than", "1s", "--unsafe-allow-recent")

	// Spark writes again (small files and position deletes), then
	// maintain does what is due.
	ch.sparkSQL(hmsInsert(ch.c.Table, 400, 460), hmsInsert(ch.c.Table, 460, 520),
		"DELETE FROM {cat}."+ch.c.Table+" WHERE id % 13 = 6")
	ch.want = ch.c.read(ch.ctx, t)
	before := ch.want.SnapshotID
	ch.run([]string{"maintain"})
	ch.committed("icectl maintain", before)
	ch.compact(1, "--rewrite-all")
	if n := ch.liveDeleteFiles(); n != 0 {
		t.Errorf("after icectl compact --rewrite-all %d delete files are live, want none", n)
	}
	hmsRace(t, ch)
}

// hmsRace: Spark appends in a loop while icectl compacts the same table
// (--rewrite-all, so that every run rewrites and commits), both
// committing through the metastore (under its table lock). An append
// that loses the race more often than its retries allow fails with
// Iceberg's CommitFailedException (nothing committed) and is not
// retried. Afterwards every row of the appends that committed is there
// exactly once, none of those that failed, the rows from before the race
// read the same, and compaction committed during the race: nothing either
// side wrote was overwritten.
func hmsRace(t *testing.T, ch *chain) {
	// More retries than Iceberg's default 4: an icectl run also commits
	// taking and releasing its claim.
	ch.sparkSQL("ALTER TABLE {cat}." + ch.c.Table + " SET TBLPROPERTIES ('commit.retry.num-retries'='10')")
	base := ch.c.read(ch.ctx, t)
	// Four batches: each side commits several times while the other is
	// between its load and its commit (the long form had eight).
	const batches, size, first = 4, 25, 1_000_000
	// A compaction starts as each append starts (kick), so that the two
	// overlap without icectl's commits starving Spark's on 2 cores.
	kick := make(chan struct{}, 1)
	bin := testenv.Icectl(t)
	var wg sync.WaitGroup
	var runs, compacted int
	var failures []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range kick {
			runs++
			cmd := exec.CommandContext(ch.ctx, bin, "--output", "json", "compact", ch.c.Table,
				"--rewrite-all", "--catalog-uri", ch.c.CatalogURI, "--catalog-name", ch.c.CatalogName)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			var r struct {
				FilesIn int `json:"files_in"`
			}
			switch {
			case err != nil:
				// Exit 4 is a conflict after all retries: no harm.
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 4 {
					failures = append(failures, fmt.Sprintf("%v: %s", err, strings.TrimSpace(stderr.String())))
				}
			case json.Unmarshal(out, &r) != nil:
				failures = append(failures, fmt.Sprintf("output %q", out))
			case r.FilesIn > 0:
				compacted++
			}
		}
	}()
	// Stopped before the test ends, even when a Spark call fails it.
	halt := sync.OnceFunc(func() {
		close(kick)
		wg.Wait()
	})
	defer halt()
	var appended, idSum int64
	started := time.Now()
	for b := range int64(batches) {
		lo := first + b*size
		select {
		case kick <- struct{}{}:
		default: // the last compaction is still running
		}
		_, err := ch.wap().sql(nil, hmsInsert(ch.c.Table, lo, lo+size))
		switch {
		case err == nil:
			appended += size
			idSum += size*lo + size*(size-1)/2
		case strings.Contains(err.Error(), "CommitFailedException"):
			t.Logf("Spark's append of ids [%d, %d) lost the race: %.200s", lo, lo+size, err)
		default:
			t.Errorf("Spark's append of ids [%d, %d): %v", lo, lo+size, err)
		}
	}
	halt()
	t.Logf("%d icectl compactions during %d Spark appends in %s: %d committed a rewrite, %d rows appended",
		runs, batches, time.Since(started).Round(time.Second), compacted, appended)
	for _, f := range failures {
		t.Errorf("icectl compact during Spark's appends: %s", f)
	}
	// The run in flight when Spark's loop ended was waited for: a run
	// that never committed lost every race, which the retries are for.
	if compacted == 0 {
		t.Errorf("no icectl compaction committed during Spark's appends (%d runs)", runs)
	}
	if appended == 0 {
		t.Errorf("none of Spark's %d appends committed", batches)
	}

	rows := ch.sparkSQL(fmt.Sprintf(`SELECT count(*) AS n, count(DISTINCT id) AS ids,
		count_if(id >= %[2]d) AS appended, CAST(coalesce(sum(CASE WHEN id >= %[2]d THEN id END), 0) AS STRING) AS id_sum,
		CAST(sum(CASE WHEN id < %[2]d THEN CAST(xxhash64(to_json(struct(*))) AS DECIMAL(38,0)) END) AS STRING) AS h
		FROM {cat}.%[1]s`, ch.c.Table, first))
	got := rows[0]
	want := map[string]any{"n": float64(base.Rows + appended), "ids": float64(base.Rows + appended),
		"appended": float64(appended), "id_sum": fmt.Sprint(idSum), "h": base.Checksum}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("after the race %s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
