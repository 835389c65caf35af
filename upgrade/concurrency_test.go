package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/manifest"
	icescan "github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/iceberg/table/tabletest"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// concurrencyRuns is the number of races and of kills.
const concurrencyRuns = 20

// realEnv is a SQLite catalog whose tables hold real Parquet files, so
// the independent reader (iceberg-go) can read them: one v2 table per
// race or kill, since an upgrade happens once.
type realEnv struct {
	ctx context.Context
	dir string
	cat *fixture.Catalog
	n   int
}

func newRealEnv(t *testing.T) *realEnv {
	t.Helper()
	c := fixture.NewSQLite(t)
	return &realEnv{ctx: c.Ctx, dir: c.Dir, cat: c}
}

// v2Table creates ns.NAME at format v2 with three appended files (ids
// 0-8) and a position delete of id 4 (row 1 of the second file), so that the upgrade meets several
// manifests, a delete file and a deleted row.
func (e *realEnv) v2Table(t *testing.T, name string) (*catalog.Table, []manifest.DataFile) {
	t.Helper()
	tb := e.cat.Table(t, fixture.TableOptions{Name: name,
		Files: [][]int64{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}, Deletes: map[int][]int64{1: {1}}})
	return tb.Load(t), tb.Data
}

func (e *realEnv) dataFile(t *testing.T, tbl *catalog.Table, ids ...int64) manifest.DataFile {
	t.Helper()
	e.n++
	return e.cat.Existing(tbl.Ident).WriteIDs(t, tbl, fmt.Sprintf("f%d", e.n), nil, ids...)
}

// posDelete writes a v2 position-delete file deleting row pos of path.
func (e *realEnv) posDelete(t *testing.T, tbl *catalog.Table, path string, pos int64) manifest.DataFile {
	t.Helper()
	e.n++
	return e.cat.Existing(tbl.Ident).WritePositionDeletes(t, tbl, fmt.Sprintf("d%d", e.n), nil, map[string][]int64{path: {pos}}, true)
}

func (e *realEnv) commit(t *testing.T, tbl *catalog.Table, ch table.Change) *catalog.Table {
	t.Helper()
	out, _, err := table.CommitChange(e.ctx, e.cat, tbl, ch, fastRetries())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fastRetries() commit.Options {
	o := commit.DefaultOptions()
	o.NumRetries = 100
	o.Sleep = func(context.Context, time.Duration) error { return nil }
	return o
}

func (e *realEnv) load(t *testing.T, name string) *catalog.Table {
	t.Helper()
	tbl, err := e.cat.LoadTable(e.ctx, catalog.Ident{Namespace: []string{"ns"}, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// checksum is icectl's checksum of the table's current rows, without
// lineage, so that a v2 table and its upgrade compare equal.
func (e *realEnv) checksum(t *testing.T, tbl *catalog.Table) icescan.ChecksumResult {
	t.Helper()
	sum, err := icescan.Checksum(e.ctx, tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), icescan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

type lineageRow struct {
	ID        int64  `json:"id"`
	RowID     *int64 `json:"_row_id"`
	LastSeqNo *int64 `json:"_last_updated_sequence_number"`
}

// readLineage reads ns.NAME with iceberg-go, lineage included.
func (e *realEnv) readLineage(t *testing.T, name string) []lineageRow {
	t.Helper()
	out := testenv.IcebergGo(e.ctx, t, "scan", "--catalog-uri", "sqlite:"+filepath.Join(e.dir, "catalog.db"), "--catalog-name", "test",
		"--table", "ns."+name, "--lineage")
	var res struct {
		Rows []lineageRow `json:"rows"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(res.Rows, func(a, b lineageRow) int { return int(a.ID - b.ID) })
	return res.Rows
}

// checkUpgraded checks ns.NAME as a finished upgrade must leave it: v3,
// every live data file with a first_row_id, next-row-id the rows of the
// data files that got ids, and iceberg-go reading exactly the ids want,
// each with a _row_id of its own below next-row-id and a sequence number.
func (e *realEnv) checkUpgraded(t *testing.T, name string, want []int64) {
	t.Helper()
	tbl := e.load(t, name)
	md := tbl.Metadata
	if md.FormatVersion != 3 || md.NextRowID == nil {
		t.Fatalf("%s: format v%d, next-row-id %v after the upgrade", name, md.FormatVersion, md.NextRowID)
	}
	fs, err := table.LiveFiles(e.ctx, tbl.IO, md.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, d := range fs.Data {
		if d.Entry.DataFile.FirstRowID == nil {
			t.Fatalf("%s: data file %s has no first_row_id", name, d.Entry.DataFile.FilePath)
		}
		rows += d.Entry.DataFile.RecordCount
	}
	// Every data manifest got its range and no file was removed, so the
	// ranges handed out are exactly the live files' rows.
	if *md.NextRowID != rows {
		t.Errorf("%s: next-row-id %d, want %d (the rows of the data files)", name, *md.NextRowID, rows)
	}
	got := e.readLineage(t, name)
	ids := make([]int64, len(got))
	seen := map[int64]bool{}
	for i, r := range got {
		ids[i] = r.ID
		if r.RowID == nil || r.LastSeqNo == nil || seen[*r.RowID] || *r.RowID < 0 || *r.RowID >= *md.NextRowID {
			t.Fatalf("%s: row %+v: missing lineage, a repeated _row_id or one past next-row-id %d", name, r, *md.NextRowID)
		}
		seen[*r.RowID] = true
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("%s: iceberg-go reads ids %v, want %v", name, ids, want)
	}
}

// baseIDs are the ids v2Table leaves: 0-8 without 4.
func baseIDs() []int64 { return []int64{0, 1, 2, 3, 5, 6, 7, 8} }

// A writer's commit lands between the upgrade's read of the table and
// its commit, 20 times, each on a fresh v2 table: an append, a position
// delete, both, or (every fourth race) an append running at the same
// time as the upgrade rather than injected. The upgrade is rebuilt on the
// writer's snapshot: nothing the writer did is lost, every row gets a
// _row_id of its own and next-row-id counts every row.
func TestUpgradeRacesWriters(t *testing.T) {
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	e := newRealEnv(t)
	for i := range concurrencyRuns {
		name := fmt.Sprintf("race%d", i)
		tbl, files := e.v2Table(t, name)
		want := baseIDs()
		added := e.dataFile(t, tbl, int64(100+i))
		var ch table.Change
		switch i % 4 {
		case 0, 3:
			ch = table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{added}}
			want = append(want, int64(100+i))
		case 1, 2:
			// Delete id 7: row 1 of the third appended file.
			third := files[2].FilePath
			ch = table.Change{Operation: spec.OperationDelete, AddDeletes: []manifest.DataFile{e.posDelete(t, tbl, third, 1)}}
			want = slices.DeleteFunc(want, func(id int64) bool { return id == 7 })
			if i%4 == 2 {
				ch.Operation, ch.AddData = spec.OperationOverwrite, []manifest.DataFile{added}
				want = append(want, int64(100+i))
			}
		}
		slices.Sort(want)
		var err error
		if i%4 == 3 {
			var wg sync.WaitGroup
			var werr error
			wg.Go(func() { _, _, werr = table.CommitChange(e.ctx, e.cat, tbl, ch, fastRetries()) })
			_, err = Run(e.ctx, e.cat, tbl, Options{To: 3, AssignRowIDs: true, Commit: fastRetries()})
			wg.Wait()
			err = errors.Join(err, werr)
		} else {
			rc := &racingCatalog{Catalog: e.cat}
			rc.race = func() error {
				_, _, err := table.CommitChange(e.ctx, e.cat, tbl, ch, fastRetries())
				return err
			}
			_, err = Run(e.ctx, rc, tbl, Options{To: 3, AssignRowIDs: true, Commit: fastRetries()})
			if err == nil && rc.calls.Load() < 2 {
				t.Fatalf("race %d: %d commits, want a conflict and a retry", i, rc.calls.Load())
			}
		}
		if err != nil {
			t.Fatalf("race %d: %v", i, err)
		}
		if got := e.checksum(t, e.load(t, name)); got.RowCount != int64(len(want)) {
			t.Fatalf("race %d: icectl reads %d rows, want %d", i, got.RowCount, len(want))
		}
		e.checkUpgraded(t, name, want)
	}
}

// checkReachable fails when a file the table's metadata references is
// missing (a kill must never leave a dangling reference).
func (e *realEnv) checkReachable(t *testing.T, tbl *catalog.Table) {
	t.Helper()
	missing, err := tabletest.MissingReachable(e.ctx, tbl.IO, tbl.Metadata)
	if err != nil || len(missing) > 0 {
		t.Fatalf("referenced files missing: %v (%v)", missing, err)
	}
}

func (e *realEnv) upgradeCmd(bin, name string) *exec.Cmd {
	// A killed run leaves its claim on the table until its lease ends: a
	// short lease, and --wait, let the re-run take it over.
	cmd := exec.Command(bin, "upgrade", "ns."+name, "--to", "3", "--force", "--wait", "1m", "--catalog-uri", "sqlite:///"+filepath.Join(e.dir, "catalog.db"), "--catalog-name", "test")
	cmd.Env = append(os.Environ(), "ICECTL_CLAIM_LEASE=2s")
	return cmd
}

// sameButClaim reports whether a and b differ at most by the table's
// claim (its tags and property), which a run killed after taking it
// leaves until its lease ends.
func sameButClaim(a, b *spec.TableMetadata) bool {
	refs := func(md *spec.TableMetadata) map[string]int64 {
		m := map[string]int64{}
		for name, r := range md.Refs {
			if !claim.IsRef(name) {
				m[name] = r.SnapshotID
			}
		}
		return m
	}
	return a.FormatVersion == b.FormatVersion && len(a.Snapshots) == len(b.Snapshots) &&
		*a.CurrentSnapshotID == *b.CurrentSnapshotID && maps.Equal(refs(a), refs(b))
}

// `icectl upgrade --to 3` SIGKILLed at a random moment, 20 times, each on
// a fresh v2 table: the table is as before (v2, the same metadata) or as
// after (v3 with row ids), references no missing file, and a re-run
// finishes the upgrade with the same rows.
func TestUpgradeKill(t *testing.T) {
	testenv.Need(t, testenv.IcebergGoReader, "iceberg-go reader (scripts/build-iceberg-go-reader)")
	bin := testenv.Icectl(t)
	e := newRealEnv(t)
	e.v2Table(t, "calibrate")
	full := testenv.Calibrate(t, e.upgradeCmd(bin, "calibrate"))
	rng := rand.New(rand.NewPCG(11, 0xbeef))
	outcomes := map[string]int{}
	for i := range concurrencyRuns {
		name := fmt.Sprintf("kill%d", i)
		tbl, _ := e.v2Table(t, name)
		before := e.checksum(t, tbl)
		delay := time.Duration(rng.Int64N(int64(full) * 5 / 4)) // some runs finish first
		testenv.KillAfter(t, e.upgradeCmd(bin, name), delay)
		got := e.load(t, name)
		switch got.Metadata.FormatVersion {
		case 2:
			switch {
			case got.MetadataLocation == tbl.MetadataLocation:
				outcomes["before"]++
			case sameButClaim(got.Metadata, tbl.Metadata):
				outcomes["claimed, not upgraded"]++
			default:
				t.Fatalf("kill %d after %s: still v2, but the table changed (%s)", i, delay, got.MetadataLocation)
			}
		case 3:
			e.checkUpgraded(t, name, baseIDs())
			outcomes["after"]++
		default:
			t.Fatalf("kill %d: format v%d", i, got.Metadata.FormatVersion)
		}
		if sum := e.checksum(t, got); sum != before {
			t.Fatalf("kill %d after %s: icectl reads %+v, before %+v", i, delay, sum, before)
		}
		e.checkReachable(t, got)
		if out, err := e.upgradeCmd(bin, name).CombinedOutput(); err != nil {
			t.Fatalf("kill %d: the re-run failed: %v\n%s", i, err, out)
		}
		e.checkUpgraded(t, name, baseIDs())
		if sum := e.checksum(t, e.load(t, name)); sum != before {
			t.Fatalf("kill %d: after the re-run icectl reads %+v, before %+v", i, sum, before)
		}
	}
	t.Logf("a whole run takes %s; outcomes of %d kills: %v", full, concurrencyRuns, outcomes)
}
