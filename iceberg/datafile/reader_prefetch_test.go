package datafile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icectl/icectl/iceberg/spec"
)

func prefetchFile(t *testing.T) (*spec.Schema, []byte, []arrow.RecordBatch) {
	t.Helper()
	s := &spec.Schema{Fields: []spec.NestedField{
		{ID: 1, Name: "id", Type: spec.LongType{}, Required: true},
		{ID: 2, Name: "s", Type: spec.StringType{}},
	}}
	var batches []arrow.RecordBatch
	for k := range 4 {
		batches = append(batches, genBatch(t, s, 1000, k))
	}
	data, _ := writeParquet(t, s, nil, batches...)
	return s, data, batches
}

// waitGoroutines waits for the goroutine count to fall back to n: a
// Reader's prefetch goroutine must be gone once Close returns, but the
// runtime may take a moment to reap exited goroutines.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	for range 100 {
		if runtime.NumGoroutine() <= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d goroutines, want at most %d: the prefetch goroutine leaked", runtime.NumGoroutine(), n)
}

// TestReaderPrefetchCloseEarly closes a Reader in the middle of a file: the
// goroutine decoding ahead stops, the batch it holds is released, and Next
// then reports the reader closed.
func TestReaderPrefetchCloseEarly(t *testing.T) {
	s, data, batches := prefetchFile(t)
	defer release(batches)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	before := runtime.NumGoroutine()
	rd, err := OpenReader(context.Background(), bytes.NewReader(data), int64(len(data)), ReadOptions{Schema: s, BatchSize: 300, WithPos: true})
	if err != nil {
		t.Fatal(err)
	}
	rd.mem = mem
	rec, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	if rec.NumRows() != 300 {
		t.Fatalf("first batch has %d rows, want 300", rec.NumRows())
	}
	rec.Release()
	if err := rd.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Next(); err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("Next after Close: %v, want a closed-reader error", err)
	}
	waitGoroutines(t, before)
	// _pos columns come from mem: the batch decoded ahead was released.
	mem.AssertSize(t, 0)
}

// TestReaderPrefetchOrderAndEOF reads a file in small batches: rows come in
// file order and Next keeps returning io.EOF after the end.
func TestReaderPrefetchOrderAndEOF(t *testing.T) {
	s, data, batches := prefetchFile(t)
	defer release(batches)
	rd, err := OpenReader(context.Background(), bytes.NewReader(data), int64(len(data)), ReadOptions{Schema: s, BatchSize: 333})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var got []arrow.RecordBatch
	defer func() { release(got) }()
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rec)
	}
	compareRows(t, rowKeys(t, got...), rowKeys(t, batches...))
	for range 2 {
		if _, err := rd.Next(); !errors.Is(err, io.EOF) {
			t.Fatalf("Next after the end: %v, want io.EOF", err)
		}
	}
}

// TestReaderPrefetchCancel cancels the context mid-file: Next fails with
// the context's error rather than returning batches decoded ahead.
func TestReaderPrefetchCancel(t *testing.T) {
	s, data, batches := prefetchFile(t)
	defer release(batches)
	ctx, cancel := context.WithCancel(context.Background())
	rd, err := OpenReader(ctx, bytes.NewReader(data), int64(len(data)), ReadOptions{Schema: s, BatchSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rec, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	rec.Release()
	cancel()
	if _, err := rd.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after cancel: %v, want context.Canceled", err)
	}
}
