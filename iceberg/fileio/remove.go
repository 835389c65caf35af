package fileio

import (
	"context"
	"io/fs"
	"sync"
)

// removeConcurrently calls remove for every path with at most workers calls
// in flight and gathers the failures into a *RemoveManyError.
func removeConcurrently(ctx context.Context, paths []string, workers int, remove func(context.Context, string) error) error {
	errs := make([]error, len(paths))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = remove(ctx, paths[i])
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	var failed []*fs.PathError
	for i, err := range errs {
		if err != nil {
			failed = append(failed, &fs.PathError{Op: "remove", Path: paths[i], Err: err})
		}
	}
	if failed != nil {
		return &RemoveManyError{Failed: failed}
	}
	return nil
}
