// Package fanout runs the calls of an index range on a bounded number of
// goroutines: the one worker pool verbs share for requests to storage and
// for groups rewritten at once. It imports nothing and never stops early:
// a caller that wants to stop checks its context inside fn.
package fanout

import "sync"

// Each calls fn(i) for every i in 0..n-1, with at most width calls at a
// time, and returns when all have returned.
func Each(n, width int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(max(width, 1), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
