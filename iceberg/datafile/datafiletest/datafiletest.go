// Package datafiletest writes small Parquet data files for tests of
// packages that must not import Arrow themselves (scripts/check-imports
// keeps Arrow in iceberg/datafile and a few other rooms). It is for tests
// only and never reads or changes a table.
package datafiletest

import (
	"context"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// IDNameSchema is the schema WriteIDNames writes: id long (required),
// name string.
func IDNameSchema() spec.Schema {
	return spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "name", Type: spec.StringType{}},
	}}
}

// WriteIDNames writes one unpartitioned file of IDNameSchema rows, name
// "n<id>", and returns its manifest description.
func WriteIDNames(ctx context.Context, fio fileio.FileIO, path string, ids ...int64) (manifest.DataFile, error) {
	s := IDNameSchema()
	as, err := datafile.ArrowSchema(&s)
	if err != nil {
		return manifest.DataFile{}, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append("n" + strconv.FormatInt(id, 10))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	df, err := datafile.WriteFile(ctx, fio, path, &s, nil, rec)
	if err != nil {
		return manifest.DataFile{}, err
	}
	df.Partition = []any{}
	return df, nil
}
