package plan

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan/where"
)

// candidate is one live data file with what the planner learned about it.
type candidate struct {
	entry        *table.FileEntry
	applicable   table.Applicable
	reasons      []string
	deleteHeavy  bool // too many deletes or too high a delete ratio
	knownDeleted int64
	partKey      string // table.PartitionKey of spec id and tuple
	groupID      string // set once the file is in a final group
}

func (c *candidate) size() int64 { return c.entry.Entry.DataFile.FileSizeInBytes }

// partition holds the candidates of one (spec id, partition tuple).
type partition struct {
	key    string
	specID int32
	tuple  []any
	cands  []*candidate
}

// draft is a group before ids and job order are final.
type draft struct {
	part           *partition
	files          []*candidate
	partitionIndex int
}

func (d *draft) bytes() int64 {
	var n int64
	for _, c := range d.files {
		n += c.size()
	}
	return n
}

// New computes the compaction plan of in with options r at time now. It is
// deterministic: the order of in.Data and in.Deletes does not matter.
func New(in *Input, r Resolved, now time.Time) (*Plan, error) {
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
		Table: TableRef{UUID: md.TableUUID, Location: md.Location,
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
	if err := checkInput(in); err != nil {
		return nil, err
	}

	index := table.DeletesForTable(md, &table.FileSet{Deletes: in.Deletes})
	parts, all, selected, err := collect(in, r, filter, index)
	if err != nil {
		return nil, err
	}
	p.Totals.LiveDataFiles = len(in.Data)
	p.Totals.SelectedByWhere = selected

	var drafts []*draft
	for _, part := range parts {
		var cands []*candidate
		for _, c := range part.cands {
			if len(c.reasons) > 0 {
				cands = append(cands, c)
			}
		}
		p.Totals.CandidateFiles += len(cands)
		bins := packLookback1(cands, (*candidate).size, r.MaxFileGroupSize, r.MaxFileGroupInputFiles)
		n := 0
		for _, bin := range bins {
			if !r.RewriteAll && !keepGroup(bin, r) {
				continue
			}
			n++
			drafts = append(drafts, &draft{part: part, files: bin, partitionIndex: n})
		}
	}
	sortDrafts(drafts, r.JobOrder)
	if r.MaxFilesToRewrite != nil {
		// The cap prefers groups early in job order; a truncated group
		// may then need to move, so sort again.
		drafts = capFiles(drafts, r.MaxFilesToRewrite)
		sortDrafts(drafts, r.JobOrder)
	}

	for i, d := range drafts {
		g := buildGroup(md, d, r)
		g.Index = i + 1
		for _, c := range d.files {
			c.groupID = g.ID
		}
		p.Groups = append(p.Groups, g)
	}
	retire(p, in, md, all)
	p.Totals.finish(p)
	return p, nil
}

// checkInput refuses inputs the plan could not account for.
func checkInput(in *Input) error {
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
func collect(in *Input, r Resolved, filter *where.Filter, index *table.DeleteIndex) ([]*partition, []*candidate, int, error) {
	md := in.Metadata
	byKey := map[string]*partition{}
	filters := map[int32]*where.PartitionFilter{}
	all := make([]*candidate, 0, len(in.Data))
	selected := 0
	for i := range in.Data {
		e := &in.Data[i]
		df := &e.Entry.DataFile
		c := &candidate{entry: e, partKey: table.PartitionKey(df.SpecID, df.Partition)}
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
			match, err := pf.Match(df.Partition)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("where: data file %s: %w", df.FilePath, err)
			}
			if !match {
				continue
			}
		}
		selected++
		part := byKey[c.partKey]
		if part == nil {
			part = &partition{key: c.partKey, specID: df.SpecID, tuple: df.Partition}
			byKey[c.partKey] = part
		}
		part.cands = append(part.cands, c)
		evaluate(c, index, r)
	}
	parts := make([]*partition, 0, len(byKey))
	for _, part := range byKey {
		// Java packs in scan order; a canonical order keeps plans
		// deterministic and keeps files written together in one group.
		slices.SortFunc(part.cands, func(a, b *candidate) int {
			if c := cmp.Compare(a.entry.DataSequenceNumber(), b.entry.DataSequenceNumber()); c != 0 {
				return c
			}
			return cmp.Compare(a.entry.Entry.DataFile.FilePath, b.entry.Entry.DataFile.FilePath)
		})
		parts = append(parts, part)
	}
	slices.SortFunc(parts, func(a, b *partition) int {
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
func evaluate(c *candidate, index *table.DeleteIndex, r Resolved) {
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
		if fileScoped(&a.PositionDeletes[i].Entry.DataFile) != "" {
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

// fileScoped returns the one data file a position-delete file or DV
// references, or "" when it may reference several: Java's
// ContentFileUtil.referencedDataFile (referenced_data_file, else equal
// lower and upper bounds of the file_path column).
func fileScoped(df *manifest.DataFile) string {
	if df.Content != manifest.ContentPositionDeletes {
		return ""
	}
	if df.ReferencedDataFile != nil {
		return *df.ReferencedDataFile
	}
	lo, okLo := df.LowerBounds[spec.FieldIDFilePath]
	hi, okHi := df.UpperBounds[spec.FieldIDFilePath]
	if okLo && okHi && string(lo) == string(hi) {
		return string(lo)
	}
	return ""
}

// keepGroup is Java's filterFileGroups.
func keepGroup(files []*candidate, r Resolved) bool {
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
func sortDrafts(ds []*draft, order JobOrder) {
	slices.SortStableFunc(ds, func(a, b *draft) int {
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
func capFiles(ds []*draft, limit *int) []*draft {
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

func buildGroup(md *spec.TableMetadata, d *draft, r Resolved) Group {
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
		g.Inputs = append(g.Inputs, inputFile(c))
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

func inputFile(c *candidate) InputFile {
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

func deleteRef(e *table.FileEntry) DeleteRef {
	df := &e.Entry.DataFile
	ref := DeleteRef{
		Path:               df.FilePath,
		ContentOffset:      df.ContentOffset,
		ContentSizeBytes:   df.ContentSizeInBytes,
		SizeBytes:          df.FileSizeInBytes,
		RecordCount:        df.RecordCount,
		DataSequenceNumber: e.DataSequenceNumber(),
		SpecID:             int(df.SpecID),
		ReferencedDataFile: df.ReferencedDataFile,
		EqualityIDs:        df.EqualityIDs,
	}
	switch {
	case table.IsDV(df):
		ref.Content, ref.FileScoped = ContentDV, true
	case df.Content == manifest.ContentEqualityDeletes:
		ref.Content = ContentEquality
	default:
		ref.Content = ContentPosition
		ref.FileScoped = fileScoped(df) != ""
	}
	return ref
}

// expectedOutputFiles is Java's SizeBasedFileRewritePlanner rule: keep a
// remainder file when it exceeds the min size, otherwise spread it over the
// other files if their average stays under min(1.1 x target, write max).
func expectedOutputFiles(inputSize int64, r Resolved) int {
	target := r.TargetFileSize
	if inputSize < target {
		return 1
	}
	withRemainder := (inputSize + target - 1) / target
	if inputSize%target == 0 {
		withRemainder = inputSize / target
	}
	withoutRemainder := inputSize / target
	avgWithout := inputSize / withoutRemainder
	switch {
	case inputSize%target > r.MinFileSize:
		return int(withRemainder)
	case float64(avgWithout) < min(1.1*float64(target), float64(r.WriteMaxFileSize)):
		return int(withoutRemainder)
	}
	return int(withRemainder)
}

// splitOverhead is Java's SPLIT_OVERHEAD.
const splitOverhead = 5 * 1024

// inputSplitSize is Java's inputSplitSize: the input divided by the
// expected outputs, at least the target and at most the write max size.
func inputSplitSize(inputSize int64, r Resolved) int64 {
	est := inputSize/int64(expectedOutputFiles(inputSize, r)) + splitOverhead
	if est < r.TargetFileSize {
		return r.TargetFileSize
	}
	return min(est, r.WriteMaxFileSize)
}
