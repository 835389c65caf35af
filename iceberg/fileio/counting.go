package fileio

import "io"

// CountingWriter counts the bytes written through it to W, and keeps the
// first error W returned (a file writer's error names its path): the size
// a writer records for a file it wrote (manifests, data and delete files).
// Having no Close, it also hides W's Close from an encoder that would
// close what it writes to.
type CountingWriter struct {
	W   io.Writer
	N   int64
	Err error
}

func (c *CountingWriter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	if err != nil && c.Err == nil {
		c.Err = err
	}
	return n, err
}
