package spec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
)

// Values of Iceberg types are carried as these Go types:
//
//	boolean                      bool
//	int, date                    int32
//	long, time, timestamp*       int64 (micros, or nanos for the _ns types)
//	float                        float32
//	double                       float64
//	string                       string
//	uuid                         [16]byte
//	fixed, binary, geometry,
//	geography, variant           []byte (bounds are kept as stored)
//	decimal                      Decimal
//
// A nil value is null.

// Decimal is an unscaled integer and the scale of its type.
type Decimal struct {
	Unscaled *big.Int
	Scale    int
}

func (d Decimal) String() string {
	if d.Unscaled == nil {
		return "<nil>"
	}
	s := d.Unscaled.String()
	if d.Scale <= 0 {
		return s
	}
	neg := false
	if s[0] == '-' {
		neg, s = true, s[1:]
	}
	for len(s) <= d.Scale {
		s = "0" + s
	}
	s = s[:len(s)-d.Scale] + "." + s[len(s)-d.Scale:]
	if neg {
		s = "-" + s
	}
	return s
}

// EncodeValue writes v in Iceberg's single-value binary serialization
// (spec Appendix D), used for bounds and partition summaries.
func EncodeValue(t Type, v any) ([]byte, error) {
	if v == nil {
		return nil, fmt.Errorf("encode %s: null has no single-value serialization", t)
	}
	bad := func() ([]byte, error) { return nil, fmt.Errorf("encode %s: unexpected Go value %T", t, v) }
	switch t.(type) {
	case BooleanType:
		b, ok := v.(bool)
		if !ok {
			return bad()
		}
		if b {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case IntType, DateType:
		i, ok := v.(int32)
		if !ok {
			return bad()
		}
		return binary.LittleEndian.AppendUint32(nil, uint32(i)), nil
	case LongType, TimeType, TimestampType, TimestampTzType, TimestampNsType, TimestampTzNsType:
		i, ok := v.(int64)
		if !ok {
			return bad()
		}
		return binary.LittleEndian.AppendUint64(nil, uint64(i)), nil
	case FloatType:
		f, ok := v.(float32)
		if !ok {
			return bad()
		}
		return binary.LittleEndian.AppendUint32(nil, math.Float32bits(f)), nil
	case DoubleType:
		f, ok := v.(float64)
		if !ok {
			return bad()
		}
		return binary.LittleEndian.AppendUint64(nil, math.Float64bits(f)), nil
	case StringType:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		return []byte(s), nil
	case UUIDType:
		u, ok := v.([16]byte)
		if !ok {
			return bad()
		}
		return append([]byte(nil), u[:]...), nil
	case FixedType, BinaryType, GeometryType, GeographyType, VariantType:
		b, ok := v.([]byte)
		if !ok {
			return bad()
		}
		return append([]byte(nil), b...), nil
	case DecimalType:
		d, ok := v.(Decimal)
		if !ok || d.Unscaled == nil {
			return bad()
		}
		return BigIntToTwosComplement(d.Unscaled), nil
	}
	return nil, fmt.Errorf("encode %s: type has no single-value serialization", t)
}

// DecodeValue reads a single-value serialization of type t.
func DecodeValue(t Type, b []byte) (any, error) {
	need := func(n int) error {
		if len(b) != n {
			return fmt.Errorf("decode %s: want %d bytes, got %d", t, n, len(b))
		}
		return nil
	}
	switch tt := t.(type) {
	case BooleanType:
		if err := need(1); err != nil {
			return nil, err
		}
		return b[0] != 0, nil
	case IntType, DateType:
		if err := need(4); err != nil {
			return nil, err
		}
		return int32(binary.LittleEndian.Uint32(b)), nil
	case LongType, TimeType, TimestampType, TimestampTzType, TimestampNsType, TimestampTzNsType:
		// A bound written before an int->long or date->timestamp promotion
		// keeps its 4-byte width.
		if len(b) == 4 {
			v := int64(int32(binary.LittleEndian.Uint32(b)))
			switch t.(type) {
			case TimestampType, TimestampTzType:
				v *= 86400 * 1_000_000
			case TimestampNsType, TimestampTzNsType:
				v *= 86400 * 1_000_000_000
			}
			return v, nil
		}
		if err := need(8); err != nil {
			return nil, err
		}
		return int64(binary.LittleEndian.Uint64(b)), nil
	case FloatType:
		if err := need(4); err != nil {
			return nil, err
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(b)), nil
	case DoubleType:
		if len(b) == 4 { // promoted from float
			return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), nil
		}
		if err := need(8); err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
	case StringType:
		return string(b), nil
	case UUIDType:
		if err := need(16); err != nil {
			return nil, err
		}
		var u [16]byte
		copy(u[:], b)
		return u, nil
	case FixedType, BinaryType, GeometryType, GeographyType, VariantType:
		return append([]byte(nil), b...), nil
	case DecimalType:
		if len(b) == 0 {
			return nil, fmt.Errorf("decode %s: empty decimal", t)
		}
		return Decimal{Unscaled: TwosComplementToBigInt(b), Scale: tt.Scale}, nil
	}
	return nil, fmt.Errorf("decode %s: type has no single-value serialization", t)
}

// BigIntToTwosComplement returns the minimal big-endian two's-complement
// bytes of v.
func BigIntToTwosComplement(v *big.Int) []byte {
	switch v.Sign() {
	case 0:
		return []byte{0}
	case 1:
		b := v.Bytes()
		if b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// negative: 2^(8n) + v for the smallest n that fits
	n := (v.BitLen() + 8) / 8
	mod := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	u := new(big.Int).Add(mod, v).Bytes()
	for len(u) < n {
		u = append([]byte{0xff}, u...)
	}
	// trim redundant leading 0xff bytes
	for len(u) > 1 && u[0] == 0xff && u[1]&0x80 != 0 {
		u = u[1:]
	}
	return u
}

// TwosComplementToBigInt reads big-endian two's-complement bytes.
func TwosComplementToBigInt(b []byte) *big.Int {
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}
