package upgrade

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
)

// Run reads manifests only, never data files, so the tables here list
// data files that were never written.

// env is a test table, ns.t in a SQLite catalog (internal/testing/fixture).
type env struct {
	*fixture.Table
	n int
}

func newTable(t *testing.T, v int) (*env, *catalog.Table) {
	t.Helper()
	tb := fixture.NewSQLite(t).Table(t, fixture.TableOptions{FormatVersion: v})
	return &env{Table: tb}, tb.Load(t)
}

// appendRows commits one data file of n rows (listed, not written).
func (e *env) appendRows(t *testing.T, tbl *catalog.Table, n int64) *catalog.Table {
	t.Helper()
	e.n++
	return e.Append(t, tbl, fixture.Listed(fmt.Sprintf("%s/data/f%d.parquet", tbl.Metadata.Location, e.n), nil, n, 100*n))
}

// rowIDs returns the first_row_id ranges of the current snapshot's data
// files, failing on a file without one or on an overlap.
func rowIDs(t *testing.T, tbl *catalog.Table) (rows int64) {
	t.Helper()
	fs, err := table.LiveFiles(context.Background(), tbl.IO, tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, d := range fs.Data {
		df := d.Entry.DataFile
		if df.FirstRowID == nil {
			t.Fatalf("%s has no first_row_id", df.FilePath)
		}
		for i := range df.RecordCount {
			if seen[*df.FirstRowID+i] {
				t.Fatalf("row id %d given twice", *df.FirstRowID+i)
			}
			seen[*df.FirstRowID+i] = true
		}
		rows += df.RecordCount
	}
	if n := int64(len(seen)); n > *tbl.Metadata.NextRowID {
		t.Errorf("%d row ids handed out but next-row-id is %d", n, *tbl.Metadata.NextRowID)
	}
	return rows
}

func TestUpgradeV2ToV3AssignsRowIDs(t *testing.T) {
	e, tbl := newTable(t, 2)
	tbl = e.appendRows(t, tbl, 10)
	tbl = e.appendRows(t, tbl, 5)
	before := tbl.Metadata.Snapshots

	res, err := Run(e.Ctx, e.Cat, tbl, Options{To: 3, AssignRowIDs: true, Commit: e.Opts})
	if err != nil {
		t.Fatal(err)
	}
	tbl = e.Load(t)
	md := tbl.Metadata
	if !res.Upgraded || res.Snapshot == nil || res.ManifestsAssigned != 2 || md.FormatVersion != 3 {
		t.Fatalf("result %+v, table v%d", res, md.FormatVersion)
	}
	if *res.Snapshot.FirstRowID != 0 || *res.Snapshot.AddedRows != 15 || *md.NextRowID != 15 || *res.NextRowID != 15 {
		t.Errorf("first-row-id %d added-rows %d next-row-id %d", *res.Snapshot.FirstRowID, *res.Snapshot.AddedRows, *md.NextRowID)
	}
	if res.Snapshot.Operation() != spec.OperationReplace || *md.CurrentSnapshotID != res.Snapshot.SnapshotID {
		t.Errorf("snapshot %d operation %q, current %d", res.Snapshot.SnapshotID, res.Snapshot.Operation(), *md.CurrentSnapshotID)
	}
	for i, s := range before {
		got, ok := md.SnapshotByID(s.SnapshotID)
		if !ok || got.ManifestList != s.ManifestList || got.FirstRowID != nil || got.SequenceNumber != s.SequenceNumber {
			t.Errorf("snapshot %d changed by the upgrade", i)
		}
	}
	if rows := rowIDs(t, tbl); rows != 15 {
		t.Errorf("%d rows with ids, want 15", rows)
	}

	// Again: nothing to do, nothing committed.
	loc := tbl.MetadataLocation
	res, err = Run(e.Ctx, e.Cat, tbl, Options{To: 3, AssignRowIDs: true, Commit: e.Opts})
	if err != nil || res.Committed() {
		t.Fatalf("second run: %+v, %v", res, err)
	}
	if e.Load(t).MetadataLocation != loc {
		t.Error("a no-op upgrade committed")
	}
}

func TestUpgradeWithoutRowIDsThenAssign(t *testing.T) {
	e, tbl := newTable(t, 2)
	tbl = e.appendRows(t, tbl, 7)
	res, err := Run(e.Ctx, e.Cat, tbl, Options{To: 3, Commit: e.Opts})
	if err != nil {
		t.Fatal(err)
	}
	tbl = e.Load(t)
	if !res.Upgraded || res.Snapshot != nil || tbl.Metadata.FormatVersion != 3 || *tbl.Metadata.NextRowID != 0 ||
		len(tbl.Metadata.Snapshots) != 1 {
		t.Fatalf("plain upgrade: %+v, v%d next-row-id %v, %d snapshots", res, tbl.Metadata.FormatVersion, tbl.Metadata.NextRowID, len(tbl.Metadata.Snapshots))
	}
	// At v3 already, --assign-row-ids still gives the pending ids.
	res, err = Run(e.Ctx, e.Cat, tbl, Options{To: 3, AssignRowIDs: true, Commit: e.Opts})
	if err != nil {
		t.Fatal(err)
	}
	tbl = e.Load(t)
	if res.Upgraded || res.Snapshot == nil || *tbl.Metadata.NextRowID != 7 {
		t.Fatalf("assign on v3: %+v, next-row-id %d", res, *tbl.Metadata.NextRowID)
	}
	rowIDs(t, tbl)
}

func TestUpgradeV1(t *testing.T) {
	for _, to := range []int{2, 3} {
		t.Run(fmt.Sprint("to", to), func(t *testing.T) {
			e, tbl := newTable(t, 1)
			res, err := Run(e.Ctx, e.Cat, tbl, Options{To: to, AssignRowIDs: true, Commit: e.Opts})
			if err != nil {
				t.Fatal(err)
			}
			md := e.Load(t).Metadata
			if !res.Upgraded || md.FormatVersion != to || (to == 3) != (md.NextRowID != nil && *md.NextRowID == 0) {
				t.Fatalf("v1 to v%d: %+v, table v%d next-row-id %v", to, res, md.FormatVersion, md.NextRowID)
			}
		})
	}
}

func TestUpgradeRefusesBadTargets(t *testing.T) {
	e, tbl := newTable(t, 3)
	loc := tbl.MetadataLocation
	for _, to := range []int{2, 1, 4, 0} {
		_, err := Run(e.Ctx, e.Cat, tbl, Options{To: to, AssignRowIDs: true, Commit: e.Opts})
		if !errors.Is(err, ErrBadTarget) {
			t.Errorf("--to %d: %v, want ErrBadTarget", to, err)
		}
	}
	if e.Load(t).MetadataLocation != loc {
		t.Error("a refused upgrade committed")
	}
}

// racingCatalog commits a writer's append to the real catalog just before
// the first commit it forwards, so that commit conflicts for real.
type racingCatalog struct {
	catalog.Catalog
	calls atomic.Int32
	race  func() error
}

func (c *racingCatalog) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	if c.calls.Add(1) == 1 {
		if err := c.race(); err != nil {
			return nil, err
		}
	}
	return c.Catalog.CommitTable(ctx, t, reqs, ups)
}

func TestUpgradeRacingAWriter(t *testing.T) {
	for _, assign := range []bool{true, false} {
		t.Run(fmt.Sprint("assign_", assign), func(t *testing.T) {
			e, tbl := newTable(t, 2)
			tbl = e.appendRows(t, tbl, 10)
			rc := &racingCatalog{Catalog: e.Cat}
			rc.race = func() error {
				// The writer commits a v2 append on the version the upgrade
				// started from.
				e.appendRows(t, tbl, 4)
				return nil
			}
			res, err := Run(e.Ctx, rc, tbl, Options{To: 3, AssignRowIDs: assign, Commit: e.Opts})
			if err != nil {
				t.Fatal(err)
			}
			// The snapshot was built on the old main, so it conflicts and
			// is rebuilt; the bare format update applies to whatever the
			// catalog holds.
			if assign && rc.calls.Load() < 2 {
				t.Fatalf("%d commits, want a conflict and a retry", rc.calls.Load())
			}
			tbl = e.Load(t)
			if tbl.Metadata.FormatVersion != 3 || !res.Upgraded {
				t.Fatalf("table v%d after %+v", tbl.Metadata.FormatVersion, res)
			}
			fs, err := table.LiveFiles(e.Ctx, tbl.IO, tbl.Metadata.CurrentSnapshot())
			if err != nil {
				t.Fatal(err)
			}
			var rows int64
			for _, d := range fs.Data {
				rows += d.Entry.DataFile.RecordCount
			}
			if len(fs.Data) != 2 || rows != 14 {
				t.Fatalf("%d files, %d rows after the race; want both appends (2 files, 14 rows)", len(fs.Data), rows)
			}
			if assign {
				if rowIDs(t, tbl) != 14 || *res.Snapshot.AddedRows != 14 {
					t.Errorf("added-rows %d, want the writer's rows too", *res.Snapshot.AddedRows)
				}
			}
		})
	}
}

func TestUnassignedSkipsDeleteAndEmptyManifests(t *testing.T) {
	withID := dataManifest(1, 1)
	withID.FirstRowID = i64(3)
	got := Unassigned([]manifest.ManifestFile{dataManifest(1, 1), dataManifest(0, 0), withID,
		{Content: manifest.ManifestContentDeletes}, {Content: manifest.ManifestContentData}})
	if got != 2 {
		t.Errorf("Unassigned = %d, want 2 (one with counts, one without)", got)
	}
}

// Writers append while the upgrade runs, each commit retried on conflict:
// every append lands, and every data file of the final snapshot has a
// row-id range of its own.
func TestUpgradeConcurrentWriters(t *testing.T) {
	e, tbl := newTable(t, 2)
	tbl = e.appendRows(t, tbl, 10)
	const writers, appends = 2, 4
	e.Opts.NumRetries = 100
	errs := make(chan error, writers+1)
	start := make(chan struct{})
	for w := range writers {
		go func() {
			<-start
			for i := range appends {
				cur, err := e.Cat.LoadTable(e.Ctx, e.ID)
				if err != nil {
					errs <- err
					return
				}
				df := manifest.DataFile{Content: manifest.ContentData, FilePath: fmt.Sprintf("%s/data/w%d-%d.parquet", cur.Metadata.Location, w, i),
					FileFormat: "PARQUET", Partition: []any{}, RecordCount: 3, FileSizeInBytes: 300}
				if _, _, err := table.CommitChange(e.Ctx, e.Cat, cur, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{df}}, e.Opts); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	go func() {
		<-start
		_, err := Run(e.Ctx, e.Cat, tbl, Options{To: 3, AssignRowIDs: true, Commit: e.Opts})
		errs <- err
	}()
	close(start)
	for range writers + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	tbl = e.Load(t)
	if tbl.Metadata.FormatVersion != 3 {
		t.Fatalf("table at v%d", tbl.Metadata.FormatVersion)
	}
	if rows := rowIDs(t, tbl); rows != 10+writers*appends*3 {
		t.Errorf("%d rows in the final snapshot, want %d", rows, 10+writers*appends*3)
	}
}

// unknownCatalog forwards commits and then reports the outcome unknown,
// as a lost connection after the catalog applied the commit does.
type unknownCatalog struct {
	catalog.Catalog
	apply bool
}

func (c unknownCatalog) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	if c.apply {
		if _, err := c.Catalog.CommitTable(ctx, t, reqs, ups); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("connection lost: %w", catalog.ErrCommitStateUnknown)
}

// An unknown outcome is reported as such and every file the commit might
// reference is kept: the table reads as before or after the upgrade.
func TestUpgradeCommitStateUnknown(t *testing.T) {
	for _, applied := range []bool{false, true} {
		t.Run(fmt.Sprint("applied_", applied), func(t *testing.T) {
			e, tbl := newTable(t, 2)
			tbl = e.appendRows(t, tbl, 6)
			_, err := Run(e.Ctx, unknownCatalog{e.Cat, applied}, tbl, Options{To: 3, AssignRowIDs: true, Commit: e.Opts})
			if !errors.Is(err, catalog.ErrCommitStateUnknown) {
				t.Fatalf("err = %v, want ErrCommitStateUnknown", err)
			}
			got := e.Load(t)
			switch {
			case !applied && (got.MetadataLocation != tbl.MetadataLocation || got.Metadata.FormatVersion != 2):
				t.Errorf("the table changed though the commit did not land")
			case applied:
				if got.Metadata.FormatVersion != 3 {
					t.Fatalf("table at v%d", got.Metadata.FormatVersion)
				}
				// The landed snapshot's manifest list was kept.
				f, err := got.IO.Open(e.Ctx, got.Metadata.CurrentSnapshot().ManifestList)
				if err != nil {
					t.Fatalf("manifest list of the landed upgrade: %v", err)
				}
				f.Close()
				rowIDs(t, got)
			}
		})
	}
}
