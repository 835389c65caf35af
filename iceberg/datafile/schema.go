package datafile

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icectl/icectl/iceberg/spec"
)

// FieldIDKey is the Arrow field metadata key holding the Parquet field id,
// which is the Iceberg field id.
const FieldIDKey = "PARQUET:field_id"

// Names of the metadata columns a Reader can add.
const (
	PosColumnName = "_pos"
)

// SchemaOption adds metadata columns to the Arrow schema built by ArrowSchema.
type SchemaOption func(*schemaOptions)

type schemaOptions struct {
	pos, lineage bool
}

// WithPosColumn appends the _pos column (int64, id 2147483645).
func WithPosColumn() SchemaOption { return func(o *schemaOptions) { o.pos = true } }

// WithLineageColumns appends _row_id and _last_updated_sequence_number when
// the schema does not already hold them.
func WithLineageColumns() SchemaOption { return func(o *schemaOptions) { o.lineage = true } }

// ArrowSchema converts an Iceberg schema to Arrow, each field carrying its
// field id under FieldIDKey. Columns of type unknown are left out: they are
// never stored and always read as null.
func ArrowSchema(s *spec.Schema, opts ...SchemaOption) (*arrow.Schema, error) {
	var o schemaOptions
	for _, opt := range opts {
		opt(&o)
	}
	fields, err := arrowFields(s.Fields)
	if err != nil {
		return nil, err
	}
	if o.pos && !hasTopField(s, spec.FieldIDMetaPos) {
		fields = append(fields, metaField(spec.FieldIDMetaPos, PosColumnName, false))
	}
	if o.lineage {
		if !hasTopField(s, spec.FieldIDRowID) {
			fields = append(fields, metaField(spec.FieldIDRowID, spec.RowIDColumnName, true))
		}
		if !hasTopField(s, spec.FieldIDLastUpdatedSequenceNumber) {
			fields = append(fields, metaField(spec.FieldIDLastUpdatedSequenceNumber, spec.LastUpdatedSequenceNumberColumn, true))
		}
	}
	return arrow.NewSchema(fields, nil), nil
}

// SchemaWithLineage returns s with the _row_id and
// _last_updated_sequence_number columns appended when missing: the schema a
// Writer needs to carry row lineage into a new file.
func SchemaWithLineage(s *spec.Schema) *spec.Schema {
	out := *s
	out.Fields = append([]spec.NestedField(nil), s.Fields...)
	if !hasTopField(s, spec.FieldIDRowID) {
		out.Fields = append(out.Fields, spec.NestedField{ID: spec.FieldIDRowID, Name: spec.RowIDColumnName, Type: spec.LongType{}})
	}
	if !hasTopField(s, spec.FieldIDLastUpdatedSequenceNumber) {
		out.Fields = append(out.Fields, spec.NestedField{ID: spec.FieldIDLastUpdatedSequenceNumber, Name: spec.LastUpdatedSequenceNumberColumn, Type: spec.LongType{}})
	}
	return &out
}

func hasTopField(s *spec.Schema, id int) bool {
	for _, f := range s.Fields {
		if f.ID == id {
			return true
		}
	}
	return false
}

func metaField(id int, name string, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: nullable, Metadata: idMeta(id)}
}

func idMeta(id int) arrow.Metadata {
	return arrow.NewMetadata([]string{FieldIDKey}, []string{strconv.Itoa(id)})
}

// fieldID returns the field id stored in an Arrow field's metadata.
func fieldID(f arrow.Field) (int, bool) {
	i := f.Metadata.FindKey(FieldIDKey)
	if i < 0 {
		return 0, false
	}
	id, err := strconv.Atoi(f.Metadata.Values()[i])
	if err != nil || id < 0 {
		return 0, false
	}
	return id, true
}

func arrowFields(fields []spec.NestedField) ([]arrow.Field, error) {
	out := make([]arrow.Field, 0, len(fields))
	for _, f := range fields {
		if _, ok := f.Type.(spec.UnknownType); ok {
			continue
		}
		af, err := arrowField(f.ID, f.Name, f.Type, f.Required)
		if err != nil {
			return nil, err
		}
		out = append(out, af)
	}
	return out, nil
}

func arrowField(id int, name string, t spec.Type, required bool) (arrow.Field, error) {
	dt, err := arrowType(t)
	if err != nil {
		return arrow.Field{}, fmt.Errorf("field %d (%s): %w", id, name, err)
	}
	return arrow.Field{Name: name, Type: dt, Nullable: !required, Metadata: idMeta(id)}, nil
}

// arrowType maps an Iceberg type to the Arrow type the Reader produces and
// the Writer accepts.
func arrowType(t spec.Type) (arrow.DataType, error) {
	switch t := t.(type) {
	case spec.BooleanType:
		return arrow.FixedWidthTypes.Boolean, nil
	case spec.IntType:
		return arrow.PrimitiveTypes.Int32, nil
	case spec.LongType:
		return arrow.PrimitiveTypes.Int64, nil
	case spec.FloatType:
		return arrow.PrimitiveTypes.Float32, nil
	case spec.DoubleType:
		return arrow.PrimitiveTypes.Float64, nil
	case spec.DateType:
		return arrow.FixedWidthTypes.Date32, nil
	case spec.TimeType:
		return arrow.FixedWidthTypes.Time64us, nil
	case spec.TimestampType:
		return &arrow.TimestampType{Unit: arrow.Microsecond}, nil
	case spec.TimestampTzType:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil
	case spec.TimestampNsType:
		return &arrow.TimestampType{Unit: arrow.Nanosecond}, nil
	case spec.TimestampTzNsType:
		return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, nil
	case spec.StringType:
		return arrow.BinaryTypes.String, nil
	case spec.UUIDType:
		return &arrow.FixedSizeBinaryType{ByteWidth: 16}, nil
	case spec.FixedType:
		if t.Length <= 0 {
			return nil, fmt.Errorf("invalid type %s", t)
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: t.Length}, nil
	case spec.BinaryType, spec.GeometryType, spec.GeographyType:
		return arrow.BinaryTypes.Binary, nil
	case spec.DecimalType:
		if t.Precision < 1 || t.Precision > 38 || t.Scale < 0 || t.Scale > t.Precision {
			return nil, fmt.Errorf("invalid type %s", t)
		}
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}, nil
	case spec.VariantType:
		return nil, fmt.Errorf("type variant is not supported by icectl's Parquet reader and writer yet")
	case spec.UnknownType:
		return arrow.Null, nil
	case *spec.StructType:
		fields, err := arrowFields(t.Fields)
		if err != nil {
			return nil, err
		}
		if len(fields) == 0 {
			return nil, fmt.Errorf("struct with no stored fields cannot be represented in Parquet")
		}
		return arrow.StructOf(fields...), nil
	case *spec.ListType:
		el, err := arrowField(t.ElementID, "element", t.Element, t.ElementRequired)
		if err != nil {
			return nil, err
		}
		return arrow.ListOfField(el), nil
	case *spec.MapType:
		k, err := arrowField(t.KeyID, "key", t.Key, true)
		if err != nil {
			return nil, err
		}
		v, err := arrowField(t.ValueID, "value", t.Value, t.ValueRequired)
		if err != nil {
			return nil, err
		}
		return arrow.MapOfFields(k, v), nil
	case nil:
		return nil, fmt.Errorf("missing type")
	}
	return nil, fmt.Errorf("unsupported type %s", t)
}
