package catalog

import (
	"context"
	"strings"
	"sync"

	"github.com/icectl/icectl/iceberg/fileio"
)

// FileIOs hands out one FileIO per URI scheme, so every table of a catalog
// on the same storage shares clients (and an in-memory store stays one
// store).
type FileIOs struct {
	props map[string]string
	mu    sync.Mutex
	byKey map[string]fileio.FileIO
}

// NewFileIOs returns a FileIO cache configured by props (s3.* etc.).
func NewFileIOs(props map[string]string) *FileIOs {
	return &FileIOs{props: props, byKey: map[string]fileio.FileIO{}}
}

// For returns the FileIO for location.
func (f *FileIOs) For(ctx context.Context, location string) (fileio.FileIO, error) {
	key := schemeOf(location)
	f.mu.Lock()
	defer f.mu.Unlock()
	if fio, ok := f.byKey[key]; ok {
		return fio, nil
	}
	fio, err := fileio.Load(ctx, location, f.props)
	if err != nil {
		return nil, err
	}
	f.byKey[key] = fio
	return fio, nil
}

// schemeOf returns the lower-cased URI scheme of location, with the local
// forms ("", "file") folded together.
func schemeOf(location string) string {
	i := strings.Index(location, ":")
	if i < 2 || strings.ContainsAny(location[:i], "/\\") {
		return "file"
	}
	s := strings.ToLower(location[:i])
	if s == "" {
		return "file"
	}
	return s
}
