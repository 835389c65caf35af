package e2e

import (
	"context"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/dvmerge"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/upgrade"
)

func TestDVMergeSQLite(t *testing.T) {
	t.Parallel()
	dvMergeUpgraded(t, sqliteBackend)
}

func TestDVMergePostgres(t *testing.T) {
	t.Parallel()
	dvMergeUpgraded(t, postgresBackend)
}

func TestDVMergeREST(t *testing.T) {
	t.Parallel()
	dvMergeUpgraded(t, restBackend)
}

// dvMergeUpgraded merges the deletes of a v2 table with partition-scoped
// and file-scoped position-delete files, upgraded to v3: iceberg-go reads
// the same rows before and after, every data file has at most one DV, and
// no position-delete file is left (each is fully replaced by DVs).
func dvMergeUpgraded(t *testing.T, mk func(*testing.T) backend) {
	readerBin(t)
	b := mk(t)
	cat := b.open(t)
	ctx := context.Background()
	const name = "dvm"
	x := buildV2Table(t, b, cat, name)
	w := x.w
	// A second partition-scoped file over the same two data files, and a
	// file-scoped one (referenced_data_file set).
	w.commit(t, nil, w.positionDeletes(t, []any{"eu"}, map[string][]int64{x.eu1.FilePath: {5, 3}, x.eu2.FilePath: {7}}))
	scoped := w.positionDeletes(t, []any{"us"}, map[string][]int64{x.us1.FilePath: {0, 2}})
	ref := x.us1.FilePath
	scoped.ReferencedDataFile = &ref
	w.commit(t, nil, scoped)
	// New deletes: ids 5, 42 and 20 (id 22 is deleted by equality already).
	const wantRows = v2TableRows - 3
	if _, err := upgrade.Run(ctx, cat, w.tbl, upgrade.Options{To: 3, AssignRowIDs: true, Commit: noWait()}); err != nil {
		t.Fatal(err)
	}
	before := goScanTable(t, b, name, false)
	if before.RowCount != wantRows {
		t.Fatalf("iceberg-go reads %d rows before the merge, want %d", before.RowCount, wantRows)
	}

	tbl := loadIdent(t, cat, b.ns, name)
	opts := dvmerge.Options{Commit: noWait()}
	p, err := dvmerge.PlanTable(ctx, tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rep, err := dvmerge.Execute(ctx, cat, tbl, p, opts)
	if err != nil {
		t.Fatalf("dv merge: %v", err)
	}
	if rep.DVsWritten != 3 || rep.PositionDeleteFilesRetired != 3 || rep.Commits != 1 {
		t.Errorf("dv merge wrote %d DVs, retired %d position-delete files in %d commits; want 3, 3, 1",
			rep.DVsWritten, rep.PositionDeleteFilesRetired, rep.Commits)
	}

	after := goScanTable(t, b, name, false)
	if after.RowCount != before.RowCount || after.Checksum != before.Checksum {
		t.Errorf("iceberg-go reads %d rows %s after the merge, %d rows %s before", after.RowCount, after.Checksum, before.RowCount, before.Checksum)
	}
	rows, sum := icectlScan(t, b, cat, name, false)
	agree(t, after, rows, sum)
	checkOneDVPerFile(t, loadIdent(t, cat, b.ns, name))
}

// checkOneDVPerFile fails when a live data file has more than one DV or a
// Parquet position-delete file is still live.
func checkOneDVPerFile(t *testing.T, tbl *catalog.Table) {
	t.Helper()
	fs, err := table.LiveFiles(context.Background(), tbl.IO, tbl.Metadata.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	dvs := map[string]int{}
	for _, e := range fs.Deletes {
		df := e.Entry.DataFile
		if df.Content != manifest.ContentPositionDeletes {
			continue
		}
		if df.FileFormat != "PUFFIN" || df.ReferencedDataFile == nil {
			t.Errorf("position-delete file %s is still live after the merge", df.FilePath)
			continue
		}
		dvs[*df.ReferencedDataFile]++
	}
	for f, n := range dvs {
		if n > 1 {
			t.Errorf("%s has %d DVs, want at most one", f, n)
		}
	}
	if len(dvs) != 3 {
		t.Errorf("%d data files have a DV, want 3", len(dvs))
	}
}
