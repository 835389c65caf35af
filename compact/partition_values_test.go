package compact

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/fixture"
)

// migratedSchema is a Hive-migrated table's schema: two data columns and
// four identity-partition columns, which the migrated files do not hold.
func migratedSchema() (cur, hive spec.Schema) {
	cur = spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "v", Type: spec.StringType{}},
		{ID: 3, Name: "p_int", Type: spec.IntType{}},
		{ID: 4, Name: "p_str", Type: spec.StringType{}},
		{ID: 5, Name: "p_date", Type: spec.DateType{}},
		{ID: 6, Name: "p_dec", Type: spec.DecimalType{Precision: 9, Scale: 2}},
	}}
	hive = spec.Schema{Fields: slices.Clone(cur.Fields[:2])}
	return cur, hive
}

func migratedSpec() spec.PartitionSpec {
	ps := spec.PartitionSpec{}
	for i, name := range []string{"p_int", "p_str", "p_date", "p_dec"} {
		ps.Fields = append(ps.Fields, spec.PartitionField{SourceID: 3 + i, FieldID: 1000 + i, Name: name,
			Transform: spec.Transform{Kind: spec.TransformIdentity}})
	}
	return ps
}

// migratedPartitions are the tables' two partitions, as manifests hold
// them.
func migratedPartitions() [][]any {
	return [][]any{
		{int32(1), "a b", int32(19782), spec.Decimal{Unscaled: big.NewInt(12345), Scale: 2}},
		{int32(-2), "z/=%", int32(-400), spec.Decimal{Unscaled: big.NewInt(-1), Scale: 2}},
	}
}

// idRecord is rows id, v="v<id>" in schema s, with every other column
// null (a file the old compaction wrote: the partition columns all null).
func idRecord(t *testing.T, s *spec.Schema, ids []int64) arrow.RecordBatch {
	t.Helper()
	as, err := datafile.ArrowSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("v%d", id))
		for c := 2; c < len(s.Fields); c++ {
			b.Field(c).AppendNull()
		}
	}
	return b.NewRecordBatch()
}

// migratedTable is a table whose data files do not hold the partition
// columns (as Spark's add_files and snapshot leave a Hive table), three
// per partition, plus, in the first partition, a file that holds them as
// nulls (what compaction wrote before it applied the spec's first
// projection rule), and deletes of some rows.
func migratedTable(t *testing.T, v int) *env {
	t.Helper()
	cur, hive := migratedSchema()
	e := newEnvWith(t, fixture.TableOptions{FormatVersion: v, Schema: &cur, Spec: migratedSpec()})
	tbl := e.Load(t)
	var files []manifest.DataFile
	next := int64(0)
	for p, part := range migratedPartitions() {
		for f := range 3 {
			rec := idRecord(t, &hive, ids(next, 20))
			next += 20
			files = append(files, e.WriteRecord(t, tbl, fmt.Sprintf("hive-%d-%d", p, f), part, &hive, rec))
			rec.Release()
		}
	}
	rec := idRecord(t, &cur, ids(next, 10))
	damaged := e.WriteRecord(t, tbl, "damaged", migratedPartitions()[0], &cur, rec)
	rec.Release()
	if damaged.NullValueCounts[3] != 10 {
		t.Fatalf("the damaged file's p_int null count is %d, want 10", damaged.NullValueCounts[3])
	}
	files = append(files, damaged)
	tbl = e.Append(t, tbl, files...)
	dels := map[string][]int64{files[0].FilePath: {0, 5}, files[6].FilePath: {3}}
	if v >= 3 {
		tbl = e.AddDeletes(t, tbl, e.WriteDVs(t, tbl, "dvs", migratedPartitions()[0], dels)...)
	} else {
		e.AddDeletes(t, tbl, e.WritePositionDeletes(t, tbl, "pos", migratedPartitions()[0], dels, false))
	}
	return e
}

// partitionRows reads every row of the table's current snapshot as
// "id|v|p_int|p_str|p_date|p_dec", sorted.
func partitionRows(t *testing.T, tbl *catalog.Table) []string {
	t.Helper()
	var out []string
	err := scan.Rows(context.Background(), tbl.IO, tbl.Metadata, tbl.Metadata.CurrentSnapshot(), scan.Options{}, func(rec arrow.RecordBatch) error {
		for i := range int(rec.NumRows()) {
			var vals []string
			for c := range int(rec.NumCols()) {
				col := rec.Column(c)
				if col.IsNull(i) {
					vals = append(vals, "null")
					continue
				}
				vals = append(vals, col.ValueStr(i))
			}
			out = append(out, strings.Join(vals, "|"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// wantPartitionRows are the rows migratedTable must read as: each with
// its file's partition values, the deleted ones gone.
func wantPartitionRows(t *testing.T) []string {
	t.Helper()
	parts := []string{"1|a b|2024-02-29|123.45", "-2|z/=%|1968-11-27|-0.01"}
	deleted := map[int64]bool{0: true, 5: true, 123: true}
	var out []string
	for id := range int64(130) {
		if deleted[id] {
			continue
		}
		p := parts[0]
		if id >= 60 && id < 120 {
			p = parts[1]
		}
		out = append(out, fmt.Sprintf("%d|v%d|%s", id, id, p))
	}
	slices.Sort(out)
	return out
}

// TestCompactMigratedPartitionColumns: compaction of files that do not
// hold their identity-partition columns (and of one that holds them as
// nulls) writes each row's partition value into the column, with metrics
// that say so, on both rewrite paths and sorted, v2 and v3: the spec's
// first projection rule, which Spark's filters rely on once the column
// lives in the files.
func TestCompactMigratedPartitionColumns(t *testing.T) {
	for _, v := range []int{2, 3} {
		for _, mode := range []string{"transcode", "arrow", "sort"} {
			t.Run(fmt.Sprintf("v%d/%s", v, mode), func(t *testing.T) {
				e := migratedTable(t, v)
				want := wantPartitionRows(t)
				if got := partitionRows(t, e.Load(t)); !slices.Equal(got, want) {
					t.Fatalf("before compaction the table reads\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				opts := e.options()
				opts.Plan.RewriteAll = true
				switch mode {
				case "arrow":
					opts.ArrowOnly = true
				case "sort":
					opts.Sort, opts.SortOrder = true, "v DESC"
				}
				rep, err := e.compact(t, opts)
				if err != nil {
					t.Fatal(err)
				}
				if rep.FilesIn != 7 {
					t.Errorf("%d files rewritten, want 7", rep.FilesIn)
				}
				tbl := e.Load(t)
				if got := partitionRows(t, tbl); !slices.Equal(got, want) {
					t.Fatalf("after compaction the table reads\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				checkPartitionValuesStored(t, tbl)
				// Outputs lie where Java puts a partition's files.
				dirs := []string{"/data/p_int=1/p_str=a+b/p_date=2024-02-29/p_dec=123.45/", "/data/p_int=-2/p_str=z%2F%3D%25/p_date=1968-11-27/p_dec=-0.01/"}
				for _, fe := range liveFiles(t, tbl).Data {
					df := &fe.Entry.DataFile
					if want := dirs[map[int32]int{1: 0, -2: 1}[df.Partition[0].(int32)]]; !strings.Contains(df.FilePath, want) {
						t.Errorf("output %s is not under %s", df.FilePath, want)
					}
				}
			})
		}
	}
}

// checkPartitionValuesStored wants every live data file of tbl to hold
// its partition values as stored, with metrics lower = upper = the value
// and no nulls.
func checkPartitionValuesStored(t *testing.T, tbl *catalog.Table) {
	t.Helper()
	cur := tbl.Metadata.CurrentSchema()
	for _, fe := range liveFiles(t, tbl).Data {
		df := &fe.Entry.DataFile
		consts, err := table.IdentityConstants(tbl.Metadata, df)
		if err != nil {
			t.Fatal(err)
		}
		var cols []spec.NestedField
		for _, f := range cur.Fields {
			if _, ok := consts[f.ID]; !ok {
				continue
			}
			cols = append(cols, f)
			enc, err := spec.EncodeValue(f.Type, consts[f.ID])
			if err != nil {
				t.Fatal(err)
			}
			if df.NullValueCounts[f.ID] != 0 || df.ValueCounts[f.ID] != df.RecordCount ||
				string(df.LowerBounds[f.ID]) != string(enc) || string(df.UpperBounds[f.ID]) != string(enc) {
				t.Errorf("%s, column %s: %d nulls, %d values of %d rows, bounds %x..%x, want %x",
					df.FilePath, f.Name, df.NullValueCounts[f.ID], df.ValueCounts[f.ID], df.RecordCount, df.LowerBounds[f.ID], df.UpperBounds[f.ID], enc)
			}
		}
		if len(cols) != 4 {
			t.Fatalf("%s: %d partition columns, want 4", df.FilePath, len(cols))
		}
		f, err := tbl.IO.Open(context.Background(), df.FilePath)
		if err != nil {
			t.Fatal(err)
		}
		err = datafile.CheckConstants(context.Background(), f, f.Size(), &spec.Schema{Fields: cols}, consts, nil)
		f.Close()
		if err != nil {
			t.Errorf("%s as stored: %v", df.FilePath, err)
		}
	}
}

// TestSelfCheckRefusesNulledPartitionColumn: an output whose partition
// column is null where its partition value is not, what compaction wrote
// before it applied the first projection rule, is refused before commit,
// whether its metrics show it or the column has to be read back (metrics
// mode none).
func TestSelfCheckRefusesNulledPartitionColumn(t *testing.T) {
	for _, metrics := range []string{"", "none"} {
		t.Run("metrics="+metrics, func(t *testing.T) {
			cur, _ := migratedSchema()
			props := map[string]string{}
			if metrics != "" {
				props["write.metadata.metrics.default"] = metrics
			}
			e := newEnvWith(t, fixture.TableOptions{FormatVersion: 2, Schema: &cur, Spec: migratedSpec(), Props: props})
			tbl := e.Load(t)
			rec := idRecord(t, &cur, ids(0, 10))
			defer rec.Release()
			df, err := datafile.WriteFile(context.Background(), tbl.IO, e.Path(t, tbl, "nulled.parquet"), &cur, props, rec)
			if err != nil {
				t.Fatal(err)
			}
			df.SpecID, df.Partition = 0, migratedPartitions()[0]
			err = verifyPartitionValues(context.Background(), tbl.IO, tbl.Metadata, &cur, []manifest.DataFile{df})
			if err == nil || !strings.Contains(err.Error(), "self-check") || !strings.Contains(err.Error(), "p_int") {
				t.Fatalf("verifyPartitionValues = %v, want a self-check refusal naming p_int", err)
			}
			// The same file with the values passes.
			good := idRecord(t, &cur, ids(0, 10))
			defer good.Release()
			good = withPartitionValues(t, good, migratedPartitions()[0])
			defer good.Release()
			df, err = datafile.WriteFile(context.Background(), tbl.IO, e.Path(t, tbl, "good.parquet"), &cur, props, good)
			if err != nil {
				t.Fatal(err)
			}
			df.SpecID, df.Partition = 0, migratedPartitions()[0]
			if err := verifyPartitionValues(context.Background(), tbl.IO, tbl.Metadata, &cur, []manifest.DataFile{df}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// withPartitionValues is rec (id, v, then the four partition columns)
// with the partition columns set to part.
func withPartitionValues(t *testing.T, rec arrow.RecordBatch, part []any) arrow.RecordBatch {
	t.Helper()
	n := int(rec.NumRows())
	cols := slices.Clone(rec.Columns())
	for i, v := range part {
		b := array.NewBuilder(memory.DefaultAllocator, rec.Column(2+i).DataType())
		for range n {
			switch x := v.(type) {
			case int32:
				if ib, ok := b.(*array.Int32Builder); ok {
					ib.Append(x)
				} else {
					b.(*array.Date32Builder).Append(arrow.Date32(x))
				}
			case string:
				b.(*array.StringBuilder).Append(x)
			case spec.Decimal:
				b.(*array.Decimal128Builder).Append(decimal128.FromBigInt(x.Unscaled))
			}
		}
		cols[2+i] = b.NewArray()
		defer cols[2+i].Release()
		b.Release()
	}
	return array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
}
