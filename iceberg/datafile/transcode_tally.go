package datafile

import "sync"

// TranscodeTally is what a Transcoder read of one input and wrote of it,
// by output leaf field id, for a caller that checks a rewrite against the
// input's manifest entry before committing it: set TranscodeInput.Tally
// to receive it. It is counted where the values pass (the definition
// levels read, the deleted rows dropped, the batches handed to the column
// writers), so a column read as nulls, or values lost between reading and
// writing, show as a difference.
type TranscodeTally struct {
	mu sync.Mutex
	// NonNull is the column's non-null values in the file, every row
	// (deleted ones too), as read; for a lineage column the values the
	// file stores.
	NonNull map[int]int64
	// Dropped is the part of NonNull in deleted rows.
	Dropped map[int]int64
	// Written is the non-null values handed to the column writer.
	Written map[int]int64
	// Lineage has, for each lineage column, the kept rows that store a
	// value and those that inherit one, and the values written, so that a
	// caller can derive what inheritance must give from the manifest
	// entry's first_row_id and data sequence number.
	Lineage map[int]LineageTally
}

// LineageTally sums one lineage column of an input's kept rows.
type LineageTally struct {
	Stored    LineageSums // V: the stored value
	Inherited LineageSums // V: the row's position in the file
	Written   LineageSums // V: the value written; null values are left out
}

// LineageSums are wrapping sums over rows, O being a row's ordinal among
// the input's kept rows: a changed value changes V, and a value moved to
// another row changes OV.
type LineageSums struct {
	N, O, V, OV uint64
}

func (s *LineageSums) add(o, v uint64) {
	s.N++
	s.O += o
	s.V += v
	s.OV += o * v
}

// colTally is one column's counts for the input being transcoded.
type colTally struct {
	nonNull, dropped, written int64
	lin                       LineageTally
	ro, wo                    uint64 // ordinal of the next kept row read and written
}

// merge adds c's counts for column id to the input's tally.
func (t *TranscodeTally) merge(id int, c *colTally, lineage bool) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.NonNull == nil {
		t.NonNull, t.Dropped, t.Written = map[int]int64{}, map[int]int64{}, map[int]int64{}
	}
	t.NonNull[id] += c.nonNull
	t.Dropped[id] += c.dropped
	t.Written[id] += c.written
	if lineage {
		if t.Lineage == nil {
			t.Lineage = map[int]LineageTally{}
		}
		t.Lineage[id] = c.lin
	}
}

// writtenLineage adds the lineage values written for rows with levels
// def (1: a value of vals).
func (c *colTally) writtenLineage(vals []int64, def []int16) {
	vi := 0
	for _, d := range def {
		if d == 1 {
			c.lin.Written.add(c.wo, uint64(vals[vi]))
			vi++
		}
		c.wo++
	}
	c.written += int64(vi)
}
