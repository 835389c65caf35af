package datafile

import (
	"context"
	"errors"
	"fmt"
)

// A nested leaf (a primitive below a struct, list or map) is copied with
// its repetition and definition levels as they are: Check has made sure
// the source leaf sits on a path that repeats and is defined as the
// output's at every level, so a level means the same in both files and
// null structs, null or empty lists and maps, and null elements survive
// unchanged. A deleted row drops every level entry of that top-level row:
// those from its repetition level 0 up to the next one.
//
// The levels of the row read last are held back until the next row
// begins (or the row group ends): batches handed to the column writer
// then always end on a row boundary, and when the page decoder hands a
// chunk over to arrow-go's reader mid-way, that row is read again whole
// from its start (arrow-go skips whole rows of a repeated column).

// tcNestedScratch is one nested leaf's buffers, reused across inputs and
// row groups as tcScratch is.
type tcNestedScratch[T any] struct {
	vals     []T
	def, rep []int16
	out      tcNestedOut[T]
	pd       pageDecoder[T]
	zeros    []int16 // the repetition levels of a leaf under structs only
}

// noRep is n repetition levels of 0, for a leaf that is not repeated
// (below structs only), whose pages store none.
func (sc *tcNestedScratch[T]) noRep(n int) []int16 {
	if cap(sc.zeros) < n {
		sc.zeros = make([]int16, n)
	}
	return sc.zeros[:n]
}

// tcNestedOut gathers the kept level entries of one nested leaf for one
// source row group and writes them row by row.
type tcNestedOut[T any] struct {
	c     *tcColumn
	write func([]T, []int16, []int16) (int64, error)
	owned func([]T)
	vals  []T
	def   []int16
	rep   []int16
	// cur is where the entries of the row begun last start in def, and
	// curNV how many values precede them; cur is -1 when that row is
	// deleted (none of its entries is held) or none was begun.
	cur, curNV int
	drop       bool     // the row begun last is deleted
	curDropped int64    // values of the row begun last dropped (it is deleted)
	start      int64    // file position of the row group's first row
	seen       int64    // rows begun in the row group
	del        []uint64 // deleted positions not passed yet
	rows       int64    // rows written
}

// reset starts the source row group whose first row is at file position
// start, keeping the buffers.
func (o *tcNestedOut[T]) reset(start int64) {
	o.vals, o.def, o.rep = o.vals[:0], o.def[:0], o.rep[:0]
	o.cur, o.curNV, o.drop, o.start, o.seen = -1, 0, false, start, 0
}

// add takes one read of levels (def and rep, one entry each) and vals,
// the values of the entries at the maximum definition level.
func (o *tcNestedOut[T]) add(vals []T, def, rep []int16) error {
	if len(def) != len(rep) {
		return fmt.Errorf("%d definition levels, %d repetition levels", len(def), len(rep))
	}
	if len(def) == 0 {
		return nil
	}
	maxDef, maxRep := o.c.maxDef, o.c.maxRep
	if rep[0] != 0 && o.seen == 0 {
		return errors.New("the row group's first level continues a row")
	}
	// One pass for the rows the read begins, where the last begins and
	// its values: without a delete among them, the read is kept whole.
	var begun int64
	last, lastNV, nv := -1, 0, 0
	for i, r := range rep {
		if r > maxRep {
			return fmt.Errorf("repetition level %d above the maximum %d", r, maxRep)
		}
		if r == 0 {
			begun++
			last, lastNV = i, nv
		}
		switch d := def[i]; {
		case d == maxDef:
			nv++
		case d > maxDef || d < 0:
			return fmt.Errorf("definition level %d outside [0, %d]", d, maxDef)
		}
	}
	if nv != len(vals) {
		return fmt.Errorf("%d values for %d levels at the maximum definition level", len(vals), nv)
	}
	first := uint64(o.start + o.seen)
	for len(o.del) > 0 && o.del[0] < first {
		o.del = o.del[1:]
	}
	if (!o.drop || rep[0] == 0) && (len(o.del) == 0 || o.del[0] >= first+uint64(begun)) {
		if last >= 0 {
			o.cur, o.curNV, o.drop, o.curDropped = len(o.def)+last, len(o.vals)+lastNV, false, 0
		}
		o.def = append(o.def, def...)
		o.rep = append(o.rep, rep...)
		o.vals = append(o.vals, vals...)
		o.seen += begun
		return nil
	}
	// The entries of kept rows are appended a run of rows at a time: a
	// span [spanI, i) of levels and [spanV, vi) of values, begun where a
	// kept row follows a deleted one and appended where a deleted row
	// begins (or the read ends).
	vi, spanI, spanV := 0, 0, 0
	for i, r := range rep {
		if r == 0 {
			pos := uint64(o.start + o.seen)
			o.seen++
			for len(o.del) > 0 && o.del[0] < pos {
				o.del = o.del[1:]
			}
			drop := len(o.del) > 0 && o.del[0] == pos
			switch {
			case drop && !o.drop:
				o.appendSpan(vals[spanV:vi], def[spanI:i], rep[spanI:i])
			case !drop && o.drop:
				spanI, spanV = i, vi
			}
			o.drop = drop
			o.cur, o.curNV, o.curDropped = -1, 0, 0
			if !drop {
				// Where the row's entries land once its span is appended.
				o.cur, o.curNV = len(o.def)+i-spanI, len(o.vals)+vi-spanV
			}
		}
		if def[i] == maxDef {
			vi++
			if o.drop {
				o.c.tally.dropped++
				o.curDropped++
			}
		}
	}
	if !o.drop {
		o.appendSpan(vals[spanV:vi], def[spanI:], rep[spanI:])
	}
	return nil
}

// appendSpan holds the entries of a run of kept rows.
func (o *tcNestedOut[T]) appendSpan(vals []T, def, rep []int16) {
	o.def = append(o.def, def...)
	o.rep = append(o.rep, rep...)
	o.vals = append(o.vals, vals...)
}

// flush writes the entries held: all of them when final (the row group
// is read), else those of the rows before the one begun last.
func (o *tcNestedOut[T]) flush(final bool) error {
	end, nv := len(o.def), len(o.vals)
	if !final && o.cur >= 0 {
		end, nv = o.cur, o.curNV
	}
	if end > 0 {
		var rows int64
		for _, r := range o.rep[:end] {
			if r == 0 {
				rows++
			}
		}
		observeNested(o.c, o.vals[:nv], int64(end), rows)
		o.c.tally.written += int64(nv)
		if _, err := o.write(o.vals[:nv], o.def[:end], o.rep[:end]); err != nil {
			return err
		}
		o.rows += rows
		o.def = o.def[:copy(o.def, o.def[end:])]
		o.rep = o.rep[:copy(o.rep, o.rep[end:])]
		o.vals = o.vals[:copy(o.vals, o.vals[nv:])]
		if o.cur >= 0 {
			o.cur, o.curNV = 0, 0
		}
	}
	if !final && o.owned != nil && len(o.vals) > 0 {
		// The row held back outlives the page its values alias.
		o.owned(o.vals)
	}
	return nil
}

// rewind forgets the row begun last (read again by arrow-go's reader)
// and returns how many rows of the row group precede it.
func (o *tcNestedOut[T]) rewind() int64 {
	if o.seen == 0 {
		return 0
	}
	if o.cur >= 0 {
		o.def, o.rep, o.vals = o.def[:o.cur], o.rep[:o.cur], o.vals[:o.curNV]
	}
	o.seen--
	if o.drop {
		o.c.tally.dropped -= o.curDropped // read again
	}
	if p := uint64(o.start + o.seen); o.drop && (len(o.del) == 0 || o.del[0] != p) {
		// The row is deleted and add has passed its position: put it back
		// (in a new slice: o.del shares the input's array with the other
		// columns).
		o.del = append([]uint64{p}, o.del...)
	}
	o.cur, o.curNV, o.drop, o.curDropped = -1, 0, false, 0
	return o.seen
}

// transcodeNested is transcodeColumn for a nested leaf.
func transcodeNested[T any](ctx context.Context, c *tcColumn, nin int, get func(int) (*tcInput, error),
	dec tcDecoders[T], write func(values []T, def, rep []int16) (int64, error)) (int64, error) {
	sc, _ := c.scratch.(*tcNestedScratch[T])
	if sc == nil {
		sc = &tcNestedScratch[T]{vals: make([]T, tcBatch), def: make([]int16, tcBatch), rep: make([]int16, tcBatch)}
		c.scratch = sc
	}
	o := &sc.out
	*o = tcNestedOut[T]{c: c, write: write, owned: dec.owned, vals: o.vals, def: o.def, rep: o.rep}
	for k := range nin {
		in, err := get(k)
		if err != nil {
			return 0, err
		}
		c.tally = colTally{}
		err = func() (err error) {
			// arrow-go panics on some corrupt pages: name the file.
			defer recoverError(&err, "transcode "+in.Path+" column "+c.name)
			return transcodeNestedFile(ctx, c, in, sc, dec)
		}()
		if err != nil {
			return 0, err
		}
		// Levels are copied as they are, so what was read is what was
		// written plus what deleted rows held.
		c.tally.nonNull = c.tally.written + c.tally.dropped
		in.Tally.merge(c.id, &c.tally, false)
	}
	return o.rows, nil
}

// transcodeNestedFile copies leaf c of one input.
func transcodeNestedFile[T any](ctx context.Context, c *tcColumn, in *tcInput, sc *tcNestedScratch[T], dec tcDecoders[T]) error {
	o := &sc.out
	o.del = in.deleted
	j := in.src[c.idx]
	md := in.File.MetaData()
	var pos int64 // file position of the row group's first row
	for g := 0; g < md.NumRowGroups(); g++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		rgRows := md.RowGroup(g).NumRows()
		o.reset(pos)
		if j < 0 {
			// The file predates the whole nested column: every kept
			// row is a null at the top level.
			for left := rgRows; left > 0; {
				nb := min(left, tcBatch)
				var kept int
				kept, o.del = keepRows(o.del, pos+rgRows-left, nb, func(_ int64, i int) { sc.def[i], sc.rep[i] = 0, 0 })
				observeNested(c, sc.vals[:0], int64(kept), int64(kept))
				if _, err := o.write(sc.vals[:0], sc.def[:kept], sc.rep[:kept]); err != nil {
					return err
				}
				o.rows += int64(kept)
				left -= nb
			}
			pos += rgRows
			continue
		}
		if err := transcodeNestedChunk(c, in, g, j, sc, dec); err != nil {
			return err
		}
		if err := o.flush(true); err != nil {
			return err
		}
		if o.seen != rgRows {
			return fmt.Errorf("%s: column %s has %d rows in a row group of %d", in.Path, c.name, o.seen, rgRows)
		}
		pos += rgRows
	}
	if pos != in.rows {
		return fmt.Errorf("%s: column %s has %d rows, the file %d", in.Path, c.name, pos, in.rows)
	}
	return nil
}

// transcodeNestedChunk reads column j of row group g into sc.out, with the
// Transcoder's page decoder while it can and arrow-go's reader after.
func transcodeNestedChunk[T any](c *tcColumn, in *tcInput, g, j int, sc *tcNestedScratch[T], dec tcDecoders[T]) error {
	o := &sc.out
	rgr := in.File.RowGroup(g)
	if dec.plain != nil && sameForm(in.File.MetaData().Schema.Column(j), c.desc) {
		pd, err := sc.pd.open(in, g, j, c.maxDef, dec.plain, dec.owned)
		if err != nil {
			return fmt.Errorf("%s: %w", in.Path, err)
		}
		pd.maxRep, pd.limit = c.maxRep, dec.limit
		rgRows := in.File.MetaData().RowGroup(g).NumRows()
		for {
			// A leaf below structs only has a level per row, which
			// next checks against the rows left; repeated ones are not
			// checked.
			total, vals, def, err := pd.next(rgRows - o.seen)
			if errors.Is(err, errPageUnsupported) {
				break
			}
			if err != nil {
				return fmt.Errorf("%s: column %s: %w", in.Path, c.name, err)
			}
			if total == 0 {
				return nil
			}
			rep := sc.noRep(int(total))
			if c.maxRep > 0 {
				rep = pd.rep[:total]
			}
			if err := o.add(vals, def, rep); err != nil {
				return fmt.Errorf("%s: column %s: %w", in.Path, c.name, err)
			}
			if err := o.flush(false); err != nil {
				return err
			}
		}
	}
	skip := o.rewind()
	cr, err := rgr.Column(j)
	if err != nil {
		return fmt.Errorf("%s: %w", in.Path, err)
	}
	rd, err := dec.open(cr)
	if err != nil {
		return fmt.Errorf("%s: %w", in.Path, err)
	}
	// The rows the page decoder copied are passed here level by level:
	// arrow-go's Skip of a repeated column's rows did not land on the
	// row asked for.
	var begun int64 // rows begun while passing
	for rd.HasNext() {
		total, nv, err := rd.ReadBatchInPage(tcBatch, sc.vals, sc.def, sc.rep)
		if err != nil {
			return fmt.Errorf("%s: column %s: %w", in.Path, c.name, err)
		}
		if total == 0 {
			break
		}
		vals, def, rep := sc.vals[:nv], sc.def[:total], sc.noRep(int(total))
		if c.maxRep > 0 {
			rep = sc.rep[:total]
		}
		if begun <= skip && skip > 0 {
			cut := -1
			for i, r := range rep {
				if r == 0 {
					if begun == skip {
						cut = i
						break
					}
					begun++
				}
			}
			if cut < 0 {
				continue
			}
			begun++ // past skip: passing is over
			passed := 0
			for _, d := range def[:cut] {
				if d == c.maxDef {
					passed++
				}
			}
			if passed > len(vals) {
				return fmt.Errorf("%s: column %s: %d values for more levels at the maximum definition level", in.Path, c.name, len(vals))
			}
			vals, def, rep = vals[passed:], def[cut:], rep[cut:]
		}
		if err := o.add(vals, def, rep); err != nil {
			return fmt.Errorf("%s: column %s: %w", in.Path, c.name, err)
		}
		if err := o.flush(false); err != nil {
			return err
		}
	}
	if err := cr.Err(); err != nil {
		return fmt.Errorf("%s: column %s: %w", in.Path, c.name, err)
	}
	return nil
}
