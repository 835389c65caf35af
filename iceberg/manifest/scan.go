package manifest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"sync"

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
	mu       sync.Mutex
	seed     maphash.Seed
	programs map[uint64][]*scanProgram // by hash of programKeys' values
	n        int
}

// NewScanCache returns an empty cache. The scanners sharing it also share
// a Budget of DefaultBudget bytes for their decompressed blocks.
func NewScanCache() *ScanCache {
	return &ScanCache{budget: NewBudget(DefaultBudget), seed: maphash.MakeSeed(), programs: map[uint64][]*scanProgram{}}
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
	br    *bufio.Reader
	codec blockCodec
	prog  *scanProgram
	sync  [16]byte
	raw   []byte
	d     dec
	left  int64 // entries left in the current block
	n     int   // entries read
	done  bool

	mf       ManifestFile
	nextRow  int64
	hasRowID bool

	part    *avro.Reader // decodes partition tuples
	scratch DataFile

	// The header of the current manifest.
	meta    map[string][]byte
	metaBuf []byte
	metaIdx []metaEntry
	last    int
}

// NewEntryScanner returns a scanner that shares cache with others.
func NewEntryScanner(cache *ScanCache) *EntryScanner {
	return &EntryScanner{
		cache: cache,
		codec: blockCodec{budget: cache.budget},
		br:    bufio.NewReaderSize(nil, containerBufSize),
		part:  avro.NewReader(nil, 0, avro.WithReaderConfig(avro.Config{MaxByteSliceSize: maxBytesValue}.Freeze())),
	}
}

// Reset starts reading the manifest in r, listed in a manifest list as mf:
// entries inherit from mf as Reader.InheritFrom describes. It reads the
// header; it returns ErrNoFastPath (wrapped) when the schema is one the
// scanner does not decode, and other errors for a file that is not a
// manifest.
func (s *EntryScanner) Reset(r io.Reader, mf ManifestFile) error {
	s.br.Reset(r)
	s.codec.startFile()
	s.prog, s.left, s.n, s.done = nil, 0, 0, false
	s.d = dec{}
	s.mf = mf
	s.hasRowID, s.nextRow = false, 0
	if mf.FirstRowID != nil {
		s.hasRowID, s.nextRow = true, *mf.FirstRowID
	}
	meta, err := s.readHeader()
	if err != nil {
		return fmt.Errorf("open manifest: %w", err)
	}
	if err := s.codec.setCodec(meta["avro.codec"]); err != nil {
		return fmt.Errorf("open manifest: %w", err)
	}
	p, err := s.cache.program(meta)
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
		more, err := s.readBlock()
		if err != nil {
			return err
		}
		if !more {
			s.done = true
			return io.EOF
		}
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

// readHeader reads the container header: magic, metadata and sync marker.
// The metadata values alias a buffer reused by the next Reset.
func (s *EntryScanner) readHeader() (map[string][]byte, error) {
	var magic [4]byte
	if _, err := io.ReadFull(s.br, magic[:]); err != nil {
		return nil, fmt.Errorf("read avro header: %w", truncated(err))
	}
	if magic != avroMagic {
		return nil, fmt.Errorf("not an avro object container file (magic %x)", magic[:])
	}
	s.metaBuf, s.metaIdx = s.metaBuf[:0], s.metaIdx[:0]
	for {
		n, err := readVarint(s.br)
		if err != nil {
			return nil, fmt.Errorf("read avro header metadata: %w", truncated(err))
		}
		if n == 0 {
			break
		}
		if n < 0 {
			n = -n
			if _, err := readVarint(s.br); err != nil { // block size in bytes
				return nil, fmt.Errorf("read avro header metadata: %w", truncated(err))
			}
		}
		if n > maxMetaEntries || int64(len(s.metaIdx))+n > maxMetaEntries {
			return nil, fmt.Errorf("avro header metadata has too many entries (%d)", n)
		}
		for range n {
			if err := s.readBytes(); err != nil {
				return nil, fmt.Errorf("read avro header metadata: %w", truncated(err))
			}
			key := string(s.metaBuf[len(s.metaBuf)-s.last:])
			s.metaBuf = s.metaBuf[:len(s.metaBuf)-s.last]
			if err := s.readBytes(); err != nil {
				return nil, fmt.Errorf("read avro header metadata: %w", truncated(err))
			}
			s.metaIdx = append(s.metaIdx, metaEntry{key: key, start: len(s.metaBuf) - s.last, end: len(s.metaBuf)})
		}
	}
	if _, err := io.ReadFull(s.br, s.sync[:]); err != nil {
		return nil, fmt.Errorf("read avro header sync marker: %w", truncated(err))
	}
	if s.meta == nil {
		s.meta = map[string][]byte{}
	}
	clear(s.meta)
	for _, m := range s.metaIdx {
		s.meta[m.key] = s.metaBuf[m.start:m.end:m.end]
	}
	return s.meta, nil
}

type metaEntry struct {
	key        string
	start, end int
}

// readBytes appends the next bytes value to metaBuf; s.last is its length.
func (s *EntryScanner) readBytes() error {
	n, err := readVarint(s.br)
	if err != nil {
		return err
	}
	if n < 0 || n > maxBytesValue {
		return fmt.Errorf("invalid length %d", n)
	}
	at := len(s.metaBuf)
	s.metaBuf = append(s.metaBuf, make([]byte, n)...)
	s.last = int(n)
	_, err = io.ReadFull(s.br, s.metaBuf[at:])
	return err
}

// readBlock reads and decompresses the next block; false at the end of
// the file.
func (s *EntryScanner) readBlock() (bool, error) {
	if _, err := s.br.Peek(1); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, fmt.Errorf("read manifest entry %d: read avro block: %w", s.n, err)
	}
	count, err := readVarint(s.br)
	if err != nil {
		return false, fmt.Errorf("read manifest entry %d: read avro block header: %w", s.n, truncated(err))
	}
	size, err := readVarint(s.br)
	if err != nil {
		return false, fmt.Errorf("read manifest entry %d: read avro block header: %w", s.n, truncated(err))
	}
	if count < 0 || size < 0 || size > maxBlockSize {
		return false, fmt.Errorf("read manifest entry %d: corrupt avro block header (count %d, size %d)", s.n, count, size)
	}
	s.raw = s.raw[:0]
	for int64(len(s.raw)) < size {
		n := min(size-int64(len(s.raw)), readChunk)
		s.raw = append(s.raw, make([]byte, n)...)
		if _, err := io.ReadFull(s.br, s.raw[int64(len(s.raw))-n:]); err != nil {
			return false, fmt.Errorf("read manifest entry %d: read avro block of %d bytes: %w", s.n, size, truncated(err))
		}
	}
	var sync [16]byte
	if _, err := io.ReadFull(s.br, sync[:]); err != nil {
		return false, fmt.Errorf("read manifest entry %d: read avro block sync marker: %w", s.n, truncated(err))
	}
	if sync != s.sync {
		return false, fmt.Errorf("read manifest entry %d: corrupt avro file: block sync marker does not match the header", s.n)
	}
	data, err := s.codec.decompress(s.raw)
	if err != nil {
		return false, fmt.Errorf("read manifest entry %d: decompress avro block (%s): %w", s.n, s.codec.codec, err)
	}
	if count > 0 && len(data) == 0 {
		return false, fmt.Errorf("read manifest entry %d: corrupt avro block: %d records in 0 bytes", s.n, count)
	}
	s.d = dec{b: data}
	s.left = count
	return true, nil
}

// Close releases the scanner's decompressor and its share of the budget.
func (s *EntryScanner) Close() { s.codec.close() }

// readVarint reads one zig-zag encoded Avro long.
func readVarint(r io.ByteReader) (int64, error) {
	var u uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			return 0, errors.New("varint overflows a long")
		}
		c, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	return int64(u>>1) ^ -int64(u&1), nil
}

// scanProgram is everything derived from one manifest header.
type scanProgram struct {
	key       [][]byte // the header values of programKeys (nil: absent)
	meta      ManifestMeta
	steps     []scanStep
	partition func(*avro.Reader, *DataFile)
}

// programKeys are the header entries a compiled program depends on.
var programKeys = [...]string{"avro.schema", "schema", "partition-spec", "partition-spec-id", "format-version", "content"}

// program returns the compiled decoder for a header, from the cache when
// an earlier manifest had the same one.
func (c *ScanCache) program(meta map[string][]byte) (*scanProgram, error) {
	var h maphash.Hash
	h.SetSeed(c.seed)
	for _, k := range programKeys {
		v, ok := meta[k]
		var n [9]byte
		if ok {
			n[0] = 1
		}
		binary.LittleEndian.PutUint64(n[1:], uint64(len(v)))
		h.Write(n[:])
		h.Write(v)
	}
	sum := h.Sum64()
	same := func(p *scanProgram) bool {
		for i, k := range programKeys {
			v, ok := meta[k]
			if ok != (p.key[i] != nil) || !bytes.Equal(v, p.key[i]) {
				return false
			}
		}
		return true
	}
	c.mu.Lock()
	for _, p := range c.programs[sum] {
		if same(p) {
			c.mu.Unlock()
			return p, nil
		}
	}
	c.mu.Unlock()
	p, err := compileProgram(meta)
	if err != nil {
		return nil, err
	}
	p.key = make([][]byte, len(programKeys))
	for i, k := range programKeys {
		if v, ok := meta[k]; ok {
			p.key[i] = append([]byte{}, v...)
		}
	}
	c.mu.Lock()
	if c.n < maxCachedPrograms {
		c.programs[sum] = append(c.programs[sum], p)
		c.n++
	}
	c.mu.Unlock()
	return p, nil
}

// maxCachedPrograms bounds a cache fed with manifests that all differ.
const maxCachedPrograms = 256

func compileProgram(meta map[string][]byte) (*scanProgram, error) {
	sj, ok := meta["avro.schema"]
	if !ok {
		return nil, errors.New("open manifest: avro header has no avro.schema")
	}
	schema, err := avro.ParseWithCache(string(sj), "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("open manifest: parse avro schema: %w", shortError(err))
	}
	// newReader validates the header and schema exactly as OpenManifest
	// does; its meta is the scanner's too.
	c := &container{meta: meta, schema: schema}
	rd, err := newReader(c, readOptions{skipMetrics: true})
	if err != nil {
		return nil, fmt.Errorf("open manifest: %w", err)
	}
	p := &scanProgram{meta: rd.meta}
	root := schema.(*avro.RecordSchema)
	steps, err := compileEntry(root, p)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoFastPath, err)
	}
	p.steps = steps
	return p, nil
}
