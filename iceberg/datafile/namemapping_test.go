package datafile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/icectl/icectl/iceberg/spec"
)

// TestFieldIDsOneWalk: the Reader and the Transcoder find the same
// columns by the same field ids in the same files: the file's own ids
// when it stores any (a partly id'd file too), else the name mapping's,
// by Java's rules (a list's element is "element" and a map's key and
// value "key" and "value" whatever the file calls them; nested structs;
// the two-level legacy lists; a column the mapping does not name has no
// id). Each path's view is which leaf columns a field id reads.
func TestFieldIDsOneWalk(t *testing.T) {
	const none = -1
	opt, req, rep := parquet.Repetitions.Optional, parquet.Repetitions.Required, parquet.Repetitions.Repeated
	list, mapT := schema.NewListLogicalType(), schema.MapLogicalType{}
	// shapes is one of every layout; ids[k] is the id the file stores on
	// the k-th field (none in the file without ids).
	shapes := func(ids ...int32) []schema.Node {
		return []schema.Node{
			pqLeaf("a", opt, ids[0]),
			pqLeaf("bee", opt, ids[1]),
			pqLeaf("c", opt, ids[2]),
			pqGroup("s", opt, nil, ids[3], pqLeaf("x", opt, ids[4]), pqLeaf("y", opt, ids[5])),
			pqGroup("l", opt, list, ids[6], pqGroup("list", rep, nil, none, pqLeaf("item", opt, ids[7]))),
			pqGroup("m", opt, mapT, ids[8], pqGroup("key_value", rep, nil, none, pqLeaf("key", req, ids[9]), pqLeaf("value", opt, ids[10]))),
			pqGroup("l2", opt, list, ids[11], pqLeaf("array", rep, ids[12])),
			pqGroup("l3", opt, list, ids[13], pqGroup("array", rep, nil, ids[14], pqLeaf("x", opt, ids[15]))),
			pqGroup("ls", opt, list, ids[16], pqGroup("list", rep, nil, none, pqGroup("element", opt, nil, ids[17], pqLeaf("f", opt, ids[18])))),
		}
	}
	id := func(n int) *int { return &n }
	nm := NameMapping{
		{FieldID: id(1), Names: []string{"a"}},
		{FieldID: id(2), Names: []string{"b", "bee"}},
		{FieldID: id(3), Names: []string{"s"}, Fields: []MappedField{{FieldID: id(4), Names: []string{"x"}}}},
		{FieldID: id(5), Names: []string{"l"}, Fields: []MappedField{{FieldID: id(6), Names: []string{"element"}}}},
		{FieldID: id(7), Names: []string{"m"}, Fields: []MappedField{
			{FieldID: id(8), Names: []string{"key"}}, {FieldID: id(9), Names: []string{"value"}}}},
		{FieldID: id(10), Names: []string{"l2"}, Fields: []MappedField{{FieldID: id(11), Names: []string{"element"}}}},
		{FieldID: id(12), Names: []string{"l3"}, Fields: []MappedField{{FieldID: id(13), Names: []string{"element"},
			Fields: []MappedField{{FieldID: id(14), Names: []string{"x"}}}}}},
		{FieldID: id(15), Names: []string{"ls"}, Fields: []MappedField{{FieldID: id(16), Names: []string{"element"},
			Fields: []MappedField{{FieldID: id(17), Names: []string{"f"}}}}}},
	}
	// mapped is what the mapping finds in the file without ids: c and s.y
	// are not named, so they have no id of their own.
	mapped := map[int32][]string{
		1: {"a"}, 2: {"bee"}, 3: {"s.x", "s.y"}, 4: {"s.x"},
		5: {"l.list.item"}, 6: {"l.list.item"},
		7: {"m.key_value.key", "m.key_value.value"}, 8: {"m.key_value.key"}, 9: {"m.key_value.value"},
		10: {"l2.array"}, 11: {"l2.array"},
		12: {"l3.array.x"}, 13: {"l3.array.x"}, 14: {"l3.array.x"},
		15: {"ls.list.element.f"}, 16: {"ls.list.element.f"}, 17: {"ls.list.element.f"},
	}
	withC := maps.Clone(mapped)
	withC[18], withC[19] = []string{"c"}, []string{"s.y"}
	cases := []struct {
		name string
		cols []schema.Node
		nm   NameMapping
		want map[int32][]string
	}{
		{"no ids, mapped", shapes(none, none, none, none, none, none, none, none, none, none, none, none, none, none, none, none, none, none, none), nm, mapped},
		// The same ids stored: the mapping is not used.
		{"ids stored", shapes(1, 2, 18, 3, 4, 19, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17), nil, withC},
		{"ids stored, mapping ignored", shapes(1, 2, 18, 3, 4, 19, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17),
			NameMapping{{FieldID: id(40), Names: []string{"a"}}}, withC},
		// A file with ids on some columns: those alone are read.
		{"partly id'd", shapes(1, none, none, 3, none, 19, none, none, none, none, none, none, none, none, none, none, none, none, none), nm,
			map[int32][]string{1: {"a"}, 3: {"s.x", "s.y"}, 19: {"s.y"}}},
		// An id on a list's repeated group is not a field's (Java's
		// ParquetSchemaUtil.hasIds): the file is read through the mapping.
		{"id on a repeated group only", []schema.Node{
			pqLeaf("a", opt, none),
			pqGroup("l", opt, list, none, pqGroup("list", rep, nil, 99, pqLeaf("element", opt, none))),
		}, nm, map[int32][]string{1: {"a"}, 5: {"l.list.element"}, 6: {"l.list.element"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pf := pqFile(t, tc.cols)
			if got := readerIDs(t, pf, tc.nm); !maps.EqualFunc(got, tc.want, slices.Equal) {
				t.Errorf("Reader: got %v, want %v", got, tc.want)
			}
			if got := transcoderIDs(t, pf, tc.nm); !maps.EqualFunc(got, tc.want, slices.Equal) {
				t.Errorf("Transcoder: got %v, want %v", got, tc.want)
			}
		})
	}

	// A file without ids is refused the same way by both without a
	// mapping, and when the mapping names none of its columns.
	pf := pqFile(t, []schema.Node{pqLeaf("a", opt, none)})
	for _, m := range []NameMapping{nil, {{FieldID: id(1), Names: []string{"other"}}}} {
		want := ErrNoFieldIDs
		if m != nil {
			want = ErrUnmatchedColumns
		}
		s := &spec.Schema{Fields: []spec.NestedField{{ID: 1, Name: "a", Type: spec.IntType{}}}}
		if _, err := newReader(context.Background(), pf, ReadOptions{Schema: s, NameMapping: m, BatchSize: 10}); !errors.Is(err, want) {
			t.Errorf("Reader, mapping %v: got %v, want %v", m, err, want)
		}
		tcd, err := NewTranscoder(&bytes.Buffer{}, s, mappingProps(t, m))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tcd.Check(pf, nil); !errors.Is(err, want) {
			t.Errorf("Transcoder, mapping %v: got %v, want %v", m, err, want)
		}
	}
}

// readerIDs is the Reader's view of a file: the leaf columns below each
// field id its columns are matched by.
func readerIDs(t *testing.T, pf *file.Reader, nm NameMapping) map[int32][]string {
	t.Helper()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	ffs, err := fileColumns(pf, fr, nm)
	if err != nil {
		t.Fatal(err)
	}
	src := pf.MetaData().Schema
	out := map[int32][]string{}
	var leaves func(sf pqarrow.SchemaField) []string
	leaves = func(sf pqarrow.SchemaField) []string {
		if sf.IsLeaf() {
			return []string{src.Column(sf.ColIndex).Path()}
		}
		var ps []string
		for _, c := range sf.Children {
			ps = append(ps, leaves(c)...)
		}
		return ps
	}
	var walk func(ff *fileField, sf pqarrow.SchemaField)
	walk = func(ff *fileField, sf pqarrow.SchemaField) {
		if ff.id >= 0 {
			out[int32(ff.id)] = append(out[int32(ff.id)], leaves(sf)...)
		}
		kids := sf.Children
		if _, ok := ff.field.Type.(*arrow.MapType); ok {
			kids = kids[0].Children // the manifest has the key-value struct between
		}
		for i, c := range ff.children {
			walk(c, kids[i])
		}
	}
	for i, ff := range ffs {
		walk(ff, fr.Manifest.Fields[i])
	}
	return out
}

// transcoderIDs is the Transcoder's view of a file: the leaf columns
// below each field id on their paths.
func transcoderIDs(t *testing.T, pf *file.Reader, nm NameMapping) map[int32][]string {
	t.Helper()
	src := pf.MetaData().Schema
	ids, err := resolveIDs(src, nm)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32][]string{}
	for j := range src.NumColumns() {
		for _, l := range slices.Backward(levelChain(src.Column(j).SchemaNode(), ids)) {
			if l.id >= 0 {
				out[l.id] = append(out[l.id], src.Column(j).Path())
			}
		}
	}
	return out
}

// mappingProps are table properties holding name mapping m (none: nil).
func mappingProps(t *testing.T, m NameMapping) map[string]string {
	t.Helper()
	if m == nil {
		return nil
	}
	js, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{spec.PropNameMapping: string(js)}
}

func pqLeaf(name string, r parquet.Repetition, id int32) schema.Node {
	return schema.MustPrimitive(schema.NewPrimitiveNode(name, r, parquet.Types.Int32, id, -1))
}

func pqGroup(name string, r parquet.Repetition, lt schema.LogicalType, id int32, fields ...schema.Node) schema.Node {
	if lt == nil {
		return schema.MustGroup(schema.NewGroupNode(name, r, fields, id))
	}
	return schema.MustGroup(schema.NewGroupNodeLogical(name, r, fields, lt, id))
}

// pqFile writes an empty Parquet file of top-level columns cols.
func pqFile(t *testing.T, cols []schema.Node) *file.Reader {
	t.Helper()
	root := schema.MustGroup(schema.NewGroupNode("schema", parquet.Repetitions.Required, cols, -1))
	var buf bytes.Buffer
	w := file.NewParquetWriter(&buf, root)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return openTc(t, buf.Bytes())
}
