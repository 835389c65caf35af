package scan

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// appendKey appends the equality key of row i of col to b. Data and delete
// columns are read in the same Iceberg type, so equal values encode to
// equal bytes: null is its own marker (null matches null, as the spec
// says), variable-length values are length-prefixed so a tuple of columns
// cannot collide, and floats compare by bits with NaNs made one (-0.0 and
// 0.0 differ, as Java's equality deletes treat them).
func appendKey(b []byte, col arrow.Array, i int) ([]byte, error) {
	if col.IsNull(i) {
		return append(b, 0), nil
	}
	b = append(b, 1)
	switch a := col.(type) {
	case *array.Boolean:
		if a.Value(i) {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case *array.Int32:
		return binary.BigEndian.AppendUint32(b, uint32(a.Value(i))), nil
	case *array.Int64:
		return binary.BigEndian.AppendUint64(b, uint64(a.Value(i))), nil
	case *array.Date32:
		return binary.BigEndian.AppendUint32(b, uint32(a.Value(i))), nil
	case *array.Time64:
		return binary.BigEndian.AppendUint64(b, uint64(a.Value(i))), nil
	case *array.Timestamp:
		return binary.BigEndian.AppendUint64(b, uint64(a.Value(i))), nil
	case *array.Float32:
		v := a.Value(i)
		if v != v {
			v = float32(math.NaN())
		}
		return binary.BigEndian.AppendUint32(b, math.Float32bits(v)), nil
	case *array.Float64:
		v := a.Value(i)
		if v != v {
			v = math.NaN()
		}
		return binary.BigEndian.AppendUint64(b, math.Float64bits(v)), nil
	case *array.String:
		return appendBytes(b, []byte(a.Value(i))), nil
	case *array.LargeString:
		return appendBytes(b, []byte(a.Value(i))), nil
	case *array.Binary:
		return appendBytes(b, a.Value(i)), nil
	case *array.LargeBinary:
		return appendBytes(b, a.Value(i)), nil
	case *array.FixedSizeBinary:
		return appendBytes(b, a.Value(i)), nil
	case *array.Decimal128:
		v := a.Value(i)
		b = binary.BigEndian.AppendUint64(b, uint64(v.HighBits()))
		return binary.BigEndian.AppendUint64(b, v.LowBits()), nil
	}
	return nil, fmt.Errorf("equality deletes on a %s column are not supported", col.DataType())
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}
