package datafile

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/icectl/icectl/iceberg/spec"
)

// TestReadPositionDeletesLayouts reads position-delete files written by
// pqarrow in several layouts with ReadPositionDeletes (its column reader
// path when the layout allows it) and with the Arrow path, and wants the
// same rows from both, in file order.
func TestReadPositionDeletesLayouts(t *testing.T) {
	const n = 25000
	paths := make([]string, n)
	poss := make([]int64, n)
	for i := range n {
		// Runs of a path, some long and some of one row.
		paths[i] = fmt.Sprintf("s3://bucket/t/data/%05d-%s.parquet", i/(1+i%7*500), strings.Repeat("x", i%3))
		poss[i] = int64(i * 3)
	}
	field := func(name string, id int, t arrow.DataType, nullable bool) arrow.Field {
		f := arrow.Field{Name: name, Type: t, Nullable: nullable}
		if id > 0 {
			f.Metadata = arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})
		}
		return f
	}
	build := func(fields []arrow.Field, null int) arrow.RecordBatch {
		sc := arrow.NewSchema(fields, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		for j, f := range fields {
			for i := range n {
				switch {
				case i == null && f.Nullable:
					b.Field(j).AppendNull()
				case f.Name == "file_path":
					b.Field(j).(*array.StringBuilder).Append(paths[i])
				case f.Name == "pos" && f.Type.ID() == arrow.INT32:
					b.Field(j).(*array.Int32Builder).Append(int32(poss[i]))
				case f.Name == "pos":
					b.Field(j).(*array.Int64Builder).Append(poss[i])
				default:
					b.Field(j).(*array.Int64Builder).Append(int64(i))
				}
			}
		}
		return b.NewRecordBatch()
	}
	ids := []arrow.Field{field("file_path", spec.FieldIDFilePath, arrow.BinaryTypes.String, false), field("pos", spec.FieldIDPos, arrow.PrimitiveTypes.Int64, false)}
	small := []parquet.WriterProperty{parquet.WithDataPageSize(4 << 10), parquet.WithMaxRowGroupLength(7000), parquet.WithCompression(compress.Codecs.Zstd)}
	cases := []struct {
		name    string
		fields  []arrow.Field
		props   []parquet.WriterProperty
		null    int  // row whose nullable columns are null (-1: none)
		direct  bool // the column reader path takes it
		wantErr string
	}{
		{name: "field ids, dictionary, small pages and row groups", fields: ids, props: small, null: -1, direct: true},
		{name: "field ids, plain", fields: ids, props: append(small, parquet.WithDictionaryDefault(false)), null: -1, direct: true},
		{name: "data pages v2", fields: ids, props: append(small, parquet.WithDataPageVersion(parquet.DataPageV2)), null: -1, direct: true},
		{name: "no field ids: name mapping", fields: []arrow.Field{field("file_path", 0, arrow.BinaryTypes.String, false), field("pos", 0, arrow.PrimitiveTypes.Int64, false)},
			null: -1, direct: true},
		{name: "optional columns, a row column, pos first", fields: []arrow.Field{field("pos", spec.FieldIDPos, arrow.PrimitiveTypes.Int64, true),
			field("row", 7, arrow.PrimitiveTypes.Int64, true), field("file_path", spec.FieldIDFilePath, arrow.BinaryTypes.String, true)}, props: small, null: -1, direct: true},
		{name: "a null file_path", fields: []arrow.Field{field("file_path", spec.FieldIDFilePath, arrow.BinaryTypes.String, true), field("pos", spec.FieldIDPos, arrow.PrimitiveTypes.Int64, false)},
			props: small, null: 17777, direct: true, wantErr: "null file_path or pos"},
		{name: "a null pos", fields: []arrow.Field{field("file_path", spec.FieldIDFilePath, arrow.BinaryTypes.String, false), field("pos", spec.FieldIDPos, arrow.PrimitiveTypes.Int64, true)},
			null: 3, direct: true, wantErr: "null file_path or pos"},
		{name: "int pos: the Arrow path", fields: []arrow.Field{field("file_path", spec.FieldIDFilePath, arrow.BinaryTypes.String, false), field("pos", spec.FieldIDPos, arrow.PrimitiveTypes.Int32, false)},
			null: -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := build(tc.fields, tc.null)
			defer rec.Release()
			data := writePqarrow(t, rec, tc.props...)
			pf, err := openParquet(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			_, _, direct := positionDeleteColumns(pf)
			pf.Close()
			if direct != tc.direct {
				t.Fatalf("column reader path %v, want %v", direct, tc.direct)
			}
			read := func(f func(context.Context, []byte, func(string, int64) error) error) ([]posDelete, error) {
				var got []posDelete
				err := f(context.Background(), data, func(p string, pos int64) error {
					got = append(got, posDelete{strings.Clone(p), pos})
					return nil
				})
				return got, err
			}
			got, err := read(func(ctx context.Context, b []byte, fn func(string, int64) error) error {
				return ReadPositionDeletes(ctx, bytes.NewReader(b), int64(len(b)), fn)
			})
			want, werr := read(func(ctx context.Context, b []byte, fn func(string, int64) error) error {
				return readPositionDeletesArrow(ctx, bytes.NewReader(b), int64(len(b)), fn)
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				if werr == nil {
					t.Fatal("the Arrow path read it without error")
				}
				return
			}
			if err != nil || werr != nil {
				t.Fatalf("errors %v, %v", err, werr)
			}
			if len(got) != n || len(want) != n {
				t.Fatalf("read %d and %d rows, want %d", len(got), len(want), n)
			}
			for i := range got {
				if got[i] != want[i] || got[i] != (posDelete{paths[i], poss[i]}) {
					t.Fatalf("row %d: %v, Arrow path %v, written %v", i, got[i], want[i], posDelete{paths[i], poss[i]})
				}
			}
		})
	}
}
