package spec

import (
	"bytes"
	"math"
	"math/big"
	"testing"
)

func TestTwosComplement(t *testing.T) {
	cases := []struct {
		v    int64
		want []byte
	}{
		{0, []byte{0x00}},
		{1, []byte{0x01}},
		{-1, []byte{0xff}},
		{127, []byte{0x7f}},
		{128, []byte{0x00, 0x80}},
		{-128, []byte{0x80}},
		{-129, []byte{0xff, 0x7f}},
		{255, []byte{0x00, 0xff}},
		{-256, []byte{0xff, 0x00}},
		{32767, []byte{0x7f, 0xff}},
		{32768, []byte{0x00, 0x80, 0x00}},
		{-32768, []byte{0x80, 0x00}},
		{-32769, []byte{0xff, 0x7f, 0xff}},
		{1234, []byte{0x04, 0xd2}},
		{-1234, []byte{0xfb, 0x2e}},
		{math.MaxInt64, []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{math.MinInt64, []byte{0x80, 0, 0, 0, 0, 0, 0, 0}},
	}
	for _, c := range cases {
		got := BigIntToTwosComplement(big.NewInt(c.v))
		if !bytes.Equal(got, c.want) {
			t.Errorf("encode %d = % x, want % x", c.v, got, c.want)
		}
		back := TwosComplementToBigInt(c.want)
		if back.Int64() != c.v || !back.IsInt64() {
			t.Errorf("decode % x = %s, want %d", c.want, back, c.v)
		}
	}
	// Non-minimal input still decodes (sign-extended forms).
	if v := TwosComplementToBigInt([]byte{0xff, 0xff, 0x80}); v.Int64() != -128 {
		t.Errorf("decode ff ff 80 = %s", v)
	}
	if v := TwosComplementToBigInt([]byte{0x00, 0x00, 0x7f}); v.Int64() != 127 {
		t.Errorf("decode 00 00 7f = %s", v)
	}
	// 38-digit decimals exceed int64.
	max38, _ := new(big.Int).SetString("99999999999999999999999999999999999999", 10)
	for _, v := range []*big.Int{max38, new(big.Int).Neg(max38)} {
		b := BigIntToTwosComplement(v)
		if len(b) != 16 {
			t.Errorf("%s encodes to %d bytes, want 16", v, len(b))
		}
		if back := TwosComplementToBigInt(b); back.Cmp(v) != 0 {
			t.Errorf("%s round trips to %s", v, back)
		}
	}
}

func TestEncodeDecodeValue(t *testing.T) {
	uuid := [16]byte{0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7}
	cases := []struct {
		typ  Type
		v    any
		want []byte
	}{
		{BooleanType{}, true, []byte{1}},
		{BooleanType{}, false, []byte{0}},
		{IntType{}, int32(-2), []byte{0xfe, 0xff, 0xff, 0xff}},
		{DateType{}, int32(19723), []byte{0x0b, 0x4d, 0, 0}},
		{LongType{}, int64(1) << 40, []byte{0, 0, 0, 0, 0, 1, 0, 0}},
		{TimeType{}, int64(3_600_000_000), []byte{0x00, 0xa4, 0x93, 0xd6, 0, 0, 0, 0}},
		{TimestampType{}, int64(-1), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{TimestampTzType{}, int64(1), []byte{1, 0, 0, 0, 0, 0, 0, 0}},
		{TimestampNsType{}, int64(2), []byte{2, 0, 0, 0, 0, 0, 0, 0}},
		{TimestampTzNsType{}, int64(256), []byte{0, 1, 0, 0, 0, 0, 0, 0}},
		{FloatType{}, float32(1.0), []byte{0x00, 0x00, 0x80, 0x3f}},
		{DoubleType{}, float64(-2.0), []byte{0, 0, 0, 0, 0, 0, 0x00, 0xc0}},
		{StringType{}, "iceberg", []byte("iceberg")},
		{StringType{}, "", []byte{}},
		{UUIDType{}, uuid, uuid[:]},
		{FixedType{Length: 3}, []byte{1, 2, 3}, []byte{1, 2, 3}},
		{BinaryType{}, []byte{0xde, 0xad}, []byte{0xde, 0xad}},
		{DecimalType{Precision: 9, Scale: 2}, Decimal{Unscaled: big.NewInt(-12345), Scale: 2}, []byte{0xcf, 0xc7}},
		{DecimalType{Precision: 9, Scale: 2}, Decimal{Unscaled: big.NewInt(128), Scale: 2}, []byte{0x00, 0x80}},
	}
	for _, c := range cases {
		got, err := EncodeValue(c.typ, c.v)
		if err != nil {
			t.Errorf("encode %s %v: %v", c.typ, c.v, err)
			continue
		}
		if !bytes.Equal(got, c.want) {
			t.Errorf("encode %s %v = % x, want % x", c.typ, c.v, got, c.want)
		}
		back, err := DecodeValue(c.typ, c.want)
		if err != nil {
			t.Errorf("decode %s: %v", c.typ, err)
			continue
		}
		if !equalValues(back, c.v) {
			if d, ok := c.v.(Decimal); !ok || back.(Decimal).Unscaled.Cmp(d.Unscaled) != 0 || back.(Decimal).Scale != d.Scale {
				t.Errorf("decode %s % x = %#v, want %#v", c.typ, c.want, back, c.v)
			}
		}
	}
}

func TestDecodeValuePromotions(t *testing.T) {
	// A bound written before int->long keeps 4 bytes.
	if v, err := DecodeValue(LongType{}, []byte{0xfe, 0xff, 0xff, 0xff}); err != nil || v != int64(-2) {
		t.Errorf("4-byte long = %v, %v", v, err)
	}
	// date -> timestamp: days become micros.
	if v, err := DecodeValue(TimestampType{}, []byte{1, 0, 0, 0}); err != nil || v != int64(86400_000_000) {
		t.Errorf("date as timestamp = %v, %v", v, err)
	}
	if v, err := DecodeValue(TimestampNsType{}, []byte{1, 0, 0, 0}); err != nil || v != int64(86400_000_000_000) {
		t.Errorf("date as timestamp_ns = %v, %v", v, err)
	}
	// float -> double.
	if v, err := DecodeValue(DoubleType{}, []byte{0x00, 0x00, 0x80, 0x3f}); err != nil || v != float64(1) {
		t.Errorf("float as double = %v, %v", v, err)
	}
}

func TestEncodeDecodeValueErrors(t *testing.T) {
	if _, err := EncodeValue(IntType{}, nil); err == nil {
		t.Error("encoding null must fail")
	}
	if _, err := EncodeValue(IntType{}, int64(1)); err == nil {
		t.Error("int with an int64 Go value must fail")
	}
	if _, err := EncodeValue(UnknownType{}, []byte{1}); err == nil {
		t.Error("unknown has no single-value serialization")
	}
	if _, err := DecodeValue(IntType{}, []byte{1, 2}); err == nil {
		t.Error("2-byte int must fail")
	}
	if _, err := DecodeValue(UUIDType{}, make([]byte, 15)); err == nil {
		t.Error("15-byte uuid must fail")
	}
	if _, err := DecodeValue(DecimalType{Precision: 9, Scale: 2}, nil); err == nil {
		t.Error("empty decimal must fail")
	}
}

func TestDecimalString(t *testing.T) {
	cases := map[string]Decimal{
		"123.45": {big.NewInt(12345), 2},
		"-0.05":  {big.NewInt(-5), 2},
		"0.000":  {big.NewInt(0), 3},
		"42":     {big.NewInt(42), 0},
		"-1.0":   {big.NewInt(-10), 1},
	}
	for want, d := range cases {
		if got := d.String(); got != want {
			t.Errorf("%v scale %d = %q, want %q", d.Unscaled, d.Scale, got, want)
		}
	}
}
