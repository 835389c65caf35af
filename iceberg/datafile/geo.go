package datafile

import (
	"errors"
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/icectl/icectl/iceberg/spec"
)

// geoType is the write type of a geometry or geography column: WKB in a
// binary column that pqarrow annotates with the Parquet GEOMETRY or
// GEOGRAPHY logical type (pqarrow.ExtensionCustomParquetType), as the
// spec's Parquet type mapping asks. Written as plain BYTE_ARRAY, the
// column no longer says what it holds: readers that check the annotation
// (iceberg-go) refuse to read it as geometry, so a compaction of another
// writer's files would have turned a readable column into an unreadable
// one. It is not registered: the Reader still reads such a column as
// binary, the storage type.
type geoType struct {
	arrow.ExtensionBase
	logical schema.LogicalType
}

// geoArray is the array type of geoType.
type geoArray struct{ array.ExtensionArrayBase }

func newGeoType(t spec.Type) *geoType {
	var lt schema.LogicalType
	switch t := t.(type) {
	case spec.GeometryType:
		lt = schema.GeometryLogicalType{Crs: t.CRS}
	case spec.GeographyType:
		// Iceberg and Parquet name the edge algorithms alike.
		lt = schema.GeographyLogicalType{Crs: t.CRS, Algorithm: schema.GeographyEdgeInterpolationAlgorithm(t.Algorithm)}
	}
	return &geoType{ExtensionBase: arrow.ExtensionBase{Storage: arrow.BinaryTypes.Binary}, logical: lt}
}

func (t *geoType) ParquetLogicalType() schema.LogicalType { return t.logical }

func (*geoType) ArrayType() reflect.Type { return reflect.TypeOf(geoArray{}) }

func (*geoType) ExtensionName() string { return "icectl.geospatial" }

func (t *geoType) Serialize() string { return t.logical.String() }

func (t *geoType) Deserialize(storage arrow.DataType, data string) (arrow.ExtensionType, error) {
	return nil, errGeoNotRegistered
}

func (t *geoType) ExtensionEquals(other arrow.ExtensionType) bool {
	o, ok := other.(*geoType)
	return ok && t.logical.Equals(o.logical)
}

var errGeoNotRegistered = errors.New("icectl.geospatial is a write type and is never deserialized")
