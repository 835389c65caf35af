package scan

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/catalog/sqlcat"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// row is one row of the test tables: id long, name string (nullable),
// region string (the partition of partitioned tables).
type row struct {
	id     int64
	name   *string
	region string
}

func r(id int64, region string) row {
	n := "n" + strconv.FormatInt(id, 10)
	return row{id: id, name: &n, region: region}
}

func testSchema() spec.Schema {
	return spec.Schema{ID: 0, Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "name", Type: spec.StringType{}},
		{ID: 3, Name: "region", Type: spec.StringType{}, Required: true},
	}}
}

type env struct {
	ctx  context.Context
	dir  string
	uri  string
	cat  *sqlcat.Catalog
	tbl  *catalog.Table
	part bool
	opts commit.Options
	n    int
}

// newEnv creates table ns.t in a SQLite catalog: format v, partitioned by
// identity(region) when part.
func newEnv(t *testing.T, v int, part bool) *env {
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
	ps := spec.PartitionSpec{ID: 0}
	if part {
		ps.Fields = []spec.PartitionField{{SourceID: 3, FieldID: 1000, Name: "region", Transform: spec.Transform{Kind: spec.TransformIdentity}}}
	}
	md, err := spec.NewTableMetadata(testSchema(), ps, spec.SortOrder{OrderID: 0},
		"file://"+filepath.Join(dir, "wh", "ns", "t"), map[string]string{"write.delete.mode": "merge-on-read"}, v)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, catalog.Ident{Namespace: []string{"ns"}, Name: "t"}, md)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{ctx: ctx, dir: dir, uri: uri, cat: cat, tbl: tbl, part: part, opts: commit.DefaultOptions()}
	e.opts.Sleep = func(context.Context, time.Duration) error { return nil }
	return e
}

func (e *env) partition(region string) []any {
	if e.part {
		return []any{region}
	}
	return []any{}
}

type countingWriter struct {
	w interface {
		io.Writer
	}
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (e *env) path(ext string) string {
	e.n++
	return table.DataLocation(e.tbl.Metadata) + "/f" + strconv.Itoa(e.n) + ext
}

// writeParquet writes rec in schema s as a data file of the table.
func (e *env) writeParquet(t *testing.T, s *spec.Schema, rec arrow.RecordBatch) manifest.DataFile {
	t.Helper()
	df, err := datafile.WriteFile(e.ctx, e.tbl.IO, e.path(".parquet"), s, nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	return df
}

func rowsRecord(t *testing.T, s *spec.Schema, rows []row) arrow.RecordBatch {
	t.Helper()
	as, err := datafile.ArrowSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for _, rw := range rows {
		for i, f := range s.Fields {
			fb := b.Field(i)
			switch f.ID {
			case 1:
				fb.(*array.Int64Builder).Append(rw.id)
			case 2:
				if rw.name == nil {
					fb.AppendNull()
				} else {
					fb.(*array.StringBuilder).Append(*rw.name)
				}
			case 3:
				fb.(*array.StringBuilder).Append(rw.region)
			}
		}
	}
	return b.NewRecordBatch()
}

// data writes a data file of rows, all in one region.
func (e *env) data(t *testing.T, rows ...row) manifest.DataFile {
	t.Helper()
	s := testSchema()
	rec := rowsRecord(t, &s, rows)
	defer rec.Release()
	df := e.writeParquet(t, &s, rec)
	df.Partition = e.partition(rows[0].region)
	return df
}

// eqDeletes writes an equality-delete file over the field ids of rows.
func (e *env) eqDeletes(t *testing.T, region string, ids []int, rows ...row) manifest.DataFile {
	t.Helper()
	all := testSchema()
	s := &spec.Schema{}
	for _, id := range ids {
		f, _ := all.FindField(id)
		s.Fields = append(s.Fields, f)
	}
	rec := rowsRecord(t, s, rows)
	defer rec.Release()
	df := e.writeParquet(t, s, rec)
	return manifest.DataFile{Content: manifest.ContentEqualityDeletes, FilePath: df.FilePath, FileFormat: "PARQUET",
		Partition: e.partition(region), RecordCount: df.RecordCount, FileSizeInBytes: df.FileSizeInBytes, EqualityIDs: ids}
}

// posDeletes writes a v2 position-delete file; scoped sets
// referenced_data_file (only for a single data file).
func (e *env) posDeletes(t *testing.T, region string, scoped bool, deletes map[string][]int64) manifest.DataFile {
	t.Helper()
	path := e.path("-deletes.parquet")
	w, err := e.tbl.IO.Create(e.ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	cw := &countingWriter{w: w}
	pw, err := datafile.NewPositionDeleteWriter(cw, nil)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for f := range deletes {
		files = append(files, f)
	}
	slices.Sort(files)
	var n int64
	for _, f := range files {
		ps := slices.Clone(deletes[f])
		slices.Sort(ps)
		for _, p := range ps {
			if err := pw.Write(f, p); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if _, err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	df := manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: path, FileFormat: "PARQUET",
		Partition: e.partition(region), RecordCount: n, FileSizeInBytes: cw.n}
	if scoped {
		if len(files) != 1 {
			t.Fatal("a file-scoped delete file covers one data file")
		}
		df.ReferencedDataFile = &files[0]
	}
	return df
}

// dv writes a Puffin file with one DV for dataPath.
func (e *env) dv(t *testing.T, region, dataPath string, positions ...int64) manifest.DataFile {
	t.Helper()
	bm := roaring64.New()
	for _, p := range positions {
		bm.Add(uint64(p))
	}
	path := e.path(".puffin")
	w, err := e.tbl.IO.Create(e.ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	blobs, size, err := puffin.WriteDVs(w, []puffin.DV{{ReferencedDataFile: dataPath, Positions: bm}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := blobs[0]
	ref, off, n := b.ReferencedDataFile, b.Offset, b.Length
	return manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: path, FileFormat: "PUFFIN",
		Partition: e.partition(region), RecordCount: b.Cardinality, FileSizeInBytes: size,
		ReferencedDataFile: &ref, ContentOffset: &off, ContentSizeInBytes: &n}
}

// commit adds files in one snapshot.
func (e *env) commit(t *testing.T, data []manifest.DataFile, deletes ...manifest.DataFile) *spec.Snapshot {
	t.Helper()
	op := spec.OperationAppend
	if len(deletes) > 0 {
		op = spec.OperationOverwrite
		if len(data) == 0 {
			op = spec.OperationDelete
		}
	}
	tbl, snap, err := table.CommitChange(e.ctx, e.cat, e.tbl, table.Change{Operation: op, AddData: data, AddDeletes: deletes}, e.opts)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	e.tbl = tbl
	return snap
}

func (e *env) upgrade(t *testing.T, v int) {
	t.Helper()
	tbl, err := e.cat.CommitTable(e.ctx, e.tbl, nil, []spec.Update{spec.UpgradeFormatVersion{FormatVersion: v}})
	if err != nil {
		t.Fatal(err)
	}
	e.tbl = tbl
}

// scanIDs returns the ids of the current snapshot's surviving rows, in
// scan order.
func (e *env) scanIDs(t *testing.T, opts Options) []int64 {
	t.Helper()
	var ids []int64
	err := Rows(e.ctx, e.tbl.IO, e.tbl.Metadata, e.tbl.Metadata.CurrentSnapshot(), opts, func(rec arrow.RecordBatch) error {
		col := rec.Column(0).(*array.Int64)
		for i := range col.Len() {
			ids = append(ids, col.Value(i))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func sorted(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

func wantIDs(t *testing.T, got []int64, want ...int64) {
	t.Helper()
	if !slices.Equal(sorted(got), sorted(want)) {
		t.Errorf("surviving ids = %v, want %v", sorted(got), sorted(want))
	}
}

func rows(ids ...int64) []row {
	out := make([]row, len(ids))
	for i, id := range ids {
		out[i] = r(id, "eu")
	}
	return out
}
