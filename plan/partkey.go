package plan

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/icectl/icectl/iceberg/spec"
)

// partitionKey encodes a spec id and a partition tuple so that equal keys
// mean equal partitions (type-tagged, length-prefixed; NaN normalized), the
// same equality the delete index uses.
func partitionKey(specID int32, values []any) string {
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
		case int32:
			b.WriteByte('i')
			binary.BigEndian.PutUint32(buf[:4], uint32(v))
			b.Write(buf[:4])
		case int64:
			b.WriteByte('l')
			binary.BigEndian.PutUint64(buf[:], uint64(v))
			b.Write(buf[:])
		case float32:
			bits := math.Float32bits(v)
			if v != v {
				bits = 0x7fc00000
			}
			b.WriteByte('F')
			binary.BigEndian.PutUint32(buf[:4], bits)
			b.Write(buf[:4])
		case float64:
			bits := math.Float64bits(v)
			if v != v {
				bits = 0x7ff8000000000000
			}
			b.WriteByte('D')
			binary.BigEndian.PutUint64(buf[:], bits)
			b.Write(buf[:])
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

// compareTuples is a total order on partition tuples, used only to make
// plans deterministic: null first, then by value; values of different Go
// types order by a fixed type rank.
func compareTuples(a, b []any) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if c := compareValue(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func typeRank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case int32, int64:
		return 2
	case float32, float64:
		return 3
	case string:
		return 4
	case []byte:
		return 5
	case [16]byte:
		return 6
	case spec.Decimal:
		return 7
	}
	return 8
}

func compareValue(a, b any) int {
	ra, rb := typeRank(a), typeRank(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch x := a.(type) {
	case nil:
		return 0
	case bool:
		y := b.(bool)
		if x == y {
			return 0
		}
		if !x {
			return -1
		}
		return 1
	case int32, int64:
		return cmp.Compare(asInt64(a), asInt64(b))
	case float32, float64:
		return cmp.Compare(asFloat64(a), asFloat64(b))
	case string:
		return strings.Compare(x, b.(string))
	case []byte:
		return strings.Compare(string(x), string(b.([]byte)))
	case [16]byte:
		y := b.([16]byte)
		return strings.Compare(string(x[:]), string(y[:]))
	case spec.Decimal:
		y := b.(spec.Decimal)
		if x.Unscaled == nil || y.Unscaled == nil || x.Scale != y.Scale {
			return strings.Compare(x.String(), y.String())
		}
		return x.Unscaled.Cmp(y.Unscaled)
	}
	return strings.Compare(fmt.Sprintf("%T:%v", a, a), fmt.Sprintf("%T:%v", b, b))
}

func asInt64(v any) int64 {
	if x, ok := v.(int32); ok {
		return int64(x)
	}
	return v.(int64)
}

func asFloat64(v any) float64 {
	if x, ok := v.(float32); ok {
		return float64(x)
	}
	return v.(float64)
}
