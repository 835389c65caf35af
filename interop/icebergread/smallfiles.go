package icebergread

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/url"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
)

// wholeFileLimit is the size up to which the reader reads an s3:// file
// whole when it opens it.
const wholeFileLimit = 1 << 20

// iceberg-go opens an object store file with a GET of the whole object,
// then reads a Parquet file's footer and each column chunk with a ranged
// GET of its own: seven requests for a small data file, where the first
// GET already carries every byte. The tests' files are small, and the
// requests were most of the S3 server's work in the tests that read
// through it (docs/bench/tests.md, 2026-12-07). So s3:// files are read
// through smallFiles: iceberg-go's own S3 IO, whose Open reads a file of
// up to wholeFileLimit bytes from that first GET and answers every read
// from memory. What is read, and how it is decoded, is iceberg-go's.
func init() {
	iceio.Unregister("s3")
	iceio.Register("s3", func(ctx context.Context, parsed *url.URL, props map[string]string) (iceio.IO, error) {
		// iceberg-go's S3 IO, registered for s3a:// too, accepts s3:// paths.
		alias := *parsed
		alias.Scheme = "s3a"
		inner, err := iceio.LoadFS(ctx, props, alias.String())
		if err != nil {
			return nil, err
		}
		b, ok := inner.(*blobfs.FileIO)
		if !ok {
			return nil, fmt.Errorf("iceberg-go's S3 IO is a %T, not a *blobfs.FileIO", inner)
		}
		return smallFiles{b}, nil
	})
}

// smallFiles is iceberg-go's blob IO with small files read whole on Open;
// every other method is the blob IO's.
type smallFiles struct{ *blobfs.FileIO }

func (s smallFiles) Open(name string) (iceio.File, error) {
	f, err := s.FileIO.Open(name)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil || info.Size() > wholeFileLimit {
		return f, err
	}
	data := make([]byte, info.Size())
	_, err = io.ReadFull(f, data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &memFile{Reader: bytes.NewReader(data), info: info}, nil
}

// memFile is a file read whole.
type memFile struct {
	*bytes.Reader
	info fs.FileInfo
}

func (m *memFile) Stat() (fs.FileInfo, error) { return m.info, nil }
func (m *memFile) Close() error               { return nil }
