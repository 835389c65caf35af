package where

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/icectl/icectl/iceberg/spec"
)

// murmur3x86_32 is the 32-bit x86 Murmur3 hash with seed 0, the hash the
// spec's bucket transform uses (Appendix B).
func murmur3x86_32(data []byte) uint32 {
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	var h uint32
	n := len(data)
	i := 0
	for ; i+4 <= n; i += 4 {
		k := binary.LittleEndian.Uint32(data[i:])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
	}
	var k uint32
	switch n - i {
	case 3:
		k ^= uint32(data[i+2]) << 16
		fallthrough
	case 2:
		k ^= uint32(data[i+1]) << 8
		fallthrough
	case 1:
		k ^= uint32(data[i])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
	}
	h ^= uint32(n)
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// hashValue is the spec's bucket hash of v of type t; ok is false for types
// the bucket transform is not defined on here.
func hashValue(t spec.Type, v any) (int32, bool) {
	long := func(x int64) int32 {
		return int32(murmur3x86_32(binary.LittleEndian.AppendUint64(nil, uint64(x))))
	}
	switch t.(type) {
	case spec.IntType, spec.DateType:
		if x, ok := v.(int32); ok {
			return long(int64(x)), true
		}
	case spec.LongType, spec.TimeType, spec.TimestampType, spec.TimestampTzType:
		if x, ok := v.(int64); ok {
			return long(x), true
		}
	case spec.StringType:
		if x, ok := v.(string); ok {
			return int32(murmur3x86_32([]byte(x))), true
		}
	case spec.UUIDType:
		if x, ok := v.([16]byte); ok {
			return int32(murmur3x86_32(x[:])), true
		}
	case spec.BinaryType, spec.FixedType:
		if x, ok := v.([]byte); ok {
			return int32(murmur3x86_32(x)), true
		}
	case spec.DecimalType:
		if x, ok := v.(spec.Decimal); ok && x.Unscaled != nil {
			return int32(murmur3x86_32(spec.BigIntToTwosComplement(x.Unscaled))), true
		}
	}
	return 0, false
}

// bucketOf is bucket[n](v): the hash with the sign bit dropped, mod n.
func bucketOf(t spec.Type, v any, n int) (int32, bool) {
	h, ok := hashValue(t, v)
	if !ok || n <= 0 {
		return 0, false
	}
	return int32(int64(h&math.MaxInt32) % int64(n)), true
}
