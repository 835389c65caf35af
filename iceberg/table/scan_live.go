package table

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// Partitions interns the partitions of a table's files: each distinct
// (spec id, tuple) gets a small id, so a reader can carry a partition as a
// number. It is safe for concurrent use.
type Partitions struct {
	mu   sync.Mutex
	ids  map[string]uint32
	list []Partition
}

// Partition is one interned partition.
type Partition struct {
	SpecID int32
	Tuple  []any
	// Key is PartitionKey(SpecID, Tuple).
	Key string
}

// NewPartitions returns an empty set.
func NewPartitions() *Partitions { return &Partitions{ids: map[string]uint32{}} }

// ID returns the id of (specID, tuple), adding it on first sight. The
// tuple is kept: the caller must not modify it afterwards.
func (p *Partitions) ID(specID int32, tuple []any) uint32 {
	key := PartitionKey(specID, tuple)
	p.mu.Lock()
	defer p.mu.Unlock()
	if id, ok := p.ids[key]; ok {
		return id
	}
	id := uint32(len(p.list))
	p.ids[key] = id
	p.list = append(p.list, Partition{SpecID: specID, Tuple: tuple, Key: key})
	return id
}

// Lookup returns the id of the partition with key PartitionKey(spec, tuple),
// if it was interned.
func (p *Partitions) Lookup(key string) (uint32, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok := p.ids[key]
	return id, ok
}

// All returns the partitions interned so far, indexed by id.
func (p *Partitions) All() []Partition {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.list[:len(p.list):len(p.list)]
}

// LiveDataFile is a live data file as ScanLiveFiles reads it for planning:
// the fields a plan needs, with inheritance applied, and nothing that
// costs an allocation per file.
type LiveDataFile struct {
	// Pos orders files as LiveFiles lists them: the manifest's position in
	// the manifest list in the high 32 bits, the entry's in the low ones.
	Pos uint64
	// Path aliases the reader's buffer: it is valid only during the call.
	Path   []byte
	Format string
	SpecID int32
	// Partition is the partition's id in ScanOptions.Partitions.
	Partition       uint32
	RecordCount     int64
	FileSizeInBytes int64
	// DataSequenceNumber is 0 when unknown, as FileEntry.DataSequenceNumber.
	DataSequenceNumber    int64
	FileSequenceNumber    int64
	FirstRowID            int64
	HasFileSequenceNumber bool
	HasFirstRowID         bool
}

// DataFileSink receives the live data files of ScanLiveFiles. Each sink is
// used by one goroutine.
type DataFileSink interface {
	Add(f *LiveDataFile) error
}

// ScanOptions tune ScanLiveFiles.
type ScanOptions struct {
	// Concurrency is how many manifests are read at once: by default
	// GOMAXPROCS, since decoding is CPU-bound, but at least 4, so that
	// reads from object storage overlap their latency on small machines.
	Concurrency int
	// Partitions interns the data files' partitions; required.
	Partitions *Partitions
	// DataOnly skips the delete manifests (ScanLiveFiles then returns no
	// delete files): for a caller that has read them already, and would
	// otherwise hold them all a second time.
	DataOnly bool
}

// ScanLiveFiles reads the live files of snap for planning: the data files
// go to sinks, the delete files (fully decoded except metrics, as with
// WalkOptions.SkipMetrics) come back in the order LiveFiles lists them.
// Manifests are read by Concurrency goroutines, each with its own sink
// from newSink (called before any is used); a goroutine takes manifests in
// manifest-list order and hands its sink their files in order, but files
// of different goroutines interleave in no particular order. Data manifests
// are decoded in place (manifest.EntryScanner), so reading allocates
// nothing per file. On errors, the one of the earliest manifest in the
// list is returned; an error from a sink stops the scan and is returned
// as is.
func ScanLiveFiles(ctx context.Context, fio fileio.FileIO, snap *spec.Snapshot, opts ScanOptions, newSink func() DataFileSink) ([]FileEntry, error) {
	if opts.Partitions == nil {
		return nil, errors.New("scan live files: no partition set")
	}
	mfs, err := ManifestFiles(ctx, fio, snap)
	if err != nil {
		return nil, err
	}
	if opts.DataOnly {
		mfs = selectManifests(DataOnly, mfs)
	}
	workers := opts.Concurrency
	if workers <= 0 {
		workers = max(4, runtime.GOMAXPROCS(0))
	}
	workers = max(1, min(workers, len(mfs)))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	cache := manifest.NewScanCache()
	deletes := make([][]FileEntry, len(mfs))
	errs := make([]error, len(mfs))
	var next, stop atomic.Int64
	stop.Store(int64(len(mfs)))
	sinks := make([]DataFileSink, workers)
	for i := range sinks {
		sinks[i] = newSink()
	}
	var wg sync.WaitGroup
	for _, sink := range sinks {
		wg.Go(func() {
			w := &scanWorker{scanner: manifest.NewEntryScanner(cache), budget: cache.Budget(), parts: opts.Partitions, sink: sink}
			defer w.scanner.Close()
			for {
				i := next.Add(1) - 1
				// A manifest after one that failed need not be read: its
				// error could not be the one returned.
				if i >= int64(len(mfs)) || i >= stop.Load() {
					return
				}
				if err := w.read(ctx, fio, int(i), mfs[i], &deletes[i]); err != nil {
					errs[i] = err
					for {
						s := stop.Load()
						if i >= s || stop.CompareAndSwap(s, i) {
							break
						}
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	var n int
	for _, d := range deletes {
		n += len(d)
	}
	out := make([]FileEntry, 0, n)
	for _, d := range deletes {
		out = append(out, d...)
	}
	return out, nil
}

// scanWorker is one goroutine of ScanLiveFiles.
type scanWorker struct {
	scanner *manifest.EntryScanner
	budget  *manifest.Budget
	parts   *Partitions
	sink    DataFileSink
	// ids caches partition ids by the Avro bytes of the tuple, per layout
	// and spec.
	ids   map[layoutSpec]map[string]uint32
	entry manifest.SlimEntry
	file  LiveDataFile
}

type layoutSpec struct {
	layout manifest.EntryLayout
	spec   int32
}

func (w *scanWorker) read(ctx context.Context, fio fileio.FileIO, i int, mf manifest.ManifestFile, deletes *[]FileEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if mf.Content != manifest.ManifestContentData {
		return readManifest(ctx, fio, mf, false, w.readOptions(), func(e FileEntry) error {
			*deletes = append(*deletes, e)
			return nil
		})
	}
	f, err := fio.Open(ctx, mf.Path)
	if err != nil {
		return fmt.Errorf("open manifest: %w", err)
	}
	defer f.Close()
	err = w.scanner.Reset(io.NewSectionReader(f, 0, f.Size()), mf)
	if errors.Is(err, manifest.ErrNoFastPath) {
		return w.readSlow(ctx, fio, i, mf)
	}
	if err != nil {
		return fmt.Errorf("read manifest %s: %w", mf.Path, err)
	}
	key := layoutSpec{w.scanner.Layout(), mf.SpecID}
	if w.ids == nil {
		w.ids = map[layoutSpec]map[string]uint32{}
	}
	ids := w.ids[key]
	if ids == nil {
		ids = map[string]uint32{}
		w.ids[key] = ids
	}
	e := &w.entry
	for n := 0; ; n++ {
		if n%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		err := w.scanner.Next(e)
		if err == io.EOF { // bare at the end; a wrapped EOF is an error
			return nil
		}
		if err != nil {
			return fmt.Errorf("read manifest %s: %w", mf.Path, err)
		}
		if e.Status == manifest.StatusDeleted {
			continue
		}
		if e.Content != manifest.ContentData {
			return fmt.Errorf("read manifest %s: file %s has content %d in a manifest with content %d", mf.Path, e.Path, e.Content, mf.Content)
		}
		id, ok := ids[string(e.Partition)]
		if !ok {
			tuple, err := w.scanner.DecodePartition(e.Partition)
			if err != nil {
				return fmt.Errorf("read manifest %s: %w", mf.Path, err)
			}
			id = w.parts.ID(mf.SpecID, tuple)
			ids[string(e.Partition)] = id
		}
		lf := &w.file
		*lf = LiveDataFile{
			Pos: uint64(i)<<32 | uint64(uint32(n)), Path: e.Path, Format: e.Format, SpecID: mf.SpecID, Partition: id,
			RecordCount: e.RecordCount, FileSizeInBytes: e.FileSizeInBytes,
			FileSequenceNumber: e.FileSequenceNumber, HasFileSequenceNumber: e.HasFileSequenceNumber,
			FirstRowID: e.FirstRowID, HasFirstRowID: e.HasFirstRowID,
		}
		if e.HasSequenceNumber {
			lf.DataSequenceNumber = e.SequenceNumber
		}
		if err := w.sink.Add(lf); err != nil {
			return err
		}
	}
}

// readOptions are those of the worker's full reads: without metrics, and
// within the budget the scanners share.
func (w *scanWorker) readOptions() []manifest.ReadOption {
	return []manifest.ReadOption{manifest.WithoutMetrics(), manifest.WithBudget(w.budget)}
}

// readSlow reads a data manifest the EntryScanner does not decode with the
// full reader.
func (w *scanWorker) readSlow(ctx context.Context, fio fileio.FileIO, i int, mf manifest.ManifestFile) error {
	n := 0
	return readManifest(ctx, fio, mf, false, w.readOptions(), func(e FileEntry) error {
		lf := LiveDataFileOf(&e, w.parts)
		lf.Pos = uint64(i)<<32 | uint64(uint32(n))
		n++
		return w.sink.Add(&lf)
	})
}

// LiveDataFileOf describes the data file of e as ScanLiveFiles would,
// interning its partition in parts. Pos is left zero.
func LiveDataFileOf(e *FileEntry, parts *Partitions) LiveDataFile {
	df := &e.Entry.DataFile
	lf := LiveDataFile{
		Path: []byte(df.FilePath), Format: df.FileFormat, SpecID: df.SpecID,
		Partition:   parts.ID(df.SpecID, df.Partition),
		RecordCount: df.RecordCount, FileSizeInBytes: df.FileSizeInBytes,
		DataSequenceNumber: e.DataSequenceNumber(),
	}
	if s := e.Entry.FileSequenceNumber; s != nil {
		lf.FileSequenceNumber, lf.HasFileSequenceNumber = *s, true
	}
	if r := df.FirstRowID; r != nil {
		lf.FirstRowID, lf.HasFirstRowID = *r, true
	}
	return lf
}
