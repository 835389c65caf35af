package foreign

import (
	"fmt"

	"github.com/hamba/avro/v2"
)

// encode writes v as Avro binary of schema s. Records are map[string]any
// by field name (a missing name is null), arrays []any; a union takes its
// null branch for nil and its first other branch otherwise.
func encode(w *avro.Writer, s avro.Schema, v any) error {
	if ref, ok := s.(*avro.RefSchema); ok {
		s = ref.Schema()
	}
	switch t := s.(type) {
	case *avro.UnionSchema:
		null, val := -1, -1
		for i, b := range t.Types() {
			if b.Type() == avro.Null {
				null = i
			} else if val < 0 {
				val = i
			}
		}
		if v == nil {
			if null < 0 {
				return fmt.Errorf("null for a union without null: %s", s)
			}
			w.WriteLong(int64(null))
			return nil
		}
		w.WriteLong(int64(val))
		return encode(w, t.Types()[val], v)
	case *avro.RecordSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("record %s: got %T", t.Name(), v)
		}
		for _, f := range t.Fields() {
			if err := encode(w, f.Type(), m[f.Name()]); err != nil {
				return fmt.Errorf("%s.%s: %w", t.Name(), f.Name(), err)
			}
		}
		return nil
	case *avro.ArraySchema:
		items, ok := v.([]any)
		if !ok {
			return fmt.Errorf("array: got %T", v)
		}
		if len(items) > 0 {
			w.WriteLong(int64(len(items)))
			for _, it := range items {
				if err := encode(w, t.Items(), it); err != nil {
					return err
				}
			}
		}
		w.WriteLong(0)
		return nil
	case *avro.FixedSchema:
		var b []byte
		switch x := v.(type) {
		case []byte:
			b = x
		case [16]byte:
			b = x[:]
		default:
			return fmt.Errorf("fixed: got %T", v)
		}
		if len(b) != t.Size() {
			return fmt.Errorf("fixed of %d bytes: got %d", t.Size(), len(b))
		}
		_, _ = w.Write(b)
		return nil
	}
	switch s.Type() {
	case avro.Null:
		if v != nil {
			return fmt.Errorf("null: got %T", v)
		}
		return nil
	case avro.Boolean:
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("boolean: got %T", v)
		}
		w.WriteBool(b)
	case avro.Int, avro.Long:
		switch x := v.(type) {
		case int32:
			w.WriteLong(int64(x))
		case int64:
			w.WriteLong(x)
		case int:
			w.WriteLong(int64(x))
		default:
			return fmt.Errorf("%s: got %T", s.Type(), v)
		}
	case avro.Float:
		f, ok := v.(float32)
		if !ok {
			return fmt.Errorf("float: got %T", v)
		}
		w.WriteFloat(f)
	case avro.Double:
		f, ok := v.(float64)
		if !ok {
			return fmt.Errorf("double: got %T", v)
		}
		w.WriteDouble(f)
	case avro.String:
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("string: got %T", v)
		}
		w.WriteString(str)
	case avro.Bytes:
		b, ok := v.([]byte)
		if !ok {
			return fmt.Errorf("bytes: got %T", v)
		}
		w.WriteBytes(b)
	default:
		return fmt.Errorf("unsupported avro type %s", s.Type())
	}
	return nil
}
