package datafile

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/spec"
)

var idSchema = &spec.Schema{Fields: []spec.NestedField{
	{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
	{ID: 2, Name: "pad", Type: spec.StringType{}},
}}

// idFile writes rows whose id equals their position, in small row groups,
// with the lineage columns stored when lineage is non-nil: lineage(i)
// returns the stored _row_id and sequence number, or ok=false for nulls.
func idFile(t *testing.T, n int, lineage func(i int) (rowID, seq int64, ok bool)) []byte {
	t.Helper()
	s := idSchema
	if lineage != nil {
		s = SchemaWithLineage(idSchema)
	}
	sc, err := ArrowSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	var batches []arrow.RecordBatch
	const batch = 3000
	for off := 0; off < n; off += batch {
		m := min(batch, n-off)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for i := off; i < off+m; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("padding %d", i*7919%100003))
			if lineage != nil {
				r, q, ok := lineage(i)
				if ok {
					b.Field(2).(*array.Int64Builder).Append(r)
					b.Field(3).(*array.Int64Builder).Append(q)
				} else {
					b.Field(2).AppendNull()
					b.Field(3).AppendNull()
				}
			}
		}
		batches = append(batches, b.NewRecordBatch())
		b.Release()
	}
	defer release(batches)
	data, _ := writeParquet(t, s, map[string]string{PropRowGroupSizeBytes: "16384"}, batches...)
	return data
}

func int64Col(t *testing.T, batches []arrow.RecordBatch, name string) (vals []int64, valid []bool) {
	t.Helper()
	for _, b := range batches {
		idx := b.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("no column %s in %s", name, b.Schema())
		}
		col := b.Column(idx[0]).(*array.Int64)
		for i := range col.Len() {
			vals = append(vals, col.Value(i))
			valid = append(valid, col.IsValid(i))
		}
	}
	return vals, valid
}

func TestPosAcrossRowGroupsAndBatches(t *testing.T) {
	const n = 20000
	data := idFile(t, n, nil)
	info, err := InspectParquet(bytesReaderAt(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(info.RowGroups) < 3 {
		t.Fatalf("want several row groups, got %d", len(info.RowGroups))
	}
	got := readParquet(t, data, ReadOptions{Schema: idSchema, WithPos: true, BatchSize: 777})
	defer release(got)
	ids, _ := int64Col(t, got, "id")
	pos, valid := int64Col(t, got, PosColumnName)
	if len(pos) != n {
		t.Fatalf("read %d rows, want %d", len(pos), n)
	}
	for i := range pos {
		if !valid[i] || pos[i] != int64(i) || ids[i] != int64(i) {
			t.Fatalf("row %d: _pos %d id %d", i, pos[i], ids[i])
		}
	}
	if f := got[0].Schema().Field(2); f.Name != "_pos" || f.Metadata.Values()[0] != "2147483645" {
		t.Fatalf("_pos field %v", f)
	}

	// Only metadata columns: no stored column is read at all.
	onlyPos := readParquet(t, data, ReadOptions{Schema: &spec.Schema{}, WithPos: true, BatchSize: 4096})
	defer release(onlyPos)
	pos, _ = int64Col(t, onlyPos, PosColumnName)
	if len(pos) != n || pos[n-1] != n-1 {
		t.Fatalf("pos-only read: %d rows", len(pos))
	}
}

func TestLineageInheritedWhenNotStored(t *testing.T) {
	data := idFile(t, 5000, nil)
	first := int64(1000)
	got := readParquet(t, data, ReadOptions{Schema: idSchema, WithLineage: true, FirstRowID: &first, DataSequenceNumber: 7, BatchSize: 1024})
	defer release(got)
	rowIDs, v1 := int64Col(t, got, spec.RowIDColumnName)
	seqs, v2 := int64Col(t, got, spec.LastUpdatedSequenceNumberColumn)
	for i := range rowIDs {
		if !v1[i] || !v2[i] || rowIDs[i] != 1000+int64(i) || seqs[i] != 7 {
			t.Fatalf("row %d: _row_id %d seq %d", i, rowIDs[i], seqs[i])
		}
	}
}

func TestLineageStoredMixedNulls(t *testing.T) {
	const n = 9000
	stored := func(i int) (int64, int64, bool) { return 500_000 + int64(i)*3, int64(i % 5), i%3 != 0 }
	data := idFile(t, n, stored)
	first := int64(10)
	got := readParquet(t, data, ReadOptions{Schema: idSchema, WithLineage: true, FirstRowID: &first, DataSequenceNumber: 42, BatchSize: 2048})
	defer release(got)
	rowIDs, _ := int64Col(t, got, spec.RowIDColumnName)
	seqs, _ := int64Col(t, got, spec.LastUpdatedSequenceNumberColumn)
	if len(rowIDs) != n {
		t.Fatalf("read %d rows", len(rowIDs))
	}
	for i := range n {
		r, q, ok := stored(i)
		if !ok {
			r, q = 10+int64(i), 42
		}
		if rowIDs[i] != r || seqs[i] != q {
			t.Fatalf("row %d: _row_id %d seq %d, want %d %d", i, rowIDs[i], seqs[i], r, q)
		}
	}
	// A schema that names the lineage columns gets them in place, once.
	withCols := readParquet(t, data, ReadOptions{Schema: SchemaWithLineage(idSchema), WithLineage: true, FirstRowID: &first, DataSequenceNumber: 42})
	defer release(withCols)
	if nc := withCols[0].NumCols(); nc != 4 {
		t.Fatalf("got %d columns, want 4", nc)
	}
	again, _ := int64Col(t, withCols, spec.RowIDColumnName)
	for i := range again {
		if again[i] != rowIDs[i] {
			t.Fatalf("row %d: %d != %d", i, again[i], rowIDs[i])
		}
	}
}

func TestLineageNullWithoutFirstRowID(t *testing.T) {
	for name, data := range map[string][]byte{
		"stored":     idFile(t, 100, func(i int) (int64, int64, bool) { return int64(i), 1, true }),
		"not stored": idFile(t, 100, nil),
	} {
		got := readParquet(t, data, ReadOptions{Schema: idSchema, WithLineage: true, DataSequenceNumber: 3})
		_, v1 := int64Col(t, got, spec.RowIDColumnName)
		_, v2 := int64Col(t, got, spec.LastUpdatedSequenceNumberColumn)
		for i := range v1 {
			if v1[i] || v2[i] {
				t.Fatalf("%s: row %d has lineage values, want null (no first_row_id)", name, i)
			}
		}
		release(got)
	}
}
