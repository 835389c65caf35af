// Package faultio wraps a fileio.FileIO and injects failures into chosen
// calls, for tests of what icectl does when storage fails part way. It is
// for tests only and must never be used by product code.
package faultio

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/icectl/icectl/iceberg/fileio"
)

// ErrInjected is wrapped by every failure the wrapper injects.
var ErrInjected = errors.New("faultio: injected failure")

// Op names an operation whose calls are counted and can be failed.
type Op string

const (
	Open       Op = "open"
	Create     Op = "create"
	Remove     Op = "remove"
	List       Op = "list"
	RemoveMany Op = "remove-many"
	ReadAt     Op = "read-at"
	Write      Op = "write"
	// Close fails a writer's Close before the file becomes visible: the
	// inner writer is aborted.
	Close Op = "close"
	// CloseAfterCommit fails a writer's Close after the file became
	// visible, like a timeout on a request that did succeed.
	CloseAfterCommit Op = "close-after-commit"
)

var (
	_ fileio.FileIO      = (*IO)(nil)
	_ fileio.Lister      = (*IO)(nil)
	_ fileio.BulkRemover = (*IO)(nil)
)

// rule fails call number nth (1-based, 0 = every call) of op on paths
// containing substr.
type rule struct {
	op     Op
	nth    int
	substr string
}

// IO is the fault-injecting wrapper. It is safe for concurrent use.
type IO struct {
	inner fileio.FileIO

	mu         sync.Mutex
	calls      map[Op]int
	rules      []rule
	writeLimit int64 // bytes a writer accepts before failing, -1 for no limit
}

// New wraps inner. Without rules every call passes through.
func New(inner fileio.FileIO) *IO {
	return &IO{inner: inner, calls: make(map[Op]int), writeLimit: -1}
}

// FailNth makes the nth call (counting from 1, over all paths) of op fail.
func (f *IO) FailNth(op Op, nth int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, rule{op: op, nth: nth})
}

// FailPath makes every call of op on a path containing substr fail.
func (f *IO) FailPath(op Op, substr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, rule{op: op, substr: substr})
}

// FailWritesAfter makes each writer accept n bytes and then fail, writing
// the part of the failing Write that fits: a write that dies midway. The
// writer's Close then fails too, aborting the inner writer.
func (f *IO) FailWritesAfter(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writeLimit = n
}

// Reset removes all rules and zeroes the counts.
func (f *IO) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules, f.calls, f.writeLimit = nil, make(map[Op]int), -1
}

// Calls returns how many calls of op were made so far, failed ones included.
func (f *IO) Calls(op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// check counts a call of op on path and returns the injected error, if any.
func (f *IO) check(op Op, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op]++
	n := f.calls[op]
	for _, r := range f.rules {
		if r.op != op {
			continue
		}
		if (r.nth == 0 || r.nth == n) && strings.Contains(path, r.substr) {
			return fmt.Errorf("%s %s (call %d): %w", op, path, n, ErrInjected)
		}
	}
	return nil
}

func (f *IO) Open(ctx context.Context, path string) (fileio.File, error) {
	if err := f.check(Open, path); err != nil {
		return nil, err
	}
	file, err := f.inner.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, io: f, path: path}, nil
}

func (f *IO) Create(ctx context.Context, path string) (fileio.Writer, error) {
	if err := f.check(Create, path); err != nil {
		return nil, err
	}
	w, err := f.inner.Create(ctx, path)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	limit := f.writeLimit
	f.mu.Unlock()
	return &faultWriter{Writer: w, io: f, path: path, limit: limit}, nil
}

func (f *IO) Remove(ctx context.Context, path string) error {
	if err := f.check(Remove, path); err != nil {
		return err
	}
	return f.inner.Remove(ctx, path)
}

// List fails when the wrapped FileIO cannot list.
func (f *IO) List(ctx context.Context, prefix string, fn func(fileio.FileInfo) error) error {
	if err := f.check(List, prefix); err != nil {
		return err
	}
	l, ok := f.inner.(fileio.Lister)
	if !ok {
		return fmt.Errorf("list %s: %T cannot list", prefix, f.inner)
	}
	return l.List(ctx, prefix, fn)
}

// RemoveMany fails as a whole when a rule matches any of the paths; it
// falls back to Remove one by one when the wrapped FileIO has no bulk delete.
func (f *IO) RemoveMany(ctx context.Context, paths []string) error {
	if err := f.check(RemoveMany, strings.Join(paths, "\n")); err != nil {
		return err
	}
	if br, ok := f.inner.(fileio.BulkRemover); ok {
		return br.RemoveMany(ctx, paths)
	}
	var errs []error
	for _, p := range paths {
		if err := f.inner.Remove(ctx, p); err != nil && !errors.Is(err, fileio.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

type faultFile struct {
	fileio.File
	io   *IO
	path string
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.io.check(ReadAt, f.path); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

type faultWriter struct {
	fileio.Writer
	io      *IO
	path    string
	limit   int64
	written int64
	broken  error // the injected write failure, if any
}

func (w *faultWriter) Write(p []byte) (int, error) {
	if w.broken != nil {
		return 0, w.broken
	}
	if err := w.io.check(Write, w.path); err != nil {
		w.broken = err
		return 0, err
	}
	if w.limit >= 0 && w.written+int64(len(p)) > w.limit {
		n, _ := w.Writer.Write(p[:w.limit-w.written])
		w.written += int64(n)
		w.broken = fmt.Errorf("write %s after %d bytes: %w", w.path, w.written, ErrInjected)
		return n, w.broken
	}
	n, err := w.Writer.Write(p)
	w.written += int64(n)
	return n, err
}

func (w *faultWriter) Close() error {
	if w.broken != nil {
		return errors.Join(w.broken, w.Writer.Abort())
	}
	if err := w.io.check(Close, w.path); err != nil {
		return errors.Join(err, w.Writer.Abort())
	}
	if err := w.Writer.Close(); err != nil {
		return err
	}
	return w.io.check(CloseAfterCommit, w.path)
}
