package compact

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// fakeInputs reads n inputs of perInput batches from a checked allocator,
// each batch holding one value, input*1000+batch, and releasing each batch
// when fn returns as the scan package does. It counts reads still running.
type fakeInputs struct {
	mem      *memory.CheckedAllocator
	perInput int
	failAt   int // input whose second batch fails to read; -1 for none
	running  atomic.Int32
	batches  atomic.Int32 // batches made
}

var errFakeRead = errors.New("fake read failure")

func (f *fakeInputs) read(ctx context.Context, i int, fn func(rec arrow.RecordBatch) error) error {
	f.running.Add(1)
	defer f.running.Add(-1)
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	for j := range f.perInput {
		if err := ctx.Err(); err != nil {
			return err
		}
		if i == f.failAt && j == 1 {
			return errFakeRead
		}
		b := array.NewInt64Builder(f.mem)
		b.Append(int64(i*1000 + j))
		col := b.NewInt64Array()
		b.Release()
		rec := array.NewRecordBatch(schema, []arrow.Array{col}, 1)
		col.Release()
		f.batches.Add(1)
		err := fn(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func value(rec arrow.RecordBatch) int64 { return rec.Column(0).(*array.Int64).Value(0) }

// checkDone asserts the reader has exited and every batch was released.
func checkDone(t *testing.T, f *fakeInputs) {
	t.Helper()
	if n := f.running.Load(); n != 0 {
		t.Errorf("%d reads still running after prefetch returned", n)
	}
	f.mem.AssertSize(t, 0)
}

func TestPrefetchKeepsInputOrder(t *testing.T) {
	f := &fakeInputs{mem: memory.NewCheckedAllocator(memory.NewGoAllocator()), perInput: 3, failAt: -1}
	var got []int64
	var kept []arrow.RecordBatch
	var keptVals []int64
	err := prefetch(context.Background(), 20, f.read, func(input int, rec arrow.RecordBatch) error {
		if v := value(rec); int(v/1000) != input {
			return fmt.Errorf("batch %d handed over as input %d", v, input)
		}
		got = append(got, value(rec))
		if input%5 == 0 {
			rec.Retain() // a consumer that keeps batches, as the sorter does
			kept = append(kept, rec)
			keptVals = append(keptVals, value(rec))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 60 {
		t.Fatalf("consumed %d batches, want 60", len(got))
	}
	for k, v := range got {
		if want := int64(k/3*1000 + k%3); v != want {
			t.Fatalf("batch %d is %d, want %d (order %v)", k, v, want, got)
		}
	}
	for k, rec := range kept {
		if v := value(rec); v != keptVals[k] {
			t.Errorf("kept batch %d now reads %d", keptVals[k], v)
		}
		rec.Release()
	}
	checkDone(t, f)
}

func TestPrefetchConsumeErrorStopsReader(t *testing.T) {
	f := &fakeInputs{mem: memory.NewCheckedAllocator(memory.NewGoAllocator()), perInput: 2, failAt: -1}
	errWrite := errors.New("write failed")
	consumed := 0
	err := prefetch(context.Background(), 1000, f.read, func(input int, rec arrow.RecordBatch) error {
		consumed++
		if input == 4 {
			return errWrite
		}
		return nil
	})
	if !errors.Is(err, errWrite) {
		t.Fatalf("err = %v, want the consumer's error", err)
	}
	if consumed != 9 {
		t.Errorf("consumer called %d times, want 9 (none after its error)", consumed)
	}
	// The reader runs at most a few batches ahead of the failed one.
	if n := f.batches.Load(); n > 9+prefetchDepth+2 {
		t.Errorf("reader made %d batches after the consumer failed at the 9th", n)
	}
	checkDone(t, f)
}

func TestPrefetchReadErrorStopsGroup(t *testing.T) {
	f := &fakeInputs{mem: memory.NewCheckedAllocator(memory.NewGoAllocator()), perInput: 3, failAt: 5}
	var got []int64
	err := prefetch(context.Background(), 10, f.read, func(input int, rec arrow.RecordBatch) error {
		got = append(got, value(rec))
		return nil
	})
	if !errors.Is(err, errFakeRead) {
		t.Fatalf("err = %v, want the read error", err)
	}
	// Everything read before the failure is handed over, nothing after.
	if len(got) != 16 || got[15] != 5000 {
		t.Errorf("consumed %v, want inputs 0-4 and the first batch of input 5", got)
	}
	checkDone(t, f)
}

func TestPrefetchCancel(t *testing.T) {
	f := &fakeInputs{mem: memory.NewCheckedAllocator(memory.NewGoAllocator()), perInput: 2, failAt: -1}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	consumed := 0
	err := prefetch(ctx, 1000, f.read, func(input int, rec arrow.RecordBatch) error {
		consumed++
		if input == 3 {
			cancel() // as a --max-duration stop or an interrupt would
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if consumed > 8+prefetchDepth+1 {
		t.Errorf("consumer called %d times after cancellation at the 8th", consumed)
	}
	checkDone(t, f)
}

func TestPrefetchNoInputs(t *testing.T) {
	err := prefetch(context.Background(), 0, func(context.Context, int, func(arrow.RecordBatch) error) error {
		return errors.New("read called with no inputs")
	}, func(int, arrow.RecordBatch) error {
		return errors.New("consume called with no inputs")
	})
	if err != nil {
		t.Fatal(err)
	}
}
