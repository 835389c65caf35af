package hive

import (
	"context"
	"fmt"
	"sort"

	"github.com/apache/thrift/lib/go/thrift"
)

// The metastore's Thrift structs are handled as generic trees rather than
// through generated code: a struct read from the server is kept whole, with
// every field this package does not know (Hive adds fields in each
// release), and written back unchanged except for what the catalog sets.
// Java's client round-trips the objects of its own Hive version; a generic
// tree round-trips those of any version, so an alter_table never drops a
// field the server sent.

// value is one Thrift value: a bool, int8, int16, int32, int64, float64,
// string (also binary), *tstruct, *tmap or *tlist.
type value any

// field is one field of a struct.
type field struct {
	id  int16
	typ thrift.TType
	val value
}

// tstruct is a Thrift struct: its fields in the order read or set.
type tstruct struct{ fields []field }

// tmap is a Thrift map; entries keep their order.
type tmap struct {
	ktype, vtype thrift.TType
	keys, vals   []value
}

// tlist is a Thrift list or set (typ says which).
type tlist struct {
	typ   thrift.TType // thrift.LIST or thrift.SET
	etype thrift.TType
	elems []value
}

func (s *tstruct) get(id int16) (value, bool) {
	for _, f := range s.fields {
		if f.id == id {
			return f.val, true
		}
	}
	return nil, false
}

// set replaces field id or appends it.
func (s *tstruct) set(id int16, typ thrift.TType, v value) *tstruct {
	for i := range s.fields {
		if s.fields[i].id == id {
			s.fields[i] = field{id, typ, v}
			return s
		}
	}
	s.fields = append(s.fields, field{id, typ, v})
	return s
}

func (s *tstruct) str(id int16, v string) *tstruct { return s.set(id, thrift.STRING, v) }
func (s *tstruct) i32(id int16, v int32) *tstruct  { return s.set(id, thrift.I32, v) }
func (s *tstruct) i64(id int16, v int64) *tstruct  { return s.set(id, thrift.I64, v) }
func (s *tstruct) bool(id int16, v bool) *tstruct  { return s.set(id, thrift.BOOL, v) }
func (s *tstruct) sub(id int16, v *tstruct) *tstruct {
	return s.set(id, thrift.STRUCT, v)
}

func (s *tstruct) getString(id int16) string {
	v, _ := s.get(id)
	str, _ := v.(string)
	return str
}

func (s *tstruct) getI64(id int16) int64 {
	v, _ := s.get(id)
	switch n := v.(type) {
	case int64:
		return n
	case int32:
		return int64(n)
	}
	return 0
}

func (s *tstruct) getStruct(id int16) *tstruct {
	v, _ := s.get(id)
	st, _ := v.(*tstruct)
	return st
}

// getStringMap returns field id, a map<string,string>, as a Go map (nil
// when absent).
func (s *tstruct) getStringMap(id int16) map[string]string {
	v, _ := s.get(id)
	m, ok := v.(*tmap)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m.keys))
	for i, k := range m.keys {
		ks, _ := k.(string)
		vs, _ := m.vals[i].(string)
		out[ks] = vs
	}
	return out
}

// getStrings returns field id, a list<string>.
func (s *tstruct) getStrings(id int16) []string {
	v, _ := s.get(id)
	l, ok := v.(*tlist)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(l.elems))
	for _, e := range l.elems {
		if str, ok := e.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

// stringMap builds a map<string,string> value with sorted keys, so that
// what is sent is deterministic.
func stringMap(m map[string]string) *tmap {
	out := &tmap{ktype: thrift.STRING, vtype: thrift.STRING}
	for _, k := range sortedKeys(m) {
		out.keys = append(out.keys, k)
		out.vals = append(out.vals, m[k])
	}
	return out
}

func structList(elems []*tstruct) *tlist {
	l := &tlist{typ: thrift.LIST, etype: thrift.STRUCT}
	for _, e := range elems {
		l.elems = append(l.elems, e)
	}
	return l
}

// writeValue writes v, of type typ.
func writeValue(ctx context.Context, p thrift.TProtocol, typ thrift.TType, v value) error {
	switch typ {
	case thrift.BOOL:
		return p.WriteBool(ctx, v.(bool))
	case thrift.BYTE:
		return p.WriteByte(ctx, v.(int8))
	case thrift.I16:
		return p.WriteI16(ctx, v.(int16))
	case thrift.I32:
		return p.WriteI32(ctx, v.(int32))
	case thrift.I64:
		return p.WriteI64(ctx, v.(int64))
	case thrift.DOUBLE:
		return p.WriteDouble(ctx, v.(float64))
	case thrift.STRING:
		return p.WriteString(ctx, v.(string))
	case thrift.STRUCT:
		return writeStruct(ctx, p, v.(*tstruct))
	case thrift.MAP:
		m := v.(*tmap)
		if err := p.WriteMapBegin(ctx, m.ktype, m.vtype, len(m.keys)); err != nil {
			return err
		}
		for i := range m.keys {
			if err := writeValue(ctx, p, m.ktype, m.keys[i]); err != nil {
				return err
			}
			if err := writeValue(ctx, p, m.vtype, m.vals[i]); err != nil {
				return err
			}
		}
		return p.WriteMapEnd(ctx)
	case thrift.LIST, thrift.SET:
		l := v.(*tlist)
		begin, end := p.WriteListBegin, p.WriteListEnd
		if typ == thrift.SET {
			begin, end = p.WriteSetBegin, p.WriteSetEnd
		}
		if err := begin(ctx, l.etype, len(l.elems)); err != nil {
			return err
		}
		for _, e := range l.elems {
			if err := writeValue(ctx, p, l.etype, e); err != nil {
				return err
			}
		}
		return end(ctx)
	}
	return fmt.Errorf("thrift: cannot write type %d", typ)
}

func writeStruct(ctx context.Context, p thrift.TProtocol, s *tstruct) error {
	if err := p.WriteStructBegin(ctx, ""); err != nil {
		return err
	}
	for _, f := range s.fields {
		if f.val == nil {
			continue
		}
		if err := p.WriteFieldBegin(ctx, "", f.typ, f.id); err != nil {
			return err
		}
		if err := writeValue(ctx, p, f.typ, f.val); err != nil {
			return err
		}
		if err := p.WriteFieldEnd(ctx); err != nil {
			return err
		}
	}
	if err := p.WriteFieldStop(ctx); err != nil {
		return err
	}
	return p.WriteStructEnd(ctx)
}

// maxDepth bounds nesting, so a hostile or garbled reply cannot recurse
// without end.
const maxDepth = 64

func readValue(ctx context.Context, p thrift.TProtocol, typ thrift.TType, depth int) (value, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("thrift: nesting deeper than %d", maxDepth)
	}
	switch typ {
	case thrift.BOOL:
		return p.ReadBool(ctx)
	case thrift.BYTE:
		return p.ReadByte(ctx)
	case thrift.I16:
		return p.ReadI16(ctx)
	case thrift.I32:
		return p.ReadI32(ctx)
	case thrift.I64:
		return p.ReadI64(ctx)
	case thrift.DOUBLE:
		return p.ReadDouble(ctx)
	case thrift.STRING:
		return p.ReadString(ctx)
	case thrift.STRUCT:
		return readStruct(ctx, p, depth+1)
	case thrift.MAP:
		kt, vt, n, err := p.ReadMapBegin(ctx)
		if err != nil {
			return nil, err
		}
		m := &tmap{ktype: kt, vtype: vt}
		for range n {
			k, err := readValue(ctx, p, kt, depth+1)
			if err != nil {
				return nil, err
			}
			v, err := readValue(ctx, p, vt, depth+1)
			if err != nil {
				return nil, err
			}
			m.keys, m.vals = append(m.keys, k), append(m.vals, v)
		}
		return m, p.ReadMapEnd(ctx)
	case thrift.LIST, thrift.SET:
		begin, end := p.ReadListBegin, p.ReadListEnd
		if typ == thrift.SET {
			begin, end = p.ReadSetBegin, p.ReadSetEnd
		}
		et, n, err := begin(ctx)
		if err != nil {
			return nil, err
		}
		l := &tlist{typ: typ, etype: et}
		for range n {
			e, err := readValue(ctx, p, et, depth+1)
			if err != nil {
				return nil, err
			}
			l.elems = append(l.elems, e)
		}
		return l, end(ctx)
	}
	return nil, fmt.Errorf("thrift: unknown type %d", typ)
}

func readStruct(ctx context.Context, p thrift.TProtocol, depth int) (*tstruct, error) {
	if _, err := p.ReadStructBegin(ctx); err != nil {
		return nil, err
	}
	s := &tstruct{}
	for {
		_, typ, id, err := p.ReadFieldBegin(ctx)
		if err != nil {
			return nil, err
		}
		if typ == thrift.STOP {
			break
		}
		v, err := readValue(ctx, p, typ, depth)
		if err != nil {
			return nil, err
		}
		s.fields = append(s.fields, field{id, typ, v})
		if err := p.ReadFieldEnd(ctx); err != nil {
			return nil, err
		}
	}
	return s, p.ReadStructEnd(ctx)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
