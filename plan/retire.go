package plan

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

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
// Deletes that applied to nothing before the plan are left alone.
func retire(p *Plan, in *Input, md *spec.TableMetadata, all []*candidate) {
	groupPos := make(map[string]int, len(p.Groups))
	for i, g := range p.Groups {
		groupPos[g.ID] = i
	}
	type member struct {
		seq int64
		c   *candidate
	}
	type scope struct {
		files      []member // sorted by data sequence number
		minOutside int64    // lowest sequence number of a file not rewritten
	}
	byPath := make(map[string]*candidate, len(all))
	byPart := map[string]*scope{}
	var global *scope // built only when a global equality delete needs it
	for _, c := range all {
		byPath[c.entry.Entry.DataFile.FilePath] = c
		s := byPart[c.partKey]
		if s == nil {
			s = &scope{minOutside: math.MaxInt64}
			byPart[c.partKey] = s
		}
		seq := c.entry.DataSequenceNumber()
		s.files = append(s.files, member{seq, c})
		if c.groupID == "" {
			s.minOutside = min(s.minOutside, seq)
		}
	}
	bySeq := func(a, b member) int {
		if c := cmp.Compare(a.seq, b.seq); c != 0 {
			return c
		}
		return cmp.Compare(a.c.entry.Entry.DataFile.FilePath, b.c.entry.Entry.DataFile.FilePath)
	}
	for _, s := range byPart {
		slices.SortFunc(s.files, bySeq)
	}
	globalScope := func() *scope {
		if global == nil {
			global = &scope{minOutside: math.MaxInt64}
			for _, s := range byPart {
				global.files = append(global.files, s.files...)
				global.minOutside = min(global.minOutside, s.minOutside)
			}
			slices.SortFunc(global.files, bySeq)
		}
		return global
	}

	deletes := make([]*table.FileEntry, len(in.Deletes))
	for i := range in.Deletes {
		deletes[i] = &in.Deletes[i]
	}
	// Sorted so retire lists do not depend on manifest order.
	slices.SortFunc(deletes, func(a, b *table.FileEntry) int {
		ka, kb := a.Key(), b.Key()
		if c := cmp.Compare(ka.Path, kb.Path); c != 0 {
			return c
		}
		return cmp.Compare(ka.ContentOffset, kb.ContentOffset)
	})
	for _, d := range deletes {
		df := &d.Entry.DataFile
		seq := d.DataSequenceNumber()
		if ref := fileScoped(df); ref != "" {
			c := byPath[ref]
			if c == nil || c.groupID == "" {
				continue
			}
			r := deleteRef(d)
			r.Reason = RetireFileScoped
			if table.IsDV(df) {
				r.Reason = RetireDV
			}
			g := &p.Groups[groupPos[c.groupID]]
			g.Retire = append(g.Retire, r)
			continue
		}
		if table.IsDV(df) {
			continue // a DV without its data file applies to nothing
		}
		var s *scope
		var inScope func(dataSeq int64) bool
		reason := RetirePartitionPos
		switch df.Content {
		case manifest.ContentPositionDeletes:
			s = byPart[table.PartitionKey(df.SpecID, df.Partition)]
			inScope = func(ds int64) bool { return ds <= seq }
		case manifest.ContentEqualityDeletes:
			reason = RetireEqualityDead
			if isGlobal(md, df) {
				s = globalScope()
			} else {
				s = byPart[table.PartitionKey(df.SpecID, df.Partition)]
			}
			inScope = func(ds int64) bool { return ds < seq }
		}
		if s == nil || len(s.files) == 0 || !inScope(s.files[0].seq) {
			continue // applied to nothing before the plan
		}
		if inScope(s.minOutside) {
			continue // a file it applies to stays live
		}
		groups := map[string]struct{}{}
		for _, m := range s.files {
			if !inScope(m.seq) {
				break
			}
			groups[m.c.groupID] = struct{}{}
		}
		r := deleteRef(d)
		r.Reason = reason
		if len(groups) == 1 {
			for id := range groups {
				g := &p.Groups[groupPos[id]]
				g.Retire = append(g.Retire, r)
			}
			continue
		}
		ids := make([]string, 0, len(groups))
		for id := range groups {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, func(a, b string) int { return cmp.Compare(groupPos[a], groupPos[b]) })
		p.RetireAfterGroups = append(p.RetireAfterGroups, ConditionalRetire{Delete: r, Groups: ids})
	}
}

// isGlobal mirrors table.DeletesForTable: equality deletes of an
// unpartitioned spec apply to the whole table.
func isGlobal(md *spec.TableMetadata, df *manifest.DataFile) bool {
	if s, ok := md.SpecByID(int(df.SpecID)); ok {
		return s.IsUnpartitioned()
	}
	return len(df.Partition) == 0
}

func (t *Totals) finish(p *Plan) {
	applied := map[string]struct{}{}
	add := func(r *DeleteRef) {
		k := r.Path
		if r.ContentOffset != nil {
			k = fmt.Sprintf("%s@%d", r.Path, *r.ContentOffset)
		}
		applied[k] = struct{}{}
	}
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
		for j := range g.Inputs {
			d := &g.Inputs[j].Deletes
			if d.DV != nil {
				add(d.DV)
			}
			for k := range d.Position {
				add(&d.Position[k])
			}
			for k := range d.Equality {
				add(&d.Equality[k])
			}
		}
	}
	t.DeleteFilesRetired += len(p.RetireAfterGroups)
	t.DeleteFilesApplied = len(applied)
}
