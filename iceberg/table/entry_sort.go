package table

import (
	"bufio"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// sortItem is a manifest entry with its partition key, the order a
// manifest rewrite writes entries in: spec, partition, path.
type sortItem struct {
	key string
	e   manifest.Entry
}

func compareItems(a, b *sortItem) int {
	if c := strings.Compare(a.key, b.key); c != 0 {
		return c
	}
	return strings.Compare(a.e.DataFile.FilePath, b.e.DataFile.FilePath)
}

// entrySorter sorts the entries of a manifest rewrite by spec, partition
// and path within a memory budget: entries are held until their estimated
// size passes the budget, then each spec's are sorted and written as a
// run (a manifest, the format that already carries every field of an
// entry) to an unlinked temporary file; sorted merges the runs. A rewrite
// that fits in the budget never touches the disk.
type entrySorter struct {
	md         *spec.TableMetadata
	schema     *spec.Schema
	schemas    *manifest.SchemaCache
	snapshotID int64
	dir        string
	budget     int64

	buf    []sortItem
	bytes  int64
	sorted bool // buf is sorted and being handed out from pos on
	pos    int
	runs   map[int32][]sortRun
	open   []*os.File // spill files, closed by close
	names  []string   // spill files the system did not let us unlink
}

type sortRun struct {
	f    *os.File
	size int64
}

// minEntrySize is the least entrySize: a decoded entry and its key.
const minEntrySize = 320

// entrySize estimates the memory an entry takes once decoded.
func entrySize(df *manifest.DataFile) int64 {
	n := minEntrySize + 2*len(df.FilePath) + 24*len(df.Partition) + len(df.KeyMetadata) + 8*len(df.SplitOffsets) + 8*len(df.EqualityIDs)
	n += 48 * (len(df.ColumnSizes) + len(df.ValueCounts) + len(df.NullValueCounts) + len(df.NaNValueCounts) + len(df.LowerBounds) + len(df.UpperBounds))
	for _, b := range df.LowerBounds {
		n += len(b)
	}
	for _, b := range df.UpperBounds {
		n += len(b)
	}
	return int64(n)
}

func (s *entrySorter) add(e manifest.Entry) error {
	s.buf = append(s.buf, sortItem{key: PartitionKey(e.DataFile.SpecID, e.DataFile.Partition), e: e})
	s.bytes += entrySize(&e.DataFile)
	if s.bytes >= s.budget {
		return s.spill()
	}
	return nil
}

// specIDs lists the specs of the added entries, ascending.
func (s *entrySorter) specIDs() []int32 {
	seen := map[int32]bool{}
	for i := range s.buf {
		seen[s.buf[i].e.DataFile.SpecID] = true
	}
	for id := range s.runs {
		seen[id] = true
	}
	ids := make([]int32, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (s *entrySorter) sortBuf() {
	slices.SortStableFunc(s.buf, func(a, b sortItem) int {
		if a.e.DataFile.SpecID != b.e.DataFile.SpecID {
			return int(a.e.DataFile.SpecID) - int(b.e.DataFile.SpecID)
		}
		return compareItems(&a, &b)
	})
}

// spill writes the held entries as one sorted run per spec.
func (s *entrySorter) spill() error {
	s.sortBuf()
	for start := 0; start < len(s.buf); {
		id := s.buf[start].e.DataFile.SpecID
		end := start
		for end < len(s.buf) && s.buf[end].e.DataFile.SpecID == id {
			end++
		}
		r, err := s.writeRun(id, s.buf[start:end])
		if err != nil {
			return err
		}
		if s.runs == nil {
			s.runs = map[int32][]sortRun{}
		}
		s.runs[id] = append(s.runs[id], r)
		start = end
	}
	clear(s.buf)
	s.buf, s.bytes = s.buf[:0], 0
	return nil
}

func (s *entrySorter) writeRun(id int32, items []sortItem) (sortRun, error) {
	ps, ok := s.md.SpecByID(int(id))
	if !ok {
		return sortRun{}, fmt.Errorf("rewrite manifests: table has no partition spec %d", id)
	}
	f, err := os.CreateTemp(s.dir, "icectl-rewrite-*")
	if err != nil {
		return sortRun{}, fmt.Errorf("rewrite manifests: create spill file: %w", err)
	}
	s.open = append(s.open, f)
	// Unlinked at once where the system allows, so a killed run leaves
	// nothing behind; close removes it otherwise.
	if os.Remove(f.Name()) != nil {
		s.names = append(s.names, f.Name())
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	cw := &fileio.CountingWriter{W: bw}
	w, err := manifest.NewWriter(cw, manifest.WriterOptions{Version: s.md.FormatVersion, Content: manifest.ManifestContentData,
		Schema: s.schema, Spec: *ps, SnapshotID: s.snapshotID, Schemas: s.schemas})
	if err != nil {
		return sortRun{}, err
	}
	for i := range items {
		if err := w.Add(items[i].e); err != nil {
			return sortRun{}, err
		}
	}
	if err := w.Close(); err != nil {
		return sortRun{}, err
	}
	if err := bw.Flush(); err != nil {
		return sortRun{}, fmt.Errorf("rewrite manifests: write spill file: %w", err)
	}
	return sortRun{f: f, size: cw.N}, nil
}

// iter returns an iterator over the entries of spec id in order, and a
// function releasing what it holds. It ends the adding.
func (s *entrySorter) iter(id int32) (next func() (sortItem, bool, error), stop func(), err error) {
	if len(s.runs) == 0 {
		// Everything fits in memory: sorted once, each spec's part handed
		// out in turn (specs ascending), released as it goes.
		if !s.sorted {
			s.sortBuf()
			s.sorted = true
		}
		for s.pos < len(s.buf) && s.buf[s.pos].e.DataFile.SpecID < id {
			s.pos++
		}
		return func() (sortItem, bool, error) {
			if s.pos == len(s.buf) || s.buf[s.pos].e.DataFile.SpecID != id {
				return sortItem{}, false, nil
			}
			it := s.buf[s.pos]
			s.buf[s.pos] = sortItem{}
			s.pos++
			return it, true, nil
		}, func() {}, nil
	}
	if len(s.buf) > 0 {
		if err := s.spill(); err != nil {
			return nil, nil, err
		}
	}
	h := &runHeap{}
	stop = func() {
		for _, r := range h.readers {
			r.Close()
		}
	}
	for _, run := range s.runs[id] {
		r, err := manifest.OpenManifest(io.NewSectionReader(run.f, 0, run.size), manifest.WithSchemaCache(s.schemas))
		if err != nil {
			stop()
			return nil, nil, fmt.Errorf("rewrite manifests: read spill file: %w", err)
		}
		h.readers = append(h.readers, r)
		if err := h.pull(len(h.readers)-1, id); err != nil {
			stop()
			return nil, nil, err
		}
	}
	return func() (sortItem, bool, error) {
		if h.Len() == 0 {
			return sortItem{}, false, nil
		}
		top := h.items[0]
		heap.Pop(h)
		if err := h.pull(top.run, id); err != nil {
			return sortItem{}, false, err
		}
		return top.sortItem, true, nil
	}, stop, nil
}

// close releases the spill files.
func (s *entrySorter) close() {
	for _, f := range s.open {
		f.Close()
	}
	for _, name := range s.names {
		os.Remove(name)
	}
}

type heapItem struct {
	sortItem
	run int
}

// runHeap merges the runs of one spec: the head of each run, smallest
// first.
type runHeap struct {
	readers []*manifest.Reader
	items   []heapItem
}

func (h *runHeap) Len() int { return len(h.items) }
func (h *runHeap) Less(i, j int) bool {
	return compareItems(&h.items[i].sortItem, &h.items[j].sortItem) < 0
}
func (h *runHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *runHeap) Push(x any)    { h.items = append(h.items, x.(heapItem)) }
func (h *runHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return it
}

// pull reads the next entry of run i onto the heap (nothing at its end).
// Entries come back as written: every value explicit, so nothing is
// inherited from the run file.
func (h *runHeap) pull(i int, id int32) error {
	e, err := h.readers[i].Next()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("rewrite manifests: read spill file: %w", err)
	}
	e.DataFile.SpecID = id
	heap.Push(h, heapItem{sortItem: sortItem{key: PartitionKey(id, e.DataFile.Partition), e: e}, run: i})
	return nil
}
