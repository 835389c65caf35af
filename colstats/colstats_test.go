package colstats

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/iceberg/puffin/theta"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/testing/fixture"
)

func testSchema(id int, aType spec.Type) *spec.Schema {
	return &spec.Schema{ID: id, Fields: []spec.NestedField{
		{ID: 1, Name: "a", Type: aType},
		{ID: 2, Name: "s", Type: spec.StringType{}},
		{ID: 3, Name: "st", Type: &spec.StructType{Fields: []spec.NestedField{{ID: 4, Name: "x", Type: spec.IntType{}}}}},
		{ID: 5, Name: "g", Type: spec.GeometryType{}},
	}}
}

func TestColumns(t *testing.T) {
	s := testSchema(0, spec.IntType{})
	all, err := Columns(s, nil)
	if err != nil || len(all) != 2 || all[0].ID != 1 || all[1].ID != 2 {
		t.Fatalf("default columns %+v, %v; want a and s", all, err)
	}
	if cols, err := Columns(s, []string{"s", "a", "s"}); err != nil || len(cols) != 2 || cols[0].Name != "s" {
		t.Errorf("named columns %+v, %v", cols, err)
	}
	if cols, err := Columns(s, []string{"st.x"}); err != nil || len(cols) != 1 || cols[0].ID != 4 || cols[0].Name != "st.x" {
		t.Errorf("a struct's field: %+v, %v", cols, err)
	}
	for _, names := range [][]string{{"nope"}, {"st"}, {"st.y"}, {"g"}} {
		if _, err := Columns(s, names); !errors.Is(err, ErrColumn) {
			t.Errorf("%v: %v, want ErrColumn", names, err)
		}
	}
}

// TestEncode: the file holds a zstd theta blob per column with its ndv,
// then the carried blobs unchanged, and its registration says so.
func TestEncode(t *testing.T) {
	cols, _ := Columns(testSchema(0, spec.IntType{}), nil)
	var sks []*theta.Compact
	for n := range 2 {
		s := theta.NewDefault()
		for i := range 10 * (n + 1) {
			s.Update([]byte{byte(i)})
		}
		sks = append(sks, s.Result())
	}
	res := &Result{SnapshotID: 7, SequenceNumber: 3, Columns: cols, Sketches: sks}
	carried := []Blob{{Meta: puffin.BlobMetadata{Type: "other", Fields: []int32{9}, SnapshotID: 7, SequenceNumber: 3,
		Properties: map[string]string{"k": "v"}}, Payload: []byte("payload")}}
	data, f, err := Encode(res, carried, "mem://t/metadata/7-x.stats", "icectl test")
	if err != nil {
		t.Fatal(err)
	}
	if f.SnapshotID != 7 || f.FileSizeInBytes != int64(len(data)) || len(f.BlobMetadata) != 3 {
		t.Fatalf("registration %+v", f)
	}
	r, err := puffin.OpenReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if r.FooterSize() != f.FileFooterSizeInBytes {
		t.Errorf("footer %d, registered %d", r.FooterSize(), f.FileFooterSizeInBytes)
	}
	blobs := r.Metadata().Blobs
	for i, b := range blobs[:2] {
		p, err := r.ReadBlob(b)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"ndv": []string{"10", "20"}[i]}
		if b.Type != BlobType || b.CompressionCodec != puffin.CodecZstd || !slices.Equal(b.Fields, []int32{int32(cols[i].ID)}) ||
			b.SnapshotID != 7 || b.SequenceNumber != 3 || b.Properties["ndv"] != want["ndv"] || !bytes.Equal(p, sks[i].Bytes()) {
			t.Errorf("blob %d: %+v", i, b)
		}
	}
	if p, _ := r.ReadBlob(blobs[2]); blobs[2].Type != "other" || string(p) != "payload" || blobs[2].Properties["k"] != "v" {
		t.Errorf("carried blob %+v %q", blobs[2], p)
	}
	if m := Missing(f, 7, cols); len(m) != 0 {
		t.Errorf("missing %+v from the file's own registration", m)
	}
	if m := Missing(f, 8, cols); len(m) != 2 {
		t.Errorf("missing %d columns for another snapshot, want 2", len(m))
	}
}

// TestBase: the incremental computation starts from the newest ancestor
// with sketches of every column, only across appends, and only when the
// columns kept their types.
func TestBase(t *testing.T) {
	cols, _ := Columns(testSchema(1, spec.LongType{}), []string{"a"})
	sketched := func(id int64) spec.StatisticsFile {
		return spec.StatisticsFile{SnapshotID: id, StatisticsPath: "f", BlobMetadata: []spec.BlobMetadata{
			{Type: BlobType, SnapshotID: id, Fields: []int{1}}}}
	}
	snap := func(id int64, parent int64, op string, schema int) spec.Snapshot {
		s := spec.Snapshot{SnapshotID: id, Summary: map[string]string{"operation": op}, SchemaID: &schema}
		if parent != 0 {
			s.ParentSnapshotID = &parent
		}
		return s
	}
	md := func(stats []spec.StatisticsFile, snaps ...spec.Snapshot) *spec.TableMetadata {
		return &spec.TableMetadata{Schemas: []spec.Schema{*testSchema(0, spec.IntType{}), *testSchema(1, spec.LongType{})},
			CurrentSchemaID: 1, Snapshots: snaps, Statistics: stats}
	}
	for _, c := range []struct {
		name  string
		md    *spec.TableMetadata
		base  int64
		since int
	}{
		{"appends", md([]spec.StatisticsFile{sketched(1)}, snap(1, 0, "overwrite", 1), snap(2, 1, "append", 1), snap(3, 2, "append", 1)), 1, 2},
		{"newest", md([]spec.StatisticsFile{sketched(1), sketched(2)}, snap(1, 0, "append", 1), snap(2, 1, "append", 1), snap(3, 2, "append", 1)), 2, 1},
		{"delete since", md([]spec.StatisticsFile{sketched(1)}, snap(1, 0, "append", 1), snap(2, 1, "delete", 1), snap(3, 2, "append", 1)), 0, 0},
		{"promoted", md([]spec.StatisticsFile{sketched(1)}, snap(1, 0, "append", 0), snap(2, 1, "append", 1), snap(3, 2, "append", 1)), 0, 0},
		{"other snapshot's blob", md([]spec.StatisticsFile{{SnapshotID: 1, BlobMetadata: []spec.BlobMetadata{{Type: BlobType, SnapshotID: 9, Fields: []int{1}}}}},
			snap(1, 0, "append", 1), snap(3, 1, "append", 1)), 0, 0},
		{"none", md(nil, snap(1, 0, "append", 1), snap(3, 1, "append", 1)), 0, 0},
	} {
		s, _ := c.md.SnapshotByID(3)
		f, since := base(c.md, s, cols)
		got := int64(0)
		if f != nil {
			got = f.SnapshotID
		}
		if got != c.base || len(since) != c.since {
			t.Errorf("%s: base %d after %d snapshots, want %d after %d", c.name, got, len(since), c.base, c.since)
		}
	}
}

// TestNestedColumns: a field inside a struct is sketched by its dotted
// path, as Java's action takes it: the sketch is the very sketch of a
// top-level column holding the same values, a row whose struct is null
// counting as a null value (Spark's col("s.b") reads it so).
func TestNestedColumns(t *testing.T) {
	s := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "a", Type: spec.IntType{}},
		{ID: 3, Name: "s", Type: &spec.StructType{Fields: []spec.NestedField{
			{ID: 4, Name: "b", Type: spec.IntType{}},
			{ID: 5, Name: "c", Type: spec.StringType{}},
		}}},
		{ID: 6, Name: "c2", Type: spec.StringType{}},
		{ID: 7, Name: "l", Type: &spec.ListType{ElementID: 8, Element: spec.IntType{}}},
	}}
	c := fixture.NewSQLite(t)
	tb := c.Table(t, fixture.TableOptions{Schema: s})
	var rows [][]any
	for i := range int64(40) {
		var a, b, str any = int32(i % 7), int32(i % 7), fmt.Sprint("v", i%5)
		var st any = []any{b, str}
		switch i % 4 {
		case 1: // the struct null: both its fields read as null
			st, a, str = nil, nil, nil
		case 2: // a field null
			st, a = []any{nil, str}, nil
		}
		rows = append(rows, []any{i, a, st, str, nil})
	}
	tb.Append(t, nil, tb.WriteRows(t, nil, "f", nil, s, rows))
	tbl := tb.Load(t)
	cols, err := Columns(s, []string{"s.c", "a", "s.b", "c2"})
	if err != nil {
		t.Fatal(err)
	}
	if cols[0].ID != 5 || cols[2].ID != 4 {
		t.Fatalf("columns %+v", cols)
	}
	res, err := Compute(tb.Ctx, tbl.IO, tbl.Metadata, *tbl.Metadata.CurrentSnapshotID, cols, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 40 {
		t.Errorf("%d rows read, want 40", res.Rows)
	}
	if !bytes.Equal(res.Sketches[2].Bytes(), res.Sketches[1].Bytes()) || res.Sketches[2].Estimate() != 7 {
		t.Errorf("s.b: estimate %v, a: %v; want the same sketch of 7 values", res.Sketches[2].Estimate(), res.Sketches[1].Estimate())
	}
	if !bytes.Equal(res.Sketches[0].Bytes(), res.Sketches[3].Bytes()) || res.Sketches[0].Estimate() != 5 {
		t.Errorf("s.c: estimate %v, c2: %v; want the same sketch of 5 values", res.Sketches[0].Estimate(), res.Sketches[3].Estimate())
	}
	for _, bad := range []string{"s", "l.element", "s.nope", "l"} {
		if _, err := Columns(s, []string{bad}); !errors.Is(err, ErrColumn) {
			t.Errorf("%s: %v, want ErrColumn", bad, err)
		}
	}
}
