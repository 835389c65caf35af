package plan

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/icectl/icectl/internal/shared/bytesize"
)

// WriteText writes a human summary of the plan: the base, the options, one
// line per group and the totals.
func (p *Plan) WriteText(w io.Writer) error {
	var b strings.Builder
	base := "none (empty table)"
	if p.Base != nil {
		base = fmt.Sprintf("snapshot %d (sequence number %d)", p.Base.SnapshotID, p.Base.SequenceNumber)
	}
	name := p.Name
	if name == "" {
		name = p.Location
	}
	fmt.Fprintf(&b, "Compaction plan for table %s, branch %s, based on %s\n", name, p.Branch, base)
	o := p.Options
	fmt.Fprintf(&b, "Target %s, min %s, max %s; min input files %d, max group %s, job order %s\n",
		bytesize.Format(o.TargetFileSize), bytesize.Format(o.MinFileSize), bytesize.Format(o.MaxFileSize),
		o.MinInputFiles, bytesize.Format(o.MaxFileGroupSize), o.JobOrder)
	if o.Where != "" {
		fmt.Fprintf(&b, "Where %s\n", o.Where)
	}
	if o.OutputSpecID != nil {
		fmt.Fprintf(&b, "Output spec %d: files of other specs are rewritten into its partitions\n", *o.OutputSpecID)
	}
	if len(p.Groups) == 0 {
		fmt.Fprintf(&b, "%s: nothing to compact: %d live data files, %d candidates, no group met the thresholds.\n",
			name, p.Totals.LiveDataFiles, p.Totals.CandidateFiles)
		_, err := io.WriteString(w, b.String())
		return err
	}
	// The partition column is as wide as its longest value: partitions
	// are never cut.
	width, bytesWidth := len("partition"), len("bytes")
	parts := make([]string, len(p.Groups))
	sizes := make([]string, len(p.Groups))
	for i, g := range p.Groups {
		parts[i] = g.PartitionText
		if parts[i] == "" {
			parts[i] = formatPartition(g.Partition)
		}
		sizes[i] = bytesize.Format(g.InputBytes)
		width, bytesWidth = max(width, len(parts[i])), max(bytesWidth, len(sizes[i]))
	}
	fmt.Fprintf(&b, "\n%-4s %-16s %-5s %-*s %7s %*s %7s %8s\n", "#", "group", "spec", width, "partition", "files", bytesWidth, "bytes", "outputs", "retires")
	for i, g := range p.Groups {
		fmt.Fprintf(&b, "%-4d %-16s %-5d %-*s %7d %*s %7d %8d\n", g.Index, g.ID, g.SpecID,
			width, parts[i], g.InputFiles, bytesWidth, sizes[i], g.ExpectedOutputFiles, len(g.Retire))
	}
	t := p.Totals
	fmt.Fprintf(&b, "\n%d groups: %d of %d live data files, %d rows, %s, into about %d files of %s in all.\n",
		t.Groups, t.InputFiles, t.LiveDataFiles, t.InputRecords, bytesize.Format(t.InputBytes), t.ExpectedOutputFiles, bytesize.Format(t.ExpectedOutputBytes))
	fmt.Fprintf(&b, "Deletes: %d delete files apply, %d will be retired", t.DeleteFilesApplied, t.DeleteFilesRetired)
	if n := len(p.RetireAfterGroups); n > 0 {
		fmt.Fprintf(&b, " (%d only once several groups commit)", n)
	}
	b.WriteString(".\n")
	if n := len(p.DanglingDeletes); n > 0 {
		// Every one is named: a dry run says what it would remove.
		fmt.Fprintf(&b, "Dangling deletes (remove-dangling-deletes): %d delete files apply to no live data file and will be removed:\n", n)
		for _, d := range p.DanglingDeletes {
			fmt.Fprintf(&b, "  %s\n", deleteRefKey(d))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// formatPartition renders a partition of a plan read back from JSON,
// which keeps the values by name only: in name order.
func formatPartition(m map[string]any) string {
	if len(m) == 0 {
		return "(unpartitioned)"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := m[k]
		if v == nil {
			v = "null"
		}
		parts[i] = fmt.Sprintf("%s=%v", k, v)
	}
	return strings.Join(parts, "/")
}

// deleteRefKey is a delete file's path, with @offset for a DV.
func deleteRefKey(d DeleteRef) string {
	if d.ContentOffset != nil {
		return fmt.Sprintf("%s@%d", d.Path, *d.ContentOffset)
	}
	return d.Path
}
