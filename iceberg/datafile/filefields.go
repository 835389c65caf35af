package datafile

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// fileField is a column of the file as pqarrow reads it, with the Iceberg
// field id it is matched by: the Parquet field id, or the one the name
// mapping gives. id is -1 when neither says.
type fileField struct {
	id       int
	field    arrow.Field
	children []*fileField // struct fields; list: element; map: key, value
}

// fileFields builds the id tree of a file's top-level columns from the
// field ids stored in the file.
func fileFields(fields []arrow.Field) []*fileField {
	out := make([]*fileField, len(fields))
	for i, f := range fields {
		out[i] = newFileField(f)
	}
	return out
}

func newFileField(f arrow.Field) *fileField {
	ff := &fileField{id: -1, field: f}
	if id, ok := fieldID(f); ok {
		ff.id = id
	}
	for _, c := range childFields(f.Type) {
		ff.children = append(ff.children, newFileField(c))
	}
	return ff
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

// anyFieldID reports whether any column of the file carries a field id.
func anyFieldID(ffs []*fileField) bool {
	for _, ff := range ffs {
		if ff.id >= 0 || anyFieldID(ff.children) {
			return true
		}
	}
	return false
}

func findByID(ffs []*fileField, id int) (int, *fileField) {
	for i, ff := range ffs {
		if ff.id == id {
			return i, ff
		}
	}
	return -1, nil
}
