// Package fileio reads, writes, lists and deletes the files of Iceberg tables
// on local disk, in memory, on S3, Google Cloud Storage and Azure (Blob
// Storage, ADLS Gen2), behind one small interface.
//
// Every implementation makes a file visible only when its Writer is closed
// successfully, so a crash or an aborted write never leaves a half-written
// file under the final name. Open and Remove of a missing file return an
// error wrapping ErrNotFound.
//
// The package must never log or print credentials, and it is the only package
// of icectl allowed to import the AWS, Google Cloud and Azure SDKs.
package fileio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"
)

// ErrNotFound is wrapped by the error of Open and Remove when the file does not exist.
var ErrNotFound = errors.New("file not found")

// ErrReadOnly is returned by every mutating call of a FileIO made by ReadOnly.
var ErrReadOnly = errors.New("file IO is read-only")

// File is an open file: random access reads and its size at the time of Open.
type File interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// Writer writes a new file. Nothing is visible under the file's path until
// Close returns nil; Abort discards everything written. Abort after a
// successful Close does nothing and returns nil, so `defer w.Abort()` is a
// safe way to clean up on every error path.
type Writer interface {
	io.Writer
	// Close makes the file visible, replacing any file of the same path.
	Close() error
	// Abort discards the file.
	Abort() error
}

// FileIO is the storage seam every part of icectl goes through. The errors
// of its methods name the operation and the path ("open PATH: ..."), so
// callers add what they were doing, never the path again.
type FileIO interface {
	Open(ctx context.Context, path string) (File, error)
	Create(ctx context.Context, path string) (Writer, error)
	Remove(ctx context.Context, path string) error
}

// FileInfo describes a file found by List.
type FileInfo struct {
	Path    string
	Size    int64
	ModTime time.Time
}

// Lister is implemented by a FileIO that can enumerate files.
//
// List calls fn for every file whose path starts with prefix, as a plain
// string prefix, in ascending order of path. A prefix without a trailing
// slash therefore also matches siblings: "s3://b/tbl" matches
// "s3://b/tbl2/x". Pass "s3://b/tbl/" to list one directory. Paths are given
// in the same form as prefix (the URI scheme is kept). A prefix matching
// nothing is not an error. An error from fn stops the listing and is
// returned.
type Lister interface {
	List(ctx context.Context, prefix string, fn func(FileInfo) error) error
}

// BulkRemover is implemented by a FileIO that can delete many files at once.
//
// RemoveMany treats a file that is already gone as removed (S3 cannot tell
// the difference). When some paths could not be removed it returns a
// *RemoveManyError listing each of them.
type BulkRemover interface {
	RemoveMany(ctx context.Context, paths []string) error
}

// RemoveManyError lists the paths RemoveMany failed to remove, in the order
// they were given.
type RemoveManyError struct {
	Failed []*fs.PathError
}

func (e *RemoveManyError) Error() string {
	const show = 3
	var b strings.Builder
	fmt.Fprintf(&b, "remove %d files failed", len(e.Failed))
	for i, f := range e.Failed {
		if i == show {
			fmt.Fprintf(&b, "; and %d more", len(e.Failed)-show)
			break
		}
		fmt.Fprintf(&b, "; %s: %v", f.Path, f.Err)
	}
	return b.String()
}

// Unwrap returns the errors of the individual paths.
func (e *RemoveManyError) Unwrap() []error {
	errs := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		errs[i] = f
	}
	return errs
}

// ReadFile reads the whole file at path.
func ReadFile(ctx context.Context, fio FileIO, path string) ([]byte, error) {
	f, err := fio.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, f.Size())
	n, err := f.ReadAt(buf, 0)
	if err != nil && !(errors.Is(err, io.EOF) && n == len(buf)) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return buf, nil
}

// WriteFile creates path with the given contents.
func WriteFile(ctx context.Context, fio FileIO, path string, data []byte) error {
	w, err := fio.Create(ctx, path)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return errors.Join(err, w.Abort())
	}
	return w.Close()
}

// ReadsLocally reports whether f is served from this machine (a local file
// or memory), where reading it in many small pieces costs no more than
// reading it whole; a remote object pays a request per ReadAt and is
// better read in one piece.
func ReadsLocally(f File) bool {
	switch f.(type) {
	case *localFile, memReader:
		return true
	}
	return false
}
