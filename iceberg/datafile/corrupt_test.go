package datafile

import (
	"bytes"
	"context"
	"errors"
	"github.com/icectl/icectl/internal/testing/crafted"
	"io"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
)

// readEverything opens and reads a file to the end, returning the first
// error; it must never panic.
func readEverything(data []byte, s *spec.Schema) error {
	rd, err := OpenReader(context.Background(), bytes.NewReader(data), int64(len(data)), ReadOptions{Schema: s, WithPos: true, BatchSize: 100})
	if err != nil {
		return err
	}
	defer rd.Close()
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		rec.Release()
	}
}

func smallFile(t testing.TB) ([]byte, *spec.Schema) {
	s := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "s", Type: spec.StringType{}},
		{ID: 3, Name: "l", Type: &spec.ListType{ElementID: 4, Element: spec.IntType{}}},
	}}
	b := genBatch(t, s, 500, 0)
	defer b.Release()
	data, _ := writeParquet(t, s, map[string]string{PropCompressionCodec: "uncompressed"}, b)
	return data, s
}

func TestCorruptParquetFails(t *testing.T) {
	data, s := smallFile(t)
	if err := readEverything(data, s); err != nil {
		t.Fatalf("intact file: %v", err)
	}
	for _, n := range []int{0, 3, 4, 8, 12, len(data) / 2, len(data) - 9, len(data) - 1} {
		if err := readEverything(data[:n], s); err == nil {
			t.Errorf("file truncated to %d bytes read without error", n)
		}
		if _, err := InspectParquet(bytes.NewReader(data[:n]), int64(n)); err == nil {
			t.Errorf("inspect of file truncated to %d bytes gave no error", n)
		}
	}
	garbage := bytes.Repeat([]byte("not parquet "), 50)
	if err := readEverything(garbage, s); err == nil {
		t.Error("garbage read without error")
	}
	// Flip bytes inside the data pages: an error or different values, but
	// never a panic.
	for off := 4; off < len(data)-8; off += 97 {
		bad := bytes.Clone(data)
		bad[off] ^= 0xff
		_ = readEverything(bad, s)
	}
}

func FuzzOpenReader(f *testing.F) {
	data, s := smallFile(f)
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		crafted.CheckAlloc(t, len(b), 64<<20, 1024, func() {
			_, _ = InspectParquet(bytes.NewReader(b), int64(len(b)))
		})
		_ = readEverything(b, s)
		_, _ = InspectParquet(bytes.NewReader(b), int64(len(b)))
		_ = ReadPositionDeletes(context.Background(), bytes.NewReader(b), int64(len(b)), func(string, int64) error { return nil })
	})
}
