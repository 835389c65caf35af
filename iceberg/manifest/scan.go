package manifest

import (
	"errors"
	"fmt"
	"io"

	"github.com/hamba/avro/v2"
)

// This file is the fast path for readers that need only what planning
// needs of each entry of a data manifest: an EntryScanner decodes a block's
// bytes in place, allocates nothing per entry, and shares parsed schemas and
// compiled decoders between manifests through a ScanCache.

// ErrNoFastPath is returned by EntryScanner.Reset for a manifest whose
// schema the scanner does not decode; read it with OpenManifest instead,
// which also reports what is wrong with it.
var ErrNoFastPath = errors.New("manifest: schema not supported by the entry scanner")

// ScanCache holds what EntryScanners derive from a manifest's header:
// the parsed Avro schema and the compiled decoders, keyed by the header
// values they depend on. Parsing a manifest's Avro schema costs far more
// than decoding a few hundred entries, and the manifests of a table mostly
// share one. It is safe for concurrent use.
type ScanCache struct {
	budget   *Budget
	programs *headerCache[*scanProgram]
}

// NewScanCache returns an empty cache. The scanners sharing it also share
// a Budget of DefaultBudget bytes for their decompressed blocks.
func NewScanCache() *ScanCache {
	return &ScanCache{budget: NewBudget(DefaultBudget), programs: newHeaderCache[*scanProgram]()}
}

// Budget returns the budget of the cache's scanners, for the other readers
// of the same walk (WithBudget).
func (c *ScanCache) Budget() *Budget { return c.budget }

// EntryLayout identifies how a manifest encodes its entries: two manifests
// read with the same layout encode equal partition tuples with equal bytes
// (SlimEntry.Partition), so a decoded tuple can be cached by those bytes.
type EntryLayout struct{ p *scanProgram }

// SlimEntry is one manifest entry as an EntryScanner decodes it, with
// inheritance applied (sequence numbers of ADDED entries and of v1
// manifests, first_row_id of live data files). Path and Partition alias the
// scanner's buffer and are valid only until the next call to Next.
type SlimEntry struct {
	Status  EntryStatus
	Content FileContent
	Path    []byte
	// Format is file_format; the usual names are shared constants.
	Format string
	// Partition is the Avro encoding of the partition tuple; DecodePartition
	// turns it into values.
	Partition       []byte
	RecordCount     int64
	FileSizeInBytes int64
	// SequenceNumber is the data sequence number, FileSequenceNumber the
	// file sequence number; each is valid when its Has flag is set.
	SequenceNumber        int64
	FileSequenceNumber    int64
	FirstRowID            int64
	HasSequenceNumber     bool
	HasFileSequenceNumber bool
	HasFirstRowID         bool
}

// EntryScanner reads the entries of one manifest after another, reusing its
// buffers. It is not safe for concurrent use; give each goroutine its own.
type EntryScanner struct {
	cache *ScanCache
	ocfReader
	prog *scanProgram
	d    dec
	left int64 // entries left in the current block
	n    int   // entries read
	done bool

	mf       ManifestFile
	nextRow  int64
	hasRowID bool

	part    *avro.Reader // decodes partition tuples
	scratch DataFile
	key     []headerField // the header fields the program depends on
}

// NewEntryScanner returns a scanner that shares cache with others.
func NewEntryScanner(cache *ScanCache) *EntryScanner {
	return &EntryScanner{
		cache:     cache,
		ocfReader: ocfReader{blockCodec: blockCodec{budget: cache.budget}},
		part:      avro.NewReader(nil, 0, avro.WithReaderConfig(avro.Config{MaxByteSliceSize: maxBytesValue}.Freeze())),
	}
}

// Reset starts reading the manifest in r, listed in a manifest list as mf:
// entries inherit from mf as Reader.InheritFrom describes. It reads the
// header; it returns ErrNoFastPath (wrapped) when the schema is one the
// scanner does not decode, and other errors for a file that is not a
// manifest.
func (s *EntryScanner) Reset(r io.Reader, mf ManifestFile) error {
	s.reset(r)
	s.prog, s.left, s.n, s.done = nil, 0, 0, false
	s.d = dec{}
	s.mf = mf
	s.hasRowID, s.nextRow = false, 0
	if mf.FirstRowID != nil {
		s.hasRowID, s.nextRow = true, *mf.FirstRowID
	}
	if err := s.readHeader(); err != nil {
		return fmt.Errorf("open manifest: %w", err)
	}
	p, err := s.cache.program(s)
	if err != nil {
		return err
	}
	s.prog = p
	return nil
}

// Budget returns the budget the scanner's blocks are charged to: its
// cache's.
func (s *EntryScanner) Budget() *Budget { return s.cache.budget }

// Layout identifies the encoding of the current manifest's entries.
func (s *EntryScanner) Layout() EntryLayout { return EntryLayout{s.prog} }

// Meta returns the current manifest's key/value metadata, interpreted. It
// is shared by every manifest with the same header: do not modify it.
func (s *EntryScanner) Meta() *ManifestMeta { return &s.prog.meta }

// Next decodes the next entry into e, or returns io.EOF (bare, never
// wrapped) after the last.
func (s *EntryScanner) Next(e *SlimEntry) error {
	for s.left == 0 {
		if s.done {
			return io.EOF
		}
		count, data, err := s.readBlock()
		if errors.Is(err, io.EOF) {
			s.done = true
			return io.EOF
		}
		if err != nil {
			return fmt.Errorf("read manifest entry %d: %w", s.n, err)
		}
		s.d = dec{b: data}
		s.left = count
	}
	s.left--
	*e = SlimEntry{}
	for _, st := range s.prog.steps {
		st(&s.d, e)
	}
	if s.d.err != nil {
		return fmt.Errorf("decode manifest entry %d: %w", s.n, truncated(s.d.err))
	}
	if err := checkPath("file_path", e.Path); err != nil {
		return fmt.Errorf("manifest entry %d: %w", s.n, err)
	}
	s.n++
	s.inherit(e)
	return nil
}

// inherit is Reader.applyInheritance for a SlimEntry.
func (s *EntryScanner) inherit(e *SlimEntry) {
	if e.Status == StatusAdded || s.mf.SequenceNumber == 0 {
		if !e.HasSequenceNumber {
			e.SequenceNumber, e.HasSequenceNumber = s.mf.SequenceNumber, true
		}
		if !e.HasFileSequenceNumber {
			e.FileSequenceNumber, e.HasFileSequenceNumber = s.mf.SequenceNumber, true
		}
	}
	if e.Content != ContentData || !s.hasRowID {
		e.FirstRowID, e.HasFirstRowID = 0, false
		return
	}
	if !e.HasFirstRowID && e.Status != StatusDeleted {
		e.FirstRowID, e.HasFirstRowID = s.nextRow, true
		s.nextRow += e.RecordCount
	}
}

// DecodePartition decodes a partition tuple that Next returned for the
// current manifest (or for any manifest of the same Layout).
func (s *EntryScanner) DecodePartition(raw []byte) ([]any, error) {
	s.part.Reset(raw)
	s.part.Error = nil
	s.scratch.Partition = nil
	s.prog.partition(s.part, &s.scratch)
	if err := s.part.Error; err != nil {
		return nil, fmt.Errorf("decode partition of manifest entry %d: %w", s.n-1, truncated(err))
	}
	return s.scratch.Partition, nil
}

// Close releases the scanner's decompressor and its share of the budget.
func (s *EntryScanner) Close() { s.blockCodec.close() }

// scanProgram is everything derived from one manifest header.
type scanProgram struct {
	meta      ManifestMeta
	steps     []scanStep
	partition func(*avro.Reader, *DataFile)
}

// programKeys are the header entries a compiled program depends on.
var programKeys = [...]string{"avro.schema", "schema", "partition-spec", "partition-spec-id", "format-version", "content"}

// program returns the compiled decoder for the header s has read, from
// the cache when an earlier manifest had the same one.
func (c *ScanCache) program(s *EntryScanner) (*scanProgram, error) {
	s.key = s.key[:0]
	for _, k := range programKeys {
		if v, ok := s.field(k); ok {
			s.key = append(s.key, headerField{key: []byte(k), val: v})
		}
	}
	p, _, err := c.programs.get(s.key, func() (*scanProgram, error) { return compileProgram(s.metaMap()) })
	return p, err
}

func compileProgram(meta map[string][]byte) (*scanProgram, error) {
	sj, ok := meta["avro.schema"]
	if !ok {
		return nil, errors.New("open manifest: avro header has no avro.schema")
	}
	schema, err := parseAvro(string(sj))
	if err != nil {
		return nil, fmt.Errorf("open manifest: parse avro schema: %w", shortError(err))
	}
	// compileManifest validates the header and schema exactly as OpenManifest
	// does; its meta is the scanner's too.
	cm, err := compileManifest(&header{meta: meta, schema: schema}, readOptions{skipMetrics: true})
	if err != nil {
		return nil, fmt.Errorf("open manifest: %w", err)
	}
	p := &scanProgram{meta: cm.meta}
	root := schema.(*avro.RecordSchema)
	steps, err := compileEntry(root, p)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoFastPath, err)
	}
	p.steps = steps
	return p, nil
}
