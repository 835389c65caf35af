package datafile

import (
	"bytes"
	"context"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
)

// TestRowsRoundTrip writes rows of every primitive type a partition can
// have, in a struct with nulls, and reads them back by field id.
func TestRowsRoundTrip(t *testing.T) {
	part := &spec.StructType{Fields: []spec.NestedField{
		{ID: 100, Name: "b", Type: spec.BooleanType{}}, {ID: 101, Name: "i", Type: spec.IntType{}},
		{ID: 102, Name: "l", Type: spec.LongType{}}, {ID: 103, Name: "f", Type: spec.FloatType{}},
		{ID: 104, Name: "d", Type: spec.DoubleType{}}, {ID: 105, Name: "date", Type: spec.DateType{}},
		{ID: 106, Name: "ts", Type: spec.TimestampTzType{}}, {ID: 107, Name: "s", Type: spec.StringType{}},
		{ID: 108, Name: "bin", Type: spec.BinaryType{}}, {ID: 109, Name: "fx", Type: spec.FixedType{Length: 3}},
		{ID: 110, Name: "dec", Type: spec.DecimalType{Precision: 9, Scale: 2}}, {ID: 111, Name: "u", Type: spec.UUIDType{}},
		{ID: 112, Name: "tm", Type: spec.TimeType{}},
	}}
	s := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "partition", Type: part, Required: true},
		{ID: 2, Name: "n", Type: spec.LongType{}, Required: true},
		{ID: 3, Name: "opt", Type: spec.IntType{}},
	}}
	rows := [][]any{
		{[]any{true, int32(-1), int64(1) << 40, float32(1.5), -2.25, int32(20000), int64(1700000000000000), "é", []byte{0, 1}, []byte("abc"),
			spec.Decimal{Unscaled: big.NewInt(-12345), Scale: 2}, [16]byte{1, 2, 3}, int64(3600000000)}, int64(7), int32(3)},
		{make([]any, 13), int64(0), nil},
	}
	var buf bytes.Buffer
	if _, err := WriteRows(&buf, s, rows); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRows(context.Background(), bytes.NewReader(buf.Bytes()), int64(buf.Len()), s)
	if err != nil {
		t.Fatal(err)
	}
	// A UUID reads back as its 16 bytes.
	want := rows
	want[0][0].([]any)[11] = []byte{1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read\n%#v\nwrote\n%#v", got, want)
	}
}

// TestWriteRowsRefusesWrongValues: a value of another Go type than its
// column's, or a row of the wrong width, is an error, not a panic.
func TestWriteRowsRefusesWrongValues(t *testing.T) {
	s := &spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "n", Type: spec.LongType{}, Required: true}}}
	for _, rows := range [][][]any{{{"seven"}}, {{int32(7)}}, {{int64(1), int64(2)}}} {
		_, err := WriteRows(&bytes.Buffer{}, s, rows)
		if err == nil || !strings.Contains(err.Error(), "write rows") {
			t.Errorf("rows %v: %v, want an error", rows, err)
		}
	}
}
