package datafile

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/icectl/icectl/iceberg/spec"
)

// Decimals are written as the spec and Java write them (and the Writer,
// with pqarrow's StoreDecimalAsInteger): int32 up to precision 9, int64 up
// to 18, fixed_len_byte_array of the fewest bytes for the precision above.
// Other writers store them otherwise (Spark's legacy mode and some Arrow
// writers always use fixed_len_byte_array, a few use byte_array), and a
// file written before a precision promotion holds a narrower form: such
// columns are read through arrow-go's reader and converted value by value.

// decimalLogical is arrow-go's decimal logical type (a value or a
// pointer, depending on how the schema was built).
type decimalLogical interface {
	schema.LogicalType
	Precision() int32
	Scale() int32
}

// decimalSourceOK says whether the file's column s holds decimals the
// output column c (of decimal type dt) can take: the same scale, a
// precision no larger, in any physical form Parquet allows for decimals.
func decimalSourceOK(s *schema.Column, dt spec.DecimalType) bool {
	l, ok := s.LogicalType().(decimalLogical)
	if !ok || int(l.Scale()) != dt.Scale || int(l.Precision()) > dt.Precision {
		return false
	}
	switch s.PhysicalType() {
	case parquet.Types.Int32, parquet.Types.Int64, parquet.Types.ByteArray:
		return true
	case parquet.Types.FixedLenByteArray:
		return s.TypeLength() > 0
	}
	return false
}

// sameForm says whether the file's column stores values exactly as the
// output column does, so that they are copied without conversion.
func sameForm(s, out *schema.Column) bool {
	if s.PhysicalType() != out.PhysicalType() {
		return false
	}
	return s.PhysicalType() != parquet.Types.FixedLenByteArray || s.TypeLength() == out.TypeLength()
}

// openDecimal is the reader of a decimal column of output descriptor out:
// arrow-go's typed reader when the file stores the output's form, a
// converting one otherwise.
func openDecimal[T any, R pageReader[T]](out *schema.Column) func(file.ColumnChunkReader) (pageReader[T], error) {
	return func(cr file.ColumnChunkReader) (pageReader[T], error) {
		if sameForm(cr.Descriptor(), out) {
			return readerOf[T, R](cr)
		}
		var src decimalSource
		switch r := cr.(type) {
		case *file.Int32ColumnChunkReader:
			src = &decimalFrom[int32]{r: r, conv: func(v int32) (decimal128.Num, error) { return decimal128.FromI64(int64(v)), nil }}
		case *file.Int64ColumnChunkReader:
			src = &decimalFrom[int64]{r: r, conv: func(v int64) (decimal128.Num, error) { return decimal128.FromI64(v), nil }}
		case *file.FixedLenByteArrayColumnChunkReader:
			src = &decimalFrom[parquet.FixedLenByteArray]{r: r, conv: func(v parquet.FixedLenByteArray) (decimal128.Num, error) { return decimalFromBytes(v) }}
		case *file.ByteArrayColumnChunkReader:
			src = &decimalFrom[parquet.ByteArray]{r: r, conv: func(v parquet.ByteArray) (decimal128.Num, error) { return decimalFromBytes(v) }}
		default:
			return nil, fmt.Errorf("unexpected decimal column reader %T", cr)
		}
		return &decimalReader[T]{src: src, prec: int32(decimalPrecision(out)), size: out.TypeLength()}, nil
	}
}

func decimalPrecision(c *schema.Column) int {
	if l, ok := c.LogicalType().(decimalLogical); ok {
		return int(l.Precision())
	}
	return 38
}

// decimalSource reads decimals of one physical form.
type decimalSource interface {
	HasNext() bool
	Skip(int64) (int64, error)
	read(n int64, out []decimal128.Num, def, rep []int16) (int64, int, error)
}

type decimalFrom[S any] struct {
	r    pageReader[S]
	buf  []S
	conv func(S) (decimal128.Num, error)
}

func (d *decimalFrom[S]) HasNext() bool { return d.r.HasNext() }

func (d *decimalFrom[S]) Skip(n int64) (int64, error) { return d.r.Skip(n) }

func (d *decimalFrom[S]) read(n int64, out []decimal128.Num, def, rep []int16) (int64, int, error) {
	if len(d.buf) < len(out) {
		d.buf = make([]S, len(out))
	}
	total, nv, err := d.r.ReadBatchInPage(n, d.buf[:len(out)], def, rep)
	if err != nil {
		return 0, 0, err
	}
	for i := range nv {
		if out[i], err = d.conv(d.buf[i]); err != nil {
			return 0, 0, err
		}
	}
	return total, nv, nil
}

// decimalReader converts a decimalSource's values to the output's
// physical type T. Fixed-length values live in buf until the next read.
type decimalReader[T any] struct {
	src  decimalSource
	prec int32
	size int // fixed_len_byte_array length of the output
	nums []decimal128.Num
	buf  []byte
}

func (d *decimalReader[T]) HasNext() bool { return d.src.HasNext() }

func (d *decimalReader[T]) Skip(n int64) (int64, error) { return d.src.Skip(n) }

func (d *decimalReader[T]) ReadBatchInPage(n int64, vals []T, def, rep []int16) (int64, int, error) {
	if len(d.nums) < len(vals) {
		d.nums = make([]decimal128.Num, len(vals))
	}
	total, nv, err := d.src.read(n, d.nums[:len(vals)], def, rep)
	if err != nil {
		return 0, 0, err
	}
	nums := d.nums[:nv]
	for _, x := range nums {
		if !x.FitsInPrecision(d.prec) {
			return 0, 0, fmt.Errorf("decimal %s does not fit precision %d", x.BigInt(), d.prec)
		}
	}
	switch out := any(vals).(type) {
	case []int32:
		for i, x := range nums {
			out[i] = int32(x.LowBits())
		}
	case []int64:
		for i, x := range nums {
			out[i] = int64(x.LowBits())
		}
	case []parquet.FixedLenByteArray:
		if need := nv * d.size; cap(d.buf) < need {
			d.buf = make([]byte, need)
		}
		for i, x := range nums {
			b := d.buf[i*d.size : (i+1)*d.size : (i+1)*d.size]
			putDecimalBytes(b, x)
			out[i] = b
		}
	default:
		return 0, 0, fmt.Errorf("unexpected decimal output %T", vals)
	}
	return total, nv, nil
}

// decimalFromBytes reads a big-endian two's complement unscaled value.
func decimalFromBytes(b []byte) (decimal128.Num, error) {
	if len(b) == 0 {
		return decimal128.Num{}, fmt.Errorf("empty decimal value")
	}
	fill := byte(0)
	if b[0]&0x80 != 0 {
		fill = 0xff
	}
	for len(b) > 16 {
		if b[0] != fill {
			return decimal128.Num{}, fmt.Errorf("decimal value of %d bytes exceeds 128 bits", len(b))
		}
		b = b[1:]
	}
	var w [16]byte
	for i := range 16 - len(b) {
		w[i] = fill
	}
	copy(w[16-len(b):], b)
	return decimal128.New(int64(binary.BigEndian.Uint64(w[:8])), binary.BigEndian.Uint64(w[8:])), nil
}

// putDecimalBytes writes x big-endian into b, which is wide enough for
// x's precision (the bytes cut off are sign extension).
func putDecimalBytes(b []byte, x decimal128.Num) {
	var w [16]byte
	binary.BigEndian.PutUint64(w[:8], uint64(x.HighBits()))
	binary.BigEndian.PutUint64(w[8:], x.LowBits())
	copy(b, w[16-len(b):])
}

// decimalDefault is an initial-default decimal as the output column's
// physical value.
func decimalDefault(d spec.Decimal, out *schema.Column) (any, error) {
	if d.Unscaled == nil {
		return nil, fmt.Errorf("decimal default without a value")
	}
	if d.Unscaled.BitLen() > 127 {
		return nil, fmt.Errorf("decimal default %s exceeds 128 bits", d.Unscaled)
	}
	x := decimal128.FromBigInt(d.Unscaled)
	if !x.FitsInPrecision(int32(decimalPrecision(out))) {
		return nil, fmt.Errorf("decimal default %s does not fit precision %d", d.Unscaled, decimalPrecision(out))
	}
	switch out.PhysicalType() {
	case parquet.Types.Int32:
		return int32(x.LowBits()), nil
	case parquet.Types.Int64:
		return int64(x.LowBits()), nil
	case parquet.Types.FixedLenByteArray:
		b := make([]byte, out.TypeLength())
		putDecimalBytes(b, x)
		return parquet.FixedLenByteArray(b), nil
	}
	return nil, fmt.Errorf("decimal default for a %s column", out.PhysicalType())
}

// observeDecimalBytes records fixed-length decimals in a.
func observeDecimalBytes(a *metricsDecimalAcc, vals []parquet.FixedLenByteArray) {
	for _, b := range vals {
		v, err := decimalFromBytes(b)
		if err != nil {
			continue // never: values are at least one byte long
		}
		switch {
		case !a.has128:
			a.min, a.max, a.has128 = v, v, true
		case v.Less(a.min):
			a.min = v
		case v.Greater(a.max):
			a.max = v
		}
	}
}
