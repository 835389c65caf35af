package compact

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/spec"
)

func TestParseSortOrder(t *testing.T) {
	got, err := ParseSortOrder("region ASC NULLS FIRST, order_ts desc,`a b` nulls last , id")
	if err != nil {
		t.Fatal(err)
	}
	want := []SortTerm{{"region", false, true}, {"order_ts", true, false}, {"a b", false, false}, {"id", false, true}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "a,", "a ASC DESC", "a NULLS", "a NULLS MIDDLE", "bucket(4, a)", "`a", "a b"} {
		if _, err := ParseSortOrder(bad); err == nil {
			t.Errorf("ParseSortOrder(%q) accepted", bad)
		}
	}
}

func TestParseZOrder(t *testing.T) {
	for in, want := range map[string][]string{"a,b": {"a", "b"}, " zorder(a, `b c`) ": {"a", "b c"}} {
		got, err := ParseZOrder(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseZOrder(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "a,,b", "a DESC", "zorder(a"} {
		if _, err := ParseZOrder(bad); err == nil {
			t.Errorf("ParseZOrder(%q) accepted", bad)
		}
	}
}

// TestResolveOrderingRecordsTableOrder: an explicit order records a sort
// order id only when it is one of the table's orders; the table's own
// with a bare --sort.
func TestResolveOrderingRecordsTableOrder(t *testing.T) {
	s := spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "id", Type: spec.LongType{}}, {ID: 2, Name: "Region", Type: spec.StringType{}},
		{ID: 3, Name: "s", Type: &spec.StructType{Fields: []spec.NestedField{{ID: 4, Name: "a", Type: spec.IntType{}}}}},
		{ID: 5, Name: "d", Type: spec.DecimalType{Precision: 9, Scale: 2}}}}
	id := spec.ParseTransform("identity")
	md := &spec.TableMetadata{Schemas: []spec.Schema{s}, DefaultSortOrderID: 1, SortOrders: []spec.SortOrder{
		{OrderID: 0},
		{OrderID: 1, Fields: []spec.SortField{{SourceID: 1, Transform: id, Direction: "asc", NullOrder: "nulls-first"}}},
		{OrderID: 2, Fields: []spec.SortField{{SourceID: 2, Transform: id, Direction: "desc", NullOrder: "nulls-last"}, {SourceID: 1, Transform: id, Direction: "asc", NullOrder: "nulls-first"}}},
	}}
	for _, c := range []struct {
		opts Options
		want int // -1: none
	}{
		{Options{Sort: true}, 1},
		{Options{Sort: true, SortOrder: "id"}, 1},
		{Options{Sort: true, SortOrder: "region DESC, id ASC NULLS FIRST"}, 2},
		// Sorted by no order of the table's: the unsorted order, as Spark.
		{Options{Sort: true, SortOrder: "region DESC NULLS FIRST, id"}, 0},
		{Options{Sort: true, SortOrder: "id DESC"}, 0},
		{Options{ZOrder: []string{"id", "region"}}, 0},
	} {
		o, err := resolveOrdering(md, c.opts)
		if err != nil {
			t.Fatalf("%+v: %v", c.opts, err)
		}
		switch {
		case c.want < 0 && o.orderID != nil:
			t.Errorf("%+v records order %d, want none", c.opts, *o.orderID)
		case c.want >= 0 && (o.orderID == nil || int(*o.orderID) != c.want):
			t.Errorf("%+v records order %v, want %d", c.opts, o.orderID, c.want)
		}
	}
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Sort: true, SortOrder: "nope"}, `no column "nope"`},
		{Options{ZOrder: []string{"id", "ID"}}, "given twice"},
		{Options{Sort: true, ZOrder: []string{"id"}}, "exclusive"},
		{Options{Sort: true, SortOrder: "s"}, "cannot sort by column"},
		{Options{ZOrder: []string{"id", "s"}}, "cannot z-order"},
		{Options{ZOrder: []string{"d"}}, "cannot z-order"},
	} {
		if _, err := resolveOrdering(md, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one saying %q", c.opts, err, c.want)
		}
	}
}

// TestZorderBytesPreserveOrder: each type's bytes order as its values,
// null first (tied with the empty string, as in Java, whose bytes are
// zeros too).
func TestZorderBytesPreserveOrder(t *testing.T) {
	mem := memory.DefaultAllocator
	ints := array.NewInt64Builder(mem)
	ints.AppendNull()
	ints.AppendValues([]int64{math.MinInt64 + 1, -5, -1, 0, 1, 7, math.MaxInt64}, nil)
	floats := array.NewFloat64Builder(mem)
	floats.AppendNull()
	floats.AppendValues([]float64{math.Inf(-1), -2.5, -1e-300, 0, 1e-300, 3, math.Inf(1)}, nil)
	strs := array.NewStringBuilder(mem)
	strs.AppendNull()
	strs.AppendValues([]string{"", "a", "ab", "b", "zzzzzzzz"}, nil)
	for _, a := range []arrow.Array{ints.NewArray(), floats.NewArray(), strs.NewArray()} {
		words, w, err := zorderKeys([]arrow.Array{a}, a.Len())
		if err != nil {
			t.Fatal(err)
		}
		key := func(i int) []uint64 { return words[i*w : (i+1)*w] }
		for i := 1; i < a.Len(); i++ {
			c := slices.Compare(key(i-1), key(i))
			if c > 0 || c == 0 && !(i == 1 && a.DataType().ID() == arrow.STRING) {
				t.Errorf("%s: key %d (%x) is not below key %d (%x)", a.DataType(), i-1, key(i-1), i, key(i))
			}
		}
		a.Release()
	}
}

// TestInterleaver: a byte at a time gives the keys bit by bit does, for
// one to nine columns (nine: bit by bit).
func TestInterleaver(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 1; n <= 9; n++ {
		iv := newInterleaver(n)
		for range 200 {
			cols := make([][]byte, n)
			for c := range cols {
				cols[c] = make([]byte, zorderWidth)
				for i := range cols[c] {
					cols[c][i] = byte(rng.IntN(256))
				}
			}
			want := make([]byte, n*zorderWidth)
			interleave(want, cols)
			got := make([]byte, n*zorderWidth)
			iv.interleave(got, cols)
			if !bytes.Equal(got, want) {
				t.Fatalf("%d columns %x: %x, bit by bit %x", n, cols, got, want)
			}
		}
	}
}

// TestInterleave: bits of the columns alternate, most significant first.
func TestInterleave(t *testing.T) {
	dst := make([]byte, 2)
	interleave(dst, [][]byte{{0xff}, {0x00}})
	if !bytes.Equal(dst, []byte{0xaa, 0xaa}) {
		t.Errorf("interleave(ff, 00) = %x, want aaaa", dst)
	}
	interleave(dst, [][]byte{{0x0f}, {0xf0}})
	if !bytes.Equal(dst, []byte{0x55, 0xaa}) {
		t.Errorf("interleave(0f, f0) = %x, want 55aa", dst)
	}
}

// TestSortKeepsInputOrderOfTies: rows of equal keys leave the sort in the
// order they came in, by a sort order and by a z-order, over batches.
func TestSortKeepsInputOrderOfTies(t *testing.T) {
	meta := func(id int) arrow.Metadata {
		return arrow.NewMetadata([]string{datafile.FieldIDKey}, []string{strconv.Itoa(id)})
	}
	as := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Metadata: meta(1)},
		{Name: "seq", Type: arrow.PrimitiveTypes.Int64, Metadata: meta(2)},
	}, nil)
	rng := rand.New(rand.NewPCG(5, 6))
	var recs []arrow.RecordBatch
	seq := int64(0)
	for range 3 {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, as)
		for range 5000 {
			rb.Field(0).(*array.Int64Builder).Append(rng.Int64N(4)) // many ties
			rb.Field(1).(*array.Int64Builder).Append(seq)
			seq++
		}
		recs = append(recs, rb.NewRecordBatch())
		rb.Release()
	}
	id := spec.ParseTransform("identity")
	for _, o := range []*ordering{
		{order: &spec.SortOrder{Fields: []spec.SortField{{SourceID: 1, Transform: id, Direction: "desc", NullOrder: "nulls-last"}}}},
		{zorder: []int{1}},
	} {
		s, err := newSorter(o, as)
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.sort(recs)
		if err != nil {
			t.Fatal(err)
		}
		ks, seqs := out.Column(0).(*array.Int64), out.Column(1).(*array.Int64)
		for i := 1; i < int(out.NumRows()); i++ {
			if ks.Value(i-1) == ks.Value(i) && seqs.Value(i-1) > seqs.Value(i) {
				t.Fatalf("%+v: rows %d and %d of key %d out of input order (%d before %d)", o, i-1, i, ks.Value(i), seqs.Value(i-1), seqs.Value(i))
			}
		}
		out.Release()
	}
	for _, r := range recs {
		r.Release()
	}
}
