package compact

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
)

// prefetchDepth is how many decoded batches may wait between the reader and
// the writer. An input of a compaction is typically one batch, so one
// waiting batch (plus the one the reader holds while it blocks) is enough
// for the next input to be decoded while the current one is encoded,
// without letting a fast reader fill memory ahead of a slow writer.
const prefetchDepth = 1

// readFunc reads input i and calls fn with its batches in order; each batch
// is released when fn returns (the scan package's contract).
type readFunc func(ctx context.Context, i int, fn func(rec arrow.RecordBatch) error) error

// prefetched is one batch in flight from the reader to the writer, owned by
// whoever holds it.
type prefetched struct {
	input int
	rec   arrow.RecordBatch
}

// prefetch reads inputs 0..n-1 with read on one goroutine and hands their
// batches to consume on the calling goroutine, in input order then batch
// order, so decoding the next input overlaps writing the current one.
// consume gets batches as read's fn does: released when consume returns,
// to be Retained if kept.
//
// The first error stops both sides: a consume error cancels the reader, a
// read error (or ctx's end) ends the stream. prefetch returns only after
// the reader goroutine has exited and every batch it handed over has been
// released.
func prefetch(ctx context.Context, n int, read readFunc, consume func(input int, rec arrow.RecordBatch) error) error {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan prefetched, prefetchDepth)
	var readErr error // written by the reader before it closes ch
	go func() {
		defer close(ch)
		for i := range n {
			err := read(rctx, i, func(rec arrow.RecordBatch) error {
				rec.Retain() // read releases rec when this returns; the receiver releases this reference
				select {
				case ch <- prefetched{input: i, rec: rec}:
					return nil
				case <-rctx.Done():
					rec.Release()
					return rctx.Err()
				}
			})
			if err != nil {
				readErr = err
				return
			}
		}
	}()
	var consumeErr error
	for p := range ch {
		if consumeErr == nil {
			consumeErr = consume(p.input, p.rec)
			if consumeErr != nil {
				cancel()
			}
		}
		// After an error this drains what the reader still sends, until it
		// sees the cancellation and closes ch.
		p.rec.Release()
	}
	if consumeErr != nil {
		return consumeErr
	}
	return readErr
}
