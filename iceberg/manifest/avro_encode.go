package manifest

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/hamba/avro/v2"
	"github.com/hamba/avro/v2/ocf"
	"github.com/icectl/icectl/iceberg/spec"
)

// plainWriter hides an *os.File from ocf.NewEncoder, which would otherwise
// append to a non-empty file instead of writing a new one.
type plainWriter struct{ io.Writer }

// javaSyncInterval is the uncompressed bytes per block Java's Avro
// DataFileWriter writes (DataFileConstants.DEFAULT_SYNC_INTERVAL).
const javaSyncInterval = 64000

// newOCF starts a deflate-compressed container with the exact schema JSON
// given, so the file carries Java's schema text rather than hamba's
// canonical form.
func newOCF(w io.Writer, schemaJSON string, meta map[string][]byte, schemas *SchemaCache) (*ocf.Encoder, error) {
	schema, err := schemas.parse(schemaJSON)
	if err != nil {
		return nil, fmt.Errorf("parse generated avro schema: %w", err)
	}
	return ocf.NewEncoderWithSchema(schema, plainWriter{w},
		ocf.WithCodec(ocf.Deflate),
		// Blocks close at Java's sync interval (bytes), not at hamba's
		// default of 100 entries: each block costs a new deflate
		// compressor (about 1 MiB of allocation), which dominated writing
		// manifests of small entries.
		ocf.WithBlockLength(1<<30),
		ocf.WithBlockSize(javaSyncInterval),
		ocf.WithMetadata(meta),
		ocf.WithEncoderSchemaCache(&avro.SchemaCache{}),
		ocf.WithSchemaMarshaler(func(avro.Schema) ([]byte, error) { return []byte(schemaJSON), nil }),
	)
}

func writeOptLong(w *avro.Writer, v *int64) {
	if v == nil {
		w.WriteLong(0)
		return
	}
	w.WriteLong(1)
	w.WriteLong(*v)
}

func writeOptInt(w *avro.Writer, v *int32) {
	if v == nil {
		w.WriteLong(0)
		return
	}
	w.WriteLong(1)
	w.WriteInt(*v)
}

func writeOptBytes(w *avro.Writer, v []byte) {
	if v == nil {
		w.WriteLong(0)
		return
	}
	w.WriteLong(1)
	w.WriteBytes(v)
}

func writeLongMap(w *avro.Writer, m map[int]int64) {
	if m == nil {
		w.WriteLong(0)
		return
	}
	w.WriteLong(1)
	if len(m) > 0 {
		w.WriteLong(int64(len(m)))
		for _, k := range sortedKeys(m) {
			w.WriteInt(int32(k))
			w.WriteLong(m[k])
		}
	}
	w.WriteLong(0)
}

func writeBytesMap(w *avro.Writer, m map[int][]byte) {
	if m == nil {
		w.WriteLong(0)
		return
	}
	w.WriteLong(1)
	if len(m) > 0 {
		w.WriteLong(int64(len(m)))
		for _, k := range sortedKeys(m) {
			w.WriteInt(int32(k))
			w.WriteBytes(m[k])
		}
	}
	w.WriteLong(0)
}

func sortedKeys[V any](m map[int]V) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

// writePartitionValue writes a non-null partition value of type t.
func writePartitionValue(w *avro.Writer, t spec.Type, v any) error {
	bad := fmt.Errorf("partition value %v (%T) does not fit type %s", v, v, t)
	switch t.(type) {
	case spec.BooleanType:
		b, ok := v.(bool)
		if !ok {
			return bad
		}
		w.WriteBool(b)
	case spec.IntType, spec.DateType:
		i, ok := v.(int32)
		if !ok {
			return bad
		}
		w.WriteInt(i)
	case spec.LongType, spec.TimeType, spec.TimestampType, spec.TimestampTzType, spec.TimestampNsType, spec.TimestampTzNsType:
		i, ok := v.(int64)
		if !ok {
			return bad
		}
		w.WriteLong(i)
	case spec.FloatType:
		f, ok := v.(float32)
		if !ok {
			return bad
		}
		w.WriteFloat(f)
	case spec.DoubleType:
		f, ok := v.(float64)
		if !ok {
			return bad
		}
		w.WriteDouble(f)
	case spec.StringType:
		s, ok := v.(string)
		if !ok {
			return bad
		}
		w.WriteString(s)
	case spec.UUIDType:
		u, ok := v.([16]byte)
		if !ok {
			return bad
		}
		_, _ = w.Write(u[:])
	case spec.FixedType:
		b, ok := v.([]byte)
		if !ok || len(b) != t.(spec.FixedType).Length {
			return bad
		}
		_, _ = w.Write(b)
	case spec.BinaryType, spec.GeometryType, spec.GeographyType:
		b, ok := v.([]byte)
		if !ok {
			return bad
		}
		w.WriteBytes(b)
	case spec.DecimalType:
		d, ok := v.(spec.Decimal)
		if !ok || d.Unscaled == nil || d.Scale != t.(spec.DecimalType).Scale {
			return bad
		}
		n := decimalRequiredBytes(t.(spec.DecimalType).Precision)
		b := spec.BigIntToTwosComplement(d.Unscaled)
		if len(b) > n {
			return fmt.Errorf("decimal %s does not fit %s", d, t)
		}
		pad := byte(0)
		if d.Unscaled.Sign() < 0 {
			pad = 0xff
		}
		_, _ = w.Write(bytes.Repeat([]byte{pad}, n-len(b)))
		_, _ = w.Write(b)
	default:
		return fmt.Errorf("partition type %s cannot be written", t)
	}
	return nil
}

func itoa64(v int64) []byte { return []byte(strconv.FormatInt(v, 10)) }
