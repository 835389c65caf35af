package datafile

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/spec"
)

// conform turns a column read from the file into the requested field's
// Arrow type: nested fields matched by id, missing ones filled from defaults,
// names taken from the requested schema, types promoted. The result has the
// same length and values as arr.
// conform converts a file's column to field f's type. consts are the
// file's partition constants: a field of a stored struct that has one is
// the constant in every row, as Java's struct readers give it.
func conform(mem memory.Allocator, arr arrow.Array, ff *fileField, f spec.NestedField, dt arrow.DataType, consts Constants) (arrow.Array, error) {
	if ext, ok := arr.(array.ExtensionArray); ok {
		arr = ext.Storage()
	}
	switch t := f.Type.(type) {
	case *spec.StructType:
		return conformStruct(mem, arr, ff, f, t, dt.(*arrow.StructType), consts)
	case *spec.ListType:
		return conformList(mem, arr, ff, f, t, dt.(*arrow.ListType))
	case *spec.MapType:
		return conformMap(mem, arr, ff, f, t, dt.(*arrow.MapType))
	}
	out, err := promote(mem, arr, dt)
	if err != nil {
		return nil, fmt.Errorf("field %d (%s): %w", f.ID, f.Name, err)
	}
	return out, nil
}

func conformStruct(mem memory.Allocator, arr arrow.Array, ff *fileField, f spec.NestedField, st *spec.StructType, dt *arrow.StructType, consts Constants) (arrow.Array, error) {
	if arr.DataType().ID() != arrow.STRUCT {
		return nil, fmt.Errorf("field %d (%s): file column is %s, not a struct", f.ID, f.Name, arr.DataType())
	}
	data := arr.Data()
	rawLen := data.Offset() + data.Len()
	var kids []arrow.ArrayData
	defer func() {
		for _, k := range kids {
			k.Release()
		}
	}()
	i := 0
	for _, child := range st.Fields {
		if _, ok := child.Type.(spec.UnknownType); ok {
			continue
		}
		cdt := dt.Field(i).Type
		i++
		var col arrow.Array
		var err error
		if v, ok, cerr := resolveConstant(consts, child); cerr != nil {
			err = cerr
		} else if ok {
			col, err = constantColumn(mem, child, cdt, v, rawLen)
		} else if j, cff := findByID(ff.children, child.ID); cff != nil {
			raw := array.MakeFromData(data.Children()[j])
			col, err = conform(mem, raw, cff, child, cdt, consts)
			raw.Release()
		} else {
			col, err = missingColumn(mem, child, cdt, rawLen)
		}
		if err != nil {
			return nil, err
		}
		kids = append(kids, col.Data())
		col.Data().Retain()
		col.Release()
	}
	out := array.NewData(dt, data.Len(), data.Buffers()[:1], kids, data.NullN(), data.Offset())
	defer out.Release()
	return array.MakeFromData(out), nil
}

func conformList(mem memory.Allocator, arr arrow.Array, ff *fileField, f spec.NestedField, lt *spec.ListType, dt *arrow.ListType) (arrow.Array, error) {
	if arr.DataType().ID() != arrow.LIST || len(ff.children) != 1 {
		return nil, fmt.Errorf("field %d (%s): file column is %s, not a list", f.ID, f.Name, arr.DataType())
	}
	el := spec.NestedField{ID: lt.ElementID, Name: f.Name + ".element", Type: lt.Element, Required: lt.ElementRequired}
	if ff.children[0].id >= 0 && ff.children[0].id != lt.ElementID {
		return nil, fmt.Errorf("field %d (%s): list element has id %d in the file, want %d", f.ID, f.Name, ff.children[0].id, lt.ElementID)
	}
	return conformNested(mem, arr, []*fileField{ff.children[0]}, []spec.NestedField{el}, dt, dt.ElemField().Type)
}

func conformMap(mem memory.Allocator, arr arrow.Array, ff *fileField, f spec.NestedField, mt *spec.MapType, dt *arrow.MapType) (arrow.Array, error) {
	if arr.DataType().ID() != arrow.MAP || len(ff.children) != 2 {
		return nil, fmt.Errorf("field %d (%s): file column is %s, not a map", f.ID, f.Name, arr.DataType())
	}
	k := spec.NestedField{ID: mt.KeyID, Name: f.Name + ".key", Type: mt.Key, Required: true}
	v := spec.NestedField{ID: mt.ValueID, Name: f.Name + ".value", Type: mt.Value, Required: mt.ValueRequired}
	for i, want := range []int{mt.KeyID, mt.ValueID} {
		if got := ff.children[i].id; got >= 0 && got != want {
			return nil, fmt.Errorf("field %d (%s): map child has id %d in the file, want %d", f.ID, f.Name, got, want)
		}
	}
	entries := dt.Elem().(*arrow.StructType)
	return conformNested(mem, arr, ff.children, []spec.NestedField{k, v}, dt, entries)
}

// conformNested rebuilds a list or map array (validity and offsets kept)
// around its converted child. For a map the child is the entries struct,
// whose fields are converted one by one.
func conformNested(mem memory.Allocator, arr arrow.Array, cffs []*fileField, fields []spec.NestedField, dt arrow.DataType, childDT arrow.DataType) (arrow.Array, error) {
	data := arr.Data()
	rawChild := data.Children()[0]
	var child arrow.ArrayData
	if st, ok := childDT.(*arrow.StructType); ok && arr.DataType().ID() == arrow.MAP {
		var kids []arrow.ArrayData
		defer func() {
			for _, k := range kids {
				k.Release()
			}
		}()
		for i, f := range fields {
			raw := array.MakeFromData(rawChild.Children()[i])
			col, err := conform(mem, raw, cffs[i], f, st.Field(i).Type, nil)
			raw.Release()
			if err != nil {
				return nil, err
			}
			col.Data().Retain()
			kids = append(kids, col.Data())
			col.Release()
		}
		child = array.NewData(st, rawChild.Len(), rawChild.Buffers()[:1], kids, rawChild.NullN(), rawChild.Offset())
	} else {
		raw := array.MakeFromData(rawChild)
		col, err := conform(mem, raw, cffs[0], fields[0], childDT, nil)
		raw.Release()
		if err != nil {
			return nil, err
		}
		child = col.Data()
		child.Retain()
		col.Release()
	}
	defer child.Release()
	out := array.NewData(dt, data.Len(), data.Buffers()[:2], []arrow.ArrayData{child}, data.NullN(), data.Offset())
	defer out.Release()
	return array.MakeFromData(out), nil
}

// promote converts a primitive column to the requested Arrow type, applying
// the promotions Iceberg allows (int->long, float->double, decimal
// widening, date->timestamp) and the harmless differences between writers
// (timestamp units, binary for string, the arrow.uuid extension).
func promote(mem memory.Allocator, arr arrow.Array, dt arrow.DataType) (arrow.Array, error) {
	src := arr.DataType()
	if sameLayout(src, dt) {
		return retype(arr, dt), nil
	}
	n := arr.Len()
	switch src.ID() {
	case arrow.INT32:
		if dt.ID() == arrow.INT64 {
			in := arr.(*array.Int32)
			b := array.NewInt64Builder(mem)
			defer b.Release()
			b.Reserve(n)
			for i := range n {
				if in.IsNull(i) {
					b.UnsafeAppendBoolToBitmap(false)
				} else {
					b.UnsafeAppend(int64(in.Value(i)))
				}
			}
			return b.NewArray(), nil
		}
	case arrow.FLOAT32:
		if dt.ID() == arrow.FLOAT64 {
			in := arr.(*array.Float32)
			b := array.NewFloat64Builder(mem)
			defer b.Release()
			b.Reserve(n)
			for i := range n {
				if in.IsNull(i) {
					b.UnsafeAppendBoolToBitmap(false)
				} else {
					b.UnsafeAppend(float64(in.Value(i)))
				}
			}
			return b.NewArray(), nil
		}
	case arrow.DECIMAL128:
		s, d := src.(*arrow.Decimal128Type), dt.(*arrow.Decimal128Type)
		if dt.ID() == arrow.DECIMAL128 && s.Scale == d.Scale && s.Precision <= d.Precision {
			return retype(arr, dt), nil
		}
	case arrow.DATE32:
		if ts, ok := dt.(*arrow.TimestampType); ok && ts.TimeZone == "" {
			perDay := int64(86400_000_000)
			if ts.Unit == arrow.Nanosecond {
				perDay *= 1000
			}
			in := arr.(*array.Date32)
			// The spec: a value outside the promoted type's range must fail
			// the read. Dates after 2262-04-11 (or before 1677-09-22) do
			// not fit timestamp_ns, and an unchecked product wraps into
			// another valid-looking timestamp that compaction would then
			// write down as the row's value.
			return int64Column(mem, n, in.IsNull, func(i int) (int64, error) {
				v, ok := mulExact(int64(in.Value(i)), perDay)
				if !ok {
					return 0, fmt.Errorf("date %s is out of the range of %s", in.ValueStr(i), dt)
				}
				return v, nil
			}, dt)
		}
	case arrow.TIMESTAMP:
		if ts, ok := dt.(*arrow.TimestampType); ok {
			in := arr.(*array.Timestamp)
			from := src.(*arrow.TimestampType).Unit
			mul, div := unitRatio(from, ts.Unit)
			return int64Column(mem, n, in.IsNull, func(i int) (int64, error) {
				v, ok := mulExact(int64(in.Value(i)), mul)
				if !ok {
					return 0, fmt.Errorf("timestamp %s is out of the range of %s", in.ValueStr(i), dt)
				}
				return v / div, nil
			}, dt)
		}
	}
	return nil, fmt.Errorf("file column of type %s cannot be read as %s", src, dt)
}

func unitRatio(from, to arrow.TimeUnit) (mul, div int64) {
	scale := map[arrow.TimeUnit]int64{arrow.Second: 1, arrow.Millisecond: 1e3, arrow.Microsecond: 1e6, arrow.Nanosecond: 1e9}
	f, t := scale[from], scale[to]
	if t >= f {
		return t / f, 1
	}
	return 1, f / t
}

func int64Column(mem memory.Allocator, n int, isNull func(int) bool, val func(int) (int64, error), dt arrow.DataType) (arrow.Array, error) {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.Reserve(n)
	for i := range n {
		if isNull(i) {
			b.UnsafeAppendBoolToBitmap(false)
			continue
		}
		v, err := val(i)
		if err != nil {
			return nil, err
		}
		b.UnsafeAppend(v)
	}
	a := b.NewArray()
	defer a.Release()
	return retype(a, dt), nil
}

// mulExact returns a*b and whether it did not overflow (b > 0).
func mulExact(a, b int64) (int64, bool) {
	if b == 1 {
		return a, true
	}
	if a > math.MaxInt64/b || a < math.MinInt64/b {
		return 0, false
	}
	return a * b, true
}

// sameLayout reports whether arrays of a can be reinterpreted as b without
// touching the values: the same physical layout, ignoring field names,
// nullability and metadata, and timestamp zones.
func sameLayout(a, b arrow.DataType) bool {
	if ext, ok := a.(arrow.ExtensionType); ok {
		a = ext.StorageType()
	}
	if ext, ok := b.(arrow.ExtensionType); ok {
		b = ext.StorageType()
	}
	switch a.ID() {
	case arrow.STRING, arrow.BINARY:
		return b.ID() == arrow.STRING || b.ID() == arrow.BINARY
	}
	if a.ID() != b.ID() {
		return false
	}
	switch at := a.(type) {
	case *arrow.TimestampType:
		return at.Unit == b.(*arrow.TimestampType).Unit
	case *arrow.Time64Type:
		return at.Unit == b.(*arrow.Time64Type).Unit
	case *arrow.Time32Type:
		return at.Unit == b.(*arrow.Time32Type).Unit
	case *arrow.FixedSizeBinaryType:
		return at.ByteWidth == b.(*arrow.FixedSizeBinaryType).ByteWidth
	case *arrow.Decimal128Type:
		bt := b.(*arrow.Decimal128Type)
		return at.Precision == bt.Precision && at.Scale == bt.Scale
	case *arrow.StructType:
		bt := b.(*arrow.StructType)
		if at.NumFields() != bt.NumFields() {
			return false
		}
		for i := range at.NumFields() {
			if !sameLayout(at.Field(i).Type, bt.Field(i).Type) {
				return false
			}
		}
		return true
	case *arrow.MapType:
		return sameLayout(at.Elem(), b.(*arrow.MapType).Elem())
	case *arrow.ListType:
		return sameLayout(at.Elem(), b.(*arrow.ListType).Elem())
	}
	return true
}

// retype reinterprets arr as dt; the caller has checked sameLayout.
func retype(arr arrow.Array, dt arrow.DataType) arrow.Array {
	d := retypeData(arr.Data(), dt)
	defer d.Release()
	return array.MakeFromData(d)
}

func retypeData(d arrow.ArrayData, dt arrow.DataType) arrow.ArrayData {
	base := dt
	if ext, ok := dt.(arrow.ExtensionType); ok {
		base = ext.StorageType()
	}
	var kids []arrow.ArrayData
	switch bt := base.(type) {
	case *arrow.StructType:
		for i, c := range d.Children() {
			kids = append(kids, retypeData(c, bt.Field(i).Type))
		}
	case *arrow.MapType:
		kids = append(kids, retypeData(d.Children()[0], bt.Elem()))
	case *arrow.ListType:
		kids = append(kids, retypeData(d.Children()[0], bt.Elem()))
	}
	out := array.NewData(dt, d.Len(), d.Buffers(), kids, d.NullN(), d.Offset())
	for _, k := range kids {
		k.Release()
	}
	return out
}
