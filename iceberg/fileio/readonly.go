package fileio

import (
	"context"
	"fmt"
)

// ReadOnly wraps f so that reads and listings pass through and every call
// that would change storage fails with ErrReadOnly. Dry runs use it so that a
// bug which tries to write fails loudly instead of writing.
func ReadOnly(f FileIO) FileIO {
	return readOnly{f}
}

type readOnly struct{ inner FileIO }

func (r readOnly) Open(ctx context.Context, path string) (File, error) {
	return r.inner.Open(ctx, path)
}

func (r readOnly) Create(ctx context.Context, path string) (Writer, error) {
	return nil, fmt.Errorf("create %s: %w", path, ErrReadOnly)
}

func (r readOnly) Remove(ctx context.Context, path string) error {
	return fmt.Errorf("remove %s: %w", path, ErrReadOnly)
}

func (r readOnly) RemoveMany(ctx context.Context, paths []string) error {
	return fmt.Errorf("remove %d files: %w", len(paths), ErrReadOnly)
}

// List passes through when the wrapped FileIO can list.
func (r readOnly) List(ctx context.Context, prefix string, fn func(FileInfo) error) error {
	l, ok := r.inner.(Lister)
	if !ok {
		return fmt.Errorf("list %s: %T cannot list", prefix, r.inner)
	}
	return l.List(ctx, prefix, fn)
}
