package dvmerge

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/cespare/xxhash/v2"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/table"
)

// posEntry is a position-delete file written in place of equality
// deletes, not yet committed, and the data sequence number it is
// committed with.
type posEntry struct {
	df  manifest.DataFile
	seq int64
}

// mergeEquality converts the equality deletes of pp's data files on h
// into one position-delete file for the partition (PositionDeletes, on
// format v2): the positions each data file's equality deletes delete, by
// data file path and position. Every data file merged is covered, so an
// equality-delete file goes once every live data file it applies to is.
//
// The file carries the largest data sequence number of the equality
// deletes it replaces. A position delete applies to the data files with a
// data sequence number at most its own, and an equality delete to those
// strictly below its own, so every data file named is one the new file
// applies to; it names only files that exist, so it cannot hide rows
// written later either way. Keeping the old number (as Java's
// rewrite_position_delete_files keeps its inputs') matters to a
// concurrent compaction that started before an equality delete: the
// position-delete file is newer than its start and so fails its
// validation, as the equality delete's own rows would have been lost.
func (m *merger) mergeEquality(ctx context.Context, h *head, pp *PartitionPlan) (*merged, error) {
	md, fio := h.t.Metadata, h.t.IO
	out := &merged{snap: h.snap, covered: map[string]bool{}, res: PartitionResult{ID: pp.ID}, known: map[table.FileKey]bool{}}
	ws := collectWork(h, pp, scopeEqualityOnly)
	if len(ws) == 0 {
		return out, nil
	}
	var seq int64
	for _, w := range ws {
		for _, d := range w.c.EqualityDeletes {
			out.known[d.Key()] = true
			seq = max(seq, d.DataSequenceNumber())
		}
	}
	out.digest = m.digest(ws, out.known)
	eqOf, err := equalityPositions(ctx, fio, md, h, ws, m.opts.Concurrency)
	if err != nil {
		return nil, err
	}
	var (
		paths     []string // data files with deleted rows, in path order (ws's)
		positions int64
	)
	for _, w := range ws {
		out.covered[w.f.path] = true
		if bm := eqOf[w.f.path]; bm != nil && !bm.IsEmpty() {
			paths = append(paths, w.f.path)
			positions += int64(bm.GetCardinality())
		}
	}
	out.res.DataFiles = len(ws)
	if len(paths) == 0 {
		// The equality deletes match no row of these files: they retire
		// with nothing written.
		return out, nil
	}
	first := ws[0].f
	tuple := h.parts.All()[first.part].Tuple
	ps, _ := md.SpecByID(int(first.specID))
	dir := table.DataLocation(md)
	if text := table.PartitionPathOf(md.CurrentSchema(), ps, tuple); text != "" {
		dir += "/" + text
	}
	path := fmt.Sprintf("%s/%s-eq-posdeletes-%05d.parquet", dir, m.runID, m.nfiles.Add(1))
	df, err := writePositionDeletes(ctx, fio, md.Properties, path, paths, eqOf)
	if err != nil {
		return nil, errors.Join(err, removeWritten(ctx, fio, md, []string{path}))
	}
	out.written = append(out.written, path)
	df.SpecID, df.Partition = first.specID, tuple
	if len(paths) == 1 {
		p := paths[0]
		df.ReferencedDataFile = &p
	}
	out.posAdd = append(out.posAdd, posEntry{df: df, seq: seq})
	out.res.PositionDeleteFilesWritten = 1
	out.res.PositionDeleteBytes = df.FileSizeInBytes
	out.res.PositionsWritten = positions
	return out, nil
}

// writePositionDeletes writes the positions of the data files paths
// (sorted) to a position-delete file at path, sorted by file path and
// position as the spec requires, with its column metrics.
// Nothing is left at path on error.
func writePositionDeletes(ctx context.Context, fio fileio.FileIO, props map[string]string, path string, paths []string, of map[string]*roaring64.Bitmap) (manifest.DataFile, error) {
	f, err := fio.Create(ctx, path)
	if err != nil {
		return manifest.DataFile{}, err
	}
	fail := func(err error) (manifest.DataFile, error) {
		return manifest.DataFile{}, errors.Join(fmt.Errorf("write %s: %w", path, err), f.Abort())
	}
	pw, err := datafile.NewPositionDeleteWriter(f, props)
	if err != nil {
		return fail(err)
	}
	for _, p := range paths {
		it := of[p].Iterator()
		for it.HasNext() {
			if err := pw.Write(p, int64(it.Next())); err != nil {
				pw.Close()
				return fail(err)
			}
		}
	}
	mt, err := pw.Close()
	if err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return manifest.DataFile{}, fmt.Errorf("close %s: %w", path, err)
	}
	df := mt.DataFile(path, pw.BytesWritten())
	df.Content = manifest.ContentPositionDeletes
	return df, nil
}

// digestKnown is digest with PositionDeletes: each data file's path and
// the keys of the equality-delete files in known that apply to it, for
// the data files some of them apply to.
func digestKnown(ws []work, known map[table.FileKey]bool) uint64 {
	var buf [binary.MaxVarintLen64]byte
	h := xxhash.New()
	any := false
	for _, w := range ws {
		n := 0
		for i := range w.c.EqualityDeletes {
			k := w.c.EqualityDeletes[i].Key()
			if !known[k] {
				continue
			}
			if n == 0 {
				h.Write(binary.AppendUvarint(buf[:0], uint64(len(w.f.path))))
				h.WriteString(w.f.path)
			}
			n++
			h.Write(binary.AppendUvarint(buf[:0], uint64(len(k.Path))))
			h.WriteString(k.Path)
			h.Write(binary.AppendVarint(buf[:0], k.ContentOffset))
		}
		if n > 0 {
			h.Write(binary.AppendUvarint(buf[:0], uint64(n)))
			any = true
		}
	}
	if !any {
		return 0
	}
	return h.Sum64() | 1
}
