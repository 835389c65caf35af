package fileio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Local is the FileIO of the local file system. It accepts plain paths and
// file: URIs (file:///tmp/x, and file:/tmp/x as Hadoop writes them); a file
// URI is taken literally, without percent-decoding.
type Local struct{}

// NewLocal returns the local file system FileIO.
func NewLocal() *Local { return &Local{} }

var (
	_ FileIO      = (*Local)(nil)
	_ Lister      = (*Local)(nil)
	_ BulkRemover = (*Local)(nil)
)

// localPath converts a plain path or file: URI to an OS path.
func localPath(p string) (string, error) {
	rest := p
	switch {
	case strings.HasPrefix(p, "file://"):
		rest = strings.TrimPrefix(p[len("file://"):], "localhost")
		if !strings.HasPrefix(rest, "/") {
			return "", fmt.Errorf("file URI %q: only local files are supported (no host)", p)
		}
	case strings.HasPrefix(p, "file:"):
		rest = p[len("file:"):]
	}
	if rest == "" {
		return "", fmt.Errorf("empty path %q", p)
	}
	return filepath.FromSlash(rest), nil
}

// localForm returns a function turning an OS path back into the form of
// the given original path (plain, file:/ or file:///).
func localForm(orig string) func(string) string {
	switch {
	case strings.HasPrefix(orig, "file://"):
		return func(p string) string { return "file://" + filepath.ToSlash(p) }
	case strings.HasPrefix(orig, "file:"):
		return func(p string) string { return "file:" + filepath.ToSlash(p) }
	default:
		return func(p string) string { return p }
	}
}

func notFound(op, path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s %s: %w", op, path, ErrNotFound)
	}
	return fmt.Errorf("%s %s: %w", op, path, err)
}

// Open opens a local file for reading.
func (*Local) Open(ctx context.Context, path string) (File, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	lp, err := localPath(path)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	f, err := os.Open(lp)
	if err != nil {
		return nil, notFound("open", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open %s: not a regular file", path)
	}
	return &localFile{File: f, size: st.Size()}, nil
}

type localFile struct {
	*os.File
	size int64
}

func (f *localFile) Size() int64 { return f.size }

// Create starts writing a file. The data goes to a temporary file in the
// target's directory, which Close syncs and renames over the target.
func (*Local) Create(ctx context.Context, path string) (Writer, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	lp, err := localPath(path)
	if err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	if strings.HasSuffix(path, "/") {
		return nil, fmt.Errorf("create %s: path names a directory", path)
	}
	dir, base := filepath.Split(lp)
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, tmpErr(err))
	}
	return &localWriter{path: path, target: lp, tmp: tmp}, nil
}

// tmpErr is err of an operation on a writer's temporary file without that
// file's path (the error names the path being written already): the
// *fs.PathError or *os.LinkError's cause, which errors.Is still matches
// against fs.ErrPermission and the like.
func tmpErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

type localWriter struct {
	path   string
	target string
	tmp    *os.File
	done   bool // closed or aborted
	closed bool // made visible
}

func (w *localWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("write %s: writer already closed", w.path)
	}
	n, err := w.tmp.Write(p)
	if err != nil {
		return n, fmt.Errorf("write %s: %w", w.path, tmpErr(err))
	}
	return n, nil
}

func (w *localWriter) Close() error {
	if w.done {
		return fmt.Errorf("close %s: writer already closed", w.path)
	}
	w.done = true
	// Sync before the rename: otherwise a crash can leave the final name
	// pointing at an empty or partial file on some file systems.
	err := w.tmp.Chmod(0o644)
	if err == nil {
		err = w.tmp.Sync()
	}
	if cerr := w.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.tmp.Name(), w.target)
	}
	if err != nil {
		os.Remove(w.tmp.Name())
		return fmt.Errorf("close %s: %w", w.path, tmpErr(err))
	}
	w.closed = true
	return nil
}

func (w *localWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.tmp.Close()
	if err := os.Remove(w.tmp.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("abort %s: %w", w.path, err)
	}
	return nil
}

// Remove deletes a local file.
func (*Local) Remove(ctx context.Context, path string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	lp, err := localPath(path)
	if err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	if err := os.Remove(lp); err != nil {
		return notFound("remove", path, err)
	}
	// Hadoop's LocalFileSystem (Spark, Flink and Java on file://
	// warehouses) writes a checksum sidecar, .NAME.crc, beside every file
	// and deletes it with the file. Without this, every file icectl
	// removes would leave its sidecar behind for ever: orphan removal
	// does not touch hidden files. Best effort: the file is gone, and a
	// rerun would find nothing to retry.
	_ = os.Remove(filepath.Join(filepath.Dir(lp), "."+filepath.Base(lp)+".crc"))
	return nil
}

// RemoveMany deletes files with a few deletions in flight at a time.
func (l *Local) RemoveMany(ctx context.Context, paths []string) error {
	return removeConcurrently(ctx, paths, 8, func(ctx context.Context, p string) error {
		err := l.Remove(ctx, p)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	})
}

// List walks every regular file whose path starts with prefix. The whole
// listing is gathered and sorted before fn is called, because a directory
// walk's order is not the order of full paths ("a/b" sorts after "a-c").
func (*Local) List(ctx context.Context, prefix string, fn func(FileInfo) error) error {
	lp, err := localPath(prefix)
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	// The directory part is kept literally (not cleaned) so that every path
	// returned starts with prefix.
	dirPart := lp[:strings.LastIndexByte(lp, filepath.Separator)+1]
	namePrefix := lp[len(dirPart):]
	readDir := dirPart
	if readDir == "" {
		readDir = "."
	}
	entries, err := os.ReadDir(readDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", prefix, err)
	}
	var found []FileInfo
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), namePrefix) {
			continue
		}
		top := dirPart + e.Name()
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(top, p)
			if err != nil {
				return err
			}
			if rel != "." {
				p = top + string(filepath.Separator) + rel
			} else {
				p = top
			}
			found = append(found, FileInfo{Path: p, Size: info.Size(), ModTime: info.ModTime()})
			return nil
		})
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed between ReadDir and the walk
		}
		if err != nil {
			return fmt.Errorf("list %s: %w", prefix, err)
		}
	}
	form := localForm(prefix)
	for i := range found {
		found[i].Path = form(found[i].Path)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Path < found[j].Path })
	for _, fi := range found {
		if err := fn(fi); err != nil {
			return err
		}
	}
	return nil
}
