package commits

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// testSchema is the schema of the tables created here (the same as
// catalogtest.NewTable's).
func testSchema() spec.Schema {
	return spec.Schema{ID: 0, Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "data", Type: spec.StringType{}},
	}}
}

// writeParquet writes a real Parquet data file of rows ids into tbl's data
// directory through its FileIO.
func writeParquet(t *testing.T, tbl *catalog.Table, name string, ids []int64) manifest.DataFile {
	t.Helper()
	ctx := context.Background()
	schema := tbl.Metadata.CurrentSchema()
	as, err := datafile.ArrowSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append("row")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	df, err := datafile.WriteFile(ctx, tbl.IO, table.DataLocation(tbl.Metadata)+"/"+name+".parquet", schema, tbl.Metadata.Properties, rec)
	if err != nil {
		t.Fatal(err)
	}
	df.Partition, df.SpecID = []any{}, int32(tbl.Metadata.DefaultSpecID)
	return df
}

// appendUnknown appends a new Parquet file to tbl through cat, whose
// commit must end in an unknown state, and returns the data file.
func appendUnknown(t *testing.T, cat catalog.Catalog, tbl *catalog.Table) manifest.DataFile {
	t.Helper()
	df := writeParquet(t, tbl, "unknown-outcome", []int64{1, 2, 3})
	opts := commit.Options{NumRetries: 3}
	_, _, err := table.CommitChange(context.Background(), cat, tbl, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{df}}, opts)
	if !errors.Is(err, catalog.ErrCommitStateUnknown) {
		t.Fatalf("append: %v, want ErrCommitStateUnknown", err)
	}
	if errors.Is(err, catalog.ErrCommitConflict) {
		t.Errorf("an unknown outcome reported as a conflict: %v", err)
	}
	if !strings.Contains(err.Error(), "kept") {
		t.Errorf("error %q does not say the files were kept", err)
	}
	return df
}

// checkLandedAndKept checks that the commit behind an unknown answer did
// land (the reloaded table's current snapshot adds df) and that every file
// it wrote, the data file, its manifests and the manifest list, is still
// there: deleting them on the unknown outcome would have corrupted the
// table. fio reads the table's storage independently of the catalog.
func checkLandedAndKept(t *testing.T, fio fileio.FileIO, loaded *catalog.Table, before *spec.Snapshot, df manifest.DataFile) {
	t.Helper()
	ctx := context.Background()
	snap := loaded.Metadata.CurrentSnapshot()
	if snap == nil || (before != nil && snap.SnapshotID == before.SnapshotID) {
		t.Fatalf("the commit did not land: current snapshot %v", snap)
	}
	if snap.Summary["added-data-files"] != "1" || snap.Operation() != spec.OperationAppend {
		t.Errorf("landed snapshot summary %v", snap.Summary)
	}
	mustExist := func(what, p string, size int64) {
		f, err := fio.Open(ctx, p)
		if err != nil {
			t.Errorf("%s %s: %v", what, p, err)
			return
		}
		defer f.Close()
		if size >= 0 && f.Size() != size {
			t.Errorf("%s %s: %d bytes, written %d", what, p, f.Size(), size)
		}
	}
	mustExist("manifest list", snap.ManifestList, -1)
	mfs, err := table.ManifestFiles(ctx, fio, snap)
	if err != nil {
		t.Fatalf("manifest list of the landed snapshot: %v", err)
	}
	added := 0
	for _, mf := range mfs {
		mustExist("manifest", mf.Path, mf.Length)
		if mf.AddedSnapshotID == snap.SnapshotID {
			added++
		}
	}
	if added == 0 {
		t.Error("the landed snapshot has no manifest of its own")
	}
	live, err := table.LiveFiles(ctx, fio, snap)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range live.Data {
		if e.Entry.DataFile.FilePath == df.FilePath {
			found = true
		}
	}
	if !found {
		t.Errorf("data file %s is not live in the landed snapshot", df.FilePath)
	}
	mustExist("data file", df.FilePath, df.FileSizeInBytes)
}

// appendOK appends df to tbl and returns the new table version.
func appendOK(t *testing.T, cat catalog.Catalog, tbl *catalog.Table, df manifest.DataFile) *catalog.Table {
	t.Helper()
	next, _, err := table.CommitChange(context.Background(), cat, tbl, table.Change{Operation: spec.OperationAppend, AddData: []manifest.DataFile{df}}, commit.DefaultOptions())
	if err != nil {
		t.Fatalf("append %s: %v", df.FilePath, err)
	}
	return next
}
