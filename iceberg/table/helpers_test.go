package table

import (
	"context"
	"errors"
	"fmt"
	"github.com/icectl/icectl/internal/testing/deletefiles"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// testSchema is the schema of every test table: id long, name string.
func testSchema() spec.Schema {
	return spec.Schema{ID: 0, Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "name", Type: spec.StringType{}},
	}}
}

type env struct {
	ctx    context.Context
	dir    string
	uri    string
	cat    *sqlcat.Catalog
	id     catalog.Ident
	noWait commit.Options
}

// newEnv opens a SQLite catalog in a temporary directory and creates table
// ns.t in format version v.
func newEnv(t *testing.T, v int) (*env, *catalog.Table) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	uri := "sqlite:///" + filepath.Join(dir, "catalog.db")
	cat, err := sqlcat.Create(ctx, catalog.Config{Name: "test", URI: uri, Warehouse: "file://" + filepath.Join(dir, "wh")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	if err := cat.CreateNamespace(ctx, []string{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	md, err := spec.NewTableMetadata(testSchema(), spec.PartitionSpec{ID: 0}, spec.SortOrder{OrderID: 0},
		"file://"+filepath.Join(dir, "wh", "ns", "t"), nil, v)
	if err != nil {
		t.Fatal(err)
	}
	id := catalog.Ident{Namespace: []string{"ns"}, Name: "t"}
	tbl, err := cat.CreateTable(ctx, id, md)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{ctx: ctx, dir: dir, uri: uri, cat: cat, id: id, noWait: commit.DefaultOptions()}
	e.noWait.Sleep = func(context.Context, time.Duration) error { return nil }
	return e, tbl
}

// writeData writes a Parquet data file with the given ids (name = "n<id>")
// and returns its manifest description.
func (e *env) writeData(t *testing.T, tbl *catalog.Table, name string, ids ...int64) manifest.DataFile {
	t.Helper()
	return e.writeRows(t, tbl, name, ids, nil, nil)
}

// writeRows writes ids with, when rowIDs is not nil, the lineage columns
// _row_id and _last_updated_sequence_number stored physically.
func (e *env) writeRows(t *testing.T, tbl *catalog.Table, name string, ids, rowIDs, seqs []int64) manifest.DataFile {
	t.Helper()
	base := testSchema()
	schema := &base
	if rowIDs != nil {
		schema = datafile.SchemaWithLineage(schema)
	}
	as, err := datafile.ArrowSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for i, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append("n" + strconv.FormatInt(id, 10))
		if rowIDs != nil {
			b.Field(2).(*array.Int64Builder).Append(rowIDs[i])
			b.Field(3).(*array.Int64Builder).Append(seqs[i])
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	df, err := datafile.WriteFile(e.ctx, tbl.IO, DataLocation(tbl.Metadata)+"/"+name+".parquet", schema, nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	df.Partition = []any{}
	return df
}

// writePosDeletes writes a v2 position-delete file.
func (e *env) writePosDeletes(t *testing.T, tbl *catalog.Table, name string, deletes map[string][]int64, scoped bool) manifest.DataFile {
	t.Helper()
	df, err := deletefiles.WritePositionDeletes(e.ctx, tbl.IO, DataLocation(tbl.Metadata)+"/"+name+"-deletes.parquet", []any{}, deletes, scoped)
	if err != nil {
		t.Fatal(err)
	}
	return df
}

// writeDVs writes one Puffin file holding a DV per data file.
func (e *env) writeDVs(t *testing.T, tbl *catalog.Table, name string, deletes map[string][]int64) []manifest.DataFile {
	t.Helper()
	dvs, err := deletefiles.WriteDVs(e.ctx, tbl.IO, DataLocation(tbl.Metadata)+"/"+name+".puffin", []any{}, deletes)
	if err != nil {
		t.Fatal(err)
	}
	return dvs
}

func (e *env) commit(t *testing.T, tbl *catalog.Table, ch Change) (*catalog.Table, *spec.Snapshot) {
	t.Helper()
	res, snap, err := CommitChange(e.ctx, e.cat, tbl, ch, e.noWait)
	if err != nil {
		t.Fatalf("commit %s: %v", ch.Operation, err)
	}
	checkTotals(t, e.ctx, res, snap)
	return res, snap
}

// checkTotals recounts the snapshot's live files and compares them with
// its summary totals.
func checkTotals(t *testing.T, ctx context.Context, tbl *catalog.Table, snap *spec.Snapshot) {
	t.Helper()
	fs, err := LiveFiles(ctx, tbl.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	var c counts
	for _, e := range append(fs.Data, fs.Deletes...) {
		c.add(&e.Entry.DataFile, 1)
	}
	want := map[string]int64{
		"total-data-files": c.dataFiles, "total-delete-files": c.deleteFiles, "total-records": c.records,
		"total-files-size": c.size, "total-position-deletes": c.posDeletes, "total-equality-deletes": c.eqDeletes,
	}
	for k, v := range want {
		if got := snap.Summary[k]; got != strconv.FormatInt(v, 10) {
			t.Errorf("snapshot %d summary %s = %q, recounted %d", snap.SnapshotID, k, got, v)
		}
	}
}

// faultCatalog wraps a real catalog to inject outcomes at the commit seam.
type faultCatalog struct {
	catalog.Catalog
	calls atomic.Int32
	// before runs before each commit is forwarded; a non-nil error is
	// returned instead of committing.
	before func(n int) error
	// after turns the real outcome into another (e.g. state unknown).
	after func(n int, res *catalog.Table, err error) (*catalog.Table, error)
}

func (f *faultCatalog) CommitTable(ctx context.Context, t *catalog.Table, reqs []spec.Requirement, ups []spec.Update) (*catalog.Table, error) {
	n := int(f.calls.Add(1))
	if f.before != nil {
		if err := f.before(n); err != nil {
			return nil, err
		}
	}
	res, err := f.Catalog.CommitTable(ctx, t, reqs, ups)
	if f.after != nil {
		return f.after(n, res, err)
	}
	return res, err
}

var errInjected = errors.New("injected")

func conflictErr(n int) error {
	return fmt.Errorf("injected conflict %d: %w: %w", n, catalog.ErrCommitConflict, errInjected)
}

func ptr[T any](v T) *T { return &v }
