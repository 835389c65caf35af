package datafile

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/iceberg/spec"
)

// SerializedValues calls fn with the single-value serialization (spec
// Appendix D, what Java's Conversions.toByteBuffer gives) of each non-null
// value of arr, in order. The slice fn gets may be reused for the next
// value: fn must copy what it keeps.
func SerializedValues(arr arrow.Array, fn func(b []byte)) error {
	return SerializedValuesWhere(arr, nil, fn)
}

// SerializedValuesWhere is SerializedValues over the values whose index
// valid also holds (nil: every index): the fields of a struct are null
// where the struct is, whatever their own arrays hold there.
func SerializedValuesWhere(arr arrow.Array, valid func(i int) bool, fn func(b []byte)) error {
	if a, ok := arr.(array.ExtensionArray); ok {
		return SerializedValuesWhere(a.Storage(), valid, fn)
	}
	var buf [8]byte
	le32 := func(v uint32) []byte {
		binary.LittleEndian.PutUint32(buf[:4], v)
		return buf[:4]
	}
	le64 := func(v uint64) []byte {
		binary.LittleEndian.PutUint64(buf[:], v)
		return buf[:8]
	}
	var val func(i int) []byte
	switch a := arr.(type) {
	case *array.Boolean:
		val = func(i int) []byte {
			buf[0] = 0
			if a.Value(i) {
				buf[0] = 1
			}
			return buf[:1]
		}
	case *array.Int32:
		val = func(i int) []byte { return le32(uint32(a.Value(i))) }
	case *array.Date32:
		val = func(i int) []byte { return le32(uint32(a.Value(i))) }
	case *array.Int64:
		val = func(i int) []byte { return le64(uint64(a.Value(i))) }
	case *array.Time64:
		val = func(i int) []byte { return le64(uint64(a.Value(i))) }
	case *array.Timestamp:
		val = func(i int) []byte { return le64(uint64(a.Value(i))) }
	case *array.Float32:
		// Raw bits, as Java's ByteBuffer.putFloat: NaNs hash by their bits.
		val = func(i int) []byte { return le32(math.Float32bits(a.Value(i))) }
	case *array.Float64:
		val = func(i int) []byte { return le64(math.Float64bits(a.Value(i))) }
	case *array.String:
		val = func(i int) []byte { return []byte(a.Value(i)) }
	case *array.LargeString:
		val = func(i int) []byte { return []byte(a.Value(i)) }
	case *array.Binary:
		val = a.Value
	case *array.LargeBinary:
		val = a.Value
	case *array.FixedSizeBinary:
		val = a.Value
	case *array.Decimal128:
		val = func(i int) []byte { return spec.BigIntToTwosComplement(a.Value(i).BigInt()) }
	default:
		return fmt.Errorf("values of type %s are not supported", arr.DataType())
	}
	for i := range arr.Len() {
		if !arr.IsNull(i) && (valid == nil || valid(i)) {
			fn(val(i))
		}
	}
	return nil
}
