package datafile

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/icectl/icectl/iceberg/spec"
)

// decimalBatch is n rows of s (decimal columns and an id) whose decimals
// span their precision: the largest and smallest values, zero, small
// negatives and nulls every seventh row.
func decimalBatch(t *testing.T, s *spec.Schema, n int, r *rand.Rand) arrow.RecordBatch {
	t.Helper()
	sc, err := ArrowSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	cols := make([]arrow.Array, len(s.Fields))
	for i, f := range s.Fields {
		b := array.NewBuilder(memory.DefaultAllocator, sc.Field(i).Type)
		dt, isDec := f.Type.(spec.DecimalType)
		for row := range n {
			switch {
			case !isDec:
				b.(*array.Int64Builder).Append(int64(row))
			case !f.Required && row%7 == 3:
				b.AppendNull()
			default:
				top := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dt.Precision)), nil)
				top.Sub(top, big.NewInt(1)) // the largest value of the precision
				var v *big.Int
				switch row % 5 {
				case 0:
					v = top
				case 1:
					v = new(big.Int).Neg(top)
				case 2:
					v = big.NewInt(0)
				case 3:
					v = new(big.Int).Mod(big.NewInt(r.Int64N(1000)), top)
					v.Neg(v)
				default:
					v = new(big.Int).Mul(big.NewInt(r.Int64()), big.NewInt(r.Int64()))
					v.Mod(v, top)
					if r.IntN(2) == 0 {
						v.Neg(v)
					}
				}
				b.(*array.Decimal128Builder).Append(decimal128.FromBigInt(v))
			}
		}
		cols[i] = b.NewArray()
		b.Release()
		defer cols[i].Release()
	}
	return array.NewRecordBatch(sc, cols, int64(n))
}

// writeFixedDecimals writes b as writers that store every decimal as
// fixed_len_byte_array do (pqarrow's default, Spark's legacy mode).
func writeFixedDecimals(t *testing.T, b arrow.RecordBatch) []byte {
	t.Helper()
	data := writePqarrow(t, b, parquet.WithMaxRowGroupLength(700), parquet.WithDataPageSize(1024))
	pf := openTc(t, data)
	for i := range pf.MetaData().Schema.NumColumns() {
		if c := pf.MetaData().Schema.Column(i); c.Name() != "id" && c.PhysicalType() != parquet.Types.FixedLenByteArray {
			t.Fatalf("column %s is %s, the test wants fixed_len_byte_array", c.Name(), c.PhysicalType())
		}
	}
	return data
}

// TestTranscodeDecimals: decimals of each physical form the Writer writes
// (int32 to precision 9, int64 to 18, fixed_len_byte_array above), read
// from files that stored them that way, from files that stored them all as
// fixed_len_byte_array, and from files written before a precision
// promotion, transcode to the values and metrics the Arrow path writes;
// the output's physical types are the spec's.
func TestTranscodeDecimals(t *testing.T) {
	cur := &spec.Schema{ID: 1, Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "d9", Type: spec.DecimalType{Precision: 9, Scale: 2}},
		{ID: 3, Name: "d18", Type: spec.DecimalType{Precision: 18, Scale: 4}},
		{ID: 4, Name: "d38", Type: spec.DecimalType{Precision: 38, Scale: 10}},
		{ID: 5, Name: "d18r", Type: spec.DecimalType{Precision: 18, Scale: 0}, Required: true},
		{ID: 6, Name: "d12", Type: spec.DecimalType{Precision: 12, Scale: 2}},
		{ID: 7, Name: "d20", Type: spec.DecimalType{Precision: 20, Scale: 3}},
		{ID: 8, Name: "d1", Type: spec.DecimalType{Precision: 1, Scale: 0}},
	}}
	// Before d12 was promoted from decimal(7,2) and d20 from decimal(15,3).
	old := &spec.Schema{Fields: []spec.NestedField{
		cur.Fields[0], cur.Fields[1], cur.Fields[2], cur.Fields[3], cur.Fields[4],
		{ID: 6, Name: "d12", Type: spec.DecimalType{Precision: 7, Scale: 2}},
		{ID: 7, Name: "d20", Type: spec.DecimalType{Precision: 15, Scale: 3}},
		cur.Fields[7],
	}}
	r := rand.New(rand.NewPCG(5, 6))
	small := map[string]string{PropRowGroupSizeBytes: "8192", PropPageSizeBytes: "1024"}
	var srcs []tcSource
	for k, form := range []string{"writer", "fixed", "old writer", "old fixed"} {
		s := cur
		if form == "old writer" || form == "old fixed" {
			s = old
		}
		rows := 2000 + 300*k
		b := decimalBatch(t, s, rows, r)
		var data []byte
		if form == "fixed" || form == "old fixed" {
			data = writeFixedDecimals(t, b)
		} else {
			data, _ = writeParquet(t, s, small, b)
		}
		b.Release()
		srcs = append(srcs, tcSource{data: data, deleted: randomDeletes(r, rows, 0.1), dataSeq: int64(k + 1)})
	}
	got, want := compareWithAndWithoutLineage(t, cur, srcs)
	{
		wantPhys := map[string]parquet.Type{"d9": parquet.Types.Int32, "d18": parquet.Types.Int64, "d38": parquet.Types.FixedLenByteArray,
			"d18r": parquet.Types.Int64, "d12": parquet.Types.Int64, "d20": parquet.Types.FixedLenByteArray, "d1": parquet.Types.Int32}
		wsc := openTc(t, want).MetaData().Schema
		gsc := openTc(t, got).MetaData().Schema
		for i := range gsc.NumColumns() {
			g, w := gsc.Column(i), wsc.Column(i)
			if p, ok := wantPhys[g.Name()]; ok && g.PhysicalType() != p {
				t.Errorf("column %s written as %s, want %s", g.Name(), g.PhysicalType(), p)
			}
			if g.PhysicalType() != w.PhysicalType() || g.TypeLength() != w.TypeLength() || !sameLogical(g.LogicalType(), w.LogicalType()) {
				t.Errorf("column %s is %s(%d) %s, the Writer's %s(%d) %s", g.Name(), g.PhysicalType(), g.TypeLength(), g.LogicalType(),
					w.PhysicalType(), w.TypeLength(), w.LogicalType())
			}
		}
	}
}

// TestTranscodeDecimalRefused: a decimal of another scale or a larger
// precision than the output's is refused before anything is written.
func TestTranscodeDecimalRefused(t *testing.T) {
	out := &spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "d", Type: spec.DecimalType{Precision: 9, Scale: 2}}}}
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range []spec.DecimalType{{Precision: 9, Scale: 3}, {Precision: 10, Scale: 2}} {
		in := &spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "d", Type: typ}}}
		b := decimalBatch(t, in, 20, r)
		src, _ := writeParquet(t, in, nil, b)
		b.Release()
		var buf bytes.Buffer
		tc, err := NewTranscoder(&buf, out, nil)
		if err != nil {
			t.Fatal(err)
		}
		before := buf.Len()
		if _, err := tc.WriteRowGroup(context.Background(), []TranscodeInput{{Path: "x", File: openTc(t, src)}}); !errors.Is(err, ErrNotTranscodable) {
			t.Errorf("%s into %s: got %v, want ErrNotTranscodable", typ, out.Fields[0].Type, err)
		}
		if buf.Len() != before {
			t.Errorf("%s: a refused input wrote %d bytes", typ, buf.Len()-before)
		}
	}
}

func TestDecimalBytes(t *testing.T) {
	for _, v := range []string{"0", "1", "-1", "127", "128", "-128", "-129", "99999999999999999999999999999999999999", "-99999999999999999999999999999999999999"} {
		x, _ := new(big.Int).SetString(v, 10)
		n := decimal128.FromBigInt(x)
		for _, size := range []int{16, 17, 20} {
			b := make([]byte, size)
			putDecimalBytes(b[size-16:], n)
			if x.Sign() < 0 {
				for i := range size - 16 {
					b[i] = 0xff
				}
			}
			got, err := decimalFromBytes(b)
			if err != nil || got != n {
				t.Errorf("%s in %d bytes: got %s, %v", v, size, got.BigInt(), err)
			}
		}
	}
	if _, err := decimalFromBytes(append([]byte{0x01}, make([]byte, 16)...)); err == nil {
		t.Error("a 17-byte value beyond 128 bits: no error")
	}
	if _, err := decimalFromBytes(nil); err == nil {
		t.Error("an empty value: no error")
	}
}
