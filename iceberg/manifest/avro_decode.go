package manifest

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hamba/avro/v2"
)

// This file compiles a writer schema into small closures that decode one
// value each straight into Go fields, so a record costs no reflection and no
// intermediate map.

// fieldID returns the "field-id" property of an Avro record field.
func fieldID(f *avro.Field) (int, bool) {
	return intProp(f.Prop("field-id"))
}

func intProp(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		if x != float64(int(x)) {
			return 0, false
		}
		return int(x), true
	case int:
		return x, true
	case int64:
		return int(x), true
	case json.Number:
		n, err := strconv.Atoi(string(x))
		return n, err == nil
	case string:
		n, err := strconv.Atoi(x)
		return n, err == nil
	}
	return 0, false
}

// resolve follows named-type references.
func resolve(s avro.Schema) avro.Schema {
	for i := 0; i < 64; i++ {
		ref, ok := s.(*avro.RefSchema)
		if !ok {
			return s
		}
		s = ref.Schema()
	}
	return s
}

// optional splits a ["null", T] union (either order). A schema that is not a
// union comes back as itself with nullIdx -1.
func optional(s avro.Schema) (inner avro.Schema, nullIdx, valIdx int, err error) {
	s = resolve(s)
	u, ok := s.(*avro.UnionSchema)
	if !ok {
		return s, -1, -1, nil
	}
	types := u.Types()
	switch {
	case len(types) == 1:
		return resolve(types[0]), -1, 0, nil
	case len(types) == 2 && types[0].Type() == avro.Null:
		return resolve(types[1]), 0, 1, nil
	case len(types) == 2 && types[1].Type() == avro.Null:
		return resolve(types[0]), 1, 0, nil
	}
	return nil, 0, 0, fmt.Errorf("unsupported union %s: only unions with null are allowed", clip(s.String()))
}

// unionPrefix splits s into the schema of its value and present, which
// reads the union branch in front of each value and reports whether a value
// follows (false for null). For a schema that is not a union, present reads
// nothing. Records that must be present (data_file, partition) are read
// through it, since some writers (BigQuery) declare every field, records
// included, as a nullable union.
func unionPrefix(s avro.Schema) (avro.Schema, func(*avro.Reader) bool, error) {
	inner, nullIdx, valIdx, err := optional(s)
	if err != nil {
		return nil, nil, err
	}
	if nullIdx < 0 && valIdx < 0 {
		return inner, func(*avro.Reader) bool { return true }, nil
	}
	if inner.Type() == avro.Null {
		return nil, nil, fmt.Errorf("is always null")
	}
	n, v := int64(nullIdx), int64(valIdx)
	return inner, func(r *avro.Reader) bool {
		switch r.ReadLong() {
		case v:
			return true
		case n:
			if nullIdx >= 0 {
				return false
			}
		}
		r.ReportError("union", "branch index out of range")
		return false
	}, nil
}

// reader reads one value of T; ok is false for null.
type reader[T any] func(r *avro.Reader) (v T, ok bool)

// nullable wraps a base reader built for the non-null branch of s.
func nullable[T any](s avro.Schema, base func(avro.Schema) (func(*avro.Reader) T, error)) (reader[T], error) {
	inner, nullIdx, valIdx, err := optional(s)
	if err != nil {
		return nil, err
	}
	if inner.Type() == avro.Null {
		return func(r *avro.Reader) (T, bool) {
			var zero T
			if nullIdx >= 0 || valIdx >= 0 {
				if i := r.ReadLong(); i != 0 {
					r.ReportError("union", fmt.Sprintf("branch %d out of range", i))
				}
			}
			return zero, false
		}, nil
	}
	f, err := base(inner)
	if err != nil {
		return nil, err
	}
	if nullIdx < 0 && valIdx < 0 {
		return func(r *avro.Reader) (T, bool) { return f(r), true }, nil
	}
	if nullIdx < 0 { // single-branch union
		return func(r *avro.Reader) (T, bool) {
			var zero T
			if i := r.ReadLong(); i != 0 {
				r.ReportError("union", fmt.Sprintf("branch %d out of range", i))
				return zero, false
			}
			return f(r), true
		}, nil
	}
	n, v := int64(nullIdx), int64(valIdx)
	return func(r *avro.Reader) (T, bool) {
		var zero T
		switch r.ReadLong() {
		case n:
			return zero, false
		case v:
			return f(r), true
		default:
			r.ReportError("union", "branch index out of range")
			return zero, false
		}
	}, nil
}

func typeErr(s avro.Schema, want string) error {
	return fmt.Errorf("has Avro type %s, want %s", s.Type(), want)
}

func longBase(s avro.Schema) (func(*avro.Reader) int64, error) {
	switch s.Type() {
	case avro.Long:
		return func(r *avro.Reader) int64 { return r.ReadLong() }, nil
	case avro.Int:
		return func(r *avro.Reader) int64 { return int64(r.ReadInt()) }, nil
	}
	return nil, typeErr(s, "long")
}

// intBase reads an Iceberg int. A long is accepted where every value fits
// (int and long share Avro's encoding): PyIceberg declares equality_ids'
// elements long, and Java and iceberg-go read them by field id all the same.
func intBase(s avro.Schema) (func(*avro.Reader) int32, error) {
	switch s.Type() {
	case avro.Int:
		return func(r *avro.Reader) int32 { return r.ReadInt() }, nil
	case avro.Long:
		return func(r *avro.Reader) int32 {
			v := r.ReadLong()
			if v != int64(int32(v)) {
				r.ReportError("int", fmt.Sprintf("long value %d does not fit the int this field holds", v))
				return 0
			}
			return int32(v)
		}, nil
	}
	return nil, typeErr(s, "int")
}

func boolBase(s avro.Schema) (func(*avro.Reader) bool, error) {
	if s.Type() == avro.Boolean {
		return func(r *avro.Reader) bool { return r.ReadBool() }, nil
	}
	return nil, typeErr(s, "boolean")
}

func stringBase(s avro.Schema) (func(*avro.Reader) string, error) {
	switch s.Type() {
	case avro.String, avro.Bytes:
		return func(r *avro.Reader) string { return r.ReadString() }, nil
	}
	return nil, typeErr(s, "string")
}

func bytesBase(s avro.Schema) (func(*avro.Reader) []byte, error) {
	switch s.Type() {
	case avro.Bytes, avro.String:
		return func(r *avro.Reader) []byte { return r.ReadBytes() }, nil
	case avro.Fixed:
		n := s.(*avro.FixedSchema).Size()
		if n < 0 || n > maxBytesValue {
			return nil, fmt.Errorf("is a fixed of %d bytes", n)
		}
		return func(r *avro.Reader) []byte {
			b := make([]byte, n)
			r.Read(b)
			return b
		}, nil
	}
	return nil, typeErr(s, "bytes")
}

// eachBlockItem runs fn for every item of an Avro array or map, stopping at
// the first decode error.
func eachBlockItem(r *avro.Reader, fn func(first bool, n int64)) {
	first := true
	for r.Error == nil {
		n := r.ReadLong()
		if r.Error != nil || n == 0 {
			return
		}
		if n < 0 {
			n = -n
			r.ReadLong()
		}
		for i := int64(0); i < n && r.Error == nil; i++ {
			fn(first, n)
			first = false
		}
	}
}

// listBase reads an Avro array of T.
func listBase[T any](s avro.Schema, elem func(avro.Schema) (func(*avro.Reader) T, error)) (func(*avro.Reader) []T, error) {
	arr, ok := s.(*avro.ArraySchema)
	if !ok {
		return nil, typeErr(s, "array")
	}
	if zeroWidth(arr.Items(), 0) {
		return nil, fmt.Errorf("is an array of zero-width items")
	}
	el, err := nullable(arr.Items(), elem)
	if err != nil {
		return nil, fmt.Errorf("element %w", err)
	}
	return func(r *avro.Reader) []T {
		out := []T{}
		eachBlockItem(r, func(_ bool, _ int64) {
			if v, ok := el(r); ok {
				out = append(out, v)
			}
		})
		return out
	}, nil
}

// intMapBase reads an Iceberg map with int keys: Java writes it as an array
// of key/value records (logicalType "map"); an Avro map with numeric string
// keys is accepted too.
func intMapBase[V any](s avro.Schema, val func(avro.Schema) (func(*avro.Reader) V, error)) (func(*avro.Reader) map[int]V, error) {
	switch t := s.(type) {
	case *avro.MapSchema:
		vr, err := nullable(t.Values(), val)
		if err != nil {
			return nil, fmt.Errorf("map value %w", err)
		}
		return func(r *avro.Reader) map[int]V {
			out := map[int]V{}
			eachBlockItem(r, func(_ bool, _ int64) {
				k := r.ReadString()
				v, ok := vr(r)
				if r.Error != nil {
					return
				}
				id, err := strconv.Atoi(k)
				if err != nil {
					r.ReportError("map", fmt.Sprintf("key %q is not an int", k))
					return
				}
				if ok {
					out[id] = v
				}
			})
			return out
		}, nil
	case *avro.ArraySchema:
		items, present, err := unionPrefix(t.Items())
		if err != nil {
			return nil, fmt.Errorf("map item %w", err)
		}
		rec, ok := items.(*avro.RecordSchema)
		if !ok {
			return nil, typeErr(t.Items(), "key/value record")
		}
		var keyR reader[int32]
		var valR reader[V]
		steps := make([]func(r *avro.Reader, k *int32, v *V, vok *bool), 0, 2)
		for _, f := range rec.Fields() {
			switch f.Name() {
			case "key":
				kr, err := nullable(f.Type(), intBase)
				if err != nil {
					return nil, fmt.Errorf("map key %w", err)
				}
				keyR = kr
				steps = append(steps, func(r *avro.Reader, k *int32, _ *V, _ *bool) { *k, _ = kr(r) })
			case "value":
				vr, err := nullable(f.Type(), val)
				if err != nil {
					return nil, fmt.Errorf("map value %w", err)
				}
				valR = vr
				steps = append(steps, func(r *avro.Reader, _ *int32, v *V, vok *bool) { *v, *vok = vr(r) })
			default:
				skip, err := skipper(f.Type(), nil)
				if err != nil {
					return nil, err
				}
				steps = append(steps, func(r *avro.Reader, _ *int32, _ *V, _ *bool) { skip(r) })
			}
		}
		if keyR == nil || valR == nil {
			return nil, fmt.Errorf("map record %s lacks key or value", rec.Name())
		}
		return func(r *avro.Reader) map[int]V {
			out := map[int]V{}
			eachBlockItem(r, func(first bool, n int64) {
				if first && n < 4096 {
					out = make(map[int]V, n)
				}
				var k int32
				var v V
				var vok bool
				if !present(r) {
					return
				}
				for _, st := range steps {
					st(r, &k, &v, &vok)
				}
				if vok && r.Error == nil {
					out[int(k)] = v
				}
			})
			return out
		}, nil
	}
	return nil, typeErr(s, "map")
}

// skipper returns a function that skips one value of s. Recursive schemas are
// refused so a hostile schema cannot recurse without end.
func skipper(s avro.Schema, stack []string) (func(*avro.Reader), error) {
	if len(stack) > 64 {
		return nil, fmt.Errorf("avro schema nests too deeply")
	}
	if ref, ok := s.(*avro.RefSchema); ok {
		name := ref.Schema().(avro.NamedSchema).FullName()
		for _, n := range stack {
			if n == name {
				return nil, fmt.Errorf("recursive avro type %s is not supported", name)
			}
		}
		return skipper(ref.Schema(), stack)
	}
	if s.Type() == avro.Null { // hamba/avro has a schema type of its own for null
		return func(*avro.Reader) {}, nil
	}
	switch t := s.(type) {
	case *avro.PrimitiveSchema:
		switch t.Type() {
		case avro.Null:
			return func(*avro.Reader) {}, nil
		case avro.Boolean:
			return func(r *avro.Reader) { r.SkipBool() }, nil
		case avro.Int:
			return func(r *avro.Reader) { r.SkipInt() }, nil
		case avro.Long:
			return func(r *avro.Reader) { r.SkipLong() }, nil
		case avro.Float:
			return func(r *avro.Reader) { r.SkipFloat() }, nil
		case avro.Double:
			return func(r *avro.Reader) { r.SkipDouble() }, nil
		case avro.String, avro.Bytes:
			return func(r *avro.Reader) { r.SkipBytes() }, nil
		}
	case *avro.FixedSchema:
		n := t.Size()
		if n < 0 || n > maxBytesValue {
			return nil, fmt.Errorf("fixed %s of %d bytes is too large", t.FullName(), n)
		}
		return func(r *avro.Reader) { r.SkipNBytes(n) }, nil
	case *avro.EnumSchema:
		return func(r *avro.Reader) { r.SkipInt() }, nil
	case *avro.RecordSchema:
		stack = append(stack, t.FullName())
		fs := make([]func(*avro.Reader), 0, len(t.Fields()))
		for _, f := range t.Fields() {
			sk, err := skipper(f.Type(), stack)
			if err != nil {
				return nil, err
			}
			fs = append(fs, sk)
		}
		return func(r *avro.Reader) {
			for _, f := range fs {
				f(r)
			}
		}, nil
	case *avro.ArraySchema:
		if zeroWidth(t.Items(), 0) {
			return nil, fmt.Errorf("arrays of zero-width items are not supported")
		}
		el, err := skipper(t.Items(), stack)
		if err != nil {
			return nil, err
		}
		return func(r *avro.Reader) { eachBlockItem(r, func(bool, int64) { el(r) }) }, nil
	case *avro.MapSchema:
		val, err := skipper(t.Values(), stack)
		if err != nil {
			return nil, err
		}
		return func(r *avro.Reader) {
			eachBlockItem(r, func(bool, int64) { r.SkipBytes(); val(r) })
		}, nil
	case *avro.UnionSchema:
		types := t.Types()
		branches := make([]func(*avro.Reader), len(types))
		for i, b := range types {
			sk, err := skipper(b, stack)
			if err != nil {
				return nil, err
			}
			branches[i] = sk
		}
		return func(r *avro.Reader) {
			i := r.ReadLong()
			if i < 0 || i >= int64(len(branches)) {
				r.ReportError("union", "branch index out of range")
				return
			}
			branches[i](r)
		}, nil
	}
	return nil, fmt.Errorf("unsupported avro type %s", s.Type())
}

// zeroWidth reports whether values of s can take no bytes at all; an array
// of them could claim billions of items without consuming input.
func zeroWidth(s avro.Schema, depth int) bool {
	if depth > 64 {
		return false
	}
	switch t := resolve(s).(type) {
	case *avro.PrimitiveSchema:
		return t.Type() == avro.Null
	case *avro.FixedSchema:
		return t.Size() == 0
	case *avro.RecordSchema:
		for _, f := range t.Fields() {
			if !zeroWidth(f.Type(), depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// recordField pairs a writer field with the decoder that consumes it.
type recordField[T any] func(r *avro.Reader, dst *T)

// compileRecord builds a decoder for a writer record: fields whose id has a
// decoder in known are decoded into dst, the rest are skipped.
func compileRecord[T any](rec *avro.RecordSchema, where string, names map[string]int,
	known func(id int, f *avro.Field) (recordField[T], error)) (func(*avro.Reader, *T), map[int]bool, error) {
	steps := make([]recordField[T], 0, len(rec.Fields()))
	seen := map[int]bool{}
	for _, f := range rec.Fields() {
		id, ok := fieldID(f)
		if !ok {
			id, ok = names[f.Name()]
		}
		var step recordField[T]
		if ok {
			var err error
			step, err = known(id, f)
			if err != nil {
				return nil, nil, fmt.Errorf("%s field %s (id %d) %w", where, f.Name(), id, err)
			}
			seen[id] = true
		}
		if step == nil {
			sk, err := skipper(f.Type(), nil)
			if err != nil {
				return nil, nil, fmt.Errorf("%s field %s: %w", where, f.Name(), err)
			}
			step = func(r *avro.Reader, _ *T) { sk(r) }
		}
		steps = append(steps, step)
	}
	return func(r *avro.Reader, dst *T) {
		for _, s := range steps {
			s(r, dst)
		}
	}, seen, nil
}

// set helpers turn a nullable reader into a record step.
func setVal[T, D any](rd reader[T], assign func(*D, T)) recordField[D] {
	return func(r *avro.Reader, d *D) {
		if v, ok := rd(r); ok {
			assign(d, v)
		}
	}
}

func setPtr[T, D any](rd reader[T], assign func(*D, *T)) recordField[D] {
	return func(r *avro.Reader, d *D) {
		if v, ok := rd(r); ok {
			assign(d, &v)
		} else {
			assign(d, nil)
		}
	}
}
