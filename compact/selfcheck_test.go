package compact

import (
	"os"
	"path/filepath"
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
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/fixture"
)

// dataFiles lists the files under the table's data directory.
func dataFiles(t *testing.T, e *env) []string {
	t.Helper()
	var out []string
	root := filepath.Join(e.Cat.Dir, "wh", "ns", "t", "data")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// refused runs a compaction that must fail with want in its error, commit
// nothing and leave no output behind.
func refused(t *testing.T, e *env, opts Options, want string) {
	t.Helper()
	before := e.Load(t).Metadata.CurrentSnapshot().SnapshotID
	files := dataFiles(t, e)
	_, err := e.compact(t, opts)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("compaction error %v, want one containing %q", err, want)
	}
	if got := e.Load(t).Metadata.CurrentSnapshot().SnapshotID; got != before {
		t.Errorf("snapshot %d committed", got)
	}
	if got := dataFiles(t, e); !slices.Equal(got, files) {
		t.Errorf("data files after the refused rewrite:\n%s\nbefore:\n%s", strings.Join(got, "\n"), strings.Join(files, "\n"))
	}
}

// withColumn returns rec with column i replaced by c (a new reference).
func withColumn(rec arrow.RecordBatch, i int, c arrow.Array) arrow.RecordBatch {
	cols := slices.Clone(rec.Columns())
	cols[i] = c
	return array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
}

func TestSelfCheckRefusesColumnNulledOnTheArrowPath(t *testing.T) {
	e := newEnv(t, 2)
	fiveFiles(t, e)
	opts := e.options()
	opts.ArrowOnly = true
	opts.selfCheckHooks = &selfCheckHooks{batch: func(rec arrow.RecordBatch) arrow.RecordBatch {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendNulls(int(rec.NumRows()))
		nulls := b.NewArray()
		defer nulls.Release()
		return withColumn(rec, 1, nulls)
	}}
	refused(t, e, opts, "self-check: column name (id 2): 100 non-null values read, 0 written")
}

func TestSelfCheckRefusesCorruptRowIDOnTheArrowPath(t *testing.T) {
	e := newEnv(t, 3)
	fiveFiles(t, e)
	opts := e.options()
	opts.ArrowOnly = true
	done := false
	opts.selfCheckHooks = &selfCheckHooks{batch: func(rec arrow.RecordBatch) arrow.RecordBatch {
		if done {
			rec.Retain()
			return rec
		}
		done = true
		rid := rec.Column(int(rec.NumCols()) - 2).(*array.Int64)
		vals := slices.Clone(rid.Int64Values())
		vals[0]++
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues(vals, nil)
		c := b.NewArray()
		defer c.Release()
		return withColumn(rec, int(rec.NumCols())-2, c)
	}}
	refused(t, e, opts, "self-check: columns _row_id, _last_updated_sequence_number")
}

func TestSelfCheckRefusesWrongInheritanceOnTheTranscodePath(t *testing.T) {
	e := newEnv(t, 3)
	fiveFiles(t, e)
	opts := e.options()
	opts.selfCheckHooks = &selfCheckHooks{input: func(in *datafile.TranscodeInput) {
		if in.FirstRowID != nil {
			in.FirstRowID = ptr(*in.FirstRowID + 1)
		}
	}}
	refused(t, e, opts, "self-check: column _row_id (id 2147483540)")
}

func TestSelfCheckRefusesLostRowOnTheTranscodePath(t *testing.T) {
	e := newEnv(t, 2)
	fiveFiles(t, e)
	opts := e.options()
	opts.selfCheckHooks = &selfCheckHooks{input: func(in *datafile.TranscodeInput) {
		in.Deleted = roaring64.BitmapOf(3) // a row the deletes do not remove
	}}
	refused(t, e, opts, "self-check: 100 rows read, 0 deleted, 95 written")
}

// A file whose column reads as nulls while its manifest entry counts
// values: what a reader that fails to match the column sees. Both paths
// agree with themselves from reading to writing; only the comparison with
// the manifest catches it.
func TestSelfCheckRefusesInputThatDisagreesWithItsManifest(t *testing.T) {
	for _, arrowOnly := range []bool{false, true} {
		t.Run(map[bool]string{false: "transcode", true: "arrow"}[arrowOnly], func(t *testing.T) {
			e := newEnv(t, 2)
			tbl := e.Load(t)
			s := fixture.IDNameSchema()
			as, err := datafile.ArrowSchema(&s)
			if err != nil {
				t.Fatal(err)
			}
			var files []string
			for i := range 2 {
				b := array.NewRecordBuilder(memory.DefaultAllocator, as)
				b.Field(0).(*array.Int64Builder).AppendValues(ids(int64(i*3), 3), nil)
				b.Field(1).(*array.StringBuilder).AppendNulls(3)
				rec := b.NewRecordBatch()
				b.Release()
				df := e.WriteRecord(t, tbl, "n"+string(rune('a'+i)), nil, &s, rec)
				rec.Release()
				if df.NullValueCounts[2] != 3 {
					t.Fatalf("null count %d, want 3", df.NullValueCounts[2])
				}
				if i == 1 {
					df.NullValueCounts[2] = 0 // the manifest says: 3 names
				}
				files = append(files, df.FilePath)
				tbl = e.Append(t, tbl, df)
			}
			opts := e.options()
			opts.ArrowOnly = arrowOnly
			refused(t, e, opts, "self-check: column name (id 2): 0 non-null values read from "+files[1]+", 3 by its manifest entry")
		})
	}
}

// TestSelfCheckAcceptsStoredNullLineage: a v3 file that stores its lineage
// columns with nulls for rows that inherit (as Spark writes them), whose
// manifest metrics therefore count no non-null values, compacts on both
// paths: the read fills those nulls by inheritance, which the check must
// not take for values the file lacks.
func TestSelfCheckAcceptsStoredNullLineage(t *testing.T) {
	for _, arrowOnly := range []bool{false, true} {
		e := newEnv(t, 3)
		tbl := e.Load(t)
		s := fixture.IDNameSchema()
		ls := datafile.SchemaWithLineage(&s)
		as, err := datafile.ArrowSchema(ls)
		if err != nil {
			t.Fatal(err)
		}
		var files []manifest.DataFile
		for f := range 2 {
			b := array.NewRecordBuilder(memory.DefaultAllocator, as)
			for i := range int64(10) {
				id := int64(f)*10 + i
				b.Field(0).(*array.Int64Builder).Append(id)
				b.Field(1).(*array.StringBuilder).Append("n" + strconv.FormatInt(id, 10))
				b.Field(2).(*array.Int64Builder).AppendNull() // _row_id: inherited
				b.Field(3).(*array.Int64Builder).AppendNull() // _last_updated_sequence_number: inherited
			}
			rec := b.NewRecordBatch()
			b.Release()
			df := e.WriteRecord(t, tbl, "stored-null-"+strconv.Itoa(f), nil, ls, rec)
			rec.Release()
			if vc, nc := df.ValueCounts[spec.FieldIDLastUpdatedSequenceNumber], df.NullValueCounts[spec.FieldIDLastUpdatedSequenceNumber]; vc != 10 || nc != 10 {
				t.Fatalf("metrics of the stored lineage column: %d values, %d nulls; want 10, 10", vc, nc)
			}
			files = append(files, df)
		}
		tbl = e.Append(t, tbl, files...)
		before := lineageByID(t, tbl)
		opts := e.options()
		opts.ArrowOnly = arrowOnly
		rep, err := e.compact(t, opts)
		if err != nil || rep.Committed() != 1 {
			t.Fatalf("arrowOnly=%v: %v, %d groups committed (%+v)", arrowOnly, err, rep.Committed(), rep.Groups)
		}
		after := lineageByID(t, e.Load(t))
		for id, l := range before {
			if l.rowID < 0 || l.seq < 0 || after[id] != l {
				t.Errorf("arrowOnly=%v: id %d: lineage %+v before, %+v after", arrowOnly, id, l, after[id])
			}
		}
	}
}
