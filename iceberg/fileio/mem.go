package fileio

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Mem is an in-memory FileIO for tests, safe for concurrent use. Paths are
// opaque strings; a "mem://" prefix is optional and ignored when storing, so
// "mem://a/b" and "a/b" name the same file.
type Mem struct {
	mu    sync.RWMutex
	files map[string]memFile
}

type memFile struct {
	data    []byte
	modTime time.Time
}

// NewMem returns an empty in-memory FileIO.
func NewMem() *Mem { return &Mem{files: make(map[string]memFile)} }

var (
	_ FileIO      = (*Mem)(nil)
	_ Lister      = (*Mem)(nil)
	_ BulkRemover = (*Mem)(nil)
)

const memScheme = "mem://"

func memKey(path string) (string, error) {
	k := strings.TrimPrefix(path, memScheme)
	if k == "" {
		return "", fmt.Errorf("empty path %q", path)
	}
	return k, nil
}

// Open returns a snapshot of the file's contents.
func (m *Mem) Open(ctx context.Context, path string) (File, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	k, err := memKey(path)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	m.mu.RLock()
	f, ok := m.files[k]
	m.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("open %s: %w", path, ErrNotFound)
	}
	// Stored slices are never modified after Close, so sharing is safe.
	return memReader{bytes.NewReader(f.data)}, nil
}

type memReader struct{ *bytes.Reader }

func (memReader) Close() error { return nil }

// Create buffers the file in memory until Close.
func (m *Mem) Create(ctx context.Context, path string) (Writer, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	k, err := memKey(path)
	if err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	return &memWriter{m: m, path: path, key: k}, nil
}

type memWriter struct {
	m    *Mem
	path string
	key  string
	buf  bytes.Buffer
	done bool
}

func (w *memWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("write %s: writer already closed", w.path)
	}
	return w.buf.Write(p)
}

func (w *memWriter) Close() error {
	if w.done {
		return fmt.Errorf("close %s: writer already closed", w.path)
	}
	w.done = true
	data := bytes.Clone(w.buf.Bytes())
	w.m.mu.Lock()
	w.m.files[w.key] = memFile{data: data, modTime: time.Now()}
	w.m.mu.Unlock()
	return nil
}

func (w *memWriter) Abort() error {
	w.done = true
	w.buf = bytes.Buffer{}
	return nil
}

// Remove deletes a file.
func (m *Mem) Remove(ctx context.Context, path string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	k, err := memKey(path)
	if err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[k]; !ok {
		return fmt.Errorf("remove %s: %w", path, ErrNotFound)
	}
	delete(m.files, k)
	return nil
}

// RemoveMany deletes the files that exist among paths.
func (m *Mem) RemoveMany(ctx context.Context, paths []string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("remove %d files: %w", len(paths), err)
	}
	keys := make([]string, len(paths))
	for i, p := range paths {
		k, err := memKey(p)
		if err != nil {
			return fmt.Errorf("remove %d files: %w", len(paths), err)
		}
		keys[i] = k
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		delete(m.files, k)
	}
	return nil
}

// List calls fn for a snapshot of the files under prefix; fn may use m.
func (m *Mem) List(ctx context.Context, prefix string, fn func(FileInfo) error) error {
	scheme := ""
	if strings.HasPrefix(prefix, memScheme) {
		scheme = memScheme
	}
	kp := strings.TrimPrefix(prefix, memScheme)
	var found []FileInfo
	m.mu.RLock()
	for k, f := range m.files {
		if strings.HasPrefix(k, kp) {
			found = append(found, FileInfo{Path: scheme + k, Size: int64(len(f.data)), ModTime: f.modTime})
		}
	}
	m.mu.RUnlock()
	sort.Slice(found, func(i, j int) bool { return found[i].Path < found[j].Path })
	for _, fi := range found {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("list %s: %w", prefix, err)
		}
		if err := fn(fi); err != nil {
			return err
		}
	}
	return nil
}
