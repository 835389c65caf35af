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

	"github.com/apache/iceberg-go/catalog"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// fixtureRow is a scanned row of the fixture table.
type fixtureRow struct {
	ID     int64    `json:"id"`
	Name   *string  `json:"name"`
	Amount *float64 `json:"amount"`
	TS     *string  `json:"ts"`
	DT     *string  `json:"dt"`
}

// checkFixture checks a fixture's own scan against the rows it was asked
// to write, computed here from FixtureRow and the deletion rule.
func checkFixture(t *testing.T, req FixtureRequest, res *FixtureResult) {
	t.Helper()
	var want []int64
	for i := int64(0); i < int64(req.Rows+req.Evolve); i++ {
		if req.DeleteEvery == 0 || i%int64(req.DeleteEvery) != 0 {
			want = append(want, i)
		}
	}
	if res.RowCount != int64(len(want)) || len(res.Rows) != len(want) {
		t.Fatalf("fixture scan has %d rows (%d listed), want %d", res.RowCount, len(res.Rows), len(want))
	}
	if res.Deleted != int64(req.Rows+req.Evolve-len(want)) {
		t.Errorf("deleted_rows = %d, want %d", res.Deleted, req.Rows+req.Evolve-len(want))
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
		// Rows written before the evolution read the added column as null.
		var dt *time.Time
		if id >= int64(req.Rows) {
			dt = FixtureDate(id)
		}
		if (r.DT == nil) != (dt == nil) || (dt != nil && *r.DT != dt.Format(time.DateOnly)) {
			t.Errorf("row %d dt = %v, want %v", id, r.DT, dt)
		}
	}
}

// TestWriteFixtureEvolve: --evolve leaves two schemas and two specs (the
// second bucket(4, id) alone), with data files in both, and deletes over
// the rows of both.
func TestWriteFixtureEvolve(t *testing.T) {
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			req := FixtureRequest{CatalogURI: "sqlite:///" + filepath.Join(dir, "catalog.db"), Warehouse: "file://" + dir,
				CatalogName: "fx", Table: "db.events", FormatVersion: v, Rows: 60, Evolve: 30, DeleteEvery: 7, Partitioned: true}
			res, err := WriteFixture(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			checkFixture(t, req, res)
			cat, closeCat, err := openCatalog(ctx, ScanRequest{CatalogURI: req.CatalogURI, CatalogName: "fx"}, false)
			if err != nil {
				t.Fatal(err)
			}
			defer closeCat()
			tbl, err := cat.LoadTable(ctx, catalog.ToIdentifier("db", "events"))
			if err != nil {
				t.Fatal(err)
			}
			md := tbl.Metadata()
			if len(md.Schemas()) != 2 || md.CurrentSchema().ID != 1 || len(md.PartitionSpecs()) != 2 || md.DefaultPartitionSpec() != 1 {
				t.Fatalf("%d schemas (current %d), %d specs (default %d): want the evolution's second of each",
					len(md.Schemas()), md.CurrentSchema().ID, len(md.PartitionSpecs()), md.DefaultPartitionSpec())
			}
			if ps := md.PartitionSpec(); ps.NumFields() != 1 || ps.Field(0).Name != EvolvedField || ps.Field(0).Transform.String() != "bucket[4]" {
				t.Errorf("current spec %v", ps)
			}
			tasks, err := tbl.Scan().PlanFiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			specs := map[int32]int{}
			for _, task := range tasks {
				specs[task.File.SpecID()]++
			}
			if specs[0] == 0 || specs[1] == 0 || len(specs) != 2 {
				t.Errorf("data files by spec %v, want files in specs 0 and 1", specs)
			}
		})
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
