package partstats_test

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/partstats"
)

func field(src, id int, name, transform string) spec.PartitionField {
	return spec.PartitionField{SourceID: src, FieldID: id, Name: name, Transform: spec.ParseTransform(transform)}
}

// TestPartitionType follows Java's Partitioning.partitionType: fields of
// every spec by id, names from the newest spec, a void field typed by a
// spec where it is not void, fields of dropped columns left out.
func TestPartitionType(t *testing.T) {
	md := &spec.TableMetadata{FormatVersion: 1, Schemas: []spec.Schema{{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}}, {ID: 2, Name: "ts", Type: spec.TimestampType{}},
	}}}, PartitionSpecs: []spec.PartitionSpec{
		{ID: 0, Fields: []spec.PartitionField{field(1, 1000, "id_bucket", "bucket[4]"), field(3, 1001, "gone", "identity")}},
		{ID: 1, Fields: []spec.PartitionField{field(1, 1000, "id_b", "void"), field(2, 1002, "ts_day", "day")}},
	}}
	ut, err := partstats.PartitionType(md)
	if err != nil {
		t.Fatal(err)
	}
	want := []spec.NestedField{{ID: 1000, Name: "id_b", Type: spec.IntType{}}, {ID: 1002, Name: "ts_day", Type: spec.DateType{}}}
	if len(ut.Fields) != len(want) {
		t.Fatalf("fields %+v, want %+v", ut.Fields, want)
	}
	for i, f := range ut.Fields {
		if f.ID != want[i].ID || f.Name != want[i].Name || f.Type.String() != want[i].Type.String() || f.Required {
			t.Errorf("field %d: %+v, want %+v", i, f, want[i])
		}
	}

	md.PartitionSpecs[1].Fields[0] = field(1, 1000, "id_t", "truncate[3]")
	if _, err := partstats.PartitionType(md); err == nil {
		t.Error("conflicting transforms for field 1000: no error")
	}
	md.PartitionSpecs = []spec.PartitionSpec{{ID: 0}, {ID: 1, Fields: []spec.PartitionField{field(1, 1000, "x", "void")}}}
	if _, err := partstats.PartitionType(md); !errors.Is(err, partstats.ErrUnpartitioned) {
		t.Errorf("only void fields: %v, want ErrUnpartitioned", err)
	}
}

// TestComparePartitions orders as Java's Comparators.forType: nulls first,
// -0 before 0 and NaN last, strings by bytes, UUIDs by signed halves.
func TestComparePartitions(t *testing.T) {
	st := &spec.StructType{Fields: []spec.NestedField{{ID: 1}}}
	u := func(b0 byte) [16]byte { return [16]byte{b0} }
	for _, c := range []struct{ a, b any }{
		{nil, int32(-5)},
		{int64(-1), int64(2)},
		{math.Copysign(0, -1), 0.0},
		{math.Inf(1), math.NaN()},
		{float32(1), float32(2)},
		{"Z", "a"},
		{"a", "é"},
		{[]byte{0x01}, []byte{0xff}},
		{u(0x80), u(0x7f)}, // java.util.UUID compares signed: 0x80... is negative
		{false, true},
		{spec.Decimal{Unscaled: big.NewInt(-3), Scale: 2}, spec.Decimal{Unscaled: big.NewInt(1), Scale: 2}},
	} {
		if got := partstats.ComparePartitions(st, []any{c.a}, []any{c.b}); got != -1 {
			t.Errorf("compare(%v, %v) = %d, want -1", c.a, c.b, got)
		}
		if got := partstats.ComparePartitions(st, []any{c.b}, []any{c.a}); got != 1 {
			t.Errorf("compare(%v, %v) = %d, want 1", c.b, c.a, got)
		}
	}
}
