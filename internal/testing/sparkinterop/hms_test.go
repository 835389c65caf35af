package sparkinterop

import (
	"context"
	"encoding/json"
	"fmt"
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
// rows and checksum after each, and the snapshot icectl committed.
func TestHiveMetastoreSpark(t *testing.T) {
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
}

// TestHiveMetastoreSparkRace: Spark appends in a loop while icectl
// compacts the same table, both committing through the metastore (under
// its table lock). Afterwards every row Spark committed is there exactly
// once, the rows from before the race read the same, and compaction
// committed during the race: nothing either side wrote was overwritten.
func TestHiveMetastoreSparkRace(t *testing.T) {
	ch := hmsTable(t)
	base := ch.want
	const batches, size = 8, 25
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var compacted, runs int
	var failures []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			// icectl's own exit, not t.Fatal, off the test goroutine.
			out, stderr, code := ch.wap().icectl("--output", "json", "compact", ch.c.Table)
			mu.Lock()
			runs++
			if code != 0 {
				failures = append(failures, fmt.Sprintf("exit %d: %s", code, strings.TrimSpace(stderr)))
			} else {
				var r struct {
					FilesIn int `json:"files_in"`
				}
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					failures = append(failures, fmt.Sprintf("output %q: %v", out, err))
				}
				if r.FilesIn > 0 {
					compacted++
				}
			}
			mu.Unlock()
		}
	}()
	lo := int64(1_000_000)
	for range batches {
		ch.sparkSQL(hmsInsert(ch.c.Table, lo, lo+size))
		lo += size
	}
	close(stop)
	wg.Wait()
	t.Logf("%d icectl compactions during %d Spark appends, %d committed a rewrite", runs, batches, compacted)
	for _, f := range failures {
		// A compaction that lost its race to a Spark commit may give up
		// (after its retries) as a conflict, which is exit 4 and no
		// harm; any other failure is one.
		if !strings.HasPrefix(f, "exit 4:") {
			t.Errorf("icectl compact during Spark's appends: %s", f)
		}
	}
	// One more compaction after the race, so that at least one rewrite
	// lands on a table Spark appended to concurrently.
	if compacted == 0 {
		ch.compact(1)
	}

	rows := ch.sparkSQL(fmt.Sprintf(`SELECT count(*) AS n, count(DISTINCT id) AS ids,
		count_if(id >= 1000000) AS appended,
		CAST(sum(CASE WHEN id < 1000000 THEN CAST(xxhash64(to_json(struct(*))) AS DECIMAL(38,0)) END) AS STRING) AS h
		FROM {cat}.%s`, ch.c.Table))
	got := rows[0]
	want := map[string]any{"n": float64(base.Rows + batches*size), "ids": float64(base.Rows + batches*size),
		"appended": float64(batches * size), "h": base.Checksum}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("after the race %s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
