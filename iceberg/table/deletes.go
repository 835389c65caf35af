package table

import (
	"cmp"
	"slices"
	"sort"
	"sync"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// The table property of the size delete files aim for, with Java's
// default (TableProperties.DELETE_TARGET_FILE_SIZE_BYTES): writers, the
// position-delete rewrite and health read it.
const (
	PropDeleteTargetFileSize          = "write.delete.target-file-size-bytes"
	DefaultDeleteTargetFileSize int64 = 64 << 20
)

// DeleteIndex finds the delete files that apply to a data file.
type DeleteIndex struct {
	dvs       map[string][]FileEntry // by referenced data file
	posByFile map[string][]FileEntry // position deletes with referenced_data_file
	posByPart map[string][]FileEntry // other position deletes, by spec+partition
	eqByPart  map[string][]FileEntry // partitioned equality deletes, by spec+partition
	eqGlobal  []FileEntry            // equality deletes of an unpartitioned spec

	// shared holds the partition-wide lists For returned, by partition and
	// data sequence number: every data file of a partition gets the same
	// partition-scoped deletes, and one copy each of them would make the
	// memory of a compaction grow with files x deletes.
	mu     sync.Mutex
	shared map[sharedKey]Applicable
}

type sharedKey struct {
	part string
	seq  int64
	dv   bool // a DV applies: partition position deletes are not listed
}

// Applicable lists the deletes that apply to one data file.
type Applicable struct {
	DV              *FileEntry
	PositionDeletes []FileEntry
	EqualityDeletes []FileEntry
}

// Empty reports whether nothing applies.
func (a Applicable) Empty() bool {
	return a.DV == nil && len(a.PositionDeletes) == 0 && len(a.EqualityDeletes) == 0
}

// DeletesFor indexes the live delete files of fs. An equality-delete file
// is global when its partition tuple is empty (its spec has no fields); use
// DeletesForTable to also treat specs whose fields are all void as
// unpartitioned, as Java does.
func DeletesFor(fs *FileSet) *DeleteIndex {
	return newDeleteIndex(fs, func(df *manifest.DataFile) bool { return len(df.Partition) == 0 })
}

// DeletesForTable is DeletesFor with md's partition specs deciding which
// equality deletes are global (a spec with no fields or only void ones).
func DeletesForTable(md *spec.TableMetadata, fs *FileSet) *DeleteIndex {
	return newDeleteIndex(fs, func(df *manifest.DataFile) bool { return Unpartitioned(md, df.SpecID, df.Partition) })
}

// Unpartitioned reports whether a file of spec specID with partition tuple
// is in an unpartitioned spec of md (no fields, or only void ones, as Java
// decides; a spec md does not have: an empty tuple). Its equality deletes
// apply to the whole table.
func Unpartitioned(md *spec.TableMetadata, specID int32, tuple []any) bool {
	if s, ok := md.SpecByID(int(specID)); ok {
		return s.IsUnpartitioned()
	}
	return len(tuple) == 0
}

func newDeleteIndex(fs *FileSet, global func(*manifest.DataFile) bool) *DeleteIndex {
	ix := &DeleteIndex{
		dvs:       map[string][]FileEntry{},
		posByFile: map[string][]FileEntry{},
		posByPart: map[string][]FileEntry{},
		eqByPart:  map[string][]FileEntry{},
	}
	for _, e := range fs.Deletes {
		df := &e.Entry.DataFile
		switch df.Content {
		case manifest.ContentPositionDeletes:
			switch {
			case IsDV(df) && df.ReferencedDataFile != nil:
				ix.dvs[*df.ReferencedDataFile] = append(ix.dvs[*df.ReferencedDataFile], e)
			case IsDV(df):
				// A DV without its data file cannot apply to anything.
			case df.ReferencedDataFile != nil:
				ix.posByFile[*df.ReferencedDataFile] = append(ix.posByFile[*df.ReferencedDataFile], e)
			default:
				k := PartitionKey(df.SpecID, df.Partition)
				ix.posByPart[k] = append(ix.posByPart[k], e)
			}
		case manifest.ContentEqualityDeletes:
			if global(df) {
				ix.eqGlobal = append(ix.eqGlobal, e)
			} else {
				k := PartitionKey(df.SpecID, df.Partition)
				ix.eqByPart[k] = append(ix.eqByPart[k], e)
			}
		}
	}
	sortEntries(ix.eqGlobal)
	for _, m := range []map[string][]FileEntry{ix.posByPart, ix.eqByPart} {
		for _, l := range m {
			sortEntries(l)
		}
	}
	return ix
}

// tail is the entries of sorted (by sortEntries) with a data sequence
// number of at least seq, capped so that an append copies; nil if none.
func tail(sorted []FileEntry, seq int64) []FileEntry {
	i := sort.Search(len(sorted), func(i int) bool { return sorted[i].DataSequenceNumber() >= seq })
	if i == len(sorted) {
		return nil
	}
	return sorted[i:len(sorted):len(sorted)]
}

// For returns the deletes that apply to the data file data, by the rules
// of the spec's scan planning: a DV applies to its referenced file in the
// same partition when seq(data) <= seq(DV); position-delete files apply
// with the same <= rule and the same partition, unless a DV applies; and
// equality deletes apply when seq(data) < seq(delete), in the same
// partition or globally from an unpartitioned spec.
func (ix *DeleteIndex) For(data FileEntry) Applicable {
	var out Applicable
	df := &data.Entry.DataFile
	seq := data.DataSequenceNumber()
	part := PartitionKey(df.SpecID, df.Partition)
	samePart := func(d FileEntry) bool {
		dd := &d.Entry.DataFile
		return PartitionKey(dd.SpecID, dd.Partition) == part
	}
	for _, d := range ix.dvs[df.FilePath] {
		if seq <= d.DataSequenceNumber() && samePart(d) {
			if out.DV == nil || d.DataSequenceNumber() > out.DV.DataSequenceNumber() {
				out.DV = &d
			}
		}
	}
	common := ix.partitionWide(part, seq, out.DV != nil)
	out.EqualityDeletes = common.EqualityDeletes
	if out.DV != nil {
		return out
	}
	var own []FileEntry
	for _, d := range ix.posByFile[df.FilePath] {
		if seq <= d.DataSequenceNumber() && samePart(d) {
			own = append(own, d)
		}
	}
	if len(own) == 0 {
		out.PositionDeletes = common.PositionDeletes
		return out
	}
	out.PositionDeletes = append(own, common.PositionDeletes...)
	sortEntries(out.PositionDeletes)
	return out
}

// partitionWide is the deletes that apply to every data file of part
// with data sequence number seq: partition-scoped position deletes
// (unless a DV applies, which replaces them) and equality deletes. The
// slices are shared between callers, capped so that an append copies.
func (ix *DeleteIndex) partitionWide(part string, seq int64, dv bool) Applicable {
	k := sharedKey{part: part, seq: seq, dv: dv}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if a, ok := ix.shared[k]; ok {
		return a
	}
	// The lists are sorted by sequence number, and those that apply are
	// the ones at or after seq (after, for equality deletes): a tail of
	// the list, shared rather than copied (10,000 partition-scoped
	// delete files were otherwise held twice).
	var a Applicable
	if !dv {
		a.PositionDeletes = tail(ix.posByPart[part], seq)
	}
	eqPart, eqGlobal := tail(ix.eqByPart[part], seq+1), tail(ix.eqGlobal, seq+1)
	switch {
	case len(eqGlobal) == 0:
		a.EqualityDeletes = eqPart
	case len(eqPart) == 0:
		a.EqualityDeletes = eqGlobal
	default:
		a.EqualityDeletes = slices.Concat(eqPart, eqGlobal)
		sortEntries(a.EqualityDeletes)
		a.EqualityDeletes = slices.Clip(a.EqualityDeletes)
	}
	if ix.shared == nil {
		ix.shared = map[sharedKey]Applicable{}
	}
	ix.shared[k] = a
	return a
}

// sortEntries orders deletes by data sequence number, then key, so results
// do not depend on manifest order.
func sortEntries(es []FileEntry) {
	slices.SortFunc(es, func(a, b FileEntry) int {
		if c := cmp.Compare(a.DataSequenceNumber(), b.DataSequenceNumber()); c != 0 {
			return c
		}
		ka, kb := a.Key(), b.Key()
		if c := cmp.Compare(ka.Path, kb.Path); c != 0 {
			return c
		}
		return cmp.Compare(ka.ContentOffset, kb.ContentOffset)
	})
}

// Candidates lists every delete that could apply to one data file by
// sequence number and partition, without the rule that a DV hides
// position-delete files: what a maintenance command must look at to merge
// deletes into one DV, or to find the positions a DV lost.
type Candidates struct {
	// DVs are every DV for the file in its partition with a data sequence
	// number at or above the file's, oldest first. More than one is
	// another writer's defect; readers use the newest.
	DVs []FileEntry
	// PositionDeletes are every position-delete file that applies by
	// sequence number and partition, file- or partition-scoped, oldest
	// first.
	PositionDeletes []FileEntry
	// EqualityDeletes are as in Applicable.
	EqualityDeletes []FileEntry
}

// Candidates returns every delete that could apply to data (see
// Candidates). Applicable (For) is what a reader applies of them: the
// newest DV alone when there is one.
func (ix *DeleteIndex) Candidates(data FileEntry) Candidates {
	df := &data.Entry.DataFile
	return ix.CandidatesIn(data, PartitionKey(df.SpecID, df.Partition))
}

// CandidatesIn is Candidates for a data file whose partition key (the
// PartitionKey of its spec and tuple) the caller has at hand: building it
// for every call was a good part of what a call cost.
func (ix *DeleteIndex) CandidatesIn(data FileEntry, part string) Candidates {
	var out Candidates
	df := &data.Entry.DataFile
	seq := data.DataSequenceNumber()
	for _, d := range ix.dvs[df.FilePath] {
		dd := &d.Entry.DataFile
		if seq <= d.DataSequenceNumber() && PartitionKey(dd.SpecID, dd.Partition) == part {
			out.DVs = append(out.DVs, d)
		}
	}
	for _, d := range ix.posByFile[df.FilePath] {
		dd := &d.Entry.DataFile
		if seq <= d.DataSequenceNumber() && PartitionKey(dd.SpecID, dd.Partition) == part {
			out.PositionDeletes = append(out.PositionDeletes, d)
		}
	}
	common := ix.partitionWide(part, seq, false)
	out.EqualityDeletes = common.EqualityDeletes
	sortEntries(out.DVs)
	if len(out.PositionDeletes) == 0 {
		// Shared with the partition's other files (capped: an append
		// copies), as For does: one copy per data file would make memory
		// grow with files x deletes.
		out.PositionDeletes = common.PositionDeletes
		return out
	}
	out.PositionDeletes = append(out.PositionDeletes, common.PositionDeletes...)
	sortEntries(out.PositionDeletes)
	return out
}

// Empty reports whether nothing could apply.
func (c Candidates) Empty() bool {
	return len(c.DVs) == 0 && len(c.PositionDeletes) == 0 && len(c.EqualityDeletes) == 0
}
