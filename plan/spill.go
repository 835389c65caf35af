package plan

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// spill holds records a plan no longer needs in memory: the sorted runs of
// a Collector and the input files of a plan's groups. It keeps them in
// memory up to limit bytes, then moves them to a temporary file, so memory
// stays the same however many files a table has. With a negative limit it
// never touches the disk (New, which does no IO).
type spill struct {
	mu    sync.Mutex
	dir   string
	limit int64
	// mem holds the records in chunks of spillChunk bytes (so growing
	// never copies), until they move to f.
	mem  [][]byte
	f    *os.File
	size int64
	// unlinked is set when f was removed from its directory right after
	// it was created (POSIX): a killed process leaves nothing behind.
	unlinked bool
}

const spillChunk = 256 << 10

func newSpill(dir string, limit int64) *spill { return &spill{dir: dir, limit: limit} }

// writeAt writes p at off (at most s.size: records are only ever added at
// the end or rewritten after a truncation).
func (s *spill) writeAt(p []byte, off int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeAtLocked(p, off)
}

func (s *spill) writeAtLocked(p []byte, off int64) error {
	if off > s.size {
		return errors.New("plan: spill written past its end")
	}
	end := off + int64(len(p))
	if s.f == nil && s.limit >= 0 && end > s.limit {
		if err := s.toFile(); err != nil {
			// No writable temp directory (a read-only /tmp, a full
			// disk): keep the records in memory rather than fail the
			// plan; only memory use suffers.
			s.limit = -1
		}
	}
	if s.f != nil {
		if _, err := s.f.WriteAt(p, off); err != nil {
			return fmt.Errorf("plan: write spill file: %w", err)
		}
		s.size = max(s.size, end)
		return nil
	}
	s.truncateMem(off)
	for len(p) > 0 {
		if len(s.mem) == 0 || len(s.mem[len(s.mem)-1]) == spillChunk {
			s.mem = append(s.mem, make([]byte, 0, spillChunk))
		}
		last := &s.mem[len(s.mem)-1]
		n := min(len(p), spillChunk-len(*last))
		*last = append(*last, p[:n]...)
		p = p[n:]
	}
	s.size = end
	return nil
}

// truncateMem cuts the in-memory records to size bytes.
func (s *spill) truncateMem(size int64) {
	n := int((size + spillChunk - 1) / spillChunk)
	clear(s.mem[n:])
	s.mem = s.mem[:n]
	if n > 0 {
		s.mem[n-1] = s.mem[n-1][:size-int64(n-1)*spillChunk]
	}
	s.size = size
}

// append adds p at the end and returns its offset.
func (s *spill) append(p []byte) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	off := s.size
	return off, s.writeAtLocked(p, off)
}

// truncate forgets everything from size on.
func (s *spill) truncate(size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if size < s.size {
		s.size = size
		if s.f == nil {
			s.truncateMem(size)
		}
	}
}

func (s *spill) toFile() error {
	f, err := os.CreateTemp(s.dir, "icectl-plan-*.spill")
	if err != nil {
		return fmt.Errorf("plan: create spill file: %w", err)
	}
	for _, c := range s.mem {
		if _, err := f.Write(c); err != nil {
			f.Close()
			os.Remove(f.Name())
			return fmt.Errorf("plan: write spill file: %w", err)
		}
	}
	s.f, s.mem = f, nil
	s.unlinked = os.Remove(f.Name()) == nil
	return nil
}

// ReadAt reads records back.
func (s *spill) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if off >= s.size {
		return 0, io.EOF
	}
	n := len(p)
	if rest := s.size - off; int64(n) > rest {
		n = int(rest)
	}
	var err error
	if s.f != nil {
		n, err = s.f.ReadAt(p[:n], off)
	} else {
		for done := 0; done < n; {
			c := s.mem[(off+int64(done))/spillChunk]
			done += copy(p[done:n], c[(off+int64(done))%spillChunk:])
		}
	}
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

// close removes the temporary file, if any.
func (s *spill) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mem = nil
	if s.f == nil {
		return nil
	}
	name := s.f.Name()
	err := s.f.Close()
	if !s.unlinked {
		if rerr := os.Remove(name); err == nil {
			err = rerr
		}
	}
	s.f = nil
	return err
}

// spillWriter appends records to a spill through a buffer, and can take
// back what it wrote since an offset.
type spillWriter struct {
	s       *spill
	buf     []byte
	flushed int64 // spill offset of buf[0]
}

func newSpillWriter(s *spill) *spillWriter {
	return &spillWriter{s: s, buf: make([]byte, 0, 64<<10), flushed: s.size}
}

func (w *spillWriter) offset() int64 { return w.flushed + int64(len(w.buf)) }

func (w *spillWriter) write(p []byte) error {
	if len(w.buf)+len(p) > cap(w.buf) {
		if err := w.flush(); err != nil {
			return err
		}
		if len(p) > cap(w.buf) {
			err := w.s.writeAt(p, w.flushed)
			w.flushed += int64(len(p))
			return err
		}
	}
	w.buf = append(w.buf, p...)
	return nil
}

// rewind drops everything written at or after off.
func (w *spillWriter) rewind(off int64) {
	if off >= w.flushed {
		w.buf = w.buf[:off-w.flushed]
		return
	}
	w.buf = w.buf[:0]
	w.s.truncate(off)
	w.flushed = off
}

func (w *spillWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.s.writeAt(w.buf, w.flushed)
	w.flushed += int64(len(w.buf))
	w.buf = w.buf[:0]
	return err
}

// spillReader reads the records of one region of a spill in order.
type spillReader struct {
	s        io.ReaderAt
	off, end int64 // what is left to read from s
	buf      []byte
	pos, lim int
	err      error
}

func newSpillReader(s io.ReaderAt, off, end int64, bufSize int) *spillReader {
	return &spillReader{s: s, off: off, end: end, buf: make([]byte, bufSize)}
}

// next returns the next record, valid until the following call, or nil at
// the end of the region (or on an error, kept in r.err).
func (r *spillReader) next() record {
	if !r.fill(recHeader) {
		return nil
	}
	n := recHeader + int(record(r.buf[r.pos:]).pathLen())
	if !r.fill(n) {
		if r.err == nil {
			r.err = errors.New("plan: spill record is truncated")
		}
		return nil
	}
	rec := record(r.buf[r.pos : r.pos+n : r.pos+n])
	r.pos += n
	return rec
}

// fill makes n bytes available at r.pos; false at the end of the region.
func (r *spillReader) fill(n int) bool {
	if r.lim-r.pos >= n {
		return true
	}
	if r.err != nil {
		return false
	}
	copy(r.buf, r.buf[r.pos:r.lim])
	r.lim -= r.pos
	r.pos = 0
	if n > len(r.buf) {
		r.buf = append(r.buf, make([]byte, n-len(r.buf))...)
	}
	for r.lim < n && r.off < r.end {
		want := min(int64(len(r.buf)-r.lim), r.end-r.off)
		got, err := r.s.ReadAt(r.buf[r.lim:r.lim+int(want)], r.off)
		r.lim += got
		r.off += int64(got)
		if err != nil && !(errors.Is(err, io.EOF) && int64(got) == want) {
			r.err = fmt.Errorf("plan: read spill: %w", err)
			return false
		}
	}
	return r.lim >= n
}
