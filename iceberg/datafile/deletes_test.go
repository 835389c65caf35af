package datafile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/icectl/icectl/iceberg/spec"
)

type posDelete struct {
	path string
	pos  int64
}

func TestPositionDeletesRoundTrip(t *testing.T) {
	var want []posDelete
	for f := range 3 {
		for p := int64(0); p < 70000; p += int64(f + 1) {
			want = append(want, posDelete{fmt.Sprintf("s3://bucket/t/data/%05d.parquet", f), p})
		}
	}
	var buf bytes.Buffer
	w, err := NewPositionDeleteWriter(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range want {
		if err := w.Write(d.path, d.pos); err != nil {
			t.Fatal(err)
		}
	}
	m, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if m.RecordCount != int64(len(want)) {
		t.Fatalf("metrics record count %d, want %d", m.RecordCount, len(want))
	}
	if w.BytesWritten() != int64(buf.Len()) {
		t.Fatalf("BytesWritten %d, file %d", w.BytesWritten(), buf.Len())
	}

	info, err := InspectParquet(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if n := info.Schema; len(n) != 2 || n[0].Name != "file_path" || *n[0].FieldID != spec.FieldIDFilePath || n[1].Name != "pos" || *n[1].FieldID != spec.FieldIDPos || n[0].Repetition != "required" {
		t.Fatalf("position delete schema %+v", n)
	}

	var got []posDelete
	err = ReadPositionDeletes(context.Background(), bytes.NewReader(buf.Bytes()), int64(buf.Len()), func(p string, pos int64) error {
		got = append(got, posDelete{p, pos})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d deletes, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("delete %d: %v, want %v", i, got[i], want[i])
		}
	}

	stop := errors.New("stop")
	n := 0
	err = ReadPositionDeletes(context.Background(), bytes.NewReader(buf.Bytes()), int64(buf.Len()), func(string, int64) error {
		n++
		if n == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 10 {
		t.Fatalf("callback error not returned: %v after %d rows", err, n)
	}
}

func TestPositionDeleteWriterRejectsUnsorted(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewPositionDeleteWriter(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write("b", 5); err != nil {
		t.Fatal(err)
	}
	for _, d := range []posDelete{{"b", 5}, {"b", 4}, {"a", 9}} {
		if err := w.Write(d.path, d.pos); err == nil || !strings.Contains(err.Error(), "sorted") {
			t.Fatalf("Write(%v): want a sort order error, got %v", d, err)
		}
	}
	if err := w.Write("c", -1); err == nil {
		t.Fatal("negative position accepted")
	}
}

// TestEqualityDeleteRead reads an equality-delete file through OpenReader
// with a schema of the equality columns.
func TestEqualityDeleteRead(t *testing.T) {
	s := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "name", Type: spec.StringType{}},
		{ID: 3, Name: "score", Type: spec.DoubleType{}},
	}}
	rec := recordFromJSON(t, s, `[{"id": 3, "name": "c", "score": 1.0}, {"id": 9, "name": null, "score": 2.0}]`)
	defer rec.Release()
	data, _ := writeParquet(t, s, nil, rec)
	eq := &spec.Schema{Fields: []spec.NestedField{s.Fields[1], s.Fields[0]}}
	got := readParquet(t, data, ReadOptions{Schema: eq})
	defer release(got)
	compareRows(t, rowsJSON(t, got...), []string{`["c",3]`, `[null,9]`})
}
