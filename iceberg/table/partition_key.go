package table

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/icectl/icectl/iceberg/spec"
)

// PartitionKey encodes a spec id and partition tuple so that two tuples
// have equal keys exactly when they are equal partitions: values carry a
// type tag, strings and bytes a length, and floats compare by their IEEE
// bits with NaN normalized (so -0.0 and +0.0 differ, and NaN equals NaN).
// The delete index, the planner and the producer all group by it.
func PartitionKey(specID int32, values []any) string {
	var b strings.Builder
	b.Grow(keySize(values))
	var buf [8]byte
	binary.BigEndian.PutUint32(buf[:4], uint32(specID))
	b.Write(buf[:4])
	for _, v := range values {
		switch v := v.(type) {
		case nil:
			b.WriteByte('n')
		case bool:
			if v {
				b.WriteByte('t')
			} else {
				b.WriteByte('f')
			}
		// An int and a long are one tag, as are a float and a double: a
		// field's values have one type only until its source column is
		// promoted (int to long, float to double), after which manifests
		// written before still hold the narrower value for the same
		// partition. Keyed apart, a DV or position delete written after the
		// promotion (as a long) would not apply to the data files of its
		// partition listed before it (as an int), and deleted rows would
		// show again. The conversions are exact.
		case int32:
			writeLong(&b, &buf, int64(v))
		case int64:
			writeLong(&b, &buf, v)
		case float32:
			writeDouble(&b, &buf, float64(v))
		case float64:
			writeDouble(&b, &buf, v)
		case string:
			lengthPrefixed(&b, 's', []byte(v))
		case []byte:
			lengthPrefixed(&b, 'b', v)
		case [16]byte:
			b.WriteByte('u')
			b.Write(v[:])
		case spec.Decimal:
			lengthPrefixed(&b, 'd', []byte(v.String()))
		default:
			lengthPrefixed(&b, '?', fmt.Appendf(nil, "%T:%v", v, v))
		}
	}
	return b.String()
}

func writeLong(b *strings.Builder, buf *[8]byte, v int64) {
	b.WriteByte('l')
	binary.BigEndian.PutUint64(buf[:], uint64(v))
	b.Write(buf[:])
}

func writeDouble(b *strings.Builder, buf *[8]byte, v float64) {
	bits := math.Float64bits(v)
	if v != v {
		bits = 0x7ff8000000000000
	}
	b.WriteByte('D')
	binary.BigEndian.PutUint64(buf[:], bits)
	b.Write(buf[:])
}

// keySize is the length of a key, so it is built with one allocation.
func keySize(values []any) int {
	n := 4
	for _, v := range values {
		switch v := v.(type) {
		case string:
			n += 5 + len(v)
		case []byte:
			n += 5 + len(v)
		case [16]byte:
			n += 17
		default:
			n += 9
		}
	}
	return n
}

func lengthPrefixed(b *strings.Builder, tag byte, p []byte) {
	var n [4]byte
	b.WriteByte(tag)
	binary.BigEndian.PutUint32(n[:], uint32(len(p)))
	b.Write(n[:])
	b.Write(p)
}
