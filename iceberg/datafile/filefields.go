package datafile

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// fileField is a column of the file as pqarrow reads it, with the Iceberg
// field id resolveIDs gives it (-1: none).
type fileField struct {
	id       int
	field    arrow.Field
	children []*fileField // struct fields; list: element; map: key, value
}

// fileFields lines the Arrow fields pqarrow reads for a file's top-level
// columns up with the fields ids resolves (in the same order and shape).
func fileFields(fields []arrow.Field, ids []*idField) []*fileField {
	out := make([]*fileField, len(fields))
	for i, f := range fields {
		out[i] = newFileField(f, at(ids, i))
	}
	return out
}

func newFileField(f arrow.Field, idf *idField) *fileField {
	ff := &fileField{id: -1, field: f}
	var kids []*idField
	if idf != nil {
		ff.id = int(idf.id)
		if idf.shape == arrowShape(f.Type) {
			kids = idf.children
		}
	}
	for i, c := range childFields(f.Type) {
		ff.children = append(ff.children, newFileField(c, at(kids, i)))
	}
	return ff
}

func at(fs []*idField, i int) *idField {
	if i < len(fs) {
		return fs[i]
	}
	return nil
}

// arrowShape is how an Arrow type nests; an extension type (a variant)
// is read whole.
func arrowShape(dt arrow.DataType) shape {
	switch dt.(type) {
	case *arrow.StructType:
		return shapeStruct
	case *arrow.MapType:
		return shapeMap
	case arrow.ListLikeType:
		return shapeList
	}
	return shapePrimitive
}

// childFields lists the children a fileField tracks for a nested type.
func childFields(dt arrow.DataType) []arrow.Field {
	switch t := dt.(type) {
	case *arrow.StructType:
		return t.Fields()
	case *arrow.MapType:
		return []arrow.Field{t.KeyField(), t.ItemField()}
	case arrow.ListLikeType:
		return []arrow.Field{t.ElemField()}
	}
	return nil
}

func findByID(ffs []*fileField, id int) (int, *fileField) {
	for i, ff := range ffs {
		if ff.id == id {
			return i, ff
		}
	}
	return -1, nil
}
