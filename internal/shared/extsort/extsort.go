// Package extsort sorts more byte-string records than fit in memory: records
// are buffered up to a memory budget, sorted, and written as sorted runs to
// one temporary file, and iterators merge the runs. It is what lets the
// maintenance verbs compare sets of millions of paths (listings, reachable
// files) in bounded memory.
//
// It must never hold more than its budget of records in memory (plus one
// read buffer per run while iterating), and it must never leave a temporary
// file behind: the file is unlinked as soon as it is created where the
// operating system allows it, and removed by Close otherwise.
package extsort

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// DefaultBudget is the memory a Sorter holds before it spills a run.
const DefaultBudget = 64 << 20

// readBuffer is the read-ahead of each run while merging.
const readBuffer = 64 << 10

// maxRuns bounds the runs merged at once (and so the read buffers an
// iterator holds): when a spill makes more, they are merged into one.
const maxRuns = 64

// Sorter collects records, then iterates them in ascending byte order.
// Add must not be called once Iter has been; Iter may be called any number
// of times (each iterator reads the runs independently). A Sorter is not
// safe for concurrent Add calls; iterators are independent of each other.
type Sorter struct {
	// Unique drops duplicate records (set before the first Add): runs are
	// written, and iterators yield, each distinct record once.
	Unique bool

	dir    string
	budget int

	buf      [][]byte // records not yet in a run
	bufBytes int
	frozen   bool

	f        *os.File
	unlinked bool
	size     int64 // bytes written to f
	runs     []run
	n        int64
}

type run struct{ off, end int64 }

// New returns a Sorter spilling to a temporary file in dir ("" = the
// system's) once its records take more than budget bytes (<= 0:
// DefaultBudget).
func New(dir string, budget int) *Sorter {
	if budget <= 0 {
		budget = DefaultBudget
	}
	return &Sorter{dir: dir, budget: budget}
}

// Len is the number of records added.
func (s *Sorter) Len() int64 { return s.n }

// Spilled reports whether any run went to disk.
func (s *Sorter) Spilled() bool { return len(s.runs) > 0 }

// Add adds a copy of rec.
func (s *Sorter) Add(rec []byte) error {
	if s.frozen {
		return errors.New("extsort: Add after Iter")
	}
	s.buf = append(s.buf, bytes.Clone(rec))
	// Each record costs its bytes plus a slice header.
	s.bufBytes += len(rec) + 24
	s.n++
	if s.bufBytes >= s.budget {
		return s.spill()
	}
	return nil
}

// spill writes the buffered records as one sorted run.
func (s *Sorter) spill() error {
	if len(s.buf) == 0 {
		return nil
	}
	if s.f == nil {
		f, unlinked, err := s.createTemp()
		if err != nil {
			return err
		}
		s.f, s.unlinked = f, unlinked
	}
	slices.SortFunc(s.buf, bytes.Compare)
	start := s.size
	end, err := writeRun(s.f, start, func(yield func([]byte) bool) {
		for i, rec := range s.buf {
			if s.Unique && i > 0 && bytes.Equal(rec, s.buf[i-1]) {
				continue
			}
			if !yield(rec) {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	s.size = end
	s.runs = append(s.runs, run{start, end})
	clear(s.buf)
	s.buf, s.bufBytes = s.buf[:0], 0
	if len(s.runs) >= maxRuns {
		return s.mergeRuns()
	}
	return nil
}

func (s *Sorter) createTemp() (*os.File, bool, error) {
	f, err := os.CreateTemp(s.dir, "icectl-sort-*")
	if err != nil {
		return nil, false, fmt.Errorf("extsort: create spill file: %w", err)
	}
	return f, os.Remove(f.Name()) == nil, nil
}

// writeRun writes records at off and returns the end offset.
func writeRun(f *os.File, off int64, recs func(yield func([]byte) bool)) (int64, error) {
	w := bufio.NewWriterSize(io.NewOffsetWriter(f, off), readBuffer)
	var hdr [binary.MaxVarintLen64]byte
	for rec := range recs {
		n := binary.PutUvarint(hdr[:], uint64(len(rec)))
		w.Write(hdr[:n])
		w.Write(rec)
		off += int64(n + len(rec))
	}
	if err := w.Flush(); err != nil {
		return 0, fmt.Errorf("extsort: write spill file: %w", err)
	}
	return off, nil
}

// mergeRuns merges every run into one, in a new file that replaces the
// old one, so the disk holds each record once.
func (s *Sorter) mergeRuns() error {
	f, unlinked, err := s.createTemp()
	if err != nil {
		return err
	}
	it := s.iterRuns()
	end, err := writeRun(f, 0, func(yield func([]byte) bool) {
		for rec, ok := it.Next(); ok; rec, ok = it.Next() {
			if !yield(rec) {
				return
			}
		}
	})
	if err == nil {
		err = it.Err()
	}
	if err != nil {
		f.Close()
		if !unlinked {
			os.Remove(f.Name())
		}
		return err
	}
	if err := s.closeFile(); err != nil {
		f.Close()
		if !unlinked {
			os.Remove(f.Name())
		}
		return err
	}
	s.f, s.unlinked, s.size = f, unlinked, end
	s.runs = []run{{0, end}}
	return nil
}

// Iter returns an iterator over every record in ascending order
// (duplicates included). The first call ends the Add phase.
func (s *Sorter) Iter() *Iter {
	if !s.frozen {
		s.frozen = true
		if len(s.runs) > 0 {
			// Everything goes to disk, so memory holds only read buffers.
			if err := s.spill(); err != nil {
				return &Iter{err: err}
			}
			s.buf = nil
		} else {
			slices.SortFunc(s.buf, bytes.Compare)
		}
	}
	if len(s.runs) == 0 {
		return &Iter{mem: s.buf, unique: s.Unique}
	}
	return s.iterRuns()
}

// iterRuns merges the runs on disk.
func (s *Sorter) iterRuns() *Iter {
	it := &Iter{h: runHeap{}, unique: s.Unique}
	for _, r := range s.runs {
		rd := &runReader{r: bufio.NewReaderSize(io.NewSectionReader(s.f, r.off, r.end-r.off), readBuffer)}
		if rd.next() {
			it.h = append(it.h, rd)
		} else if rd.err != nil {
			return &Iter{err: rd.err}
		}
	}
	heap.Init(&it.h)
	return it
}

// Close releases the temporary file. Iterators must not be used after it.
func (s *Sorter) Close() error {
	s.buf = nil
	return s.closeFile()
}

func (s *Sorter) closeFile() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	if !s.unlinked {
		if rerr := os.Remove(s.f.Name()); err == nil {
			err = rerr
		}
	}
	s.f = nil
	return err
}

// Iter yields records in order.
type Iter struct {
	mem    [][]byte // when nothing spilled
	h      runHeap
	cur    *runReader
	err    error
	done   bool
	unique bool
	last   []byte // the previous record, when unique
	begun  bool
}

// Next returns the next record, valid until the following call, and false
// at the end or on an error (see Err).
func (it *Iter) Next() ([]byte, bool) {
	for {
		rec, ok := it.next()
		if !ok || !it.unique {
			return rec, ok
		}
		if it.begun && bytes.Equal(rec, it.last) {
			continue
		}
		it.begun = true
		it.last = append(it.last[:0], rec...)
		return rec, true
	}
}

func (it *Iter) next() ([]byte, bool) {
	if it.err != nil || it.done {
		return nil, false
	}
	if it.h == nil { // nothing spilled
		if len(it.mem) == 0 {
			it.done = true
			return nil, false
		}
		rec := it.mem[0]
		it.mem = it.mem[1:]
		return rec, true
	}
	// The run the previous record came from advances only now, so that
	// record stayed valid until this call.
	if it.cur != nil {
		if it.cur.next() {
			heap.Push(&it.h, it.cur)
		} else if it.cur.err != nil {
			it.err = it.cur.err
			return nil, false
		}
		it.cur = nil
	}
	if len(it.h) == 0 {
		it.done = true
		return nil, false
	}
	it.cur = heap.Pop(&it.h).(*runReader)
	return it.cur.rec, true
}

// Err is the error that ended the iteration, if any.
func (it *Iter) Err() error { return it.err }

type runReader struct {
	r   *bufio.Reader
	rec []byte
	err error
}

func (r *runReader) next() bool {
	n, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		return false
	}
	if err == nil {
		if cap(r.rec) < int(n) {
			r.rec = make([]byte, n)
		}
		r.rec = r.rec[:n]
		_, err = io.ReadFull(r.r, r.rec)
	}
	if err != nil {
		r.err = fmt.Errorf("extsort: read spill file: %w", err)
		return false
	}
	return true
}

type runHeap []*runReader

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return bytes.Compare(h[i].rec, h[j].rec) < 0 }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
