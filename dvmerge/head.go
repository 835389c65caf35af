package dvmerge

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// head is a branch head as a merge sees it: every live delete file, and
// of the data files only those whose deletes need merging, each in a few
// words. A data file without deletes to merge costs no memory at all, and
// one with them its path and about 170 bytes (no column metrics, no
// manifest, the partition tuple shared). A run holds heads of one
// partition each (spilled.each), as many as it merges at once; a whole
// table's head (loadHead) only when a concurrent commit makes it validate
// a batch on the table again. It is the state a partition is merged
// against, and the one a commit validates on.
type head struct {
	t     *catalog.Table
	snap  *spec.Snapshot
	ix    *table.DeleteIndex
	parts *table.Partitions
	// files holds the data files whose deletes need merging (needsWork)
	// in manifest order, as values: a map of pointers to them and a list
	// of their paths in that order cost as much again. byPath indexes
	// them sorted by path.
	files  []liveFile
	byPath []int32
	dels   map[table.FileKey]liveDelete
	// applies is set for every live delete file that could apply to a
	// live data file by sequence number and partition; the others are
	// dangling.
	applies map[table.FileKey]bool
	// eqApplies lists, when equality deletes are merged, the live data
	// files each equality-delete file applies to: it is retired once all
	// of them are covered.
	eqApplies map[table.FileKey][]string
	scope     scope
}

// liveDelete is what a head keeps of a live delete file besides the
// delete index (which has its whole entry): a copy of the entry was
// another 440 bytes a delete file.
type liveDelete struct {
	content   manifest.FileContent
	specID    int32
	partition []any
}

// liveFile is what a merge keeps of a live data file: enough to rebuild
// the manifest entry the delete index, the DV entries and the readers of
// --repair-resurrected and --equality take, and its candidates.
type liveFile struct {
	path, format          string
	pos                   uint64 // manifest order, as table.LiveDataFile.Pos
	part                  uint32 // in head.parts
	specID                int32
	recordCount, size     int64
	seq, fileSeq, firstID int64
	hasSeq, hasFileSeq    bool
	hasFirstID            bool
	// c is the deletes that could apply to it in the head (the delete
	// index's, sharing its lists): asked for again by the plan, the merge
	// and the conflict check.
	c table.Candidates
}

// loadHead reads the live files of snap: the delete files first, whole
// (without metrics), then the data manifests entry by entry, keeping only
// the data files that need work (with equality, the data files each
// equality delete applies to).
func loadHead(ctx context.Context, t *catalog.Table, snap *spec.Snapshot, sc scope) (*head, error) {
	h := &head{t: t, snap: snap, parts: table.NewPartitions(),
		dels: map[table.FileKey]liveDelete{}, applies: map[table.FileKey]bool{}, eqApplies: map[table.FileKey][]string{}, scope: sc}
	dels := &table.FileSet{}
	if snap != nil {
		var err error
		// Column metrics are most of an entry's memory and a merge never
		// looks at them; these entries are never written to a manifest.
		if dels, err = table.LiveFilesWith(ctx, t.IO, snap, table.WalkOptions{Content: table.DeletesOnly, SkipMetrics: true}); err != nil {
			return nil, fmt.Errorf("read live delete files of snapshot %d: %w", snap.SnapshotID, err)
		}
	}
	h.ix = table.DeletesForTable(t.Metadata, dels)
	for i := range dels.Deletes {
		df := &dels.Deletes[i].Entry.DataFile
		h.dels[dels.Deletes[i].Key()] = liveDelete{content: df.Content, specID: df.SpecID, partition: df.Partition}
	}
	if snap == nil || len(h.dels) == 0 {
		return h, nil // no delete file: nothing to merge, nothing dangling
	}
	// The data manifests are decoded in place (table.ScanLiveFiles), a
	// manifest at a time per core, so nothing is held per data file that
	// needs no work, however large a manifest.
	var sinks []*headSink
	_, err := table.ScanLiveFiles(ctx, t.IO, snap, table.ScanOptions{Partitions: h.parts, DataOnly: true}, func() table.DataFileSink {
		s := h.newSink()
		sinks = append(sinks, s)
		return s
	})
	if err != nil {
		return nil, fmt.Errorf("read live data files of snapshot %d: %w", snap.SnapshotID, err)
	}
	if err := h.take(sinks); err != nil {
		return nil, err
	}
	return h, nil
}

// newSink returns a sink adding data files to h (see take).
func (h *head) newSink() *headSink {
	return &headSink{h: h, applies: map[table.FileKey]bool{}, eqApplies: map[table.FileKey][]string{}, formats: map[string]string{}}
}

// takeSorted adds what sink gathered to h, its files given in path order
// without duplicates (a partition read from the spill): they need no
// index, and the sink's list becomes h's.
func (h *head) takeSorted(s *headSink) {
	h.files, s.work = s.work, nil
	h.applies, h.eqApplies = s.applies, s.eqApplies
}

// take adds what sinks gathered to h and indexes its data files.
func (h *head) take(sinks []*headSink) error {
	n := len(h.files)
	for _, s := range sinks {
		n += len(s.work)
	}
	h.files = slices.Grow(h.files, n-len(h.files))
	for _, s := range sinks {
		h.files = append(h.files, s.work...)
		s.work = nil
		for k := range s.applies {
			h.applies[k] = true
		}
		for k, paths := range s.eqApplies {
			h.eqApplies[k] = append(h.eqApplies[k], paths...)
		}
	}
	slices.SortFunc(h.files, func(a, b liveFile) int { return cmp.Compare(a.pos, b.pos) })
	if len(h.files) > math.MaxInt32 {
		return fmt.Errorf("snapshot %d has %d data files with deletes to merge, more than a run can index", h.snap.SnapshotID, len(h.files))
	}
	h.byPath = make([]int32, len(h.files))
	for i := range h.byPath {
		h.byPath[i] = int32(i)
	}
	slices.SortFunc(h.byPath, func(a, b int32) int { return strings.Compare(h.files[a].path, h.files[b].path) })
	for i := 1; i < len(h.byPath); i++ {
		if p := h.files[h.byPath[i]].path; p == h.files[h.byPath[i-1]].path {
			return fmt.Errorf("data file %s is listed twice in snapshot %d", p, h.snap.SnapshotID)
		}
	}
	return nil
}

// file returns the data file at path with deletes to merge, or nil.
func (h *head) file(path string) *liveFile {
	if h.byPath == nil { // files are in path order (takeSorted)
		i, ok := slices.BinarySearchFunc(h.files, path, func(f liveFile, path string) int { return strings.Compare(f.path, path) })
		if !ok {
			return nil
		}
		return &h.files[i]
	}
	i, ok := slices.BinarySearchFunc(h.byPath, path, func(i int32, path string) int { return strings.Compare(h.files[i].path, path) })
	if !ok {
		return nil
	}
	return &h.files[h.byPath[i]]
}

// headSink takes the live data files of one scanning goroutine: it marks
// the deletes each could apply to and keeps those with deletes to merge.
type headSink struct {
	h         *head
	parts     []table.Partition // h.parts.All(), taken again when an id is past its end
	work      []liveFile
	applies   map[table.FileKey]bool
	eqApplies map[table.FileKey][]string
	formats   map[string]string
	// The partition-wide candidate lists are shared by the data files of
	// a partition, which manifests mostly list together: a list marked
	// for the previous file need not be marked again.
	lastDVs, lastPos, lastEq *table.FileEntry
}

func (s *headSink) mark(list []table.FileEntry, last **table.FileEntry) {
	if len(list) == 0 || &list[0] == *last {
		return
	}
	*last = &list[0]
	for i := range list {
		s.applies[list[i].Key()] = true
	}
}

func (s *headSink) Add(lf *table.LiveDataFile) error {
	if int(lf.Partition) >= len(s.parts) {
		s.parts = s.h.parts.All()
	}
	f := liveFile{path: string(lf.Path), part: lf.Partition, specID: lf.SpecID, recordCount: lf.RecordCount, size: lf.FileSizeInBytes,
		seq: lf.DataSequenceNumber, hasSeq: true, fileSeq: lf.FileSequenceNumber, hasFileSeq: lf.HasFileSequenceNumber,
		firstID: lf.FirstRowID, hasFirstID: lf.HasFirstRowID}
	part := &s.parts[f.part]
	c := s.h.ix.CandidatesIn(indexEntry(&f, part.Tuple), part.Key)
	s.mark(c.DVs, &s.lastDVs)
	s.mark(c.PositionDeletes, &s.lastPos)
	if s.h.scope.equality() {
		for _, d := range c.EqualityDeletes {
			s.applies[d.Key()] = true
			s.eqApplies[d.Key()] = append(s.eqApplies[d.Key()], f.path)
		}
	} else {
		s.mark(c.EqualityDeletes, &s.lastEq)
	}
	if !needsWork(c, s.h.scope) {
		return nil
	}
	format, ok := s.formats[lf.Format]
	if !ok {
		format = strings.Clone(lf.Format)
		s.formats[format] = format
	}
	f.format, f.pos, f.c = format, lf.Pos, c
	s.work = append(s.work, f)
	return nil
}

// entry rebuilds the manifest entry of f (without metrics).
func (h *head) entry(f *liveFile) table.FileEntry {
	e := table.FileEntry{Entry: manifest.Entry{Status: manifest.StatusExisting, DataFile: manifest.DataFile{
		Content: manifest.ContentData, FilePath: f.path, FileFormat: f.format, SpecID: f.specID,
		Partition: h.parts.All()[f.part].Tuple, RecordCount: f.recordCount, FileSizeInBytes: f.size,
	}}}
	if f.hasSeq {
		s := f.seq
		e.Entry.SequenceNumber = &s
	}
	if f.hasFileSeq {
		s := f.fileSeq
		e.Entry.FileSequenceNumber = &s
	}
	if f.hasFirstID {
		r := f.firstID
		e.Entry.DataFile.FirstRowID = &r
	}
	return e
}

// indexEntry is f as the delete index looks at it (path, spec,
// partition and data sequence number), pointing into f.
func indexEntry(f *liveFile, tuple []any) table.FileEntry {
	return table.FileEntry{Entry: manifest.Entry{SequenceNumber: &f.seq, DataFile: manifest.DataFile{
		Content: manifest.ContentData, FilePath: f.path, SpecID: f.specID, Partition: tuple}}}
}

// candidates returns the live data file at path with its delete
// candidates; ok is false when it is not live or has no deletes to merge.
func (h *head) candidates(path string) (*liveFile, table.Candidates, bool) {
	f := h.file(path)
	if f == nil {
		return nil, table.Candidates{}, false
	}
	return f, f.c, true
}

// needsWork reports whether a data file's deletes are to be merged: it
// has position-delete files, more than one DV, or (with equality)
// equality deletes. A lone DV is already what the merge would write.
//
// Converting equality deletes on v2 (scopeEqualityOnly) looks at the
// equality deletes alone: position-delete files stay as they are.
func needsWork(c table.Candidates, sc scope) bool {
	if sc == scopeEqualityOnly {
		return len(c.EqualityDeletes) > 0
	}
	return len(c.PositionDeletes) > 0 || len(c.DVs) > 1 || (sc.equality() && len(c.EqualityDeletes) > 0)
}

func compareKeys(a, b table.FileKey) int {
	if a.Path != b.Path {
		if a.Path < b.Path {
			return -1
		}
		return 1
	}
	switch {
	case a.ContentOffset < b.ContentOffset:
		return -1
	case a.ContentOffset > b.ContentOffset:
		return 1
	}
	return 0
}
