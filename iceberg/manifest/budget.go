package manifest

import (
	"fmt"
	"sync/atomic"
)

// Budget bounds the decompressed Avro blocks that the readers sharing it
// hold at once: the readers of one walk over a table's manifests share one,
// so reading manifests concurrently does not multiply what a crafted table
// can make a command hold. A reader that would pass the budget fails
// instead of waiting, because readers waiting for each other's memory could
// wait forever; real manifests hold a small fraction of DefaultBudget.
// A nil *Budget is no budget. It is safe for concurrent use.
type Budget struct {
	limit int64
	held  atomic.Int64
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Held returns the bytes charged to the budget now.
func (b *Budget) Held() int64 {
	if b == nil {
		return 0
	}
	return b.held.Load()
}

func (b *Budget) take(n int64) error {
	if b == nil {
		return nil
	}
	if b.held.Add(n) > b.limit {
		b.held.Add(-n)
		return fmt.Errorf("decompressed manifest blocks would hold more than %d bytes at once "+
			"(the budget of the manifests read together)", b.limit)
	}
	return nil
}

func (b *Budget) give(n int64) {
	if b != nil {
		b.held.Add(-n)
	}
}
