package plan

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// delFile is a live delete file with what the planner asks of it.
type delFile struct {
	e       *table.FileEntry
	seq     int64
	partKey string
	// ref is the one data file it references (fileScoped), or "".
	ref     string
	scoped  bool   // a position delete that references one data file
	global  bool   // an equality delete of an unpartitioned spec
	key     string // path, or path@offset for a DV: counted once when applied
	records int64
	json    []byte // its DeleteRef, marshalled on first use
}

// deleteIndex is table.DeleteIndex for planning: it answers for a data file
// given as path, partition and sequence number, and numbers the deletes in
// the order table.DeleteIndex.For sorts them (data sequence number, path,
// offset), so applicable lists sort as plain ints.
type deleteIndex struct {
	dels      []delFile
	dvs       map[string][]int // by referenced data file, in input order
	posByFile map[string][]int // position deletes with referenced_data_file
	posByPart map[string][]int // other position deletes, by partition key
	eqByPart  map[string][]int // partitioned equality deletes
	eqGlobal  []int
}

func newDeleteIndex(md *spec.TableMetadata, deletes []table.FileEntry) *deleteIndex {
	order := make([]int, len(deletes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ea, eb := &deletes[a], &deletes[b]
		if c := cmp.Compare(ea.DataSequenceNumber(), eb.DataSequenceNumber()); c != 0 {
			return c
		}
		ka, kb := ea.Key(), eb.Key()
		if c := cmp.Compare(ka.Path, kb.Path); c != 0 {
			return c
		}
		return cmp.Compare(ka.ContentOffset, kb.ContentOffset)
	})
	rank := make([]int, len(deletes))
	ix := &deleteIndex{dels: make([]delFile, len(deletes))}
	for r, i := range order {
		rank[i] = r
		e := &deletes[i]
		df := &e.Entry.DataFile
		d := &ix.dels[r]
		*d = delFile{e: e, seq: e.DataSequenceNumber(), partKey: table.PartitionKey(df.SpecID, df.Partition),
			ref: FileScoped(df), global: isGlobal(md, df), key: df.FilePath, records: df.RecordCount}
		if df.ContentOffset != nil {
			d.key = fmt.Sprintf("%s@%d", df.FilePath, *df.ContentOffset)
		}
		d.scoped = d.ref != ""
	}
	add := func(m *map[string][]int, k string, r int) {
		if *m == nil {
			*m = map[string][]int{}
		}
		(*m)[k] = append((*m)[k], r)
	}
	// Input order, as table.DeleteIndex keeps it: the first of two DVs with
	// one sequence number wins.
	for i := range deletes {
		r := rank[i]
		d := &ix.dels[r]
		df := &d.e.Entry.DataFile
		switch df.Content {
		case manifest.ContentPositionDeletes:
			switch {
			case table.IsDV(df) && df.ReferencedDataFile != nil:
				add(&ix.dvs, *df.ReferencedDataFile, r)
			case table.IsDV(df):
			case df.ReferencedDataFile != nil:
				add(&ix.posByFile, *df.ReferencedDataFile, r)
			default:
				add(&ix.posByPart, d.partKey, r)
			}
		case manifest.ContentEqualityDeletes:
			if d.global {
				ix.eqGlobal = append(ix.eqGlobal, r)
			} else {
				add(&ix.eqByPart, d.partKey, r)
			}
		}
	}
	for _, m := range []map[string][]int{ix.posByPart, ix.eqByPart} {
		for _, l := range m {
			slices.Sort(l)
		}
	}
	slices.Sort(ix.eqGlobal)
	return ix
}

// applicable is what applies to one data file: indexes into dels.
type applicable struct {
	dv  int // -1: none
	pos []int
	eq  []int
}

// partDeletes are the partition-scoped deletes of one partition.
type partDeletes struct {
	pos, eq []int
}

func (ix *deleteIndex) forPartition(key string) partDeletes {
	return partDeletes{pos: ix.posByPart[key], eq: ix.eqByPart[key]}
}

// chooseDV is the DV that applies to a data file: the newest of its
// partition with a sequence number at least the file's, or -1.
func (ix *deleteIndex) chooseDV(path []byte, partKey string, seq int64) int {
	dv := -1
	if len(ix.dvs) == 0 {
		return dv
	}
	for _, d := range ix.dvs[string(path)] {
		dd := &ix.dels[d]
		if seq <= dd.seq && dd.partKey == partKey && (dv < 0 || dd.seq > ix.dels[dv].seq) {
			dv = d
		}
	}
	return dv
}

// find fills a with the deletes that apply to a data file, by the rules of
// table.DeleteIndex.For.
func (ix *deleteIndex) find(a *applicable, path []byte, partKey string, pd partDeletes, seq int64) {
	a.pos, a.eq = a.pos[:0], a.eq[:0]
	a.dv = ix.chooseDV(path, partKey, seq)
	if a.dv < 0 {
		if len(ix.posByFile) > 0 {
			for _, d := range ix.posByFile[string(path)] {
				if dd := &ix.dels[d]; seq <= dd.seq && dd.partKey == partKey {
					a.pos = append(a.pos, d)
				}
			}
		}
		n := len(a.pos)
		for _, d := range pd.pos {
			if seq <= ix.dels[d].seq {
				a.pos = append(a.pos, d)
			}
		}
		if n > 0 && len(a.pos) > 1 {
			slices.Sort(a.pos)
		}
	}
	for _, d := range pd.eq {
		if seq < ix.dels[d].seq {
			a.eq = append(a.eq, d)
		}
	}
	n := len(a.eq)
	for _, d := range ix.eqGlobal {
		if seq < ix.dels[d].seq {
			a.eq = append(a.eq, d)
		}
	}
	if n > 0 && len(a.eq) > n {
		slices.Sort(a.eq)
	}
}

// refJSON is the DeleteRef of delete d as json.Marshal writes it.
func (ix *deleteIndex) refJSON(d int) ([]byte, error) {
	dd := &ix.dels[d]
	if dd.json == nil {
		b, err := json.Marshal(deleteRef(dd.e))
		if err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
		dd.json = b
	}
	return dd.json, nil
}
