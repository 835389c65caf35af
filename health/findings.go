package health

import (
	"fmt"
	"strings"
	"time"

	"github.com/icectl/icectl/internal/shared/bytesize"
)

// Command is an icectl command line: Verb is the command's path below
// icectl ("compact", "dv merge"), Args what follows it. Commands render
// it, adding the flags that choose the catalog, and recommend it only when
// this build has the verb: this package knows nothing of either.
type Command struct {
	Verb []string
	Args []string
}

// String is the command as icectl would run it, without catalog flags.
func (c Command) String() string {
	return strings.Join(append(append([]string{"icectl"}, c.Verb...), c.Args...), " ")
}

// Recommendations returns the command recommended for each kind of
// finding on table t of format version v with thresholds th: every
// command a report can recommend. The repair of partition values selects the damaged
// partitions with a --where the report builds (RepairWhere); the one
// here stands for its form.
func Recommendations(t string, th Thresholds, v int) map[string]Command {
	// Equality deletes are resolved where they apply, without rewriting
	// data: into position deletes on v2, into deletion vectors on v3.
	eq := Command{Verb: []string{"rewrite-equality-deletes"}, Args: []string{t}}
	if v >= 3 {
		eq = Command{Verb: []string{"dv", "merge"}, Args: []string{t, "--equality"}}
	}
	return map[string]Command{
		"resurrected-rows":         {Verb: []string{"dv", "merge"}, Args: []string{t, "--repair-resurrected"}},
		KindPartitionValues:        repairCommand(t, "a = 1 OR a IS NULL"),
		"small-files":              {Verb: []string{"compact"}, Args: []string{t}},
		"unsorted-files":           {Verb: []string{"compact"}, Args: []string{t, "--sort", "--rewrite-all"}},
		"delete-ratio":             {Verb: []string{"compact"}, Args: []string{t}},
		KindOtherSpecData:          {Verb: []string{"compact"}, Args: []string{t, "--output-spec", "current"}},
		"equality-deletes":         eq,
		"position-delete-files":    {Verb: []string{"dv", "merge"}, Args: []string{t}},
		"small-position-deletes":   {Verb: []string{"rewrite-position-deletes"}, Args: []string{t}},
		"small-manifests":          {Verb: []string{"rewrite-manifests"}, Args: []string{t}},
		"old-snapshots":            {Verb: []string{"expire"}, Args: []string{t, "--older-than", durationText(th.MaxSnapshotAge)}},
		"untracked-metadata-files": {Verb: []string{"orphan"}, Args: []string{t}},
		KindRowsPastRetention:      retentionCommand(t, `"event_ts" < TIMESTAMP '2024-01-01 00:00:00'`),
	}
}

// KindOtherSpecData is the finding of data files in another partition
// spec than the current one.
const KindOtherSpecData = "other-spec-data"

// findings lists what deserves action, in a fixed order, each with the
// icectl command recommended for it.
func findings(r *Report) []Finding {
	th, t := r.Thresholds, r.Table
	recs := Recommendations(t, th, r.FormatVersion)
	out := []Finding{}
	add := func(kind, format string, args ...any) {
		c := recs[kind]
		out = append(out, Finding{Kind: kind, Message: fmt.Sprintf(format, args...), Recommendation: c.String(), Command: c})
	}

	// Deleted rows that readers see again come first: they are wrong
	// answers today, not maintenance debt.
	if rs := r.Resurrected; rs.DataFiles > 0 {
		first := rs.Files[0]
		add("resurrected-rows",
			"%d deleted %s visible again in %d data %s: %s positions that older delete files deleted (first: %s, %d %s at %s, e.g. %s); repairing the deletion vectors is recommended",
			rs.Rows, plural(int(min(rs.Rows, 2)), "row is", "rows are"), rs.DataFiles, plural(rs.DataFiles, "file", "files"),
			plural(rs.DataFiles, "its deletion vector lacks", "their deletion vectors lack"), first.DataFile, first.Rows, plural(int(min(first.Rows, 2)), "row", "rows"),
			positionsText(first.FirstPositions, first.Rows), rowsText(first.FirstRows))
	}

	// So are rows that filtered reads miss: files whose metrics say their
	// identity partition column holds other values than their partition.
	if pv := r.PartitionValues; pv.DataFiles > 0 {
		first := pv.Partitions[0]
		sel := "rewriting the whole table, as no --where can select them by partition,"
		if pv.Where != "" {
			sel = "rewriting their partitions"
		}
		add(KindPartitionValues,
			"%d data %s (%d rows) in %d %s %s (first: spec %d %s, %s); engines that prune files on column metrics skip those rows. %s is recommended: the rewrite takes the value from the partition",
			pv.DataFiles, plural(pv.DataFiles, "file", "files"), pv.Rows, len(pv.Partitions), plural(len(pv.Partitions), "partition", "partitions"),
			plural(pv.DataFiles, "stores an identity partition column otherwise than its partition value", "store identity partition columns otherwise than their partition values"),
			first.SpecID, first.Partition, first.First, upperFirst(sel))
		c := repairCommand(t, pv.Where)
		out[len(out)-1].Command, out[len(out)-1].Recommendation = c, c.String()
	}

	var smallParts, smallFiles, ratioParts, unsortedParts, unsortedFiles, posParts, posFiles int
	for _, p := range r.Partitions {
		if p.Data.SmallFiles >= th.MinInputFiles {
			smallParts++
			smallFiles += p.Data.SmallFiles
		}
		if p.Data.Records > 0 && p.Deletes.DeleteRatio >= th.DeleteRatio {
			ratioParts++
		}
		if p.UnsortedFiles >= th.MinInputFiles {
			unsortedParts++
			unsortedFiles += p.UnsortedFiles
		}
		if p.Deletes.SmallPositionFiles >= th.MinPositionDeleteFiles {
			posParts++
			posFiles += p.Deletes.SmallPositionFiles
		}
	}
	if smallParts > 0 {
		add("small-files",
			"%d data files smaller than %s in %d %s with %d or more small files; compacting them is recommended",
			smallFiles, bytesize.Format(r.SmallFileBytes), smallParts, plural(smallParts, "partition", "partitions"), th.MinInputFiles)
	}
	if unsortedParts > 0 {
		add("unsorted-files",
			"%d data files not written in the table's sort order %d in %d %s with %d or more; compacting them sorted is recommended",
			unsortedFiles, *r.SortOrderID, unsortedParts, plural(unsortedParts, "partition", "partitions"), th.MinInputFiles)
	}
	if ratioParts > 0 {
		add("delete-ratio",
			"%d %s %s %s or more of %s rows deleted (table: %s); rewriting %s to apply the deletes is recommended",
			ratioParts, plural(ratioParts, "partition", "partitions"), plural(ratioParts, "has", "have"), percent(th.DeleteRatio),
			plural(ratioParts, "its", "their"), percent(r.Deletes.DeleteRatio), plural(ratioParts, "it", "them"))
	}
	if o := r.OtherSpecData; o.Files > 0 {
		add(KindOtherSpecData,
			"%d data %s holding %s %s in a partition spec other than the current one (spec %d), the layout the table had before; rewriting %s in the current spec is recommended when the old layout is no longer wanted",
			o.Files, plural(o.Files, "file", "files"), bytesize.Format(o.Bytes), plural(o.Files, "is", "are"), r.DefaultSpecID, plural(o.Files, "it", "them"))
	}
	if eq := r.Deletes.Equality; eq.Count > 0 {
		add("equality-deletes",
			"%d equality delete %s (%d delete keys) %s applied on every read; converting %s into %s for the data files %s hit is recommended",
			eq.Count, plural(eq.Count, "file", "files"), eq.Records, plural(eq.Count, "is", "are"), plural(eq.Count, "it", "them"),
			map[bool]string{false: "position deletes", true: "deletion vectors"}[r.FormatVersion >= 3], plural(eq.Count, "it", "they"))
	}
	if pos := r.Deletes.Position; r.FormatVersion >= 3 && pos.Count > 0 {
		add("position-delete-files",
			"%d position delete %s in a v3 table; merging %s into deletion vectors is recommended",
			pos.Count, plural(pos.Count, "file", "files"), plural(pos.Count, "it", "them"))
	}
	if r.FormatVersion == 2 && posParts > 0 {
		add("small-position-deletes",
			"%d position delete files smaller than %s in %d %s with %d or more, each opened on every read; merging them is recommended",
			posFiles, bytesize.Format(th.DeleteTargetFileSize), posParts, plural(posParts, "partition", "partitions"), th.MinPositionDeleteFiles)
	}
	if m := r.Manifests; m.SmallManifests >= th.MinSmallManifests {
		add("small-manifests",
			"%d of %d manifests are smaller than %s; rewriting the manifests is recommended",
			m.SmallManifests, m.Count, bytesize.Format(m.SmallBelowBytes))
	}
	if s := r.Snapshots; s.Expirable > 0 && s.Count > th.MinSnapshotsToKeep {
		age := durationText(th.MaxSnapshotAge)
		add("old-snapshots",
			"%d of %d snapshots are older than %s; expiring them is recommended", s.Expirable, s.Count, age)
	}
	if m := r.MetadataFiles; !m.DeleteAfterCommit && m.LogEntries >= m.PreviousVersionsMax {
		add("untracked-metadata-files",
			"the metadata log is full (%d entries) and %s is off, so older metadata files stay in storage untracked; removing orphan files is recommended",
			m.LogEntries, PropDeleteAfterCommit)
	}
	if msg, c, ok := retentionFinding(t, r.Retention); ok {
		out = append(out, Finding{Kind: KindRowsPastRetention, Message: msg, Recommendation: c.String(), Command: c})
	}
	return out
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func percent(f float64) string {
	return fmt.Sprintf("%.1f%%", f*100)
}

// durationText spells a duration as the --older-than flag reads it: whole
// days, hours, minutes or seconds.
func durationText(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", (d+time.Second-1)/time.Second)
}

func positionsText(ps []int64, total int64) string {
	s := fmt.Sprint(ps)
	if int64(len(ps)) < total {
		s = s[:len(s)-1] + " ...]"
	}
	return "positions " + s
}

func rowsText(rows []string) string {
	if len(rows) == 0 {
		return "(rows not read)"
	}
	return strings.Join(rows, "; ")
}
