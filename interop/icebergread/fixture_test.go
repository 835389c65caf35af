package icebergread

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/internal/testing/testenv"
)

// fixtureRow is a scanned row of the fixture table.
type fixtureRow struct {
	ID     int64    `json:"id"`
	Name   *string  `json:"name"`
	Amount *float64 `json:"amount"`
	TS     *string  `json:"ts"`
}

// checkFixture checks a fixture's own scan against the rows it was asked
// to write, computed here from FixtureRow and the deletion rule.
func checkFixture(t *testing.T, req FixtureRequest, res *FixtureResult) {
	t.Helper()
	var want []int64
	for i := int64(0); i < int64(req.Rows); i++ {
		if req.DeleteEvery == 0 || i%int64(req.DeleteEvery) != 0 {
			want = append(want, i)
		}
	}
	if res.RowCount != int64(len(want)) || len(res.Rows) != len(want) {
		t.Fatalf("fixture scan has %d rows (%d listed), want %d", res.RowCount, len(res.Rows), len(want))
	}
	if res.Deleted != int64(req.Rows-len(want)) {
		t.Errorf("deleted_rows = %d, want %d", res.Deleted, req.Rows-len(want))
	}
	if res.FormatVersion != req.FormatVersion {
		t.Errorf("format_version = %d, want %d", res.FormatVersion, req.FormatVersion)
	}
	got := map[int64]fixtureRow{}
	for _, raw := range res.Rows {
		var r fixtureRow
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("row %s: %v", raw, err)
		}
		got[r.ID] = r
	}
	for _, id := range want {
		r, ok := got[id]
		if !ok {
			t.Errorf("row %d missing", id)
			continue
		}
		_, name, amount, ts := FixtureRow(id)
		if (r.Name == nil) != (name == nil) || (name != nil && *r.Name != *name) {
			t.Errorf("row %d name = %v, want %v", id, r.Name, name)
		}
		if r.Amount == nil || *r.Amount != amount {
			t.Errorf("row %d amount = %v, want %v", id, r.Amount, amount)
		}
		if r.TS == nil {
			t.Errorf("row %d ts is null", id)
		} else if pt, err := time.Parse(time.RFC3339Nano, strings.Replace(*r.TS, " ", "T", 1)); err != nil || !pt.Equal(ts) {
			t.Errorf("row %d ts = %s, want %s (%v)", id, *r.TS, ts, err)
		}
	}
}

func TestWriteFixtureSQLite(t *testing.T) {
	for _, c := range []struct {
		version     int
		partitioned bool
	}{{2, true}, {2, false}, {3, false}, {3, true}} {
		t.Run(fmt.Sprintf("v%d_partitioned_%v", c.version, c.partitioned), func(t *testing.T) {
			dir := t.TempDir()
			req := FixtureRequest{CatalogURI: "sqlite:///" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + dir,
				CatalogName: "fx", Table: "db.events", FormatVersion: c.version, Rows: 50, DeleteEvery: 7,
				Partitioned: c.partitioned}
			res, err := WriteFixture(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			checkFixture(t, req, res)
			// A fresh scan of the same catalog sees the same table.
			again, err := Scan(context.Background(), ScanRequest{CatalogURI: req.CatalogURI, CatalogName: "fx", Table: "db.events"})
			if err != nil {
				t.Fatal(err)
			}
			if again.Checksum != res.Checksum || again.RowCount != res.RowCount {
				t.Errorf("rescan: %d rows %s, fixture reported %d rows %s", again.RowCount, again.Checksum, res.RowCount, res.Checksum)
			}
		})
	}
}

func TestWriteFixtureNoDeletes(t *testing.T) {
	dir := t.TempDir()
	req := FixtureRequest{CatalogURI: "sqlite:" + filepath.Join(dir, "c.db"), Warehouse: "file://" + dir,
		CatalogName: "fx", Table: "a.b.t", FormatVersion: 2, Rows: 10}
	res, err := WriteFixture(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkFixture(t, req, res)
	if res.Snapshots != fixtureCommits {
		t.Errorf("%d snapshots, want %d appends", res.Snapshots, fixtureCommits)
	}
}

func TestWriteFixturePostgres(t *testing.T) {
	url := testenv.Need(t, testenv.PostgresURL, "PostgreSQL database")
	dir := t.TempDir()
	req := FixtureRequest{CatalogURI: url, Warehouse: "file://" + dir,
		CatalogName: fmt.Sprintf("fx_%x", rand.Uint64()), Table: "db.events", FormatVersion: 3, Rows: 40, DeleteEvery: 3}
	res, err := WriteFixture(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkFixture(t, req, res)
}

func TestWriteFixtureBadRequests(t *testing.T) {
	dir := t.TempDir()
	base := FixtureRequest{CatalogURI: "sqlite:" + filepath.Join(dir, "c.db"), Warehouse: "file://" + dir,
		CatalogName: "fx", Table: "ns.t", FormatVersion: 2, Rows: 5}
	for name, mod := range map[string]func(*FixtureRequest){
		"version 1":       func(r *FixtureRequest) { r.FormatVersion = 1 },
		"version 4":       func(r *FixtureRequest) { r.FormatVersion = 4 },
		"no namespace":    func(r *FixtureRequest) { r.Table = "t" },
		"negative rows":   func(r *FixtureRequest) { r.Rows = -1 },
		"bad catalog uri": func(r *FixtureRequest) { r.CatalogURI = "mysql://x" },
	} {
		req := base
		mod(&req)
		if _, err := WriteFixture(context.Background(), req); err == nil {
			t.Errorf("%s: WriteFixture succeeded", name)
		}
	}
	// The table exists after one fixture: a second must not overwrite it.
	if _, err := WriteFixture(context.Background(), base); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteFixture(context.Background(), base); err == nil {
		t.Error("second fixture into the same table succeeded")
	}
}
