package plan

// This file is the planner as it was before the Collector: every file in
// memory, a candidate per file. It is kept as the reference the planner is
// compared with (TestMatchesReference).

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan/where"
)

// candidate is one live data file with what the planner learned about it.
type refCandidate struct {
	entry        *table.FileEntry
	applicable   table.Applicable
	reasons      []string
	deleteHeavy  bool // too many deletes or too high a delete ratio
	knownDeleted int64
	partKey      string // table.PartitionKey of spec id and tuple
	groupID      string // set once the file is in a final group
}

func (c *refCandidate) size() int64 { return c.entry.Entry.DataFile.FileSizeInBytes }

// partition holds the candidates of one (spec id, partition tuple).
type refPartition struct {
	key    string
	specID int32
	tuple  []any
	cands  []*refCandidate
}

// draft is a group before ids and job order are final.
type refDraft struct {
	part           *refPartition
	files          []*refCandidate
	partitionIndex int
}

func (d *refDraft) bytes() int64 {
	var n int64
	for _, c := range d.files {
		n += c.size()
	}
	return n
}

// New computes the compaction plan of in with options r at time now. It is
// deterministic: the order of in.Data and in.Deletes does not matter.
func referenceNew(in *Input, r Resolved, now time.Time) (*Plan, error) {
	md := in.Metadata
	if md == nil {
		return nil, errors.New("plan: no table metadata")
	}
	if r.TargetFileSize <= 0 || r.MaxFileGroupSize <= 0 || r.MinInputFiles <= 0 || r.MaxFileGroupInputFiles <= 0 {
		return nil, errors.New("plan: options were not resolved (use Options.Resolve)")
	}
	filter := r.filter
	if filter == nil && r.Where != "" {
		if md.CurrentSchema() == nil {
			return nil, errors.New("plan: the table has no current schema for the where filter")
		}
		f, err := where.Compile(r.Where, md.CurrentSchema())
		if err != nil {
			return nil, fmt.Errorf("where: %w", err)
		}
		filter = f
	}
	p := &Plan{
		Format:    DocumentFormat,
		Version:   DocumentVersion,
		CreatedAt: now.UTC(),
		TableRef: TableRef{UUID: md.TableUUID, Location: md.Location,
			MetadataLocation: in.MetadataLocation, FormatVersion: md.FormatVersion},
		Branch:            in.Branch,
		Options:           r,
		Groups:            []Group{},
		RetireAfterGroups: []ConditionalRetire{},
	}
	if p.Branch == "" {
		p.Branch = "main"
	}
	if in.BaseSnapshot != nil {
		p.Base = &BaseSnapshot{SnapshotID: in.BaseSnapshot.SnapshotID,
			SequenceNumber: in.BaseSnapshot.SequenceNumber, TimestampMS: in.BaseSnapshot.TimestampMS}
	}
	if err := refCheckInput(in); err != nil {
		return nil, err
	}

	index := table.DeletesForTable(md, &table.FileSet{Deletes: in.Deletes})
	parts, all, selected, err := refCollect(in, r, filter, index)
	if err != nil {
		return nil, err
	}
	p.Totals.LiveDataFiles = len(in.Data)
	p.Totals.SelectedByWhere = selected

	var drafts []*refDraft
	for _, part := range parts {
		var cands []*refCandidate
		for _, c := range part.cands {
			if len(c.reasons) > 0 {
				cands = append(cands, c)
			}
		}
		p.Totals.CandidateFiles += len(cands)
		bins := packLookback1(cands, (*refCandidate).size, r.MaxFileGroupSize, r.MaxFileGroupInputFiles)
		n := 0
		for _, bin := range bins {
			if !r.RewriteAll && !refKeepGroup(bin, r) {
				continue
			}
			n++
			drafts = append(drafts, &refDraft{part: part, files: bin, partitionIndex: n})
		}
	}
	refSortDrafts(drafts, r.JobOrder)
	if r.MaxFilesToRewrite != nil {
		// The cap prefers groups early in job order; a truncated group
		// may then need to move, so sort again.
		drafts = refCapFiles(drafts, r.MaxFilesToRewrite)
		refSortDrafts(drafts, r.JobOrder)
	}

	for i, d := range drafts {
		g := refBuildGroup(md, d, r)
		g.Index = i + 1
		for _, c := range d.files {
			c.groupID = g.ID
		}
		p.Groups = append(p.Groups, g)
	}
	refRetire(p, in, md, all)
	refDangling(p, in, md)
	refFinish(&p.Totals, p)
	return p, nil
}

// checkInput refuses inputs the plan could not account for.
func refCheckInput(in *Input) error {
	seen := make(map[string]struct{}, len(in.Data))
	for i := range in.Data {
		df := &in.Data[i].Entry.DataFile
		if df.Content != manifest.ContentData {
			return fmt.Errorf("plan: %s is listed as a data file but has content %d", df.FilePath, df.Content)
		}
		if df.FileSizeInBytes < 0 || df.RecordCount < 0 {
			return fmt.Errorf("plan: data file %s has a negative size or record count", df.FilePath)
		}
		if _, dup := seen[df.FilePath]; dup {
			return fmt.Errorf("plan: data file %s is live twice", df.FilePath)
		}
		seen[df.FilePath] = struct{}{}
		ps, ok := in.Metadata.SpecByID(int(df.SpecID))
		if !ok {
			return fmt.Errorf("plan: data file %s has partition spec %d, which the table does not have", df.FilePath, df.SpecID)
		}
		if len(df.Partition) != len(ps.Fields) {
			return fmt.Errorf("plan: data file %s has %d partition values but spec %d has %d fields", df.FilePath, len(df.Partition), ps.ID, len(ps.Fields))
		}
	}
	for i := range in.Deletes {
		df := &in.Deletes[i].Entry.DataFile
		if df.Content == manifest.ContentData {
			return fmt.Errorf("plan: %s is listed as a delete file but has data content", df.FilePath)
		}
	}
	return nil
}

// collect groups the live data files by partition (sorted), applies the
// where filter and marks candidates. It returns every live data file too,
// for the dangling-delete rules, and how many the filter selected.
func refCollect(in *Input, r Resolved, filter *where.Filter, index *table.DeleteIndex) ([]*refPartition, []*refCandidate, int, error) {
	md := in.Metadata
	byKey := map[string]*refPartition{}
	filters := map[int32]*where.PartitionFilter{}
	all := make([]*refCandidate, 0, len(in.Data))
	selected := 0
	for i := range in.Data {
		e := &in.Data[i]
		df := &e.Entry.DataFile
		c := &refCandidate{entry: e, partKey: table.PartitionKey(df.SpecID, df.Partition)}
		all = append(all, c)
		if filter != nil {
			pf, ok := filters[df.SpecID]
			if !ok {
				ps, _ := md.SpecByID(int(df.SpecID))
				var err error
				if pf, err = filter.ForSpec(ps, md.CurrentSchema()); err != nil {
					return nil, nil, 0, fmt.Errorf("where: %w (data file %s)", err, df.FilePath)
				}
				filters[df.SpecID] = pf
			}
			match, err := pf.MatchFile(df)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("where: data file %s: %w", df.FilePath, err)
			}
			if !match || in.Unmatched[df.FilePath] {
				continue
			}
		}
		selected++
		part := byKey[c.partKey]
		if part == nil {
			part = &refPartition{key: c.partKey, specID: df.SpecID, tuple: df.Partition}
			byKey[c.partKey] = part
		}
		part.cands = append(part.cands, c)
		refEvaluate(c, index, r)
	}
	parts := make([]*refPartition, 0, len(byKey))
	for _, part := range byKey {
		// Java packs in scan order; a canonical order keeps plans
		// deterministic and keeps files written together in one group.
		slices.SortFunc(part.cands, func(a, b *refCandidate) int {
			if c := cmp.Compare(a.entry.DataSequenceNumber(), b.entry.DataSequenceNumber()); c != 0 {
				return c
			}
			return cmp.Compare(a.entry.Entry.DataFile.FilePath, b.entry.Entry.DataFile.FilePath)
		})
		parts = append(parts, part)
	}
	slices.SortFunc(parts, func(a, b *refPartition) int {
		if c := cmp.Compare(a.specID, b.specID); c != 0 {
			return c
		}
		if c := compareTuples(a.tuple, b.tuple); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	return parts, all, selected, nil
}

// evaluate applies Java's file filter: outside the size range, too many
// delete files, or too high a ratio of known deleted rows.
func refEvaluate(c *refCandidate, index *table.DeleteIndex, r Resolved) {
	df := &c.entry.Entry.DataFile
	c.applicable = index.For(*c.entry)
	a := &c.applicable
	if df.FileSizeInBytes < r.MinFileSize {
		c.reasons = append(c.reasons, ReasonTooSmall)
	}
	if df.FileSizeInBytes > r.MaxFileSize {
		c.reasons = append(c.reasons, ReasonTooLarge)
	}
	n := len(a.PositionDeletes) + len(a.EqualityDeletes)
	if a.DV != nil {
		n++
	}
	if n >= r.DeleteFileThreshold {
		c.reasons = append(c.reasons, ReasonTooManyDeletes)
		c.deleteHeavy = true
	}
	var known int64
	if a.DV != nil {
		known += a.DV.Entry.DataFile.RecordCount
	}
	for i := range a.PositionDeletes {
		if FileScoped(&a.PositionDeletes[i].Entry.DataFile) != "" {
			known += a.PositionDeletes[i].Entry.DataFile.RecordCount
		}
	}
	c.knownDeleted = min(known, df.RecordCount)
	if n > 0 && df.RecordCount > 0 && float64(c.knownDeleted)/float64(df.RecordCount) >= r.DeleteRatioThreshold {
		c.reasons = append(c.reasons, ReasonDeleteRatio)
		c.deleteHeavy = true
	}
	if r.RewriteAll && len(c.reasons) == 0 {
		c.reasons = append(c.reasons, ReasonRewriteAll)
	}
}

// keepGroup is Java's filterFileGroups.
func refKeepGroup(files []*refCandidate, r Resolved) bool {
	var size int64
	heavy := false
	for _, c := range files {
		size += c.size()
		heavy = heavy || c.deleteHeavy
	}
	enoughInputFiles := len(files) > 1 && len(files) >= r.MinInputFiles
	enoughContent := len(files) > 1 && size > r.TargetFileSize
	tooMuchContent := size > r.MaxFileSize
	return enoughInputFiles || enoughContent || tooMuchContent || heavy
}

// sortDrafts orders groups by the job order; ties (and "none") keep the
// canonical order: spec, partition, position in the partition.
func refSortDrafts(ds []*refDraft, order JobOrder) {
	slices.SortStableFunc(ds, func(a, b *refDraft) int {
		var c int
		switch order {
		case JobOrderBytesAsc:
			c = cmp.Compare(a.bytes(), b.bytes())
		case JobOrderBytesDesc:
			c = cmp.Compare(b.bytes(), a.bytes())
		case JobOrderFilesAsc:
			c = cmp.Compare(len(a.files), len(b.files))
		case JobOrderFilesDesc:
			c = cmp.Compare(len(b.files), len(a.files))
		}
		return c
	})
}

// capFiles applies max-files-to-rewrite in job order, truncating the group
// that crosses the limit as Java does.
func refCapFiles(ds []*refDraft, limit *int) []*refDraft {
	if limit == nil {
		return ds
	}
	left := *limit
	out := ds[:0]
	for _, d := range ds {
		if left <= 0 {
			break
		}
		if len(d.files) > left {
			d.files = d.files[:left]
		}
		left -= len(d.files)
		out = append(out, d)
	}
	return out
}

func refBuildGroup(md *spec.TableMetadata, d *refDraft, r Resolved) Group {
	ps, _ := md.SpecByID(int(d.part.specID))
	g := Group{
		SpecID:         int(d.part.specID),
		PartitionIndex: d.partitionIndex,
		Partition:      humanPartition(ps, md.CurrentSchema(), d.part.tuple),
		PartitionTuple: Tuple(d.part.tuple),
		Inputs:         make([]InputFile, 0, len(d.files)),
		Retire:         []DeleteRef{},
	}
	h := sha256.New()
	h.Write([]byte(d.part.key))
	h.Write([]byte{0})
	var outBytes float64
	for _, c := range d.files {
		df := &c.entry.Entry.DataFile
		h.Write([]byte(df.FilePath))
		h.Write([]byte{0})
		g.Inputs = append(g.Inputs, refInputFile(c))
		g.InputBytes += df.FileSizeInBytes
		g.InputRecords += df.RecordCount
		g.KnownDeletedRecords += c.knownDeleted
		kept := float64(df.FileSizeInBytes)
		if df.RecordCount > 0 {
			kept *= 1 - float64(c.knownDeleted)/float64(df.RecordCount)
		}
		outBytes += kept
	}
	g.ID = hex.EncodeToString(h.Sum(nil)[:8])
	g.InputFiles = len(g.Inputs)
	g.ExpectedOutputBytes = int64(outBytes + 0.5)
	g.ExpectedOutputFiles = expectedOutputFiles(g.InputBytes, r)
	g.SplitSize = inputSplitSize(g.InputBytes, r)
	return g
}

func refInputFile(c *refCandidate) InputFile {
	e := c.entry
	df := &e.Entry.DataFile
	f := InputFile{
		Path:               df.FilePath,
		FileFormat:         df.FileFormat,
		SizeBytes:          df.FileSizeInBytes,
		RecordCount:        df.RecordCount,
		DataSequenceNumber: e.DataSequenceNumber(),
		FileSequenceNumber: e.Entry.FileSequenceNumber,
		FirstRowID:         df.FirstRowID,
		Reasons:            c.reasons,
	}
	a := &c.applicable
	if a.DV != nil {
		ref := deleteRef(a.DV)
		f.Deletes.DV = &ref
	}
	for i := range a.PositionDeletes {
		f.Deletes.Position = append(f.Deletes.Position, deleteRef(&a.PositionDeletes[i]))
	}
	for i := range a.EqualityDeletes {
		f.Deletes.Equality = append(f.Deletes.Equality, deleteRef(&a.EqualityDeletes[i]))
	}
	return f
}

func refRetire(p *Plan, in *Input, md *spec.TableMetadata, all []*refCandidate) {
	groupPos := make(map[string]int, len(p.Groups))
	for i, g := range p.Groups {
		groupPos[g.ID] = i
	}
	type member struct {
		seq int64
		c   *refCandidate
	}
	type scope struct {
		files      []member // sorted by data sequence number
		minOutside int64    // lowest sequence number of a file not rewritten
	}
	byPath := make(map[string]*refCandidate, len(all))
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
		if ref := FileScoped(df); ref != "" {
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

func refFinish(t *Totals, p *Plan) {
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

// packLookback1 is Java's BinPacking.ListPacker with lookback 1 and
// largestBinFirst false: items are taken in order into one open bin; an
// item that does not fit (by weight or count) closes the bin and opens a
// new one. An item heavier than maxWeight gets a bin of its own.
func packLookback1[T any](items []T, weight func(T) int64, maxWeight, maxItems int64) [][]T {
	var bins [][]T
	var cur []T
	var curWeight int64
	for _, it := range items {
		w := weight(it)
		if len(cur) > 0 && (curWeight+w > maxWeight || curWeight+w < curWeight || int64(len(cur)) >= maxItems) {
			bins = append(bins, cur)
			cur, curWeight = nil, 0
		}
		cur = append(cur, it)
		curWeight += w
	}
	if len(cur) > 0 {
		bins = append(bins, cur)
	}
	return bins
}

// refDangling lists, with remove-dangling-deletes and a group to commit,
// the deletes table.DataReach finds dangling in the base that no group
// retires, by data sequence numbers only: the planner's records hold no
// file sequence number, so its list leaves out the position deletes that
// dangle because every file they could name was added after them (the
// commit removes those too).
func refDangling(p *Plan, in *Input, md *spec.TableMetadata) {
	if !p.Options.RemoveDanglingDeletes || len(p.Groups) == 0 {
		return
	}
	retired := map[table.FileKey]bool{}
	for _, g := range p.Groups {
		for _, r := range g.Retire {
			k := table.PathKey(r.Path)
			if r.ContentOffset != nil {
				k.ContentOffset = *r.ContentOffset
			}
			retired[k] = true
		}
	}
	byKey := map[table.FileKey]*table.FileEntry{}
	for i := range in.Deletes {
		byKey[in.Deletes[i].Key()] = &in.Deletes[i]
	}
	data := slices.Clone(in.Data)
	for i := range data {
		data[i].Entry.FileSequenceNumber = nil
	}
	for _, k := range table.NewDataReach(md, data).Dangling(in.Deletes, table.DataChange{}) {
		if retired[k] {
			continue
		}
		r := deleteRef(byKey[k])
		r.Reason = RetireDangling
		p.DanglingDeletes = append(p.DanglingDeletes, r)
	}
}
