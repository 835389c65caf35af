package plan

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/maphash"
	"maps"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan/where"
)

// This file is the planner: it merges a Collector's sorted runs, so each
// partition's files arrive together in packing order, and decides
// everything in one pass with memory per partition and per group, not per
// file. The input files of the groups it keeps go to a spill, from which a
// Result writes them.

// Reason bits of a group record, in the order a file's reasons are listed.
var reasonNames = [...]string{ReasonTooSmall, ReasonTooLarge, ReasonTooManyDeletes, ReasonDeleteRatio, ReasonRewriteAll, ReasonOutputSpec}

const (
	reasonTooSmall uint8 = 1 << iota
	reasonTooLarge
	reasonTooManyDeletes
	reasonDeleteRatio
	reasonRewriteAll
	reasonOutputSpec
)

// partState is what the planner keeps per partition.
type partState struct {
	info     table.Partition
	selected bool
	first    firstFile
	files    int
	minSeq   int64 // of every live file
	// minOut is the lowest sequence number of a file no group rewrites
	// (before the max-files-to-rewrite cap; finish adds what it drops).
	minOut  int64
	kept    int // groups kept so far: the next one's partition index
	deletes partDeletes

	// After finish: the groups of the partition, ascending, and the lowest
	// sequence numbers of their files (of those without a DV).
	groups      []int
	minGroup    int64
	minGroupNoD int64
}

// draft is a bin of candidates while the planner packs, then a kept group.
type draft struct {
	part           uint32
	serial         int // position among all bins, for refTarget
	partitionIndex int
	start, end     int64 // group spill region
	files          int
	bytes          int64
	records        int64
	known          int64
	outBytes       float64
	heavy          bool
	minSeq         int64
	minSeqNoDV     int64
	id             [8]byte
}

// refTarget is where the data file a file-scoped delete references ended
// up.
type refTarget struct {
	found  bool
	seq    int64
	part   uint32
	path   []byte
	serial int // bin serial, or -1 when in no bin
	index  int // position in the bin
	group  int // final group index, or -1 (after finish)
}

type planner struct {
	md     *spec.TableMetadata
	r      Resolved
	parts  []table.Partition
	ps     []partState
	ix     *deleteIndex
	refs   map[string]*refTarget
	groups *spill
	gw     *spillWriter
	rec    []byte // scratch group record
	app    applicable

	live, selected, candidates int

	cur    uint32
	hasCur bool
	bin    draft
	inBin  bool
	serial int
	h      hash.Hash
	hbuf   []byte
	drafts []*draft

	// unmatched are the files the where filter rules out by their
	// metrics.
	unmatched map[string]bool

	bloom    []uint64
	seed     maphash.Seed
	suspects map[string]struct{}

	// After finish: the lowest sequence number of each group's files, and
	// partition ids by key.
	gmin  []int64
	byKey map[string]uint32
}

// Plan computes the compaction plan of the collected data files (and of
// in.Data, which it collects first) with the live deletes in.Deletes,
// options r and time now; in.Metadata is the metadata the collector was
// made for. The result is the plan New computes from the same files. A
// collector plans once; its sinks may not be used afterwards.
func (c *Collector) Plan(in *Input, r Resolved, now time.Time) (*Result, error) {
	md := in.Metadata
	if md == nil {
		return nil, errors.New("plan: no table metadata")
	}
	if r.TargetFileSize <= 0 || r.MaxFileGroupSize <= 0 || r.MinInputFiles <= 0 || r.MaxFileGroupInputFiles <= 0 {
		return nil, errors.New("plan: options were not resolved (use Options.Resolve)")
	}
	filter := r.filter
	if filter == nil && r.Where != "" {
		if md.CurrentSchema() == nil {
			return nil, errors.New("plan: the table has no current schema for the where filter")
		}
		f, err := where.Compile(r.Where, md.CurrentSchema())
		if err != nil {
			return nil, fmt.Errorf("where: %w", err)
		}
		filter = f
	}
	p := &Plan{
		Format:    DocumentFormat,
		Version:   DocumentVersion,
		CreatedAt: now.UTC(),
		TableRef: TableRef{Name: in.TableName, UUID: md.TableUUID, Location: md.Location,
			MetadataLocation: in.MetadataLocation, FormatVersion: md.FormatVersion},
		Branch:            in.Branch,
		Options:           r,
		Sort:              in.Sort,
		SortOrder:         in.SortOrder,
		ZOrder:            in.ZOrder,
		Groups:            []Group{},
		RetireAfterGroups: []ConditionalRetire{},
	}
	if p.Branch == "" {
		p.Branch = "main"
	}
	if in.BaseSnapshot != nil {
		p.Base = &BaseSnapshot{SnapshotID: in.BaseSnapshot.SnapshotID,
			SequenceNumber: in.BaseSnapshot.SequenceNumber, TimestampMS: in.BaseSnapshot.TimestampMS}
	}
	if len(in.Data) > 0 {
		s := c.NewSink()
		for i := range in.Data {
			e := &in.Data[i]
			df := &e.Entry.DataFile
			if df.Content != manifest.ContentData {
				return nil, fmt.Errorf("plan: %s is listed as a data file but has content %d", df.FilePath, df.Content)
			}
			lf := table.LiveDataFileOf(e, c.parts)
			lf.Pos = uint64(i)
			if err := s.Add(&lf); err != nil {
				return nil, err
			}
		}
	}
	runs, err := c.finish()
	if err != nil {
		return nil, err
	}
	for i := range in.Deletes {
		df := &in.Deletes[i].Entry.DataFile
		if df.Content == manifest.ContentData {
			return nil, fmt.Errorf("plan: %s is listed as a delete file but has data content", df.FilePath)
		}
	}

	pl := &planner{md: md, r: r, parts: c.parts.All(), ix: newDeleteIndex(md, in.Deletes), h: sha256.New()}
	pl.groups = newSpill(c.opts.TempDir, c.opts.MemoryLimit)
	ok := false
	defer func() {
		if !ok {
			pl.groups.close()
		}
	}()
	pl.gw = newSpillWriter(pl.groups)
	pl.ps = make([]partState, len(pl.parts))
	for i := range pl.ps {
		ps := &pl.ps[i]
		ps.info = pl.parts[i]
		ps.selected = true
		ps.minSeq, ps.minOut = math.MaxInt64, math.MaxInt64
	}
	for _, s := range c.sinks {
		for id, f := range s.first {
			if ff := &pl.ps[id].first; f.seen && (!ff.seen || f.pos < ff.pos) {
				*ff = f
			}
		}
	}
	whereErr := pl.selectPartitions(filter)
	if filter != nil && !filter.PartitionsDecide(md.PartitionSpecs) {
		pl.unmatched = unmatchedFiles(filter, in)
	}
	pl.indexRefs()

	if err := pl.merge(c.runs, runs); err != nil {
		return nil, err
	}
	if len(pl.suspects) > 0 {
		if err := pl.checkDuplicates(c.runs, runs); err != nil {
			return nil, err
		}
	}
	if whereErr != nil {
		return nil, whereErr
	}
	if err := pl.gw.flush(); err != nil {
		return nil, err
	}
	res, err := pl.finish(p, c.formats)
	if err != nil {
		return nil, err
	}
	ok = true
	return res, nil
}

// unmatchedFiles adds to in.Unmatched (without changing it) the files of
// in.Data whose metrics rule them out.
func unmatchedFiles(filter *where.Filter, in *Input) map[string]bool {
	out := in.Unmatched
	copied := false
	for i := range in.Data {
		df := &in.Data[i].Entry.DataFile
		var ps *spec.PartitionSpec
		if in.Metadata != nil {
			ps, _ = in.Metadata.SpecByID(int(df.SpecID))
		}
		if filter.MatchMetricsIn(df, ps) {
			continue
		}
		if !copied {
			out = maps.Clone(in.Unmatched)
			if out == nil {
				out = map[string]bool{}
			}
			copied = true
		}
		out[df.FilePath] = true
	}
	return out
}

// selectPartitions applies the where filter to each partition. An error is
// returned for the partition whose first file comes first, naming that
// file, as a filter applied file by file in LiveFiles order would.
func (pl *planner) selectPartitions(filter *where.Filter) error {
	if filter == nil {
		return nil
	}
	filters := map[int32]*where.PartitionFilter{}
	specErrs := map[int32]error{}
	var firstErr error
	var firstPos uint64
	for i := range pl.ps {
		ps := &pl.ps[i]
		if !ps.first.seen {
			continue
		}
		ps.selected = false
		specID := ps.info.SpecID
		var err error
		pf, ok := filters[specID]
		if !ok {
			if err = specErrs[specID]; err == nil {
				spec, _ := pl.md.SpecByID(int(specID))
				pf, err = filter.ForSpec(spec, pl.md.CurrentSchema())
				if err != nil {
					specErrs[specID] = err
				} else {
					filters[specID] = pf
				}
			}
			if err != nil {
				err = fmt.Errorf("where: %w (data file %s)", err, ps.first.path)
			}
		}
		if err == nil {
			var match bool
			if match, err = pf.Match(ps.info.Tuple); err != nil {
				err = fmt.Errorf("where: data file %s: %w", ps.first.path, err)
			}
			ps.selected = match
		}
		if err != nil && (firstErr == nil || ps.first.pos < firstPos) {
			firstErr, firstPos = err, ps.first.pos
		}
	}
	return firstErr
}

// indexRefs makes a refTarget for each data file a file-scoped delete
// references.
func (pl *planner) indexRefs() {
	for i := range pl.ix.dels {
		d := &pl.ix.dels[i]
		if d.ref == "" {
			continue
		}
		if pl.refs == nil {
			pl.refs = map[string]*refTarget{}
		}
		if pl.refs[d.ref] == nil {
			pl.refs[d.ref] = &refTarget{serial: -1, group: -1}
		}
	}
}

// merge reads the runs in order (a k-way merge) and plans each record.
func (pl *planner) merge(s *spill, runs []run) error {
	total := int64(0)
	for _, r := range runs {
		total += r.end - r.off
	}
	bufSize := 64 << 10
	if len(runs) > 0 {
		bufSize = min(bufSize, max(4<<10, int(DefaultMemoryLimit/len(runs))))
	}
	h := mergeHeap{}
	for _, r := range runs {
		rd := newSpillReader(s, r.off, r.end, bufSize)
		if rec := rd.next(); rec != nil {
			h.items = append(h.items, mergeItem{rd, rec})
		} else if rd.err != nil {
			return rd.err
		}
	}
	h.init()
	pl.initBloom(total)
	for len(h.items) > 0 {
		it := &h.items[0]
		if err := pl.add(it.rec); err != nil {
			return err
		}
		if it.rec = it.rd.next(); it.rec == nil {
			if it.rd.err != nil {
				return it.rd.err
			}
			h.pop()
		} else {
			h.fix()
		}
	}
	pl.endPartition()
	return nil
}

type mergeItem struct {
	rd  *spillReader
	rec record
}

// mergeHeap is a min-heap of run heads by compareRecords.
type mergeHeap struct{ items []mergeItem }

func (h *mergeHeap) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) pop() {
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items = h.items[:n]
	h.down(0)
}

func (h *mergeHeap) fix() { h.down(0) }

func (h *mergeHeap) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && compareRecords(h.items[r].rec, h.items[l].rec) < 0 {
			m = r
		}
		if compareRecords(h.items[m].rec, h.items[i].rec) >= 0 {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}

// add plans one file; files come partition by partition, each partition's
// in packing order.
func (pl *planner) add(rec record) error {
	part := rec.part()
	if !pl.hasCur || part != pl.cur {
		pl.endPartition()
		pl.cur, pl.hasCur = part, true
		ps := &pl.ps[part]
		ps.deletes = pl.ix.forPartition(ps.info.Key)
	}
	ps := &pl.ps[part]
	seq := rec.seq()
	path := rec.path()
	pl.live++
	ps.files++
	ps.minSeq = min(ps.minSeq, seq)
	pl.checkBloom(path)
	var ref *refTarget
	if pl.refs != nil {
		if ref = pl.refs[string(path)]; ref != nil {
			*ref = refTarget{found: true, seq: seq, part: part, path: append([]byte(nil), path...), serial: -1, group: -1}
		}
	}
	if !ps.selected || pl.unmatched[string(path)] {
		ps.minOut = min(ps.minOut, seq)
		return nil
	}
	pl.selected++
	reasons, known, heavy := pl.evaluate(rec, ps)
	if reasons == 0 {
		ps.minOut = min(ps.minOut, seq)
		return nil
	}
	pl.candidates++

	// Java's BinPacking.ListPacker with lookback 1: a file that does not
	// fit closes the bin and opens the next.
	r := &pl.r
	b := &pl.bin
	w := rec.size()
	if pl.inBin && (b.bytes+w > r.MaxFileGroupSize || b.bytes+w < b.bytes || int64(b.files) >= r.MaxFileGroupInputFiles) {
		pl.closeBin()
	}
	if !pl.inBin {
		pl.openBin(part)
	}
	if ref != nil {
		ref.serial, ref.index = b.serial, b.files
	}
	gr := append(pl.rec[:0], rec...)
	le.PutUint64(gr[recKnown:], uint64(known))
	gr[recReasons] = reasons
	if pl.app.dv >= 0 {
		gr[recFlags] |= flagDV
	}
	pl.rec = gr
	if err := pl.gw.write(gr); err != nil {
		return err
	}
	pl.addToBin(b, record(gr))
	b.heavy = b.heavy || heavy
	return nil
}

func (pl *planner) openBin(part uint32) {
	pl.bin = draft{part: part, serial: pl.serial, start: pl.gw.offset(), minSeq: math.MaxInt64, minSeqNoDV: math.MaxInt64}
	pl.serial++
	pl.inBin = true
	pl.h.Reset()
	pl.hbuf = append(append(pl.hbuf[:0], pl.ps[part].info.Key...), 0)
}

// addToBin adds a group record's file to the statistics of d.
func (pl *planner) addToBin(d *draft, gr record) {
	size, records, known := gr.size(), gr.records(), gr.known()
	d.files++
	d.bytes += size
	d.records += records
	d.known += known
	kept := float64(size)
	if records > 0 {
		kept *= 1 - float64(known)/float64(records)
	}
	d.outBytes += kept
	seq := gr.seq()
	d.minSeq = min(d.minSeq, seq)
	if gr.flags()&flagDV == 0 {
		d.minSeqNoDV = min(d.minSeqNoDV, seq)
	}
	pl.hbuf = append(append(pl.hbuf, gr.path()...), 0)
	if len(pl.hbuf) >= 8<<10 {
		pl.h.Write(pl.hbuf)
		pl.hbuf = pl.hbuf[:0]
	}
}

// sum is the group id of the paths hashed since openBin.
func (pl *planner) sum() [8]byte {
	pl.h.Write(pl.hbuf)
	pl.hbuf = pl.hbuf[:0]
	var id [8]byte
	copy(id[:], pl.h.Sum(nil))
	return id
}

// closeBin applies Java's filterFileGroups to the open bin: a kept bin
// becomes a draft; the files of a dropped one stay where they are.
func (pl *planner) closeBin() {
	pl.inBin = false
	b := pl.bin
	ps := &pl.ps[b.part]
	if !pl.r.RewriteAll && !pl.moves(ps) && !keepGroup(b.files, b.bytes, b.heavy, pl.r) {
		pl.gw.rewind(b.start)
		ps.minOut = min(ps.minOut, b.minSeq)
		return
	}
	ps.kept++
	b.partitionIndex = ps.kept
	b.end = pl.gw.offset()
	b.id = pl.sum()
	pl.drafts = append(pl.drafts, &b)
}

func (pl *planner) endPartition() {
	if pl.inBin {
		pl.closeBin()
	}
}

// evaluate applies Java's file filter: outside the size range, too many
// delete files, or too high a ratio of known deleted rows. It leaves the
// file's deletes in pl.app.
func (pl *planner) evaluate(rec record, ps *partState) (reasons uint8, known int64, heavy bool) {
	r := &pl.r
	a := &pl.app
	pl.ix.find(a, rec.path(), ps.info.Key, ps.deletes, rec.seq())
	size, records := rec.size(), rec.records()
	if size < r.MinFileSize {
		reasons |= reasonTooSmall
	}
	if size > r.MaxFileSize {
		reasons |= reasonTooLarge
	}
	n := len(a.pos) + len(a.eq)
	if a.dv >= 0 {
		n++
	}
	if n >= r.DeleteFileThreshold {
		reasons |= reasonTooManyDeletes
		heavy = true
	}
	if a.dv >= 0 {
		known += pl.ix.dels[a.dv].records
	}
	for _, d := range a.pos {
		if dd := &pl.ix.dels[d]; dd.scoped {
			known += dd.records
		}
	}
	known = min(known, records)
	if n > 0 && records > 0 && float64(known)/float64(records) >= r.DeleteRatioThreshold {
		reasons |= reasonDeleteRatio
		heavy = true
	}
	if r.RewriteAll && reasons == 0 {
		reasons |= reasonRewriteAll
	}
	if reasons == 0 && pl.moves(ps) {
		reasons |= reasonOutputSpec
	}
	return reasons, known, heavy
}

// moves reports whether the files of ps are written in another spec than
// their own: every such file is a candidate and every group of them is
// kept, since moving the data is what the option asks for.
func (pl *planner) moves(ps *partState) bool {
	return pl.r.OutputSpecID != nil && int(ps.info.SpecID) != *pl.r.OutputSpecID
}

// initBloom sizes the filter that finds paths listed twice: 64 bits a
// file, at most 1 MiB.
func (pl *planner) initBloom(bytes int64) {
	files := bytes / recHeader
	n := uint64(1) << min(23, max(10, bits.Len64(uint64(files)*64)))
	pl.bloom = make([]uint64, n/64)
	pl.seed = maphash.MakeSeed()
}

// checkBloom records path in the filter, a Bloom filter blocked by cache
// line (five bits in one 64-byte block, so one cache miss a file); a path
// that may have been seen before becomes a suspect, checked exactly by
// checkDuplicates.
func (pl *planner) checkBloom(path []byte) {
	h := maphash.Bytes(pl.seed, path)
	// The block from the top bits, the bits in it from the bottom 45.
	blocks := uint64(len(pl.bloom) / 8) // a power of two
	block := pl.bloom[(h>>(64-bits.Len64(blocks-1)))*8:][:8]
	seen := true
	for range 5 {
		b := h & 511
		h >>= 9
		w, bit := &block[b/64], uint64(1)<<(b%64)
		if *w&bit == 0 {
			*w |= bit
			seen = false
		}
	}
	if !seen {
		return
	}
	if pl.suspects == nil {
		pl.suspects = map[string]struct{}{}
	}
	pl.suspects[string(path)] = struct{}{}
}

// checkDuplicates reads every file again and fails if a suspect path is
// live twice, naming the one whose second listing comes first.
func (pl *planner) checkDuplicates(s *spill, runs []run) error {
	type seen struct {
		n    int
		a, b uint64 // the two lowest positions
	}
	counts := map[string]*seen{}
	for _, r := range runs {
		rd := newSpillReader(s, r.off, r.end, 64<<10)
		for rec := rd.next(); rec != nil; rec = rd.next() {
			if _, ok := pl.suspects[string(rec.path())]; !ok {
				continue
			}
			c := counts[string(rec.path())]
			if c == nil {
				c = &seen{a: math.MaxUint64, b: math.MaxUint64}
				counts[string(rec.path())] = c
			}
			c.n++
			switch pos := rec.pos(); {
			case pos < c.a:
				c.a, c.b = pos, c.a
			case pos < c.b:
				c.b = pos
			}
		}
		if rd.err != nil {
			return rd.err
		}
	}
	var dup string
	var at uint64
	for path, c := range counts {
		if c.n > 1 && (dup == "" || c.b < at || c.b == at && path < dup) {
			dup, at = path, c.b
		}
	}
	if dup != "" {
		return fmt.Errorf("plan: data file %s is live twice", dup)
	}
	return nil
}

// keepGroup is Java's filterFileGroups.
func keepGroup(files int, size int64, heavy bool, r Resolved) bool {
	enoughInputFiles := files > 1 && files >= r.MinInputFiles
	enoughContent := files > 1 && size > r.TargetFileSize
	tooMuchContent := size > r.MaxFileSize
	return enoughInputFiles || enoughContent || tooMuchContent || heavy
}

// sortDrafts orders groups by the job order; ties (and "none") keep the
// canonical order: spec, partition, position in the partition.
func sortDrafts(ds []*draft, order JobOrder) {
	slices.SortStableFunc(ds, func(a, b *draft) int {
		var c int
		switch order {
		case JobOrderBytesAsc:
			c = cmp.Compare(a.bytes, b.bytes)
		case JobOrderBytesDesc:
			c = cmp.Compare(b.bytes, a.bytes)
		case JobOrderFilesAsc:
			c = cmp.Compare(a.files, b.files)
		case JobOrderFilesDesc:
			c = cmp.Compare(b.files, a.files)
		}
		return c
	})
}

// finish orders the drafts, applies max-files-to-rewrite, and builds the
// groups, the retire lists and the totals.
func (pl *planner) finish(p *Plan, formats []string) (*Result, error) {
	r := pl.r
	// Canonical order: spec id, partition tuple, then position in the
	// partition (drafts of one partition are already in that order).
	rank := make([]int, len(pl.ps))
	{
		ids := make([]uint32, 0, len(pl.ps))
		for i := range pl.ps {
			if pl.ps[i].kept > 0 {
				ids = append(ids, uint32(i))
			}
		}
		slices.SortFunc(ids, func(a, b uint32) int {
			pa, pb := &pl.parts[a], &pl.parts[b]
			if c := cmp.Compare(pa.SpecID, pb.SpecID); c != 0 {
				return c
			}
			if c := compareTuples(pa.Tuple, pb.Tuple); c != 0 {
				return c
			}
			return cmp.Compare(pa.Key, pb.Key)
		})
		for i, id := range ids {
			rank[id] = i
		}
	}
	// bySerial finds a bin's draft; drafts were made in serial order.
	bySerial := slices.Clone(pl.drafts)
	slices.SortStableFunc(pl.drafts, func(a, b *draft) int { return cmp.Compare(rank[a.part], rank[b.part]) })
	sortDrafts(pl.drafts, r.JobOrder)
	final := pl.drafts
	if r.MaxFilesToRewrite != nil {
		// The cap prefers groups early in job order; a truncated group may
		// then need to move, so sort again.
		left := *r.MaxFilesToRewrite
		final = pl.drafts[:0:0]
		for _, d := range pl.drafts {
			switch {
			case left <= 0:
				ps := &pl.ps[d.part]
				ps.minOut = min(ps.minOut, d.minSeq)
			case d.files > left:
				if err := pl.truncate(d, left); err != nil {
					return nil, err
				}
				fallthrough
			default:
				left -= d.files
				final = append(final, d)
			}
		}
		sortDrafts(final, r.JobOrder)
	}
	if r.MaxBytesToRewrite != nil {
		// Whole groups in job order while they fit; one that does not is
		// left out as the file cap leaves groups out, and a smaller one
		// after it may still fit.
		left := *r.MaxBytesToRewrite
		kept := final[:0:0]
		for _, d := range final {
			if d.bytes > left {
				ps := &pl.ps[d.part]
				ps.minOut = min(ps.minOut, d.minSeq)
				continue
			}
			left -= d.bytes
			kept = append(kept, d)
		}
		final = kept
	}

	res := &Result{p: p, spill: pl.groups, ix: pl.ix, parts: pl.parts, formats: formats}
	groupOf := make(map[*draft]int, len(final))
	minGroup := int64(math.MaxInt64)
	for i := range pl.ps {
		pl.ps[i].minGroup, pl.ps[i].minGroupNoD = math.MaxInt64, math.MaxInt64
	}
	schema := pl.md.CurrentSchema()
	for i, d := range final {
		ps := &pl.ps[d.part]
		pspec, _ := pl.md.SpecByID(int(ps.info.SpecID))
		g := Group{
			ID:                  hex.EncodeToString(d.id[:]),
			Index:               i + 1,
			PartitionIndex:      d.partitionIndex,
			SpecID:              int(ps.info.SpecID),
			Partition:           humanPartition(pspec, schema, ps.info.Tuple),
			PartitionTuple:      Tuple(ps.info.Tuple),
			PartitionText:       spec.PartitionText(pspec, ps.info.Tuple),
			InputFiles:          d.files,
			InputBytes:          d.bytes,
			InputRecords:        d.records,
			KnownDeletedRecords: d.known,
			ExpectedOutputBytes: int64(d.outBytes + 0.5),
			ExpectedOutputFiles: expectedOutputFiles(d.bytes, r),
			SplitSize:           inputSplitSize(d.bytes, r),
			Retire:              []DeleteRef{},
		}
		p.Groups = append(p.Groups, g)
		res.spans = append(res.spans, span{start: d.start, end: d.end, files: d.files})
		groupOf[d] = i
		pl.gmin = append(pl.gmin, d.minSeq)
		ps.groups = append(ps.groups, i)
		ps.minGroup = min(ps.minGroup, d.minSeq)
		ps.minGroupNoD = min(ps.minGroupNoD, d.minSeqNoDV)
		minGroup = min(minGroup, d.minSeq)
	}
	for _, t := range pl.refs {
		if !t.found || t.serial < 0 {
			continue
		}
		j, ok := slices.BinarySearchFunc(bySerial, t.serial, func(d *draft, s int) int { return cmp.Compare(d.serial, s) })
		if !ok {
			continue
		}
		if g, ok := groupOf[bySerial[j]]; ok && t.index < bySerial[j].files {
			t.group = g
		}
	}
	pl.retire(p, minGroup)
	pl.totals(p, minGroup)
	return res, nil
}

// truncate cuts d to its first n files, recomputing what depends on them;
// the files cut stay live.
func (pl *planner) truncate(d *draft, n int) error {
	rd := newSpillReader(pl.groups, d.start, d.end, 64<<10)
	t := draft{part: d.part, serial: d.serial, partitionIndex: d.partitionIndex, start: d.start,
		minSeq: math.MaxInt64, minSeqNoDV: math.MaxInt64}
	pl.h.Reset()
	pl.hbuf = append(append(pl.hbuf[:0], pl.ps[d.part].info.Key...), 0)
	ps := &pl.ps[d.part]
	for i := 0; i < d.files; i++ {
		rec := rd.next()
		if rec == nil {
			if rd.err != nil {
				return rd.err
			}
			return errors.New("plan: group spill is short")
		}
		if i < n {
			pl.addToBin(&t, rec)
			t.end = rd.off - int64(rd.lim-rd.pos)
		} else {
			ps.minOut = min(ps.minOut, rec.seq())
		}
	}
	t.id = pl.sum()
	*d = t
	return nil
}

// retire decides which delete files the plan's commits remove. The rules
// never remove a delete file that could still apply to a row that stays
// live:
//
//  1. A DV, or a file-scoped position-delete file, whose referenced data
//     file is rewritten by a group: retired by that group. It can only ever
//     apply to that one path, which is no longer live afterwards.
//  2. A partition-scoped position-delete file applies only to data files of
//     its spec and partition with data sequence number <= its own. When
//     every such live file is rewritten by the plan, it is dangling: the
//     outputs get the base snapshot's sequence number but new paths, so no
//     position in it can match them.
//  3. An equality-delete file applies to data files with a strictly smaller
//     sequence number (in its partition, or everywhere when its spec is
//     unpartitioned). When every such live file is rewritten, it is dead:
//     the outputs' sequence number (the base snapshot's) is not smaller.
//
// For 2 and 3, a delete whose files are all in one group is retired by that
// group; one spread over several groups goes into RetireAfterGroups, since
// with partial progress it is dangling only once all of them commit.
// Deletes that applied to nothing before the plan are, with
// remove-dangling-deletes (and when there is a group to commit), listed in
// DanglingDeletes by table.DataReach's rules: a position-delete file with
// a referenced_data_file or a DV whose file is not live in its partition
// at or below its sequence number; another position-delete file (one
// scoped by its file_path bounds too) whose partition has no file at or
// below it; an equality delete with no file strictly below it in its
// partition (in the table, when global). A DV without a referenced data
// file is left alone.
//
// Each test needs only the lowest sequence number of the files of a
// partition (or of the table), of those no group rewrites, and of each
// group's: the files a delete applies to are those up to its own.
func (pl *planner) retire(p *Plan, minGroup int64) {
	dels := make([]*delFile, len(pl.ix.dels))
	for i := range pl.ix.dels {
		dels[i] = &pl.ix.dels[i]
	}
	// Sorted so retire lists do not depend on manifest order.
	slices.SortFunc(dels, func(a, b *delFile) int {
		ka, kb := a.e.Key(), b.e.Key()
		if c := cmp.Compare(ka.Path, kb.Path); c != 0 {
			return c
		}
		return cmp.Compare(ka.ContentOffset, kb.ContentOffset)
	})
	var global *partState
	globalScope := func() *partState {
		if global == nil {
			global = &partState{minSeq: math.MaxInt64, minOut: math.MaxInt64}
			for i := range pl.ps {
				ps := &pl.ps[i]
				global.files += ps.files
				global.minSeq = min(global.minSeq, ps.minSeq)
				global.minOut = min(global.minOut, ps.minOut)
			}
			global.minGroup = minGroup
			global.groups = make([]int, len(p.Groups))
			for i := range global.groups {
				global.groups[i] = i
			}
		}
		return global
	}
	sweep := pl.r.RemoveDanglingDeletes && len(p.Groups) > 0
	dangling := func(d *delFile) {
		if sweep {
			ref := deleteRef(d.e)
			ref.Reason = RetireDangling
			p.DanglingDeletes = append(p.DanglingDeletes, ref)
		}
	}
	for _, d := range dels {
		df := &d.e.Entry.DataFile
		seq := d.seq
		if d.ref != "" {
			t := pl.refs[d.ref]
			if t == nil || t.group < 0 {
				switch {
				case df.ReferencedDataFile != nil:
					if t == nil || !t.found || pl.parts[t.part].Key != d.partKey || t.seq > seq {
						dangling(d)
					}
				case !table.IsDV(df):
					// Scoped by its bounds only: the partition decides.
					if s := pl.partition(d.partKey); s == nil || s.files == 0 || s.minSeq > seq {
						dangling(d)
					}
				}
				continue
			}
			ref := deleteRef(d.e)
			ref.Reason = RetireFileScoped
			if table.IsDV(df) {
				ref.Reason = RetireDV
			}
			g := &p.Groups[t.group]
			g.Retire = append(g.Retire, ref)
			continue
		}
		if table.IsDV(df) {
			continue // a DV without its data file applies to nothing
		}
		var s *partState
		var inScope func(dataSeq int64) bool
		reason := RetirePartitionPos
		switch df.Content {
		case manifest.ContentPositionDeletes:
			s = pl.partition(d.partKey)
			inScope = func(ds int64) bool { return ds <= seq }
		case manifest.ContentEqualityDeletes:
			reason = RetireEqualityDead
			if d.global {
				s = globalScope()
			} else {
				s = pl.partition(d.partKey)
			}
			inScope = func(ds int64) bool { return ds < seq }
		}
		if s == nil || s.files == 0 || !inScope(s.minSeq) {
			dangling(d) // applied to nothing before the plan
			continue
		}
		if inScope(s.minOut) {
			continue // a file it applies to stays live
		}
		var groups []int
		for _, g := range s.groups {
			if inScope(pl.gmin[g]) {
				groups = append(groups, g)
			}
		}
		ref := deleteRef(d.e)
		ref.Reason = reason
		if len(groups) == 1 {
			g := &p.Groups[groups[0]]
			g.Retire = append(g.Retire, ref)
			continue
		}
		ids := make([]string, len(groups))
		for i, g := range groups {
			ids[i] = p.Groups[g].ID
		}
		p.RetireAfterGroups = append(p.RetireAfterGroups, ConditionalRetire{Delete: ref, Groups: ids})
	}
}

// partition returns the state of the partition with key k, or nil when no
// live data file has it.
func (pl *planner) partition(k string) *partState {
	if pl.byKey == nil {
		pl.byKey = make(map[string]uint32, len(pl.parts))
		for i := range pl.parts {
			pl.byKey[pl.parts[i].Key] = uint32(i)
		}
	}
	id, ok := pl.byKey[k]
	if !ok {
		return nil
	}
	return &pl.ps[id]
}

// totals sums the groups and counts the deletes that apply to some input.
func (pl *planner) totals(p *Plan, minGroup int64) {
	t := &p.Totals
	t.LiveDataFiles = pl.live
	t.SelectedByWhere = pl.selected
	t.CandidateFiles = pl.candidates
	t.Groups = len(p.Groups)
	for i := range p.Groups {
		g := &p.Groups[i]
		t.InputFiles += g.InputFiles
		t.InputBytes += g.InputBytes
		t.InputRecords += g.InputRecords
		t.KnownDeletedRecords += g.KnownDeletedRecords
		t.ExpectedOutputFiles += g.ExpectedOutputFiles
		t.ExpectedOutputBytes += g.ExpectedOutputBytes
		t.DeleteFilesRetired += len(g.Retire)
	}
	t.DeleteFilesRetired += len(p.RetireAfterGroups)
	applied := map[string]struct{}{}
	for i := range pl.ix.dels {
		if pl.applied(i, minGroup) {
			applied[pl.ix.dels[i].key] = struct{}{}
		}
	}
	t.DeleteFilesApplied = len(applied)
}

// applied reports whether delete i applies to an input of some group, by
// the rules of table.DeleteIndex.For: deletes scoped to one data file are
// checked on that file; the others apply to a group's files from its
// lowest sequence number up (of its files without a DV, for position
// deletes).
func (pl *planner) applied(i int, minGroup int64) bool {
	d := &pl.ix.dels[i]
	df := &d.e.Entry.DataFile
	switch df.Content {
	case manifest.ContentPositionDeletes:
		if table.IsDV(df) || df.ReferencedDataFile != nil {
			if df.ReferencedDataFile == nil {
				return false
			}
			t := pl.refs[*df.ReferencedDataFile]
			if t == nil || t.group < 0 {
				return false
			}
			dv := pl.ix.chooseDV(t.path, pl.parts[t.part].Key, t.seq)
			if table.IsDV(df) {
				return dv == i
			}
			return dv < 0 && t.seq <= d.seq && pl.parts[t.part].Key == d.partKey
		}
		ps := pl.partition(d.partKey)
		return ps != nil && ps.minGroupNoD <= d.seq
	case manifest.ContentEqualityDeletes:
		if d.global {
			return minGroup < d.seq
		}
		ps := pl.partition(d.partKey)
		return ps != nil && ps.minGroup < d.seq
	}
	return false
}
