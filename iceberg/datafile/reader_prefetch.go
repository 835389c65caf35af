package datafile

import "github.com/apache/arrow-go/v18/arrow"

// prefetched is one result of a Reader's decoding goroutine.
type prefetched struct {
	rec arrow.RecordBatch
	err error
}

// prefetcher runs a Reader's decoding in a goroutine, at most one batch
// ahead of the consumer (one waiting in results, one being decoded), so
// memory stays bounded by the batch size.
type prefetcher struct {
	results chan prefetched
	quit    chan struct{}
	done    chan struct{}
}

// startPrefetch calls next in a new goroutine until it returns an error
// (io.EOF included), handing each result over in order.
func startPrefetch(next func() (arrow.RecordBatch, error)) *prefetcher {
	p := &prefetcher{results: make(chan prefetched, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			rec, err := next()
			select {
			case p.results <- prefetched{rec, err}:
			case <-p.quit:
				if rec != nil {
					rec.Release()
				}
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

// stop ends the goroutine, waits for it (the file must not be closed under
// it) and releases the batch it had decoded ahead.
func (p *prefetcher) stop() {
	close(p.quit)
	<-p.done
	select {
	case r := <-p.results:
		if r.rec != nil {
			r.rec.Release()
		}
	default:
	}
}
