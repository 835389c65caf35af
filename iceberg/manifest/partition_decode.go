package manifest

import (
	"fmt"

	"github.com/hamba/avro/v2"
	"github.com/icectl/icectl/iceberg/spec"
)

// partitionDecoder builds the decoder of the partition record (field 102).
// Values land at the index of their spec field, matched by field id; a field
// the spec does not list is skipped. types holds each spec field's Iceberg
// result type, nil where it is unknown (the Avro type then decides).
func partitionDecoder(s avro.Schema, fields []spec.PartitionField, types []spec.Type) (func(*avro.Reader, *DataFile), error) {
	rec, ok := resolve(s).(*avro.RecordSchema)
	if !ok {
		return nil, typeErr(s, "partition record")
	}
	index := make(map[int]int, len(fields))
	for i, f := range fields {
		index[f.FieldID] = i
	}
	n := len(fields)
	steps := make([]func(*avro.Reader, []any), 0, len(rec.Fields()))
	for _, f := range rec.Fields() {
		id, ok := fieldID(f)
		pos, known := index[id]
		if !ok || !known {
			sk, err := skipper(f.Type(), nil)
			if err != nil {
				return nil, fmt.Errorf("partition field %s: %w", f.Name(), err)
			}
			steps = append(steps, func(r *avro.Reader, _ []any) { sk(r) })
			continue
		}
		rd, err := nullable(f.Type(), func(s avro.Schema) (func(*avro.Reader) any, error) {
			return partitionValueBase(s, types[pos])
		})
		if err != nil {
			return nil, fmt.Errorf("partition field %s (id %d) %w", f.Name(), id, err)
		}
		steps = append(steps, func(r *avro.Reader, dst []any) {
			if v, ok := rd(r); ok {
				dst[pos] = v
			}
		})
	}
	return func(r *avro.Reader, d *DataFile) {
		d.Partition = make([]any, n)
		for _, s := range steps {
			s(r, d.Partition)
		}
	}, nil
}

// partitionValueBase reads one non-null partition value written with Avro
// type s, as the Go value for Iceberg type t (or for s when t is nil).
func partitionValueBase(s avro.Schema, t spec.Type) (func(*avro.Reader) any, error) {
	logical := ""
	var dec *avro.DecimalLogicalSchema
	if ls, ok := s.(avro.LogicalTypeSchema); ok && ls.Logical() != nil {
		logical = string(ls.Logical().Type())
		dec, _ = ls.Logical().(*avro.DecimalLogicalSchema)
	}
	switch s.Type() {
	case avro.Boolean:
		return func(r *avro.Reader) any { return r.ReadBool() }, nil
	case avro.Int:
		switch t.(type) {
		case spec.LongType, spec.TimeType, spec.TimestampType, spec.TimestampTzType, spec.TimestampNsType, spec.TimestampTzNsType:
			return func(r *avro.Reader) any { return int64(r.ReadInt()) }, nil
		}
		return func(r *avro.Reader) any { return r.ReadInt() }, nil
	case avro.Long:
		return func(r *avro.Reader) any { return r.ReadLong() }, nil
	case avro.Float:
		if _, ok := t.(spec.DoubleType); ok {
			return func(r *avro.Reader) any { return float64(r.ReadFloat()) }, nil
		}
		return func(r *avro.Reader) any { return r.ReadFloat() }, nil
	case avro.Double:
		return func(r *avro.Reader) any { return r.ReadDouble() }, nil
	case avro.String:
		return func(r *avro.Reader) any { return r.ReadString() }, nil
	case avro.Bytes, avro.Fixed:
		raw, err := bytesBase(s)
		if err != nil {
			return nil, err
		}
		scale, isDec := 0, false
		if dt, ok := t.(spec.DecimalType); ok {
			scale, isDec = dt.Scale, true
		} else if t == nil && dec != nil {
			scale, isDec = dec.Scale(), true
		}
		_, isUUID := t.(spec.UUIDType)
		if t == nil && logical == "uuid" {
			isUUID = true
		}
		switch {
		case isDec:
			return func(r *avro.Reader) any {
				b := raw(r)
				if len(b) == 0 {
					r.ReportError("decimal", "empty decimal value")
					return nil
				}
				return spec.Decimal{Unscaled: spec.TwosComplementToBigInt(b), Scale: scale}
			}, nil
		case isUUID:
			return func(r *avro.Reader) any {
				b := raw(r)
				var u [16]byte
				if len(b) != 16 {
					r.ReportError("uuid", fmt.Sprintf("uuid value has %d bytes, want 16", len(b)))
					return u
				}
				copy(u[:], b)
				return u
			}, nil
		}
		if _, ok := t.(spec.StringType); ok && s.Type() == avro.Bytes {
			return func(r *avro.Reader) any { return string(raw(r)) }, nil
		}
		return func(r *avro.Reader) any { return raw(r) }, nil
	}
	return nil, typeErr(s, "a primitive partition value")
}
