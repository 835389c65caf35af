package dvmerge

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/extsort"
)

// spillBudget is the memory the spill of a head holds before it writes a
// sorted run to its temporary file: what lets a run's memory stay the
// same whether a table has thousands of data files or millions.
const spillBudget = 8 << 20

// spilled is a branch head as a run streams it: its live delete files and
// the live data files of partitions that have any, spilled to a temporary
// file sorted by partition (spec, partition path, partition key), so that
// the run builds, merges and drops one partition's head at a time and
// holds, across partitions, only what is per partition (the interned
// tuples) or per table (the equality deletes of unpartitioned specs,
// which apply everywhere).
//
// A position-delete file or DV applies only within its own spec and
// partition, so a partition's head (its delete files, its data files and
// the global equality deletes) decides everything the whole head would
// for that partition's data files: which need work, and which of its
// delete files apply to anything.
type spilled struct {
	t     *catalog.Table
	snap  *spec.Snapshot
	scope scope
	parts *table.Partitions
	// global are the live equality deletes of unpartitioned specs.
	global []table.FileEntry
	sorter *extsort.Sorter
	// Data files in partitions without deletes are not spilled (only the
	// global equality deletes could apply to them, and without Equality
	// only whether one does matters): minSeq is the least data sequence
	// number among them, when unspilled is set.
	minSeq    int64
	unspilled bool
}

// Record kinds, after a record's partition prefix: a partition's delete
// files come before its data files.
const (
	kindDelete byte = 'd'
	kindData   byte = 'f'
)

// spillHead reads the live files of snap into a spill: the delete
// manifests first, then the data manifests, keeping only the data files
// of partitions with deletes (all of them when Equality and a global
// equality delete is live). It reads no data or delete file.
func spillHead(ctx context.Context, t *catalog.Table, snap *spec.Snapshot, sc scope, dir string, budget int) (_ *spilled, err error) {
	s := &spilled{t: t, snap: snap, scope: sc, parts: table.NewPartitions(), sorter: extsort.New(dir, budget)}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if snap == nil {
		return s, nil
	}
	md := t.Metadata
	var withDeletes []bool // by partition id
	pre := &prefixes{s: s}
	var rec []byte
	// Column metrics are most of an entry and a merge never looks at
	// them (these entries are never written to a manifest).
	err = table.WalkEntries(ctx, t.IO, snap, table.WalkOptions{Content: table.DeletesOnly, SkipMetrics: true}, func(e table.FileEntry) error {
		df := &e.Entry.DataFile
		if df.Content == manifest.ContentEqualityDeletes && table.Unpartitioned(md, df.SpecID, df.Partition) {
			s.global = append(s.global, e)
			return nil
		}
		id := s.parts.ID(df.SpecID, df.Partition)
		for int(id) >= len(withDeletes) {
			withDeletes = append(withDeletes, false)
		}
		withDeletes[id] = true
		rec = appendDelete(append(pre.of(id), kindDelete), id, &e)
		return s.sorter.Add(rec)
	})
	if err != nil {
		return nil, fmt.Errorf("read live delete files of snapshot %d: %w", snap.SnapshotID, err)
	}
	if s.sorter.Len() == 0 && len(s.global) == 0 {
		return s, nil // no delete file: nothing to merge, nothing dangling
	}
	spillAll := sc.equality() && len(s.global) > 0
	var mu sync.Mutex // the sorter takes one Add at a time
	_, err = table.ScanLiveFiles(ctx, t.IO, snap, table.ScanOptions{Partitions: s.parts, DataOnly: true}, func() table.DataFileSink {
		return &spillSink{s: s, mu: &mu, pre: &prefixes{s: s}, withDeletes: withDeletes, all: spillAll}
	})
	if err != nil {
		return nil, fmt.Errorf("read live data files of snapshot %d: %w", snap.SnapshotID, err)
	}
	return s, nil
}

// Close releases the spill's temporary file (already unlinked).
func (s *spilled) Close() error {
	if s == nil || s.sorter == nil {
		return nil
	}
	return s.sorter.Close()
}

// spillSink spills the data files of one scanning goroutine.
type spillSink struct {
	s           *spilled
	mu          *sync.Mutex
	pre         *prefixes
	withDeletes []bool
	all         bool
	rec         []byte
	minSeq      int64
	unspilled   bool
}

func (k *spillSink) Add(lf *table.LiveDataFile) error {
	if !k.all && (int(lf.Partition) >= len(k.withDeletes) || !k.withDeletes[lf.Partition]) {
		// Only a global equality delete could apply to it: remember how
		// old the oldest such file is, for the dangling check.
		if !k.unspilled || lf.DataSequenceNumber < k.minSeq {
			k.minSeq, k.unspilled = lf.DataSequenceNumber, true
			k.mu.Lock()
			if !k.s.unspilled || lf.DataSequenceNumber < k.s.minSeq {
				k.s.minSeq, k.s.unspilled = lf.DataSequenceNumber, true
			}
			k.mu.Unlock()
		}
		return nil
	}
	k.rec = appendData(append(k.pre.of(lf.Partition), kindData), lf)
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.s.sorter.Add(k.rec)
}

// prefixes caches the sort prefix of each partition id for one goroutine.
type prefixes struct {
	s   *spilled
	ids map[uint32][]byte
	buf []byte
}

// of returns a buffer starting with the prefix of partition id; the
// caller appends to it, and it is valid until the next call.
func (p *prefixes) of(id uint32) []byte {
	pre, ok := p.ids[id]
	if !ok {
		part := p.s.parts.All()[id]
		pre = partitionPrefix(p.s.t.Metadata, part)
		if p.ids == nil {
			p.ids = map[uint32][]byte{}
		}
		p.ids[id] = pre
	}
	p.buf = append(p.buf[:0], pre...)
	return p.buf
}

// partitionPrefix orders partitions as a plan lists them: by spec, then
// partition path, then (for distinct tuples with the same path) the
// partition key. Each part is escaped so that byte order is that order.
func partitionPrefix(md *spec.TableMetadata, part table.Partition) []byte {
	ps, _ := md.SpecByID(int(part.SpecID))
	b := binary.BigEndian.AppendUint32(nil, uint32(part.SpecID)^(1<<31))
	b = appendEscaped(b, table.PartitionPathOf(md.CurrentSchema(), ps, part.Tuple))
	return appendEscaped(b, part.Key)
}

// appendEscaped appends s with each zero byte doubled as 0x00 0xff and a
// 0x00 0x01 terminator: byte order of the results is the order of the
// strings, and the end of s can be found again.
func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			b = append(b, 0, 0xff)
		} else {
			b = append(b, s[i])
		}
	}
	return append(b, 0, 1)
}

// cutEscapedBytes returns the bytes escaped at the start of b (aliasing b
// when they hold no zero byte) and the rest.
func cutEscapedBytes(b []byte) ([]byte, []byte, error) {
	var out []byte
	for i := 0; i+1 < len(b); i++ {
		if b[i] != 0 {
			continue
		}
		switch b[i+1] {
		case 1:
			if out == nil {
				return b[:i:i], b[i+2:], nil
			}
			return append(out, b[:i]...), b[i+2:], nil
		case 0xff:
			out = append(append(out, b[:i]...), 0)
			b = b[i+2:]
			i = -1
		default:
			return nil, nil, errSpillRecord
		}
	}
	return nil, nil, errSpillRecord
}

// skipPrefix returns the prefix of a record and what follows it.
func skipPrefix(rec []byte) (prefix, rest []byte, err error) {
	if len(rec) < 4 {
		return nil, nil, errSpillRecord
	}
	b := rec[4:]
	for range 2 {
		if _, b, err = cutEscapedBytes(b); err != nil {
			return nil, nil, err
		}
	}
	return rec[:len(rec)-len(b)], b, nil
}

var errSpillRecord = errors.New("internal error: a record of the spill is malformed")

// Optional fields of a spilled delete file.
const (
	hasSnapshotID = 1 << iota
	hasSeq
	hasFileSeq
	hasSortOrder
	hasRef
	hasOffset
	hasSize
	hasFirstRow
)

// appendDelete encodes the fields of a delete file's entry a merge reads
// (its metrics are not kept: a merge never reads them).
func appendDelete(b []byte, part uint32, e *table.FileEntry) []byte {
	df := &e.Entry.DataFile
	var flags byte
	opt := func(bit byte, set bool) {
		if set {
			flags |= bit
		}
	}
	opt(hasSnapshotID, e.Entry.SnapshotID != nil)
	opt(hasSeq, e.Entry.SequenceNumber != nil)
	opt(hasFileSeq, e.Entry.FileSequenceNumber != nil)
	opt(hasSortOrder, df.SortOrderID != nil)
	opt(hasRef, df.ReferencedDataFile != nil)
	opt(hasOffset, df.ContentOffset != nil)
	opt(hasSize, df.ContentSizeInBytes != nil)
	opt(hasFirstRow, df.FirstRowID != nil)
	b = binary.AppendUvarint(b, uint64(part))
	b = append(b, flags, byte(e.Entry.Status), byte(df.Content))
	for _, p := range []*int64{e.Entry.SnapshotID, e.Entry.SequenceNumber, e.Entry.FileSequenceNumber} {
		if p != nil {
			b = binary.AppendVarint(b, *p)
		}
	}
	b = appendString(b, df.FilePath)
	b = appendString(b, df.FileFormat)
	b = binary.AppendVarint(b, int64(df.SpecID))
	b = binary.AppendVarint(b, df.RecordCount)
	b = binary.AppendVarint(b, df.FileSizeInBytes)
	b = appendString(b, string(df.KeyMetadata))
	b = binary.AppendUvarint(b, uint64(len(df.EqualityIDs)))
	for _, id := range df.EqualityIDs {
		b = binary.AppendVarint(b, int64(id))
	}
	if df.SortOrderID != nil {
		b = binary.AppendVarint(b, int64(*df.SortOrderID))
	}
	if df.ReferencedDataFile != nil {
		b = appendString(b, *df.ReferencedDataFile)
	}
	for _, p := range []*int64{df.ContentOffset, df.ContentSizeInBytes, df.FirstRowID} {
		if p != nil {
			b = binary.AppendVarint(b, *p)
		}
	}
	// The bounds of a position-delete file's file_path column are the one
	// metric kept by manifest.WithoutMetrics: carried as they were read.
	for _, m := range []map[int][]byte{df.LowerBounds, df.UpperBounds} {
		v, ok := m[spec.FieldIDFilePath]
		b = append(b, boolByte(ok))
		if ok {
			b = appendString(b, string(v))
		}
	}
	return b
}

// decodeDelete decodes a record of appendDelete, its tuple from parts.
func decodeDelete(b []byte, parts []table.Partition) (table.FileEntry, error) {
	d := decoder{b: b}
	var e table.FileEntry
	df := &e.Entry.DataFile
	part := d.uvarint()
	flags := d.byte()
	e.Entry.Status = manifest.EntryStatus(d.byte())
	df.Content = manifest.FileContent(d.byte())
	e.Entry.SnapshotID = d.optVarint(flags&hasSnapshotID != 0)
	e.Entry.SequenceNumber = d.optVarint(flags&hasSeq != 0)
	e.Entry.FileSequenceNumber = d.optVarint(flags&hasFileSeq != 0)
	df.FilePath = d.string()
	df.FileFormat = d.string()
	df.SpecID = int32(d.varint())
	df.RecordCount = d.varint()
	df.FileSizeInBytes = d.varint()
	if km := d.string(); km != "" {
		df.KeyMetadata = []byte(km)
	}
	if n := d.uvarint(); n > 0 && n <= uint64(len(d.b)) {
		df.EqualityIDs = make([]int, n)
		for i := range df.EqualityIDs {
			df.EqualityIDs[i] = int(d.varint())
		}
	} else if n > 0 {
		d.fail()
	}
	if flags&hasSortOrder != 0 {
		id := int32(d.varint())
		df.SortOrderID = &id
	}
	if flags&hasRef != 0 {
		ref := d.string()
		df.ReferencedDataFile = &ref
	}
	df.ContentOffset = d.optVarint(flags&hasOffset != 0)
	df.ContentSizeInBytes = d.optVarint(flags&hasSize != 0)
	df.FirstRowID = d.optVarint(flags&hasFirstRow != 0)
	for _, m := range []*map[int][]byte{&df.LowerBounds, &df.UpperBounds} {
		if d.byte() == 1 {
			*m = map[int][]byte{spec.FieldIDFilePath: []byte(d.string())}
		}
	}
	if d.err != nil || len(d.b) != 0 || part >= uint64(len(parts)) {
		return table.FileEntry{}, errSpillRecord
	}
	df.Partition = parts[part].Tuple
	return e, nil
}

// appendData encodes a live data file, its path first (after the
// record's kind) so that a partition's files come in path order.
func appendData(b []byte, lf *table.LiveDataFile) []byte {
	b = appendEscaped(b, string(lf.Path))
	b = binary.AppendUvarint(b, uint64(lf.Partition))
	b = binary.AppendUvarint(b, lf.Pos)
	b = binary.AppendVarint(b, int64(lf.SpecID))
	b = binary.AppendVarint(b, lf.RecordCount)
	b = binary.AppendVarint(b, lf.FileSizeInBytes)
	b = binary.AppendVarint(b, lf.DataSequenceNumber)
	b = append(b, boolByte(lf.HasFileSequenceNumber), boolByte(lf.HasFirstRowID))
	b = binary.AppendVarint(b, lf.FileSequenceNumber)
	b = binary.AppendVarint(b, lf.FirstRowID)
	return appendString(b, lf.Format)
}

// decodeData decodes a record of appendData into lf; lf.Path aliases b
// unless the path holds a zero byte.
func decodeData(b []byte, lf *table.LiveDataFile) error {
	path, rest, err := cutEscapedBytes(b)
	if err != nil {
		return err
	}
	d := decoder{b: rest}
	part := d.uvarint()
	*lf = table.LiveDataFile{Path: path, Pos: d.uvarint(), SpecID: int32(d.varint()), RecordCount: d.varint(),
		FileSizeInBytes: d.varint(), DataSequenceNumber: d.varint()}
	lf.HasFileSequenceNumber, lf.HasFirstRowID = d.byte() == 1, d.byte() == 1
	lf.FileSequenceNumber, lf.FirstRowID = d.varint(), d.varint()
	lf.Format = d.string()
	if d.err != nil || len(d.b) != 0 || part > math.MaxUint32 {
		return errSpillRecord
	}
	lf.Partition = uint32(part)
	return nil
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// decoder reads the fields of a spilled record; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() { d.err, d.b = errSpillRecord, nil }

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) optVarint(present bool) *int64 {
	if !present {
		return nil
	}
	v := d.varint()
	return &v
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// each builds the head of every partition of the spill in order, and
// calls fn with it. Unless keep is set, fn must not keep the head past
// its call: the next partition's head reuses its lists (a merge in
// flight keeps its head). The heads share the spill's partitions and
// global equality deletes.
func (s *spilled) each(ctx context.Context, keep bool, fn func(h *head) error) error {
	if s.snap == nil {
		return nil
	}
	it := s.sorter.Iter()
	parts := s.parts.All()
	var (
		cur  []byte // the prefix of the partition being gathered
		dels []table.FileEntry
		h    *head
		sink *headSink
		lf   table.LiveDataFile
		n    int
		last []byte // the previous data file's path
		hint int    // data files with deletes to merge in the previous partition
		// With keep unset, the lists of the previous partition, reused.
		work     []liveFile
		delsHint int
	)
	flush := func() error {
		if cur == nil {
			return nil
		}
		if h == nil { // a partition with deletes and no data file
			h = s.newHead(dels)
		}
		if sink != nil {
			// The next partition is likely about as large: its list is
			// sized for that, instead of grown by doubling.
			hint = len(sink.work)
			h.takeSorted(sink)
		}
		err := fn(h)
		if keep {
			delsHint, dels, work = len(dels), nil, nil
		} else {
			dels, work = dels[:0], h.files[:0]
			clear(work[:cap(work)]) // drop what the last partition's files point to
		}
		cur, h, sink, last = nil, nil, nil, last[:0]
		return err
	}
	for {
		rec, ok := it.Next()
		if !ok {
			break
		}
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		prefix, rest, err := skipPrefix(rec)
		if err != nil || len(rest) == 0 {
			return errSpillRecord
		}
		if !bytes.Equal(prefix, cur) {
			if err := flush(); err != nil {
				return err
			}
			cur = append([]byte(nil), prefix...)
		}
		switch rest[0] {
		case kindDelete:
			if h != nil {
				return errSpillRecord // deletes sort before data files
			}
			e, err := decodeDelete(rest[1:], parts)
			if err != nil {
				return err
			}
			if dels == nil {
				dels = make([]table.FileEntry, 0, delsHint)
			}
			dels = append(dels, e)
		case kindData:
			if h == nil {
				h = s.newHead(dels)
				sink = h.newSink()
				sink.work = work
				if sink.work == nil {
					sink.work = make([]liveFile, 0, hint)
				}
			}
			if err := decodeData(rest[1:], &lf); err != nil {
				return err
			}
			if int(lf.Partition) >= len(parts) {
				return errSpillRecord
			}
			if len(last) > 0 && bytes.Equal(lf.Path, last) {
				return fmt.Errorf("data file %s is listed twice in snapshot %d", last, s.snap.SnapshotID)
			}
			last = append(last[:0], lf.Path...)
			if err := sink.Add(&lf); err != nil {
				return err
			}
		default:
			return errSpillRecord
		}
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("read the spilled live files: %w", err)
	}
	return flush()
}

// newHead is the head of one partition: its delete files dels and the
// global equality deletes; the caller adds its data files.
func (s *spilled) newHead(dels []table.FileEntry) *head {
	all := dels
	if len(s.global) > 0 {
		all = make([]table.FileEntry, 0, len(dels)+len(s.global))
		all = append(append(all, dels...), s.global...)
	}
	h := &head{t: s.t, snap: s.snap, parts: s.parts, ix: table.DeletesForTable(s.t.Metadata, &table.FileSet{Deletes: all}),
		dels: make(map[table.FileKey]liveDelete, len(dels)), applies: map[table.FileKey]bool{}, eqApplies: map[table.FileKey][]string{},
		scope: s.scope}
	for i := range dels {
		df := &dels[i].Entry.DataFile
		h.dels[dels[i].Key()] = liveDelete{content: df.Content, specID: df.SpecID, partition: df.Partition}
	}
	return h
}
