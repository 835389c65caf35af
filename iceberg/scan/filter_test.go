package scan

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// filterTestBatch is n rows of every column kind scan reads, flat and
// nested, with nulls.
func filterTestBatch(t *testing.T, n int) arrow.RecordBatch {
	t.Helper()
	types := []arrow.DataType{
		arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Date32,
		arrow.FixedWidthTypes.Time64us, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
		&arrow.Decimal128Type{Precision: 10, Scale: 2}, arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString,
		arrow.BinaryTypes.Binary, &arrow.FixedSizeBinaryType{ByteWidth: 4},
		arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}),
		arrow.ListOf(arrow.PrimitiveTypes.Int32),
		arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64),
	}
	var fields []arrow.Field
	for i, dt := range types {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("c%d", i), Type: dt, Nullable: true})
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i := range n {
		for j, fb := range b.Fields() {
			if (i+j)%11 == 0 {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.BooleanBuilder:
				fb.Append(i%3 == 0)
			case *array.Int32Builder:
				fb.Append(int32(i))
			case *array.Int64Builder:
				fb.Append(int64(i) << 20)
			case *array.Float32Builder:
				fb.Append(float32(i) / 4)
			case *array.Float64Builder:
				fb.Append(float64(i) / 3)
			case *array.Date32Builder:
				fb.Append(arrow.Date32(i))
			case *array.Time64Builder:
				fb.Append(arrow.Time64(i * 1000))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(i * 1000))
			case *array.Decimal128Builder:
				fb.Append(decimal128.FromI64(int64(i * 7)))
			case *array.StringBuilder:
				fb.Append(strings.Repeat("s", i%5) + fmt.Sprint(i))
			case *array.LargeStringBuilder:
				fb.Append("L" + fmt.Sprint(i))
			case *array.BinaryBuilder:
				fb.Append([]byte{byte(i), byte(i >> 8)})
			case *array.FixedSizeBinaryBuilder:
				fb.Append(binary.BigEndian.AppendUint32(nil, uint32(i)))
			case *array.StructBuilder:
				fb.Append(true)
				fb.FieldBuilder(0).(*array.Int64Builder).Append(int64(-i))
				fb.FieldBuilder(1).(*array.StringBuilder).Append(fmt.Sprint("b", i))
			case *array.ListBuilder:
				fb.Append(true)
				for k := range i % 4 {
					fb.ValueBuilder().(*array.Int32Builder).Append(int32(i + k))
				}
			case *array.MapBuilder:
				fb.Append(true)
				for k := range i % 3 {
					fb.KeyBuilder().(*array.StringBuilder).Append(fmt.Sprint("k", k))
					fb.ItemBuilder().(*array.Int64Builder).Append(int64(i * k))
				}
			default:
				t.Fatalf("no value for %T", fb)
			}
		}
	}
	return b.NewRecordBatch()
}

// rowByRow is the reference selection: each kept row sliced on its own.
func rowByRow(t *testing.T, a arrow.Array, keep func(i int) bool) arrow.Array {
	t.Helper()
	var parts []arrow.Array
	for i := range a.Len() {
		if keep(i) {
			parts = append(parts, array.NewSlice(a, int64(i), int64(i+1)))
		}
	}
	out, err := array.Concatenate(parts, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		p.Release()
	}
	return out
}

// TestFilterKeepsExactlyTheSurvivingRows checks every column kind through
// each way the filter copies rows: whole batch, one run, a few runs, and
// scattered deletes (many runs, the filter kernel for flat columns), with
// position deletes outside the batch's range and an equality delete.
func TestFilterKeepsExactlyTheSurvivingRows(t *testing.T) {
	const n, pos = 300, 1000 // the batch holds file positions [1000, 1300)
	whole := filterTestBatch(t, n+10)
	defer whole.Release()
	// Readers hand out columns at an offset into their buffers too.
	for _, off := range []int64{0, 7} {
		rec := whole.NewSlice(off, off+n)
		t.Run(fmt.Sprintf("offset %d", off), func(t *testing.T) { testFilter(t, rec, n, pos) })
		rec.Release()
	}
}

func testFilter(t *testing.T, rec arrow.RecordBatch, n int, pos int64) {
	eqDeleted := map[int64]bool{40 << 20: true, 41 << 20: true, 250 << 20: true} // column c2 values
	for _, c := range []struct {
		name   string
		del    func(p int64) bool // by file position
		eq     bool
		minRun int
	}{
		{"nothing deleted", func(int64) bool { return false }, false, 1},
		{"one run", func(p int64) bool { return p < pos+100 }, false, 1},
		{"few runs", func(p int64) bool { return (p-pos)%100 == 50 }, false, 3},
		{"every tenth", func(p int64) bool { return p%10 == 0 }, false, maxSliceRuns + 1},
		{"every tenth and equality", func(p int64) bool { return p%10 == 0 }, true, maxSliceRuns + 1},
		{"all", func(int64) bool { return true }, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			bm := roaring64.New()
			for p := int64(0); p < 2*pos; p++ { // also before and after the batch
				if c.del(p) {
					bm.Add(uint64(p))
				}
			}
			f := &filter{deleted: bm}
			if c.eq {
				set := map[string]struct{}{}
				for v := range eqDeleted {
					k, _ := appendKey(nil, mustInt64(t, v), 0)
					set[string(k)] = struct{}{}
				}
				f.groups = []eqGroup{{cols: []int{2}, sets: []map[string]struct{}{set}}}
			}
			keep := func(i int) bool {
				if c.del(pos + int64(i)) {
					return false
				}
				col := rec.Column(2).(*array.Int64)
				return !(c.eq && col.IsValid(i) && eqDeleted[col.Value(i)])
			}
			outIdx := make([]int, rec.NumCols())
			for j := range outIdx {
				outIdx[j] = j
			}
			outFields := append(rec.Schema().Fields(), metaFields(Options{WithPos: true})...)
			out, err := f.apply(context.Background(), rec, pos, outIdx, arrow.NewSchema(outFields, nil), "f", Options{WithPos: true})
			if err != nil {
				t.Fatal(err)
			}
			wantRows := 0
			var runs int
			for i := range n {
				if keep(i) {
					wantRows++
					if i == 0 || !keep(i-1) {
						runs++
					}
				}
			}
			if runs < c.minRun {
				t.Fatalf("case has %d runs, meant to have at least %d", runs, c.minRun)
			}
			if wantRows == 0 {
				if out != nil {
					t.Fatalf("got %d rows, want none (nil batch)", out.NumRows())
				}
				return
			}
			defer out.Release()
			if out.NumRows() != int64(wantRows) {
				t.Fatalf("got %d rows, want %d", out.NumRows(), wantRows)
			}
			for j := range outIdx {
				want := rowByRow(t, rec.Column(j), keep)
				if !array.Equal(want, out.Column(j)) {
					t.Errorf("column %d (%s) differs:\n got %v\nwant %v", j, rec.Column(j).DataType(), out.Column(j), want)
				}
				want.Release()
			}
			gotPos := out.Column(len(outIdx)).(*array.Int64)
			k := 0
			for i := range n {
				if keep(i) {
					if gotPos.Value(k) != pos+int64(i) {
						t.Fatalf("_pos[%d] = %d, want %d", k, gotPos.Value(k), pos+int64(i))
					}
					k++
				}
			}
		})
	}
}

func mustInt64(t *testing.T, v int64) arrow.Array {
	t.Helper()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Append(v)
	return b.NewArray()
}
