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
//     RemoveDanglingDeletesSparkAction).
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
	seq  int64
}

// NewDataReach indexes data, live data files of a snapshot of md.
func NewDataReach(md *spec.TableMetadata, data []FileEntry) *DataReach {
	r := &DataReach{md: md, byPart: map[string][]reachFile{}, byPath: make(map[string]reachFile, len(data))}
	for i := range data {
		df := &data[i].Entry.DataFile
		f := reachFile{path: df.FilePath, part: PartitionKey(df.SpecID, df.Partition), seq: data[i].DataSequenceNumber()}
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
	// The lowest data sequence number of a partition's files after the
	// change: of the indexed ones (what position deletes can apply to),
	// and of those and the added ones (what equality deletes can).
	type mins struct{ kept, all int64 }
	added := map[string]int64{}
	addedMin := int64(math.MaxInt64)
	for _, a := range ch.Added {
		k := PartitionKey(a.SpecID, a.Partition)
		if m, ok := added[k]; !ok || a.Seq < m {
			added[k] = a.Seq
		}
		addedMin = min(addedMin, a.Seq)
	}
	cache := map[string]mins{}
	partMin := func(k string) mins {
		if m, ok := cache[k]; ok {
			return m
		}
		m := mins{kept: math.MaxInt64, all: math.MaxInt64}
		for _, f := range r.byPart[k] {
			if !removed(f.path) {
				m.kept = f.seq
				break
			}
		}
		m.all = m.kept
		if a, ok := added[k]; ok {
			m.all = min(m.all, a)
		}
		cache[k] = m
		return m
	}
	globalMin, haveGlobal := int64(0), false
	tableMin := func() int64 {
		if !haveGlobal {
			globalMin, haveGlobal = addedMin, true
			for k := range r.byPart {
				globalMin = min(globalMin, partMin(k).kept)
			}
		}
		return globalMin
	}
	var out []FileKey
	for i := range deletes {
		d := &deletes[i]
		df := &d.Entry.DataFile
		seq := d.DataSequenceNumber()
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
				dangling = partMin(PartitionKey(df.SpecID, df.Partition)).kept > seq
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
