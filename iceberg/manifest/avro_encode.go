package manifest

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/hamba/avro/v2"
	"github.com/klauspost/compress/flate"

	"github.com/icectl/icectl/iceberg/spec"
)

// ocfWriter writes an Avro object container of records the caller has
// encoded, in deflate-compressed blocks that close at Java's sync interval
// (javaSyncInterval uncompressed bytes), as Java's DataFileWriter writes
// them. It is what hamba's ocf.Encoder does, except that one deflate
// compressor serves
// every block of the file: ocf.Encoder makes a new one for each block
// (about 1 MB of state, zeroed), so a commit writing a manifest of 100,000
// entries allocated a gigabyte in them, and its memory and CPU went to
// that and to the collector.
type ocfWriter struct {
	out   io.Writer
	sync  [16]byte
	block bytes.Buffer // the records of the current block
	n     int          // records in block
	z     bytes.Buffer // the block compressed
	fw    *flate.Writer
	hdr   []byte
}

// javaSyncInterval is the uncompressed bytes per block Java's Avro
// DataFileWriter writes (DataFileConstants.DEFAULT_SYNC_INTERVAL).
const javaSyncInterval = 64000

// newOCF starts a deflate-compressed container with the exact schema JSON
// given, so the file carries Java's schema text rather than hamba's
// canonical form.
func newOCF(w io.Writer, schemaJSON string, meta map[string][]byte, schemas *SchemaCache) (*ocfWriter, error) {
	if _, err := schemas.parse(schemaJSON); err != nil {
		return nil, fmt.Errorf("parse generated avro schema: %w", err)
	}
	fw, err := flate.NewWriter(nil, flate.DefaultCompression)
	if err != nil {
		return nil, err
	}
	o := &ocfWriter{out: w, fw: fw}
	if _, err := rand.Read(o.sync[:]); err != nil {
		return nil, fmt.Errorf("container sync marker: %w", err)
	}
	// The header: magic, the metadata map (one block, keys sorted so the
	// bytes do not depend on map order), the sync marker.
	all := make(map[string][]byte, len(meta)+2)
	for k, v := range meta {
		all[k] = v
	}
	all["avro.schema"] = []byte(schemaJSON)
	all["avro.codec"] = []byte("deflate")
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := []byte("Obj\x01")
	h = binary.AppendVarint(h, int64(len(keys)))
	for _, k := range keys {
		h = binary.AppendVarint(h, int64(len(k)))
		h = append(h, k...)
		h = binary.AppendVarint(h, int64(len(all[k])))
		h = append(h, all[k]...)
	}
	h = binary.AppendVarint(h, 0)
	h = append(h, o.sync[:]...)
	if _, err := w.Write(h); err != nil {
		return nil, err
	}
	return o, nil
}

// Write adds one encoded record.
func (o *ocfWriter) Write(rec []byte) (int, error) {
	o.block.Write(rec)
	o.n++
	if o.block.Len() >= javaSyncInterval {
		if err := o.flush(); err != nil {
			return 0, err
		}
	}
	return len(rec), nil
}

// flush writes the records buffered as one block: record count, byte
// length (Avro longs: zigzag varints, as Go's binary.AppendVarint), the
// raw deflate data, the sync marker.
func (o *ocfWriter) flush() error {
	if o.n == 0 {
		return nil
	}
	o.z.Reset()
	o.fw.Reset(&o.z)
	if _, err := o.fw.Write(o.block.Bytes()); err != nil {
		return err
	}
	if err := o.fw.Close(); err != nil {
		return err
	}
	o.hdr = binary.AppendVarint(o.hdr[:0], int64(o.n))
	o.hdr = binary.AppendVarint(o.hdr, int64(o.z.Len()))
	o.z.Write(o.sync[:])
	o.block.Reset()
	o.n = 0
	if _, err := o.out.Write(o.hdr); err != nil {
		return err
	}
	_, err := o.out.Write(o.z.Bytes())
	return err
}

// Close writes the last block.
func (o *ocfWriter) Close() error { return o.flush() }

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
	// Built only when a value does not fit: formatting it for every value
	// written was most of what writing a partition tuple cost.
	bad := func() error { return fmt.Errorf("partition value %v (%T) does not fit type %s", v, v, t) }
	switch t.(type) {
	case spec.BooleanType:
		b, ok := v.(bool)
		if !ok {
			return bad()
		}
		w.WriteBool(b)
	case spec.IntType, spec.DateType:
		i, ok := v.(int32)
		if !ok {
			return bad()
		}
		w.WriteInt(i)
	case spec.LongType, spec.TimeType, spec.TimestampType, spec.TimestampTzType, spec.TimestampNsType, spec.TimestampTzNsType:
		i, ok := v.(int64)
		if !ok {
			return bad()
		}
		w.WriteLong(i)
	case spec.FloatType:
		f, ok := v.(float32)
		if !ok {
			return bad()
		}
		w.WriteFloat(f)
	case spec.DoubleType:
		f, ok := v.(float64)
		if !ok {
			return bad()
		}
		w.WriteDouble(f)
	case spec.StringType:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		w.WriteString(s)
	case spec.UUIDType:
		u, ok := v.([16]byte)
		if !ok {
			return bad()
		}
		_, _ = w.Write(u[:])
	case spec.FixedType:
		b, ok := v.([]byte)
		if !ok || len(b) != t.(spec.FixedType).Length {
			return bad()
		}
		_, _ = w.Write(b)
	case spec.BinaryType, spec.GeometryType, spec.GeographyType:
		b, ok := v.([]byte)
		if !ok {
			return bad()
		}
		w.WriteBytes(b)
	case spec.DecimalType:
		d, ok := v.(spec.Decimal)
		if !ok || d.Unscaled == nil || d.Scale != t.(spec.DecimalType).Scale {
			return bad()
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
