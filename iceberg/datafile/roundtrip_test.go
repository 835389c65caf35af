package datafile

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

func allTypesSchema() *spec.Schema {
	return &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "b", Type: spec.BooleanType{}},
		{ID: 3, Name: "i", Type: spec.IntType{}},
		{ID: 4, Name: "f", Type: spec.FloatType{}},
		{ID: 5, Name: "d", Type: spec.DoubleType{}},
		{ID: 6, Name: "date", Type: spec.DateType{}},
		{ID: 7, Name: "time", Type: spec.TimeType{}},
		{ID: 8, Name: "ts", Type: spec.TimestampType{}},
		{ID: 9, Name: "tstz", Type: spec.TimestampTzType{}},
		{ID: 10, Name: "ts_ns", Type: spec.TimestampNsType{}},
		{ID: 11, Name: "tstz_ns", Type: spec.TimestampTzNsType{}},
		{ID: 12, Name: "s", Type: spec.StringType{}},
		{ID: 13, Name: "u", Type: spec.UUIDType{}},
		{ID: 14, Name: "fx", Type: spec.FixedType{Length: 5}},
		{ID: 15, Name: "bin", Type: spec.BinaryType{}},
		{ID: 16, Name: "dec9", Type: spec.DecimalType{Precision: 9, Scale: 2}},
		{ID: 17, Name: "dec18", Type: spec.DecimalType{Precision: 18, Scale: 4}},
		{ID: 18, Name: "dec38", Type: spec.DecimalType{Precision: 38, Scale: 10}},
		{ID: 19, Name: "geom", Type: spec.GeometryType{}},
		{ID: 20, Name: "nothing", Type: spec.UnknownType{}},
		{ID: 21, Name: "st", Type: &spec.StructType{Fields: []spec.NestedField{
			{ID: 22, Name: "x", Type: spec.IntType{}, Required: true},
			{ID: 23, Name: "y", Type: spec.StringType{}},
			{ID: 24, Name: "inner", Type: &spec.StructType{Fields: []spec.NestedField{
				{ID: 25, Name: "z", Type: spec.DoubleType{}},
			}}},
		}}},
		{ID: 26, Name: "lst", Type: &spec.ListType{ElementID: 27, Element: spec.LongType{}}},
		{ID: 28, Name: "lst_req", Type: &spec.ListType{ElementID: 29, Element: spec.StringType{}, ElementRequired: true}, Required: true},
		{ID: 30, Name: "m", Type: &spec.MapType{KeyID: 31, Key: spec.StringType{}, ValueID: 32, Value: spec.IntType{}}},
		{ID: 33, Name: "lst_st", Type: &spec.ListType{ElementID: 34, Element: &spec.StructType{Fields: []spec.NestedField{
			{ID: 35, Name: "a", Type: spec.UUIDType{}},
			{ID: 36, Name: "b", Type: &spec.MapType{KeyID: 37, Key: spec.IntType{}, ValueID: 38, Value: spec.DecimalType{Precision: 20, Scale: 3}, ValueRequired: true}},
		}}}},
	}}
}

// TestRoundTripAllTypes writes every primitive type and nested
// struct/list/map, with nulls, in several batches and row groups, and reads
// it back with a different batch size.
func TestRoundTripAllTypes(t *testing.T) {
	s := allTypesSchema()
	var batches []arrow.RecordBatch
	for k := range 4 {
		batches = append(batches, genBatch(t, s, 2500, k))
	}
	defer release(batches)
	data, _ := writeParquet(t, s, map[string]string{PropRowGroupSizeBytes: "65536"}, batches...)

	info, err := InspectParquet(bytesReaderAt(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(info.RowGroups) < 2 {
		t.Fatalf("want several row groups, got %d", len(info.RowGroups))
	}

	got := readParquet(t, data, ReadOptions{Schema: s, BatchSize: 999})
	defer release(got)
	compareRows(t, rowKeys(t, got...), rowKeys(t, batches...))
	if len(got[0].Schema().Fields()) != len(s.Fields)-1 {
		t.Fatalf("unknown column must be left out: got %d columns", len(got[0].Schema().Fields()))
	}
}

// WriteFile makes the file visible only when it succeeds and describes it
// with its real size and the Writer's metrics.
func TestWriteFile(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewMem()
	s := transcodeSchema()
	b := genBatch(t, s, 2000, 4)
	defer b.Release()
	df, err := WriteFile(ctx, fio, "mem://b/t/f.parquet", s, nil, b, b)
	if err != nil {
		t.Fatal(err)
	}
	data, err := fileio.ReadFile(ctx, fio, "mem://b/t/f.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if df.FileSizeInBytes != int64(len(data)) || df.RecordCount != 4000 || df.FilePath != "mem://b/t/f.parquet" ||
		df.Content != manifest.ContentData || df.FileFormat != "PARQUET" || len(df.ValueCounts) == 0 || len(df.SplitOffsets) == 0 {
		t.Errorf("data file %+v for a file of %d bytes", df, len(data))
	}
	bad := genBatch(t, &spec.Schema{Fields: []spec.NestedField{{ID: 99, Name: "x", Type: spec.IntType{}}}}, 3, 1)
	defer bad.Release()
	if _, err := WriteFile(ctx, fio, "mem://b/t/bad.parquet", s, nil, bad); err == nil {
		t.Error("a batch of another schema was written")
	}
	if _, err := fio.Open(ctx, "mem://b/t/bad.parquet"); err == nil {
		t.Error("a failed write left a file")
	}
}
