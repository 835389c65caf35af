package plan

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// CollectorOptions tune a Collector.
type CollectorOptions struct {
	// TempDir is where records go once they pass MemoryLimit; "" is the
	// system's temporary directory.
	TempDir string
	// MemoryLimit is how many bytes of records (sorted runs, and the input
	// files of the plan's groups, each) are kept in memory before they are
	// moved to a temporary file. Zero means DefaultMemoryLimit; a negative
	// value keeps everything in memory.
	MemoryLimit int64
}

// DefaultMemoryLimit is CollectorOptions.MemoryLimit's default.
const DefaultMemoryLimit = 1 << 20

// runBytes is the size of a sink's run: it is sorted and spilled when full.
const runBytes = 512 << 10

// Collector gathers the live data files of a table for planning, as
// compact records: each of its sinks (one per goroutine, as
// table.ScanLiveFiles uses them) sorts what it receives into runs and
// spills them, so memory does not grow with the number of files. Plan
// merges the runs, computes the plan and returns it as a Result that
// writes the plan without holding its inputs in memory.
type Collector struct {
	md    *spec.TableMetadata
	parts *table.Partitions
	opts  CollectorOptions
	// fields is the number of fields of each spec, by id.
	fields map[int32]int
	// runBytes is the size of a sink's runs (tests make it small).
	runBytes int

	mu       sync.Mutex
	runs     *spill
	runList  []run
	sinks    []*sink
	formats  []string
	formatIx map[string]uint8
	planned  bool
}

// run is a sorted region of the runs spill.
type run struct {
	off, end int64
}

// NewCollector returns a collector for the files of md, whose partitions
// are interned in parts.
func NewCollector(md *spec.TableMetadata, parts *table.Partitions, opts CollectorOptions) *Collector {
	if opts.MemoryLimit == 0 {
		opts.MemoryLimit = DefaultMemoryLimit
	}
	c := &Collector{md: md, parts: parts, opts: opts, fields: map[int32]int{}, formatIx: map[string]uint8{}, runBytes: runBytes}
	if md != nil {
		for _, ps := range md.PartitionSpecs {
			c.fields[int32(ps.ID)] = len(ps.Fields)
		}
	}
	c.runs = newSpill(opts.TempDir, opts.MemoryLimit)
	return c
}

// Partitions returns the partition set the collector's files refer to.
func (c *Collector) Partitions() *table.Partitions { return c.parts }

// NewSink returns a sink for one goroutine. Its files are checked as
// New checks Input.Data: a negative size or record count, a spec the table
// does not have or a partition tuple of the wrong length is an error.
func (c *Collector) NewSink() table.DataFileSink {
	s := &sink{c: c}
	c.mu.Lock()
	c.sinks = append(c.sinks, s)
	c.mu.Unlock()
	return s
}

// Close releases the collector's spilled runs.
func (c *Collector) Close() error { return c.runs.close() }

// formatCode interns a file format.
func (c *Collector) formatCode(f string) (uint8, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.formatIx[f]; ok {
		return i, nil
	}
	if len(c.formats) > 255 {
		return 0, fmt.Errorf("plan: data files have more than 256 file formats")
	}
	i := uint8(len(c.formats))
	c.formats = append(c.formats, f)
	c.formatIx[f] = i
	return i, nil
}

// sink is a table.DataFileSink of a Collector.
type sink struct {
	c    *Collector
	buf  []byte   // records of the current run
	keys []runKey // and their sort keys
	out  []byte
	// Scratch of sortKeys.
	sorted       []runKey
	starts, next []int32
	// arity caches the number of values of each partition by id.
	arity      []int
	first      []firstFile // by partition id
	lastFormat string
	lastCode   uint8
	hasFormat  bool
}

type runKey struct {
	part uint32
	off  uint32
	seq  int64
	// pfx is 8 bytes of the path after the prefix all paths of the run
	// share: most comparisons of paths end there.
	pfx uint64
}

// firstFile is a partition's first file in LiveFiles order, named in
// errors about the partition.
type firstFile struct {
	seen bool
	pos  uint64
	path string
}

func (s *sink) Add(f *table.LiveDataFile) error {
	if f.FileSizeInBytes < 0 || f.RecordCount < 0 {
		return fmt.Errorf("plan: data file %s has a negative size or record count", f.Path)
	}
	fields, ok := s.c.fields[f.SpecID]
	if !ok {
		return fmt.Errorf("plan: data file %s has partition spec %d, which the table does not have", f.Path, f.SpecID)
	}
	if n := s.arityOf(f.Partition); n != fields {
		return fmt.Errorf("plan: data file %s has %d partition values but spec %d has %d fields", f.Path, n, f.SpecID, fields)
	}
	if !s.hasFormat || f.Format != s.lastFormat {
		code, err := s.c.formatCode(f.Format)
		if err != nil {
			return err
		}
		s.lastFormat, s.lastCode, s.hasFormat = f.Format, code, true
	}
	if s.buf == nil {
		// One allocation for the run, however many it holds.
		s.buf = make([]byte, 0, s.c.runBytes+recHeader+len(f.Path))
	}
	off := len(s.buf)
	s.buf = appendRecord(s.buf, f, s.lastCode)
	s.keys = append(s.keys, runKey{part: f.Partition, off: uint32(off), seq: f.DataSequenceNumber})
	for int(f.Partition) >= len(s.first) {
		s.first = append(s.first, firstFile{})
	}
	if ff := &s.first[f.Partition]; !ff.seen || f.Pos < ff.pos {
		*ff = firstFile{seen: true, pos: f.Pos, path: string(f.Path)}
	}
	if len(s.buf) >= s.c.runBytes {
		return s.flush()
	}
	return nil
}

func (s *sink) arityOf(id uint32) int {
	if int(id) >= len(s.arity) {
		all := s.c.parts.All()
		for i := len(s.arity); i < len(all); i++ {
			s.arity = append(s.arity, len(all[i].Tuple))
		}
		if int(id) >= len(s.arity) {
			return -1
		}
	}
	return s.arity[id]
}

// flush sorts the current run and spills it.
func (s *sink) flush() error {
	if len(s.keys) == 0 {
		return nil
	}
	buf := s.buf
	first := record(buf[s.keys[0].off:]).path()
	lcp := len(first)
	for _, k := range s.keys[1:] {
		p := record(buf[k.off:]).path()
		lcp = min(lcp, len(p))
		if bytes.Equal(p[:lcp], first[:lcp]) {
			continue
		}
		for i := 0; i < lcp; i++ {
			if p[i] != first[i] {
				lcp = i
				break
			}
		}
	}
	for i := range s.keys {
		var b [8]byte
		copy(b[:], record(buf[s.keys[i].off:]).path()[lcp:])
		s.keys[i].pfx = binary.BigEndian.Uint64(b[:])
	}
	s.sortKeys()
	if cap(s.out) < len(buf) {
		s.out = make([]byte, 0, cap(buf))
	}
	s.out = s.out[:0]
	for _, k := range s.keys {
		r := record(buf[k.off:])
		s.out = append(s.out, r[:recHeader+int(r.pathLen())]...)
	}
	off, err := s.c.runs.append(s.out)
	if err != nil {
		return err
	}
	s.c.mu.Lock()
	s.c.runList = append(s.c.runList, run{off: off, end: off + int64(len(s.out))})
	s.c.mu.Unlock()
	s.buf, s.keys = s.buf[:0], s.keys[:0]
	return nil
}

// sortKeys orders the run's keys by partition, sequence number and path:
// a counting sort by partition, then a sort of each partition's keys.
func (s *sink) sortKeys() {
	buf := s.buf
	byFile := func(a, b runKey) int {
		if c := cmp.Compare(a.seq, b.seq); c != 0 {
			return c
		}
		if c := cmp.Compare(a.pfx, b.pfx); c != 0 {
			return c
		}
		return bytes.Compare(record(buf[a.off:]).path(), record(buf[b.off:]).path())
	}
	var parts uint32
	for _, k := range s.keys {
		parts = max(parts, k.part+1)
	}
	if int(parts) > 4*len(s.keys) {
		slices.SortFunc(s.keys, func(a, b runKey) int {
			if c := cmp.Compare(a.part, b.part); c != 0 {
				return c
			}
			return byFile(a, b)
		})
		return
	}
	starts := slices.Grow(s.starts[:0], int(parts)+1)[:parts+1]
	clear(starts)
	for _, k := range s.keys {
		starts[k.part+1]++
	}
	for i := 1; i < len(starts); i++ {
		starts[i] += starts[i-1]
	}
	sorted := slices.Grow(s.sorted[:0], len(s.keys))[:len(s.keys)]
	next := slices.Grow(s.next[:0], int(parts))[:parts]
	copy(next, starts)
	for _, k := range s.keys {
		sorted[next[k.part]] = k
		next[k.part]++
	}
	for p := range parts {
		slices.SortFunc(sorted[starts[p]:starts[p+1]], byFile)
	}
	s.keys, s.sorted, s.starts, s.next = sorted, s.keys, starts, next
}

// finish flushes every sink; no sink may be used afterwards.
func (c *Collector) finish() ([]run, error) {
	c.mu.Lock()
	if c.planned {
		c.mu.Unlock()
		return nil, errors.New("plan: a collector plans once")
	}
	c.planned = true
	sinks := c.sinks
	c.mu.Unlock()
	for _, s := range sinks {
		if err := s.flush(); err != nil {
			return nil, err
		}
		s.buf, s.keys, s.out = nil, nil, nil
	}
	return c.runList, nil
}
