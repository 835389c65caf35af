package dvmerge

import (
	"encoding/json"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// Test tables: id long (the row key every check matches by), cat string
// (the partition of the partitioned ones).
func testSchema() spec.Schema {
	return spec.Schema{ID: 0, Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "cat", Type: spec.StringType{}, Required: true},
	}}
}

func specByCat() spec.PartitionSpec {
	return spec.PartitionSpec{ID: 0, Fields: []spec.PartitionField{
		{SourceID: 2, FieldID: 1000, Name: "cat", Transform: spec.Transform{Kind: spec.TransformIdentity}},
	}}
}

// env is a test table, ns.t in a SQLite catalog (internal/testing/fixture).
type env struct{ *fixture.Table }

const testCatalog = "test"

// newEnv creates ns.t at format v2, partitioned by cat when partitioned.
func newEnv(t *testing.T, partitioned bool) *env {
	t.Helper()
	s := testSchema()
	o := fixture.TableOptions{Schema: &s}
	if partitioned {
		o.Spec = specByCat()
	}
	return envOf(fixture.NewSQLite(t, fixture.WithName(testCatalog)).Table(t, o))
}

func envOf(tb *fixture.Table) *env { return &env{tb} }

func (e *env) upgrade(t *testing.T) { e.Update(t, spec.UpgradeFormatVersion{FormatVersion: 3}) }

// part returns the partition tuple of cat under the table's default spec.
func (e *env) part(t *testing.T, cat string, day int32) []any {
	md := e.Load(t).Metadata
	ps, _ := md.SpecByID(md.DefaultSpecID)
	var out []any
	for _, f := range ps.Fields {
		switch f.Name {
		case "cat":
			out = append(out, cat)
		default:
			out = append(out, day)
		}
	}
	if out == nil {
		out = []any{}
	}
	return out
}

// writeData writes a data file with ids, in partition cat of the table's
// default spec.
func (e *env) writeData(t *testing.T, name, cat string, ids ...int64) manifest.DataFile {
	t.Helper()
	s := testSchema()
	rec := idRecord(t, &s, cat, ids)
	defer rec.Release()
	return e.WriteRecord(t, nil, name, e.part(t, cat, 0), &s, rec)
}

// writePos writes a v2 position-delete file in the partition of like.
func (e *env) writePos(t *testing.T, name string, like manifest.DataFile, deletes map[string][]int64, scoped bool) manifest.DataFile {
	t.Helper()
	df := e.WritePositionDeletes(t, nil, name+"-deletes", like.Partition, deletes, scoped)
	df.SpecID = like.SpecID
	return df
}

// writeDVs writes DVs (one Puffin file) in the partition of like.
func (e *env) writeDVs(t *testing.T, name string, like manifest.DataFile, deletes map[string][]int64) []manifest.DataFile {
	t.Helper()
	dvs := e.WriteDVs(t, nil, name, like.Partition, deletes)
	for i := range dvs {
		dvs[i].SpecID = like.SpecID
	}
	return dvs
}

func (e *env) options() Options { return Options{Commit: e.Opts} }

// merge plans and executes a dv merge of the table.
func (e *env) merge(t *testing.T, opts Options) (*Report, error) {
	t.Helper()
	tbl := e.Load(t)
	p, err := PlanTable(e.Ctx, tbl, opts)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return Execute(e.Ctx, e.Cat.Catalog, tbl, p, opts)
}

func (e *env) mustMerge(t *testing.T, opts Options) *Report {
	t.Helper()
	rep, err := e.merge(t, opts)
	if err != nil {
		t.Fatalf("dv merge: %v", err)
	}
	return rep
}

// ids reads the surviving ids through icectl's scan, sorted.
func (e *env) ids(t *testing.T) []int64 {
	t.Helper()
	tbl := e.Load(t)
	var out []int64
	err := scan.Rows(e.Ctx, tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), scan.Options{}, func(rec arrowRecord) error {
		out = append(out, int64Column(rec, 0)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// goScan is the table as iceberg-go reads it.
type goScan struct {
	RowCount int64  `json:"row_count"`
	Checksum string `json:"checksum"`
}

// icebergGo reads the table through iceberg-go v0.7.0; skipped (failed
// under CI) without the reader.
func (e *env) icebergGo(t *testing.T) goScan {
	t.Helper()
	out := testenv.IcebergGo(e.Ctx, t, "scan", "--catalog-uri", e.Cat.URI, "--catalog-name", testCatalog, "--table", "ns.t")
	var g goScan
	if err := json.Unmarshal(out, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// checkSameRows asserts that icectl and (when available) iceberg-go read
// want.
func (e *env) checkSameRows(t *testing.T, want scan.ChecksumResult) {
	t.Helper()
	if got := e.Checksum(t, nil); got != want {
		t.Errorf("icectl reads %+v, want %+v", got, want)
	}
	if hasIcebergGo() {
		if g := e.icebergGo(t); g.RowCount != want.RowCount || g.Checksum != want.Checksum {
			t.Errorf("iceberg-go reads %d rows checksum %s, want %+v", g.RowCount, g.Checksum, want)
		}
	}
}

func liveFiles(t *testing.T, e *env) *table.FileSet { t.Helper(); return e.LiveFiles(t, nil) }

// checkMerged asserts the v3 delete invariants after a merge: no
// position-delete file left unless in allowKept, at most one DV per data
// file, every DV's blob parses from the Puffin footer at the manifest's
// offset and length with the spec's metadata and a cardinality equal to
// its record_count, with the data file's spec and partition.
func checkMerged(t *testing.T, e *env, allowKept ...string) {
	t.Helper()
	tbl := e.Load(t)
	fs := liveFiles(t, e)
	data := map[string]manifest.DataFile{}
	for _, d := range fs.Data {
		data[d.Entry.DataFile.FilePath] = d.Entry.DataFile
	}
	perFile := map[string]int{}
	for _, d := range fs.Deletes {
		df := d.Entry.DataFile
		if df.Content == manifest.ContentPositionDeletes && !table.IsDV(&df) {
			if !slices.Contains(allowKept, df.FilePath) {
				t.Errorf("position-delete file %s remains", df.FilePath)
			}
			continue
		}
		if !table.IsDV(&df) {
			continue
		}
		ref := *df.ReferencedDataFile
		perFile[ref]++
		if dd, ok := data[ref]; !ok {
			t.Errorf("DV %s refers to %s, which is not live", table.KeyOf(&df), ref)
		} else if dd.SpecID != df.SpecID || table.PartitionKey(dd.SpecID, dd.Partition) != table.PartitionKey(df.SpecID, df.Partition) {
			t.Errorf("DV for %s has spec %d partition %v, data file spec %d partition %v", ref, df.SpecID, df.Partition, dd.SpecID, dd.Partition)
		}
		if !strings.EqualFold(df.FileFormat, "puffin") {
			t.Errorf("DV %s has file format %q", table.KeyOf(&df), df.FileFormat)
		}
		f, err := tbl.IO.Open(e.Ctx, df.FilePath)
		if err != nil {
			t.Fatal(err)
		}
		r, err := puffin.OpenReader(io.NewSectionReader(f, 0, f.Size()), f.Size())
		if err != nil {
			f.Close()
			t.Fatalf("puffin %s: %v", df.FilePath, err)
		}
		if f.Size() != df.FileSizeInBytes {
			t.Errorf("puffin %s is %d bytes, manifest says %d", df.FilePath, f.Size(), df.FileSizeInBytes)
		}
		var found bool
		for _, b := range r.Metadata().Blobs {
			if b.Offset != *df.ContentOffset {
				continue
			}
			found = true
			if b.Length != *df.ContentSizeInBytes || b.Type != puffin.DVBlobType || b.SnapshotID != -1 || b.SequenceNumber != -1 ||
				b.CompressionCodec != "" || b.Properties[puffin.PropReferencedDataFile] != ref ||
				b.Properties[puffin.PropCardinality] != strconv.FormatInt(df.RecordCount, 10) {
				t.Errorf("blob of %s: %+v, manifest entry %+v", ref, b, df)
			}
			bm, err := r.ReadDV(b)
			if err != nil {
				t.Errorf("DV of %s: %v", ref, err)
			} else if int64(bm.GetCardinality()) != df.RecordCount {
				t.Errorf("DV of %s has %d positions, record_count %d", ref, bm.GetCardinality(), df.RecordCount)
			}
		}
		f.Close()
		if !found {
			t.Errorf("puffin %s has no blob at offset %d", df.FilePath, *df.ContentOffset)
		}
	}
	for ref, n := range perFile {
		if n > 1 {
			t.Errorf("%d DVs for %s", n, ref)
		}
	}
}

// dvOf reads the positions of a data file's DV (nil: none).
func dvOf(t *testing.T, e *env, dataPath string) *roaring64.Bitmap {
	t.Helper()
	tbl := e.Load(t)
	for _, d := range liveFiles(t, e).Deletes {
		df := d.Entry.DataFile
		if table.IsDV(&df) && *df.ReferencedDataFile == dataPath {
			bm, err := table.ReadDV(e.Ctx, tbl.IO, &df)
			if err != nil {
				t.Fatal(err)
			}
			return bm
		}
	}
	return nil
}

func countKind(fs *table.FileSet, dv bool, content manifest.FileContent) int {
	n := 0
	for _, d := range fs.Deletes {
		df := d.Entry.DataFile
		if df.Content == content && table.IsDV(&df) == dv {
			n++
		}
	}
	return n
}

func seq(from, n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

type arrowRecord = arrow.RecordBatch

func idRecord(t *testing.T, s *spec.Schema, cat string, ids []int64) arrow.RecordBatch {
	t.Helper()
	as, err := datafile.ArrowSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(cat)
	}
	return b.NewRecordBatch()
}

func int64Column(rec arrow.RecordBatch, i int) []int64 {
	col := rec.Column(i).(*array.Int64)
	out := make([]int64, col.Len())
	for j := range out {
		out[j] = col.Value(j)
	}
	return out
}

func hasIcebergGo() bool { return os.Getenv(testenv.IcebergGoReader) != "" || os.Getenv("CI") != "" }
