package dvmerge

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/cespare/xxhash/v2"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// shownPositions is how many positions the report names per data file in
// lists that give a count (all of them for repaired rows).
const shownPositions = 10

// merged is one partition merged against a head: the DVs written (not
// yet committed) and what its commit removes and reports.
type merged struct {
	snap *spec.Snapshot // the table state it was merged against
	add  []dvEntry
	// posAdd are the position-delete files written in place of equality
	// deletes (PositionDeletes), each with its data sequence number.
	posAdd  []posEntry
	written []string // Puffin (or position-delete) files written
	// known holds, with PositionDeletes, the equality-delete files the
	// merge read: the digest looks at those alone (see digest).
	known  map[table.FileKey]bool
	remove []table.FileKey
	// digest sums up the data files merged and their deletes (see
	// digest): a commit on a table where they differ would lose a delete.
	// A digest instead of the list keeps a batch's memory from growing
	// with its data files.
	digest uint64
	// covered holds, with Equality, the data files whose every delete is
	// in their DV (an equality-delete file goes once all it applies to
	// are); without, it stays empty, since nothing asks.
	covered map[string]bool
	// changesRows: the DVs delete positions readers did not apply before
	// (a repair, or duplicate DVs merged), so the commit is a "delete".
	changesRows bool

	res         PartitionResult
	kept        []KeptDelete
	resurrected []DataFilePositions
	repaired    []RepairedFile
	outOfRange  []DataFilePositions
	multiple    []MultipleDVs
}

// work is one data file to merge and the deletes that could apply to it
// (the file in the head, not its manifest entry: a partition's entries
// were most of what a merge allocated for itself).
type work struct {
	f *liveFile
	c table.Candidates
}

// collectWork lists the data files of pp that h has with deletes to
// merge, in pp's order (by path).
func collectWork(h *head, pp *PartitionPlan, sc scope) []work {
	// Sized up front: growing the list by doubling copied it several
	// times over.
	ws := make([]work, 0, len(pp.DataFiles))
	for _, path := range pp.DataFiles {
		f, c, ok := h.candidates(path)
		if !ok || !needsWork(c, sc) {
			continue // removed by another commit (a compaction), or its deletes: nothing to merge
		}
		ws = append(ws, work{f, c})
	}
	return ws
}

// digest sums up ws: each data file's path and the keys of the deletes a
// merge of it reads, in the order the delete index gives them (sequence
// number, then key). Equal digests on two table states mean the same data
// files would be merged from the same deletes (but for a 64-bit hash
// collision, odds of about 1e-19 per comparison); none is zero.
//
// With PositionDeletes, only the equality-delete files in known count
// (those the merge read), and a data file none of them applies to is
// left out: an equality delete committed since (a streaming writer's
// next commit) or a data file only such deletes apply to changes nothing
// the merge wrote, while a data file added with an older sequence number
// that a known one applies to, or a known one removed, does.
func (m *merger) digest(ws []work, known map[table.FileKey]bool) uint64 {
	if m.opts.PositionDeletes {
		return digestKnown(ws, known)
	}
	if len(ws) == 0 {
		return 0
	}
	var buf [binary.MaxVarintLen64]byte
	// A partition's files mostly share their candidate lists (tails of
	// the delete index's): each distinct list is summed up once.
	type listID struct {
		first *table.FileEntry
		n     int
	}
	lists := map[listID]uint64{}
	// An unseeded hash: a sharded run's committer compares the digest a
	// worker process computed.
	lh := xxhash.New()
	list := func(l []table.FileEntry) uint64 {
		if len(l) == 0 {
			return 0
		}
		id := listID{&l[0], len(l)}
		if v, ok := lists[id]; ok {
			return v
		}
		lh.Reset()
		for i := range l {
			df := &l[i].Entry.DataFile
			lh.Write(binary.AppendUvarint(buf[:0], uint64(len(df.FilePath))))
			lh.WriteString(df.FilePath)
			off := int64(-1)
			if df.ContentOffset != nil {
				off = *df.ContentOffset
			}
			lh.Write(binary.AppendVarint(buf[:0], off))
		}
		v := lh.Sum64()
		lists[id] = v
		return v
	}
	h := xxhash.New()
	for _, w := range ws {
		h.Write(binary.AppendUvarint(buf[:0], uint64(len(w.f.path))))
		h.WriteString(w.f.path)
		var eq uint64
		if m.opts.Equality {
			eq = list(w.c.EqualityDeletes)
		}
		for _, v := range []uint64{list(w.c.DVs), list(w.c.PositionDeletes), eq} {
			h.Write(binary.LittleEndian.AppendUint64(buf[:0], v))
		}
	}
	return h.Sum64() | 1
}

// source is a position-delete file's positions for one data file.
type source struct {
	key table.FileKey
	bm  *roaring64.Bitmap
}

// merger merges partitions of one run.
type merger struct {
	opts   Options
	runID  string
	nfiles atomic.Int64
	bufs   sync.Pool // of *bufio.Writer, for the Puffin files
}

// merge builds the DVs of pp's data files on h and writes them to new
// Puffin files. It reads every delete file involved; a malformed one is an
// error naming it, and nothing is left written.
func (m *merger) merge(ctx context.Context, h *head, pp *PartitionPlan) (*merged, error) {
	if m.opts.PositionDeletes {
		return m.mergeEquality(ctx, h, pp)
	}
	md, fio := h.t.Metadata, h.t.IO
	out := &merged{snap: h.snap, covered: map[string]bool{}, res: PartitionResult{ID: pp.ID}}
	ws := collectWork(h, pp, m.opts.scope())
	if len(ws) == 0 {
		return out, nil
	}
	out.digest = m.digest(ws, nil)
	inWork := make(map[string]bool, len(ws))
	for _, w := range ws {
		inWork[w.f.path] = true
	}

	// Each position-delete file is read once for the whole partition.
	scope := reclaim.TableScope(md)
	posOf := map[table.FileKey]map[string]*roaring64.Bitmap{}
	for _, w := range ws {
		for _, d := range w.c.PositionDeletes {
			if _, done := posOf[d.Key()]; done {
				continue
			}
			bms, err := table.ReadPositionDeletes(ctx, fio, &d.Entry.DataFile, func(path string) (bool, error) {
				// A live data file being merged is the table's own wherever
				// it lies (add_files and Hive migrations leave data where it
				// was); any other path must at least be in the table's scope.
				if inWork[path] {
					return true, nil
				}
				if !scope.Contains(path) {
					return false, fmt.Errorf("names data file %s, which is outside the table's location %s and not one of its live data files", path, md.Location)
				}
				return false, nil
			})
			if err != nil {
				return nil, err
			}
			posOf[d.Key()] = bms
		}
	}
	var eqOf map[string]*roaring64.Bitmap
	if m.opts.Equality {
		var err error
		if eqOf, err = equalityPositions(ctx, fio, md, h, ws, 1); err != nil {
			return nil, err
		}
	}

	// The DVs to write, in a partition's worth of small records: a copy
	// of each work (a manifest entry and its candidates) was most of the
	// merge's own garbage.
	pending := make([]pendingDV, 0, len(ws))
	holders := map[table.FileKey][]string{}
	resurrectedBy := map[table.FileKey]bool{}
	all := h.parts.All()
	var sources []source
	for _, w := range ws {
		path, rc := w.f.path, w.f.recordCount
		dvs := make([]*roaring64.Bitmap, len(w.c.DVs))
		for i, d := range w.c.DVs {
			bm, err := table.ReadDV(ctx, fio, &d.Entry.DataFile)
			if err != nil {
				return nil, err
			}
			dvs[i] = bm
		}
		// The position-delete files naming path: a list reused from file
		// to file (a map for each was most of the merge's own garbage).
		sources = sources[:0]
		union := roaring64.New()
		for _, d := range w.c.PositionDeletes {
			if bm := posOf[d.Key()][path]; bm != nil {
				sources = append(sources, source{d.Key(), bm})
				union.Or(bm)
			}
		}
		// readers is what readers delete today: the newest DV alone when
		// there is one, else the position-delete files; plus equality
		// deletes, which keep applying.
		var readers, next *roaring64.Bitmap
		if len(dvs) > 0 {
			readers = dvs[len(dvs)-1].Clone()
			next = roaring64.New()
			for _, bm := range dvs {
				next.Or(bm)
			}
			if len(dvs) > 1 {
				mv := MultipleDVs{DataFile: path}
				for _, d := range w.c.DVs {
					mv.DVs = append(mv.DVs, d.Key().String())
				}
				out.multiple = append(out.multiple, mv)
			}
		} else {
			// Without a DV readers apply the position-delete files
			// themselves: the merged DV is what they delete today, one
			// bitmap for both.
			readers, next = union, union
		}
		if eq := eqOf[path]; eq != nil {
			readers.Or(eq)
			next.Or(eq)
		}
		if len(dvs) > 0 && len(sources) > 0 {
			bySource := make(map[table.FileKey]*roaring64.Bitmap, len(sources))
			for _, src := range sources {
				bySource[src.key] = src.bm
			}
			lost, keys := table.Lost(dvs[len(dvs)-1], bySource, rc)
			lost.AndNot(next) // positions an older DV of the same file holds are merged anyway
			if !lost.IsEmpty() {
				names := keyStrings(keys)
				if m.opts.RepairResurrected {
					next.Or(lost)
					ps := lost.ToArray()
					rows, err := scan.RowsAt(ctx, fio, md, h.entry(w.f), toInt64s(ps))
					if err != nil {
						return nil, fmt.Errorf("read the rows to delete again in %s: %w", path, err)
					}
					out.repaired = append(out.repaired, RepairedFile{DataFile: path, Positions: toInt64s(ps), Rows: rows})
				} else {
					out.resurrected = append(out.resurrected, DataFilePositions{DataFile: path, RecordCount: rc,
						Positions: int64(lost.GetCardinality()), FirstPositions: first(lost, shownPositions), DeleteFiles: names})
					for _, k := range keys {
						resurrectedBy[k] = true
					}
				}
			}
		}
		// Positions at or past the record count delete nothing; a DV must
		// not hold them.
		if rc >= 0 && !next.IsEmpty() && next.Maximum() >= uint64(rc) {
			beyond := next.Clone()
			beyond.RemoveRange(0, uint64(rc))
			next.RemoveRange(uint64(rc), ^uint64(0))
			next.Remove(^uint64(0))
			var from []string
			for _, src := range sources {
				if src.bm.Intersects(beyond) {
					from = append(from, src.key.String())
				}
			}
			for i, bm := range dvs {
				if bm.Intersects(beyond) {
					from = append(from, w.c.DVs[i].Key().String())
				}
			}
			slices.Sort(from)
			out.outOfRange = append(out.outOfRange, DataFilePositions{DataFile: path, RecordCount: rc,
				Positions: int64(beyond.GetCardinality()), FirstPositions: first(beyond, shownPositions), DeleteFiles: from})
		}
		if rc >= 0 {
			readers.RemoveRange(uint64(rc), ^uint64(0))
			readers.Remove(^uint64(0))
		}
		if readers != next && !roaring64.AndNot(readers, next).IsEmpty() {
			// Never reached by the rules above; checked so that no bug here
			// can bring a deleted row back.
			return nil, fmt.Errorf("internal error: the merged DV of %s lacks positions readers delete today; nothing was written", path)
		}
		if readers != next && !roaring64.AndNot(next, readers).IsEmpty() {
			out.changesRows = true
		}
		// Without a DV, next holds every in-range position of every source.
		for _, src := range sources {
			if bm := src.bm; len(dvs) > 0 && !bm.IsEmpty() && !inRange(bm, rc).IsEmpty() && !roaring64.AndNot(inRange(bm, rc), next).IsEmpty() {
				holders[src.key] = append(holders[src.key], path)
			}
		}
		if len(dvs) == 1 && next.Equals(dvs[0]) {
			// The DV already holds everything: keep it, write nothing.
			m.cover(out, path)
			continue
		}
		for _, d := range w.c.DVs {
			out.remove = append(out.remove, d.Key())
			out.res.DVsRemoved++
		}
		m.cover(out, path)
		if !next.IsEmpty() {
			pending = append(pending, pendingDV{path: path, specID: w.f.specID, partition: all[w.f.part].Tuple, positions: next})
		}
	}

	// A position-delete file goes once no merged data file's DV lacks its
	// positions. Every live data file it could apply to is in this
	// partition and so merged here; data files it names that are no longer
	// live hold nothing, and a data file added since it was written cannot
	// be named by it.
	for k := range posOf {
		if hs := holders[k]; len(hs) > 0 {
			slices.Sort(hs)
			out.kept = append(out.kept, KeptDelete{DeleteFile: k.String(), Resurrected: resurrectedBy[k], HeldBy: hs})
			continue
		}
		out.remove = append(out.remove, k)
		out.res.PositionDeleteFilesRetired++
	}
	slices.SortFunc(out.kept, func(a, b KeptDelete) int { return compareStrings(a.DeleteFile, b.DeleteFile) })
	slices.SortFunc(out.remove, compareKeys)

	slices.SortFunc(pending, func(a, b pendingDV) int { return compareStrings(a.path, b.path) })
	if err := m.writeDVs(ctx, fio, md, out, pending); err != nil {
		return nil, err
	}
	out.res.DataFiles = len(ws)
	return out, nil
}

// cover records that path's DV holds every delete, where equality-delete
// files wait for it.
func (m *merger) cover(out *merged, path string) {
	if m.opts.Equality {
		out.covered[path] = true
	}
}

// dvEntry is a DV written and not yet committed: its manifest entry in
// half the memory of a manifest.DataFile, which only the commit builds.
type dvEntry struct {
	puffin, ref                       string
	size, offset, length, cardinality int64
	specID                            int32
	partition                         []any // the data file's, shared
}

// dataFile is e's manifest entry.
func (e *dvEntry) dataFile() manifest.DataFile {
	ref, off, length := e.ref, e.offset, e.length
	return manifest.DataFile{
		Content: manifest.ContentPositionDeletes, FilePath: e.puffin, FileFormat: "PUFFIN",
		SpecID: e.specID, Partition: e.partition, RecordCount: e.cardinality, FileSizeInBytes: e.size,
		ReferencedDataFile: &ref, ContentOffset: &off, ContentSizeInBytes: &length,
	}
}

// pendingDV is a merged DV to write.
type pendingDV struct {
	path      string // the data file's
	specID    int32
	partition []any // the data file's, shared
	positions *roaring64.Bitmap
}

// writeDVs packs dvs into Puffin files under the partition's data
// directory, closing a file once it reaches the target size, and records
// the manifest entries in out. On error the files written are removed.
func (m *merger) writeDVs(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, out *merged, dvs []pendingDV) (err error) {
	if len(dvs) == 0 {
		return nil
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, removeWritten(ctx, fio, md, out.written))
			out.written, out.add = nil, nil
		}
	}()
	first := dvs[0]
	ps, _ := md.SpecByID(int(first.specID))
	dir := table.DataLocation(md)
	if pp := table.PartitionPathOf(md.CurrentSchema(), ps, first.partition); pp != "" {
		dir += "/" + pp
	}
	out.add = slices.Grow(out.add, len(dvs))
	blobs := make([]puffin.DVBlob, 0, len(dvs))
	for len(dvs) > 0 {
		path := fmt.Sprintf("%s/%s-dv-%05d.puffin", dir, m.runID, m.nfiles.Add(1))
		w, err := fio.Create(ctx, path)
		if err != nil {
			return err
		}
		// Blobs are small and the Puffin writer writes each at once: a
		// buffer makes that one write per 64 KiB instead of one per DV.
		// (A megabyte, zeroed for every file, cost more than the writes:
		// a partition's file is mostly a few KiB.)
		// The buffers are reused: one allocated for every file was a
		// sixth of what writing the DVs allocated.
		buf, _ := m.bufs.Get().(*bufio.Writer)
		if buf == nil {
			buf = bufio.NewWriterSize(w, 64<<10)
		} else {
			buf.Reset(w)
		}
		pw := puffin.NewWriter(buf, map[string]string{puffin.PropCreatedBy: m.opts.CreatedBy})
		// Capped: with a small --puffin-target-size a file holds few.
		pw.Reserve(min(len(dvs), 1024))
		blobs = blobs[:0]
		n := 0
		for n < len(dvs) && (n == 0 || pw.Size() < m.opts.PuffinTargetSize) {
			b, err := pw.AddDV(puffin.DV{ReferencedDataFile: dvs[n].path, Positions: dvs[n].positions})
			if err != nil {
				return errors.Join(fmt.Errorf("write %s: %w", path, err), w.Abort())
			}
			blobs = append(blobs, b)
			n++
		}
		_, size, err := pw.Finish()
		if err == nil {
			err = buf.Flush()
		}
		buf.Reset(nil)
		m.bufs.Put(buf)
		if err != nil {
			return errors.Join(fmt.Errorf("write %s: %w", path, err), w.Abort())
		}
		if err := w.Close(); err != nil {
			return fmt.Errorf("close %s: %w", path, err)
		}
		out.written = append(out.written, path)
		out.res.PuffinFiles++
		out.res.PuffinBytes += size
		for i, b := range blobs {
			out.add = append(out.add, dvEntry{puffin: path, size: size, ref: b.ReferencedDataFile, offset: b.Offset, length: b.Length,
				cardinality: b.Cardinality, specID: dvs[i].specID, partition: dvs[i].partition})
			out.res.DVsWritten++
		}
		dvs = dvs[n:]
	}
	return nil
}

// equalityPositions reads, for each work file with equality deletes, the
// positions they delete (only the equality columns of the data file), up
// to workers files at once: the equality-delete files they share are
// loaded once all the same.
func equalityPositions(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, h *head, ws []work, workers int) (map[string]*roaring64.Bitmap, error) {
	var tasks []scan.FileTask
	for _, w := range ws {
		if len(w.c.EqualityDeletes) > 0 {
			tasks = append(tasks, scan.FileTask{File: h.entry(w.f), Deletes: table.Applicable{EqualityDeletes: w.c.EqualityDeletes}})
		}
	}
	out := map[string]*roaring64.Bitmap{}
	if len(tasks) == 0 {
		return out, nil
	}
	r, err := scan.NewFileReader(fio, md, tasks)
	if err != nil {
		return nil, err
	}
	bms := make([]*roaring64.Bitmap, len(tasks))
	errs := make([]error, len(tasks))
	var (
		next   atomic.Int64
		failed atomic.Bool
		wg     sync.WaitGroup
	)
	for range max(1, min(workers, len(tasks))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(tasks) {
					return
				}
				if bms[i], errs[i] = r.DeletedPositions(ctx, i); errs[i] != nil {
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	for i, t := range tasks {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if bms[i] != nil {
			out[t.File.Entry.DataFile.FilePath] = bms[i]
		}
	}
	return out, nil
}

// removeWritten deletes Puffin files this run wrote and no commit
// references, through the guarded deletion path.
func removeWritten(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	d := &reclaim.Deleter{IO: fio, Scope: reclaim.TableScope(md)}
	if err := d.Delete(context.WithoutCancel(ctx), paths).Err(); err != nil {
		return fmt.Errorf("remove uncommitted delete files: %w", err)
	}
	return nil
}

func inRange(bm *roaring64.Bitmap, rc int64) *roaring64.Bitmap {
	if rc < 0 || bm.IsEmpty() || bm.Maximum() < uint64(rc) {
		return bm
	}
	c := bm.Clone()
	c.RemoveRange(uint64(rc), ^uint64(0))
	c.Remove(^uint64(0))
	return c
}

func first(bm *roaring64.Bitmap, n int) []int64 {
	out := make([]int64, 0, min(uint64(n), bm.GetCardinality()))
	it := bm.Iterator()
	for it.HasNext() && len(out) < n {
		out = append(out, int64(it.Next()))
	}
	return out
}

func toInt64s(ps []uint64) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = int64(p)
	}
	return out
}

func keyStrings(keys []table.FileKey) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.String()
	}
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
