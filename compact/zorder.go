package compact

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icectl/icectl/iceberg/spec"
)

// Z-order, as Iceberg's Spark zorder strategy computes it: each column's
// value becomes zorderWidth bytes whose unsigned lexicographic order is
// the value's order (whole numbers and time values with the sign bit
// flipped; floating point with the sign bit flipped when positive and
// every bit flipped when negative; strings and binary truncated or padded
// with zeros; null as all zeros), and the rows are sorted by the bits of
// the columns interleaved, most significant first. Rows close in every
// column end up close in that order, so the files a group is cut into
// cover small ranges of each column and a predicate on any of them skips
// files.

// zorderWidth is the bytes each column contributes: Java's primitive
// buffer size, and its default contribution of a string.
const zorderWidth = 8

// zorderBytesOf checks that a column of type t can be z-ordered.
func zorderBytesOf(t spec.Type) (int, error) {
	switch t.(type) {
	case spec.BooleanType, spec.IntType, spec.LongType, spec.FloatType, spec.DoubleType, spec.DateType,
		spec.TimeType, spec.TimestampType, spec.TimestampTzType, spec.TimestampNsType, spec.TimestampTzNsType,
		spec.StringType, spec.BinaryType, spec.FixedType, spec.UUIDType:
		return zorderWidth, nil
	}
	return 0, fmt.Errorf("cannot z-order by a column of type %s", t)
}

// zorderColumn writes the order-preserving bytes of row i of a into dst
// (zorderWidth bytes, zeroed by the caller).
type zorderColumn func(dst []byte, i int)

func newZorderColumn(a arrow.Array) (zorderColumn, error) {
	whole := func(v func(i int) int64) zorderColumn {
		return func(dst []byte, i int) {
			if !a.IsNull(i) {
				binary.BigEndian.PutUint64(dst, uint64(v(i))^(1<<63))
			}
		}
	}
	float := func(v func(i int) float64) zorderColumn {
		return func(dst []byte, i int) {
			if !a.IsNull(i) {
				b := math.Float64bits(v(i))
				if b>>63 == 1 {
					b = ^b
				} else {
					b ^= 1 << 63
				}
				binary.BigEndian.PutUint64(dst, b)
			}
		}
	}
	bytesOf := func(v func(i int) []byte) zorderColumn {
		return func(dst []byte, i int) {
			if !a.IsNull(i) {
				copy(dst, v(i))
			}
		}
	}
	// Strings are copied as they are: a []byte of each would be a
	// copy of the whole value per row.
	stringOf := func(v func(i int) string) zorderColumn {
		return func(dst []byte, i int) {
			if !a.IsNull(i) {
				copy(dst, v(i))
			}
		}
	}
	switch a := a.(type) {
	case *array.Boolean:
		return func(dst []byte, i int) {
			if !a.IsNull(i) && a.Value(i) {
				dst[0] = 0x80
			}
		}, nil
	case *array.Int32:
		return whole(func(i int) int64 { return int64(a.Value(i)) }), nil
	case *array.Int64:
		return whole(func(i int) int64 { return a.Value(i) }), nil
	case *array.Date32:
		return whole(func(i int) int64 { return int64(a.Value(i)) }), nil
	case *array.Time64:
		return whole(func(i int) int64 { return int64(a.Value(i)) }), nil
	case *array.Timestamp:
		return whole(func(i int) int64 { return int64(a.Value(i)) }), nil
	case *array.Float32:
		return float(func(i int) float64 { return float64(a.Value(i)) }), nil
	case *array.Float64:
		return float(a.Value), nil
	case *array.String:
		return stringOf(a.Value), nil
	case *array.LargeString:
		return stringOf(a.Value), nil
	case *array.Binary:
		return bytesOf(a.Value), nil
	case *array.FixedSizeBinary:
		return bytesOf(a.Value), nil
	}
	return nil, fmt.Errorf("cannot z-order by a column of type %s", a.DataType())
}

// interleave writes the bits of cols (each the same length) into dst,
// most significant first, one bit of each column in turn.
func interleave(dst []byte, cols [][]byte) {
	clear(dst)
	out := 0
	for bit := 0; bit < len(cols[0])*8; bit++ {
		for _, c := range cols {
			if c[bit/8]&(0x80>>(bit%8)) != 0 {
				dst[out/8] |= 0x80 >> (out % 8)
			}
			out++
		}
	}
}

// interleaver is interleave a byte of each column at a time, for up to 8
// columns: spread[v] holds the bits of byte v n apart (most significant
// first, in the top 8n bits of the word), so the i-th bytes of the n
// columns, each spread and shifted by its column's index, make bytes
// n*i to n*i+n-1 of the key. Bit by bit, the keys were a fifth of a
// z-ordered rewrite's CPU (docs/bench/compact.md, "Z-order profile").
type interleaver struct {
	n      int
	spread *[256]uint64 // nil for more than 8 columns: interleave
}

func newInterleaver(n int) interleaver {
	iv := interleaver{n: n}
	if n > 8 {
		return iv
	}
	iv.spread = new([256]uint64)
	for v := range 256 {
		var w uint64
		for k := range 8 {
			if v&(0x80>>k) != 0 {
				w |= 1 << (63 - k*n)
			}
		}
		iv.spread[v] = w
	}
	return iv
}

// interleave is interleave(dst, cols) for the interleaver's n columns.
func (iv interleaver) interleave(dst []byte, cols [][]byte) {
	if iv.spread == nil {
		interleave(dst, cols)
		return
	}
	var word [8]byte
	for i := range cols[0] {
		var w uint64
		for c, col := range cols {
			w |= iv.spread[col[i]] >> c
		}
		binary.BigEndian.PutUint64(word[:], w)
		copy(dst[i*iv.n:(i+1)*iv.n], word[:iv.n])
	}
}

// zorderKeys returns every row's interleaved key as big-endian words, a
// row's width words (one per column) at keys[i*width:(i+1)*width]: words
// compare as the key's bytes do, a word at a time.
func zorderKeys(arrays []arrow.Array, n int) (keys []uint64, width int, err error) {
	enc := make([]zorderColumn, len(arrays))
	for k, a := range arrays {
		e, err := newZorderColumn(a)
		if err != nil {
			return nil, 0, err
		}
		enc[k] = e
	}
	cols := make([][]byte, len(arrays))
	for k := range cols {
		cols[k] = make([]byte, zorderWidth)
	}
	width = len(arrays) * zorderWidth / 8
	keys = make([]uint64, n*width)
	key := make([]byte, width*8)
	iv := newInterleaver(len(arrays))
	for i := range n {
		for k, e := range enc {
			clear(cols[k])
			e(cols[k], i)
		}
		iv.interleave(key, cols)
		for w := range width {
			keys[i*width+w] = binary.BigEndian.Uint64(key[w*8:])
		}
	}
	return keys, width, nil
}
