package manifest

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"sync"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
)

func readAll(t *testing.T, data []byte, opts ...ReadOption) []Entry {
	t.Helper()
	r, err := OpenManifest(bytes.NewReader(data), opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.InheritFrom(ManifestFile{SequenceNumber: 2, AddedSnapshotID: 7})
	var out []Entry
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
}

// TestSchemaCacheParsesEachSchemaOnce reads two manifests of one schema
// and one of another through one cache: the second read of the shared
// schema is a hit, the other schema a miss, and every read decodes what
// a read without the cache does.
func TestSchemaCacheParsesEachSchemaOnce(t *testing.T) {
	schema := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "day", Type: spec.DateType{}},
	}}
	unpart := spec.PartitionSpec{ID: 0}
	byDay := spec.PartitionSpec{ID: 1, Fields: []spec.PartitionField{
		{SourceID: 2, FieldID: 1000, Name: "day", Transform: spec.Transform{Kind: spec.TransformIdentity}},
	}}
	entry := func(path string, part []any) Entry {
		return Entry{Status: StatusAdded, DataFile: DataFile{FilePath: path, FileFormat: "PARQUET",
			Partition: part, RecordCount: 10, FileSizeInBytes: 100}}
	}
	a, _ := writeManifest(t, WriterOptions{Version: 2, Schema: schema, Spec: unpart, SnapshotID: 7}, []Entry{entry("a.parquet", []any{})})
	b, _ := writeManifest(t, WriterOptions{Version: 2, Schema: schema, Spec: unpart, SnapshotID: 7}, []Entry{entry("b.parquet", []any{})})
	c, _ := writeManifest(t, WriterOptions{Version: 2, Schema: schema, Spec: byDay, SnapshotID: 7}, []Entry{entry("c.parquet", []any{int32(19000)})})

	cache := NewSchemaCache()
	for i, data := range [][]byte{a, b, c, a} {
		got := readAll(t, data, WithSchemaCache(cache))
		want := readAll(t, data)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("manifest %d: read through the cache %+v, without %+v", i, got, want)
		}
	}
	if hits, misses := cache.Stats(); hits != 2 || misses != 2 {
		t.Errorf("cache stats: %d hits, %d misses; want 2 and 2 (two schemas, each parsed once)", hits, misses)
	}

	// Writers share it too: the entry schema of an unpartitioned v2
	// manifest is the one just read.
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{Version: 2, Schema: schema, Spec: unpart, SnapshotID: 7, Schemas: cache})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(entry("d.parquet", []any{})); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if hits, _ := cache.Stats(); hits != 3 {
		t.Errorf("writer did not take the cached schema: %d hits, want 3", hits)
	}
	if got := readAll(t, buf.Bytes()); len(got) != 1 || got[0].DataFile.FilePath != "d.parquet" {
		t.Errorf("manifest written with the cached schema reads back as %+v", got)
	}
}

// TestSchemaCacheLendsReaders reads manifests and lists through one cache,
// some to the end, some closed early, from several goroutines at once:
// every read decodes what a read without the cache does, a reader's
// decompressed block is charged to its budget while open and given back
// when it is done, whoever used the lent buffers before, and a closed
// reader refuses to read on.
func TestSchemaCacheLendsReaders(t *testing.T) {
	files := conformanceFiles(t)
	wants := map[string][]Entry{}
	for name, data := range files {
		if !isList(name) {
			wants[name] = readAll(t, data)
		}
	}
	cache := NewSchemaCache()
	budget := NewBudget(DefaultBudget)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for name, data := range files {
				if isList(name) {
					continue
				}
				want := wants[name]
				for i := range 3 {
					r, err := OpenManifest(bytes.NewReader(data), WithSchemaCache(cache), WithBudget(budget))
					if err != nil {
						t.Error(err)
						return
					}
					r.InheritFrom(ManifestFile{SequenceNumber: 2, AddedSnapshotID: 7})
					var got []Entry
					for {
						e, err := r.Next()
						if errors.Is(err, io.EOF) {
							break
						}
						if err != nil {
							t.Errorf("%s: %v", name, err)
							return
						}
						got = append(got, e)
						if (g+i)%2 == 1 {
							r.Close()
							if _, err := r.Next(); err == nil || errors.Is(err, io.EOF) {
								t.Errorf("%s: Next after Close returned %v, want an error", name, err)
							}
							break
						}
					}
					if (g+i)%2 == 1 {
						want := want[:min(1, len(want))]
						if len(got) != len(want) {
							t.Errorf("%s: read %d entries before Close, want %d", name, len(got), len(want))
						}
						continue
					}
					if _, err := r.Next(); !errors.Is(err, io.EOF) {
						t.Errorf("%s: Next after the end returned %v, want io.EOF", name, err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s: read through the cache differs from a read without it", name)
					}
				}
			}
			for name, data := range files {
				if !isList(name) {
					continue
				}
				lr, err := OpenManifestList(bytes.NewReader(data), WithSchemaCache(cache), WithBudget(budget))
				if err != nil {
					t.Error(err)
					return
				}
				for {
					if _, err := lr.Next(); err != nil {
						if !errors.Is(err, io.EOF) {
							t.Errorf("%s: %v", name, err)
						}
						break
					}
				}
			}
		})
	}
	wg.Wait()
	if held := budget.Held(); held != 0 {
		t.Errorf("the readers still hold %d bytes of budget", held)
	}

	// A lent buffer is charged again to its next reader's budget.
	var data []byte
	for name, d := range files {
		if !isList(name) {
			data = d
			break
		}
	}
	b := NewBudget(DefaultBudget)
	r, err := OpenManifest(bytes.NewReader(data), WithSchemaCache(cache), WithBudget(b))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if b.Held() == 0 {
		t.Error("an open reader holds no budget for its block")
	}
	r.Close()
	r.Close()
	if held := b.Held(); held != 0 {
		t.Errorf("a closed reader still holds %d bytes of budget", held)
	}
}
