package table

import (
	"math"
	"math/big"
	"testing"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// TestCheckPartitionMetrics: PartitionChecker.Metrics, the metrics judgment of one identity field,
// case by case: all-null and partly null columns, bounds that differ,
// truncated string bounds that still fit, a value widened by a type
// promotion, a null partition value, and the metrics that do not decide
// (none: a file that may not store the column; counts without bounds).
func TestCheckPartitionMetrics(t *testing.T) {
	enc := func(ty spec.Type, v any) []byte {
		b, err := spec.EncodeValue(ty, v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	dec := spec.Decimal{Unscaled: big.NewInt(1234), Scale: 2}
	cases := []struct {
		name      string
		ty        spec.Type
		value     any
		df        manifest.DataFile
		kind      string // "" for no problem
		rows      int64
		undecided bool
	}{
		{name: "all null", ty: spec.IntType{}, value: int32(7),
			df: manifest.DataFile{ValueCounts: map[int]int64{1: 10}, NullValueCounts: map[int]int64{1: 10}}, kind: PartitionAllNull, rows: 10},
		{name: "null count alone", ty: spec.StringType{}, value: "eu",
			df: manifest.DataFile{NullValueCounts: map[int]int64{1: 10}}, kind: PartitionAllNull, rows: 10},
		{name: "some null", ty: spec.LongType{}, value: int64(7),
			df: manifest.DataFile{NullValueCounts: map[int]int64{1: 3}, LowerBounds: map[int][]byte{1: enc(spec.LongType{}, int64(7))},
				UpperBounds: map[int][]byte{1: enc(spec.LongType{}, int64(7))}}, kind: PartitionSomeNull, rows: 3},
		{name: "healthy", ty: spec.LongType{}, value: int64(7),
			df: manifest.DataFile{NullValueCounts: map[int]int64{1: 0}, LowerBounds: map[int][]byte{1: enc(spec.LongType{}, int64(7))},
				UpperBounds: map[int][]byte{1: enc(spec.LongType{}, int64(7))}}},
		{name: "bounds differ", ty: spec.DateType{}, value: int32(19000),
			df: manifest.DataFile{NullValueCounts: map[int]int64{1: 0}, LowerBounds: map[int][]byte{1: enc(spec.DateType{}, int32(19000))},
				UpperBounds: map[int][]byte{1: enc(spec.DateType{}, int32(19001))}}, kind: PartitionValuesDiffer, rows: 10},
		{name: "decimal", ty: spec.DecimalType{Precision: 9, Scale: 2}, value: dec,
			df: manifest.DataFile{NullValueCounts: map[int]int64{1: 0}, LowerBounds: map[int][]byte{1: enc(spec.DecimalType{Precision: 9, Scale: 2}, dec)},
				UpperBounds: map[int][]byte{1: enc(spec.DecimalType{Precision: 9, Scale: 2}, dec)}}},
		{name: "promoted int to long", ty: spec.LongType{}, value: int32(7),
			df: manifest.DataFile{NullValueCounts: map[int]int64{1: 0}, LowerBounds: map[int][]byte{1: enc(spec.IntType{}, int32(7))},
				UpperBounds: map[int][]byte{1: enc(spec.LongType{}, int64(7))}}},
		{name: "truncated string bounds fit", ty: spec.StringType{}, value: "abcdefghijklmnopqrstuvwxyz",
			df: manifest.DataFile{NullValueCounts: map[int]int64{1: 0}, LowerBounds: map[int][]byte{1: []byte("abcdefghijklmnop")},
				UpperBounds: map[int][]byte{1: []byte("abcdefghijklmnoq")}}},
		{name: "truncated upper bound of a multibyte value", ty: spec.StringType{}, value: "ab\u00e9z",
			df: manifest.DataFile{NullValueCounts: map[int]int64{1: 0}, LowerBounds: map[int][]byte{1: []byte("ab")},
				UpperBounds: map[int][]byte{1: []byte("ab\u00ea")}}},
		{name: "string lower bound no prefix", ty: spec.StringType{}, value: "eu",
			df: manifest.DataFile{NullValueCounts: map[int]int64{1: 0}, LowerBounds: map[int][]byte{1: []byte("ea")},
				UpperBounds: map[int][]byte{1: []byte("eu")}}, kind: PartitionValuesDiffer, rows: 10},
		{name: "string upper bound below", ty: spec.StringType{}, value: "eu",
			df: manifest.DataFile{NullValueCounts: map[int]int64{1: 0}, LowerBounds: map[int][]byte{1: []byte("e")},
				UpperBounds: map[int][]byte{1: []byte("et")}}, kind: PartitionValuesDiffer, rows: 10},
		{name: "string upper bound of another prefix", ty: spec.StringType{}, value: "eu",
			df: manifest.DataFile{NullValueCounts: map[int]int64{1: 0}, LowerBounds: map[int][]byte{1: []byte("e")},
				UpperBounds: map[int][]byte{1: []byte("fa")}}, kind: PartitionValuesDiffer, rows: 10},
		{name: "null partition, values stored", ty: spec.IntType{}, value: nil,
			df: manifest.DataFile{NullValueCounts: map[int]int64{1: 4}}, kind: PartitionValuesDiffer, rows: 6},
		{name: "null partition, all null", ty: spec.IntType{}, value: nil,
			df: manifest.DataFile{NullValueCounts: map[int]int64{1: 10}}},
		{name: "no metrics: maybe not stored", ty: spec.IntType{}, value: int32(7),
			df: manifest.DataFile{ValueCounts: map[int]int64{2: 10}}, undecided: true},
		{name: "counts without bounds", ty: spec.IntType{}, value: int32(7),
			df: manifest.DataFile{ValueCounts: map[int]int64{1: 10}, NullValueCounts: map[int]int64{1: 0}}, undecided: true},
		{name: "NaN partition", ty: spec.DoubleType{}, value: math.NaN(),
			df: manifest.DataFile{NullValueCounts: map[int]int64{1: 0}, NaNValueCounts: map[int]int64{1: 10}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			md := &spec.TableMetadata{FormatVersion: 2,
				Schemas: []spec.Schema{{Fields: []spec.NestedField{{ID: 1, Name: "p", Type: c.ty}, {ID: 2, Name: "x", Type: spec.IntType{}}}}},
				PartitionSpecs: []spec.PartitionSpec{{Fields: []spec.PartitionField{
					{SourceID: 1, FieldID: 1000, Name: "p", Transform: spec.Transform{Kind: spec.TransformIdentity}},
					{SourceID: 2, FieldID: 1001, Name: "x_bucket", Transform: spec.ParseTransform("bucket[4]")},
				}}}}
			df := c.df
			df.FilePath, df.RecordCount, df.Partition = "f.parquet", 10, []any{c.value, int32(1)}
			ps, undecided, err := NewPartitionChecker(md).Metrics(&df)
			if err != nil {
				t.Fatal(err)
			}
			if (len(undecided) == 1) != c.undecided || len(undecided) > 1 {
				t.Errorf("undecided %v, want %v", undecided, c.undecided)
			}
			if c.kind == "" {
				if len(ps) != 0 {
					t.Errorf("problems %+v, want none", ps)
				}
				return
			}
			if len(ps) != 1 || ps[0].Kind != c.kind || ps[0].Rows != c.rows || ps[0].Field != "p" || ps[0].Column != "p" {
				t.Errorf("problems %+v, want one %s of %d rows", ps, c.kind, c.rows)
			}
		})
	}
}
