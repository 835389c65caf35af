package theta

import (
	"encoding/binary"
	"math/bits"
)

const (
	c1 = 0x87c37b91114253d5
	c2 = 0x4cf5ad432745937f
)

// murmur3 is MurmurHash3 x64_128 of data (the first half of the result),
// as the DataSketches library computes it.
func murmur3(data []byte, seed uint64) uint64 {
	h1, h2 := seed, seed
	n := len(data)
	for len(data) >= 16 {
		k1 := binary.LittleEndian.Uint64(data)
		k2 := binary.LittleEndian.Uint64(data[8:])
		data = data[16:]
		h1 ^= mixK1(k1)
		h1 = bits.RotateLeft64(h1, 27) + h2
		h1 = h1*5 + 0x52dce729
		h2 ^= mixK2(k2)
		h2 = bits.RotateLeft64(h2, 31) + h1
		h2 = h2*5 + 0x38495ab5
	}
	if len(data) > 8 {
		var k2 uint64
		for i := len(data) - 1; i >= 8; i-- {
			k2 = k2<<8 | uint64(data[i])
		}
		h2 ^= mixK2(k2)
	}
	if len(data) > 0 {
		var k1 uint64
		for i := min(len(data), 8) - 1; i >= 0; i-- {
			k1 = k1<<8 | uint64(data[i])
		}
		h1 ^= mixK1(k1)
	}
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1 = fmix(h1)
	h2 = fmix(h2)
	return h1 + h2
}

func mixK1(k uint64) uint64 {
	k *= c1
	k = bits.RotateLeft64(k, 31)
	return k * c2
}

func mixK2(k uint64) uint64 {
	k *= c2
	k = bits.RotateLeft64(k, 33)
	return k * c1
}

func fmix(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// SeedHash is the 16-bit hash of seed a serialized sketch carries, so that
// sketches of different seeds are never combined: the low bits of
// MurmurHash3 of the seed as one long, with seed 0.
func SeedHash(seed uint64) uint16 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	return uint16(murmur3(b[:], 0))
}
