package e2e

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// row is one row of the tables icectl writes here.
type row struct {
	id     int64
	name   *string // null for every 4th id
	amount *float64
	ts     time.Time
	region string // the identity partition
}

// epoch is row 0's timestamp, with microseconds so that their encoding is
// compared too.
func epoch() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 678901000, time.UTC) }

func mkRow(id int64, region string) row {
	a := float64(id)/4 - 2
	r := row{id: id, amount: &a, ts: epoch().Add(time.Duration(id) * 90 * time.Minute), region: region}
	if id%4 != 3 {
		n := "n-" + strconv.FormatInt(id, 10)
		r.name = &n
	}
	return r
}

func mkRows(region string, ids ...int64) []row {
	out := make([]row, len(ids))
	for i, id := range ids {
		out[i] = mkRow(id, region)
	}
	return out
}

func span(lo, hi int64) []int64 {
	var ids []int64
	for i := lo; i < hi; i++ {
		ids = append(ids, i)
	}
	return ids
}

func tableSchema() spec.Schema {
	return spec.Schema{ID: 0, Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "name", Type: spec.StringType{}},
		{ID: 3, Name: "amount", Type: spec.DoubleType{}},
		{ID: 4, Name: "ts", Type: spec.TimestampTzType{}, Required: true},
		{ID: 5, Name: "region", Type: spec.StringType{}, Required: true},
	}}
}

// writer builds a table with icectl alone: data and delete files through
// iceberg/datafile and iceberg/puffin, commits through table.CommitChange.
type writer struct {
	ctx  context.Context
	cat  catalog.Catalog
	tbl  *catalog.Table
	opts commit.Options
	n    int
}

// newWriter creates namespace b.ns and table b.ns.name, format version v,
// partitioned by identity(region).
func newWriter(t *testing.T, b backend, cat catalog.Catalog, name string, v int) *writer {
	t.Helper()
	ctx := context.Background()
	if err := cat.CreateNamespace(ctx, []string{b.ns}, nil); err != nil {
		t.Fatalf("create namespace %s: %v", b.ns, err)
	}
	id := catalog.Ident{Namespace: []string{b.ns}, Name: name}
	lp, ok := cat.(catalog.LocationProvider)
	if !ok {
		t.Fatalf("catalog %T does not choose table locations", cat)
	}
	loc, err := lp.DefaultLocation(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ps := spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{
		{SourceID: 5, FieldID: 1000, Name: "region", Transform: spec.Transform{Kind: spec.TransformIdentity}},
	}}
	md, err := spec.NewTableMetadata(tableSchema(), ps, spec.SortOrder{OrderID: 0}, loc,
		map[string]string{"write.delete.mode": "merge-on-read"}, v)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, id, md)
	if err != nil {
		t.Fatalf("create table %s: %v", id, err)
	}
	opts := commit.DefaultOptions()
	opts.Sleep = func(context.Context, time.Duration) error { return nil }
	return &writer{ctx: ctx, cat: cat, tbl: tbl, opts: opts}
}

// schema is the table's current schema as the catalog stored it (a REST
// server may renumber field ids).
func (w *writer) schema(t *testing.T) *spec.Schema {
	t.Helper()
	s := w.tbl.Metadata.CurrentSchema()
	if s == nil {
		t.Fatal("table has no current schema")
	}
	return s
}

func (w *writer) path(ext string) string {
	w.n++
	return fmt.Sprintf("%s/e2e-%03d%s", table.DataLocation(w.tbl.Metadata), w.n, ext)
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// create writes a file through the table's FileIO with fill.
func (w *writer) create(t *testing.T, path string, fill func(io.Writer) error) int64 {
	t.Helper()
	f, err := w.tbl.IO.Create(w.ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	cw := &countingWriter{w: f}
	if err := fill(cw); err != nil {
		f.Abort()
		t.Fatalf("write %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close %s: %v", path, err)
	}
	return cw.n
}

// record renders rows in schema s (a projection of the table schema).
func record(t *testing.T, s *spec.Schema, rows []row) arrow.RecordBatch {
	t.Helper()
	as, err := datafile.ArrowSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for _, r := range rows {
		for i, f := range s.Fields {
			fb := b.Field(i)
			switch f.Name {
			case "id":
				fb.(*array.Int64Builder).Append(r.id)
			case "name":
				if r.name == nil {
					fb.AppendNull()
				} else {
					fb.(*array.StringBuilder).Append(*r.name)
				}
			case "amount":
				if r.amount == nil {
					fb.AppendNull()
				} else {
					fb.(*array.Float64Builder).Append(*r.amount)
				}
			case "ts":
				fb.(*array.TimestampBuilder).Append(arrow.Timestamp(r.ts.UnixMicro()))
			case "region":
				fb.(*array.StringBuilder).Append(r.region)
			default:
				t.Fatalf("unknown column %s", f.Name)
			}
		}
	}
	return b.NewRecordBatch()
}

// data writes rows (all of one region) as a Parquet data file of the
// region's partition.
func (w *writer) data(t *testing.T, rows []row) manifest.DataFile {
	t.Helper()
	return w.dataIn(t, []any{rows[0].region}, rows)
}

// dataIn writes rows as a Parquet data file of partition.
func (w *writer) dataIn(t *testing.T, partition []any, rows []row) manifest.DataFile {
	t.Helper()
	s := w.schema(t)
	rec := record(t, s, rows)
	defer rec.Release()
	path := w.path(".parquet")
	var m datafile.Metrics
	size := w.create(t, path, func(out io.Writer) error {
		pw, err := datafile.NewWriter(out, s, nil)
		if err != nil {
			return err
		}
		if err := pw.Write(rec); err != nil {
			return err
		}
		m, err = pw.Close()
		return err
	})
	return manifest.DataFile{Content: manifest.ContentData, FilePath: path, FileFormat: "PARQUET",
		Partition: partition, RecordCount: m.RecordCount, FileSizeInBytes: size,
		ColumnSizes: m.ColumnSizes, ValueCounts: m.ValueCounts, NullValueCounts: m.NullValueCounts,
		NaNValueCounts: m.NaNValueCounts, LowerBounds: m.LowerBounds, UpperBounds: m.UpperBounds,
		SplitOffsets: m.SplitOffsets}
}

// positionDeletes writes a partition-scoped v2 position-delete file (no
// referenced_data_file) deleting positions of several data files.
func (w *writer) positionDeletes(t *testing.T, partition []any, deletes map[string][]int64) manifest.DataFile {
	t.Helper()
	path := w.path("-pos-deletes.parquet")
	files := make([]string, 0, len(deletes))
	for f := range deletes {
		files = append(files, f)
	}
	slices.Sort(files)
	var n int64
	size := w.create(t, path, func(out io.Writer) error {
		pw, err := datafile.NewPositionDeleteWriter(out, nil)
		if err != nil {
			return err
		}
		for _, f := range files {
			ps := slices.Sorted(slices.Values(deletes[f]))
			for _, p := range ps {
				if err := pw.Write(f, p); err != nil {
					return err
				}
				n++
			}
		}
		_, err = pw.Close()
		return err
	})
	return manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: path, FileFormat: "PARQUET",
		Partition: partition, RecordCount: n, FileSizeInBytes: size}
}

// unsortedPositionDeletes writes a position-delete file of data file
// path holding positions in the order given, as iceberg-go writes them
// (unsorted), which the spec asks for sorted.
func (w *writer) unsortedPositionDeletes(t *testing.T, partition []any, path string, pos ...int64) manifest.DataFile {
	t.Helper()
	sc, err := datafile.ArrowSchema(datafile.PositionDeleteSchema())
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, p := range pos {
		b.Field(0).(*array.StringBuilder).Append(path)
		b.Field(1).(*array.Int64Builder).Append(p)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	out := w.path("-unsorted-pos-deletes.parquet")
	size := w.create(t, out, func(o io.Writer) error {
		pw, err := datafile.NewWriter(o, datafile.PositionDeleteSchema(), nil)
		if err != nil {
			return err
		}
		if err := pw.Write(rec); err != nil {
			return err
		}
		_, err = pw.Close()
		return err
	})
	return manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: out, FileFormat: "PARQUET",
		Partition: partition, RecordCount: int64(len(pos)), FileSizeInBytes: size}
}

// equalityDeletes writes an equality-delete file on the id column.
func (w *writer) equalityDeletes(t *testing.T, partition []any, ids ...int64) manifest.DataFile {
	t.Helper()
	full := w.schema(t)
	idField, ok := full.FindFieldByName("id")
	if !ok {
		t.Fatal("schema has no id column")
	}
	s := &spec.Schema{Fields: []spec.NestedField{idField}}
	rec := record(t, s, mkRows("", ids...))
	defer rec.Release()
	path := w.path("-eq-deletes.parquet")
	var m datafile.Metrics
	size := w.create(t, path, func(out io.Writer) error {
		pw, err := datafile.NewWriter(out, s, nil)
		if err != nil {
			return err
		}
		if err := pw.Write(rec); err != nil {
			return err
		}
		m, err = pw.Close()
		return err
	})
	return manifest.DataFile{Content: manifest.ContentEqualityDeletes, FilePath: path, FileFormat: "PARQUET",
		Partition: partition, RecordCount: m.RecordCount, FileSizeInBytes: size, EqualityIDs: []int{idField.ID},
		ColumnSizes: m.ColumnSizes, ValueCounts: m.ValueCounts, NullValueCounts: m.NullValueCounts,
		LowerBounds: m.LowerBounds, UpperBounds: m.UpperBounds}
}

// dv writes a Puffin file holding one deletion vector for data.
func (w *writer) dv(t *testing.T, data manifest.DataFile, positions ...int64) manifest.DataFile {
	t.Helper()
	bm := roaring64.New()
	for _, p := range positions {
		bm.Add(uint64(p))
	}
	path := w.path(".puffin")
	var blobs []puffin.DVBlob
	var total int64
	w.create(t, path, func(out io.Writer) error {
		var err error
		blobs, total, err = puffin.WriteDVs(out, []puffin.DV{{ReferencedDataFile: data.FilePath, Positions: bm}}, nil)
		return err
	})
	if len(blobs) != 1 {
		t.Fatalf("WriteDVs wrote %d blobs, want 1", len(blobs))
	}
	b := blobs[0]
	ref, off, n := b.ReferencedDataFile, b.Offset, b.Length
	return manifest.DataFile{Content: manifest.ContentPositionDeletes, FilePath: path, FileFormat: "PUFFIN",
		Partition: slices.Clone(data.Partition), RecordCount: b.Cardinality, FileSizeInBytes: total,
		ReferencedDataFile: &ref, ContentOffset: &off, ContentSizeInBytes: &n}
}

// commit adds files in one snapshot and returns its sequence number.
func (w *writer) commit(t *testing.T, data []manifest.DataFile, deletes ...manifest.DataFile) int64 {
	t.Helper()
	op := spec.OperationAppend
	switch {
	case len(deletes) > 0 && len(data) == 0:
		op = spec.OperationDelete
	case len(deletes) > 0:
		op = spec.OperationOverwrite
	}
	tbl, snap, err := table.CommitChange(w.ctx, w.cat, w.tbl, table.Change{Operation: op, AddData: data, AddDeletes: deletes}, w.opts)
	if err != nil {
		t.Fatalf("commit %s: %v", op, err)
	}
	w.tbl = tbl
	return snap.SequenceNumber
}
