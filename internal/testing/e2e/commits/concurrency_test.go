package commits

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/catalogs"
	"github.com/icectl/icectl/catalog/catalogtest"
	"github.com/icectl/icectl/internal/testing/testenv"
)

const writers = 20

// sqlTarget is a SQL catalog the concurrency tests commit through.
type sqlTarget struct {
	uri, name, warehouse string
	postgres             bool
	driver, dsn          string // for reading the catalog row directly
}

func sqliteTarget(t *testing.T) sqlTarget {
	dir := t.TempDir()
	db := filepath.Join(dir, "catalog.db")
	return sqlTarget{uri: "sqlite:///" + db, name: "concurrency", warehouse: "file://" + filepath.Join(dir, "wh"),
		driver: "sqlite", dsn: "file:" + db + "?_pragma=busy_timeout(30000)"}
}

func postgresTarget(t *testing.T) sqlTarget {
	url := testenv.Need(t, testenv.PostgresURL, "PostgreSQL")
	return sqlTarget{uri: url, name: uniqueName(t, "commits_"), warehouse: "file://" + filepath.Join(t.TempDir(), "wh"),
		postgres: true, driver: "pgx", dsn: url}
}

func TestConcurrentSetPropertiesSQLite(t *testing.T) {
	t.Run("AllLand", func(t *testing.T) { testConcurrentSetProperties(t, sqliteTarget(t), 30, true) })
	t.Run("FewRetries", func(t *testing.T) { testConcurrentSetProperties(t, sqliteTarget(t), 0, false) })
}

func TestConcurrentSetPropertiesPostgres(t *testing.T) {
	t.Run("AllLand", func(t *testing.T) { testConcurrentSetProperties(t, postgresTarget(t), 30, true) })
	t.Run("FewRetries", func(t *testing.T) { testConcurrentSetProperties(t, postgresTarget(t), 0, false) })
}

// testConcurrentSetProperties has 20 icectl processes each set their own
// property p<i>=v<i> on one table at once, with the table's retry budget
// set to retries. Every process must either land (exit 0, its property
// present) or report a conflict (exit 4, its property absent); with
// allLand, all must land.
func testConcurrentSetProperties(t *testing.T, tg sqlTarget, retries int, allLand bool) {
	ctx := context.Background()
	cat, err := catalogs.Create(ctx, catalog.Config{Name: tg.name, URI: tg.uri, Warehouse: tg.warehouse})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	id := catalog.Ident{Namespace: []string{"db"}, Name: "t"}
	catalogtest.NewTable(t, cat, id, map[string]string{
		"commit.retry.num-retries": strconv.Itoa(retries),
		"commit.retry.min-wait-ms": "5",
		"commit.retry.max-wait-ms": "100",
	})

	env := baseEnv(t)
	results := make([]result, writers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = icectl(t, env, "table", "set-properties", "db.t", fmt.Sprintf("p%d=v%d", i, i),
				"--catalog-uri", tg.uri, "--catalog-name", tg.name, "-o", "json")
		}()
	}
	close(start)
	wg.Wait()

	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	landed, conflicts := 0, 0
	claimed := map[string]int{}
	for i, r := range results {
		key, val := fmt.Sprintf("p%d", i), fmt.Sprintf("v%d", i)
		got, present := tbl.Metadata.Properties[key]
		switch r.code {
		case 0:
			landed++
			out := decodeProps(t, r)
			if !out.Committed || out.Properties[key] != val {
				t.Errorf("process %d exited 0 but reports committed=%v %s=%q", i, out.Committed, key, out.Properties[key])
			}
			if j, dup := claimed[out.MetadataLocation]; dup {
				t.Errorf("processes %d and %d both claim to have committed %s", j, i, out.MetadataLocation)
			}
			claimed[out.MetadataLocation] = i
			if !present || got != val {
				t.Errorf("process %d landed but the table has %s=%q (present %v): update lost", i, key, got, present)
			}
		case 4:
			conflicts++
			if allLand {
				t.Errorf("process %d gave up with %d retries: %s", i, retries, r)
			}
			if present {
				t.Errorf("process %d reported a conflict but its property %s=%q is in the table", i, key, got)
			}
		default:
			t.Errorf("process %d: %s", i, r)
		}
	}
	t.Logf("%d processes landed, %d reported a conflict (%d retries)", landed, conflicts, retries)
	if landed == 0 {
		t.Error("no process landed")
	}
	if !allLand && conflicts == 0 {
		// 20 processes without retries always collide somewhere; none
		// doing so means the conflict path went untested.
		t.Error("no process reported a conflict")
	}

	// One metadata version per landed commit, on top of the creation.
	if commits := checkMetadataChain(t, tbl); commits != landed {
		t.Errorf("%d commits in the metadata chain, %d processes landed", commits, landed)
	}
	for loc := range claimed {
		if _, ok := catalog.MetadataVersion(loc); !ok {
			t.Errorf("claimed metadata location %s has no version", loc)
		}
	}
	db, err := sql.Open(tg.driver, tg.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cur, prev := catalogRow(t, db, tg.postgres, tg.name, id)
	log := tbl.Metadata.MetadataLog
	if cur != tbl.MetadataLocation || len(log) == 0 || prev != log[len(log)-1].MetadataFile {
		t.Errorf("catalog row (%s, previous %s) does not match the metadata chain ending %v -> %s", cur, prev, log[len(log)-1:], tbl.MetadataLocation)
	}
	if len(tbl.Metadata.Snapshots) != 0 || len(tbl.Metadata.SnapshotLog) != 0 {
		t.Errorf("property commits added snapshots %v or snapshot-log entries %v", tbl.Metadata.Snapshots, tbl.Metadata.SnapshotLog)
	}
}
