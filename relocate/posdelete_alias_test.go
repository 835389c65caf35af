package relocate

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/icectl/icectl/iceberg/spec"
)

// TestReadPositionDeletesKeepsPaths reads a plain-encoded position-delete
// file of many pages: datafile.ReadPositionDeletes hands each path as it
// lies in its page, which the next page overwrites, so the rewriter must
// copy the paths it keeps (before it did, most of 2,500 paths read back
// changed and a path's rows went under several ids).
func TestReadPositionDeletesKeepsPaths(t *testing.T) {
	const n, perPath = 25000, 10
	md := func(id int) arrow.Metadata {
		return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})
	}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "file_path", Type: arrow.BinaryTypes.String, Metadata: md(spec.FieldIDFilePath)},
		{Name: "pos", Type: arrow.PrimitiveTypes.Int64, Metadata: md(spec.FieldIDPos)},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("s3://src/t/data/%06d.parquet", i/perPath))
		b.Field(1).(*array.Int64Builder).Append(int64(i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithDataPageSize(4<<10), parquet.WithDictionaryDefault(false), parquet.WithCompression(compress.Codecs.Zstd))
	w, err := pqarrow.NewFileWriter(sc, &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := &rewriter{x: prefixes{src: "s3://src/t/", dst: "s3://dst/t/"}}
	got, err := r.readPositionDeletes(context.Background(), bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.paths) != n/perPath || len(got.rows) != n {
		t.Fatalf("%d paths and %d rows, want %d and %d", len(got.paths), len(got.rows), n/perPath, n)
	}
	for i, row := range got.rows {
		want := fmt.Sprintf("s3://dst/t/data/%06d.parquet", i/perPath)
		if p := got.paths[row.path]; p != want || row.pos != int64(i) {
			t.Fatalf("row %d: %s %d, want %s %d", i, p, row.pos, want, i)
		}
	}
}
