package table

import (
	"cmp"
	"math"
	"slices"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// DataReach indexes live data files by what decides whether a delete file
// can apply to one of them (partition, data sequence number, path), to
// find the dangling delete files: those that apply to no live data file.
// It is the one rule behind compaction's remove-dangling-deletes and the
// position-delete rewrite's dangling files.
//
// The rules are the spec's scan-planning rules (DeleteIndex.For), read
// the other way round, without the rule that a DV hides position-delete
// files (a hidden file still names rows; dropping it is not this rule's
// call):
//
//   - A DV, or a position-delete file with a referenced_data_file, applies
//     only to that path, in its own spec and partition, when the file's
//     data sequence number is <= its own. A DV without one is kept: it is
//     another writer's defect, and what it means is not this rule's call.
//   - Another position-delete file applies to the data files of its spec
//     and partition with data sequence number <= its own: dangling when
//     the lowest of them is above it, or the partition has none (Java's
//     RemoveDanglingDeletesSparkAction). It names data files by path, so
//     it also dangles when every such file was added after it (a file
//     sequence number above its own: a compaction's output, whose data
//     sequence number is the compaction's starting one): no path it holds
//     can be theirs. Java does not look at file sequence numbers, and
//     keeps such files (the deletes of the files its own rewrite replaced).
//   - An equality-delete file applies to data files with a strictly lower
//     data sequence number, of its spec and partition, or of every
//     partition when its spec is unpartitioned: dangling when the lowest is
//     >= its own, or there is none. (Java joins a global delete with the
//     data files of its own spec only, so it drops one that still applies
//     to files of a later partitioned spec; icectl does not.)
type DataReach struct {
	md     *spec.TableMetadata
	byPart map[string][]reachFile // ascending data sequence number
	byPath map[string]reachFile
}

type reachFile struct {
	path string
	part string
	seq  int64 // data sequence number
	// fileSeq is the file sequence number (of the commit that added the
	// file); 0 when unknown, which keeps every position delete of its
	// partition that its data sequence number allows.
	fileSeq int64
}

// NewDataReach indexes data, live data files of a snapshot of md.
func NewDataReach(md *spec.TableMetadata, data []FileEntry) *DataReach {
	r := &DataReach{md: md, byPart: map[string][]reachFile{}, byPath: make(map[string]reachFile, len(data))}
	for i := range data {
		df := &data[i].Entry.DataFile
		f := reachFile{path: df.FilePath, part: PartitionKey(df.SpecID, df.Partition), seq: data[i].DataSequenceNumber()}
		if fs := data[i].Entry.FileSequenceNumber; fs != nil {
			f.fileSeq = *fs
		}
		r.byPart[f.part] = append(r.byPart[f.part], f)
		r.byPath[f.path] = f
	}
	for _, fs := range r.byPart {
		slices.SortFunc(fs, func(a, b reachFile) int { return cmp.Compare(a.seq, b.seq) })
	}
	return r
}

// AddedData is a data file a change adds under a new path, with the data
// sequence number it will have.
type AddedData struct {
	SpecID    int32
	Partition []any
	Seq       int64
}

// DataChange is a change to the indexed data files, to find what dangles
// after it.
type DataChange struct {
	// Removed reports the indexed data files the change removes (nil: none).
	Removed func(path string) bool
	// Added are the data files it adds, under paths no delete file of the
	// table can name (a compaction's outputs): only equality deletes can
	// apply to them, so they keep equality deletes, never position deletes.
	Added []AddedData
}

// Dangling returns the keys of the delete files of deletes (live delete
// files of the indexed snapshot) that apply to no data file left after
// ch, sorted by key.
func (r *DataReach) Dangling(deletes []FileEntry, ch DataChange) []FileKey {
	removed := ch.Removed
	if removed == nil {
		removed = func(string) bool { return false }
	}
	// A partition's files after the change: the indexed ones left (what
	// position deletes can apply to), in data sequence number order, with
	// the lowest file sequence number up to each, and the lowest data
	// sequence number of those and the added ones (what equality deletes
	// can apply to).
	type mins struct {
		kept      []reachFile
		minFileTo []int64
		all       int64
	}
	added := map[string]int64{}
	addedMin := int64(math.MaxInt64)
	for _, a := range ch.Added {
		k := PartitionKey(a.SpecID, a.Partition)
		if m, ok := added[k]; !ok || a.Seq < m {
			added[k] = a.Seq
		}
		addedMin = min(addedMin, a.Seq)
	}
	cache := map[string]*mins{}
	partMin := func(k string) *mins {
		if m, ok := cache[k]; ok {
			return m
		}
		m := &mins{all: math.MaxInt64}
		lowest := int64(math.MaxInt64)
		for _, f := range r.byPart[k] {
			if !removed(f.path) {
				m.kept = append(m.kept, f)
				lowest = min(lowest, f.fileSeq)
				m.minFileTo = append(m.minFileTo, lowest)
			}
		}
		if len(m.kept) > 0 {
			m.all = m.kept[0].seq
		}
		if a, ok := added[k]; ok {
			m.all = min(m.all, a)
		}
		cache[k] = m
		return m
	}
	// positionApplies reports whether a position delete with data and
	// file sequence numbers seq and fileSeq can apply to a file left in
	// partition k: one with data sequence number <= seq added no later.
	positionApplies := func(k string, seq, fileSeq int64) bool {
		m := partMin(k)
		n, _ := slices.BinarySearchFunc(m.kept, seq+1, func(f reachFile, s int64) int { return cmp.Compare(f.seq, s) })
		return n > 0 && m.minFileTo[n-1] <= fileSeq
	}
	globalMin, haveGlobal := int64(0), false
	tableMin := func() int64 {
		if !haveGlobal {
			globalMin, haveGlobal = addedMin, true
			for k := range r.byPart {
				if m := partMin(k); len(m.kept) > 0 {
					globalMin = min(globalMin, m.kept[0].seq)
				}
			}
		}
		return globalMin
	}
	var out []FileKey
	for i := range deletes {
		d := &deletes[i]
		df := &d.Entry.DataFile
		seq := d.DataSequenceNumber()
		fileSeq := int64(math.MaxInt64) // unknown: any file may be named
		if fs := d.Entry.FileSequenceNumber; fs != nil {
			fileSeq = *fs
		}
		var dangling bool
		switch df.Content {
		case manifest.ContentPositionDeletes:
			switch {
			case df.ReferencedDataFile != nil:
				f, ok := r.byPath[*df.ReferencedDataFile]
				dangling = !ok || removed(f.path) || f.part != PartitionKey(df.SpecID, df.Partition) || f.seq > seq
			case IsDV(df):
				// No referenced data file: kept (see DataReach).
			default:
				dangling = !positionApplies(PartitionKey(df.SpecID, df.Partition), seq, fileSeq)
			}
		case manifest.ContentEqualityDeletes:
			if Unpartitioned(r.md, df.SpecID, df.Partition) {
				dangling = tableMin() >= seq
			} else {
				dangling = partMin(PartitionKey(df.SpecID, df.Partition)).all >= seq
			}
		}
		if dangling {
			out = append(out, d.Key())
		}
	}
	slices.SortFunc(out, compareKeys)
	return out
}

func compareKeys(a, b FileKey) int {
	if c := cmp.Compare(a.Path, b.Path); c != 0 {
		return c
	}
	return cmp.Compare(a.ContentOffset, b.ContentOffset)
}
