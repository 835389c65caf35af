package health

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/partstats"
)

const mib = 1 << 20

// bucketBounds are the lower bounds of the size histogram's buckets.
var bucketBounds = [...]struct {
	label string
	min   int64
}{
	{"<1MiB", 0}, {"1-16MiB", 1 * mib}, {"16-128MiB", 16 * mib}, {"128-512MiB", 128 * mib}, {">=512MiB", 512 * mib},
}

func newHistogram() []Bucket {
	h := make([]Bucket, len(bucketBounds))
	for i, b := range bucketBounds {
		h[i] = Bucket{Label: b.label, MinBytes: b.min}
		if i+1 < len(bucketBounds) {
			max := bucketBounds[i+1].min
			h[i].MaxBytes = &max
		}
	}
	return h
}

func (s *FileStats) add(size, records int64, small bool) {
	s.Files++
	s.Records += records
	s.Bytes += size
	if small {
		s.SmallFiles++
	}
	i := len(s.Histogram) - 1
	for i > 0 && size < s.Histogram[i].MinBytes {
		i--
	}
	s.Histogram[i].Files++
	s.Histogram[i].Bytes += size
}

func (k *KindStats) add(df *manifest.DataFile) {
	k.Count++
	k.Records += df.RecordCount
	if df.ContentSizeInBytes != nil {
		k.Bytes += *df.ContentSizeInBytes
	} else {
		k.Bytes += df.FileSizeInBytes
	}
}

func (d *DeleteStats) add(df *manifest.DataFile, smallBelow int64) {
	switch {
	case table.IsDV(df):
		d.DV.add(df)
		d.DeletedRows += df.RecordCount
	case df.Content == manifest.ContentPositionDeletes:
		d.Position.add(df)
		d.DeletedRows += df.RecordCount
		if df.FileSizeInBytes < smallBelow {
			d.SmallPositionFiles++
		}
	case df.Content == manifest.ContentEqualityDeletes:
		d.Equality.add(df)
	}
}

func (d *DeleteStats) ratio(dataRecords int64) {
	if dataRecords > 0 {
		d.DeleteRatio = float64(d.DeletedRows) / float64(dataRecords)
	}
}

// Analyze computes the health report of in. It is deterministic: the same
// input gives the same report, partitions sorted by spec id then
// partition text, findings in a fixed order.
func Analyze(in Input) Report {
	md, th := in.Metadata, in.Thresholds
	r := Report{
		Table:          in.Table,
		FormatVersion:  md.FormatVersion,
		SnapshotID:     md.CurrentSnapshotID,
		NowMS:          in.Now.UnixMilli(),
		Thresholds:     th,
		SmallFileBytes: int64(float64(th.TargetFileSize) * th.SmallFileFraction),
		Data:           FileStats{Histogram: newHistogram()},
		Partitions:     []Partition{},
		Findings:       []Finding{},
	}

	type key struct {
		spec int
		text string
	}
	parts := map[key]*Partition{}
	partitionOf := func(specID int32, tuple []any) *Partition {
		ps, _ := md.SpecByID(int(specID))
		k := key{int(specID), PartitionText(ps, tuple)}
		p := parts[k]
		if p == nil {
			p = &Partition{SpecID: k.spec, Partition: k.text, Data: FileStats{Histogram: newHistogram()}}
			parts[k] = p
		}
		return p
	}
	partition := func(df *manifest.DataFile) *Partition { return partitionOf(df.SpecID, df.Partition) }
	if order, ok := md.SortOrderByID(md.DefaultSortOrderID); ok && len(order.Fields) > 0 {
		id := order.OrderID
		r.SortOrderID = &id
	}
	if in.Files != nil {
		for _, e := range in.Files.Data {
			df := &e.Entry.DataFile
			small := df.FileSizeInBytes < r.SmallFileBytes
			r.Data.add(df.FileSizeInBytes, df.RecordCount, small)
			p := partition(df)
			p.Data.add(df.FileSizeInBytes, df.RecordCount, small)
			if r.SortOrderID != nil && (df.SortOrderID == nil || int(*df.SortOrderID) != *r.SortOrderID) {
				r.UnsortedFiles++
				p.UnsortedFiles++
			}
		}
		for _, e := range in.Files.Deletes {
			df := &e.Entry.DataFile
			r.Deletes.add(df, th.DeleteTargetFileSize)
			partition(df).Deletes.add(df, th.DeleteTargetFileSize)
		}
	}
	if in.Files == nil && in.FromStats && in.PartitionStats != nil {
		addStats(&r, md, in.PartitionStats, partitionOf)
	}
	r.Deletes.ratio(r.Data.Records)
	r.Resurrected.Files = []ResurrectedFile{}
	for _, f := range in.Resurrected {
		r.Resurrected.DataFiles++
		r.Resurrected.Rows += f.Rows
		r.Resurrected.Files = append(r.Resurrected.Files, f)
	}
	for _, p := range parts {
		p.Deletes.ratio(p.Data.Records)
		r.Partitions = append(r.Partitions, *p)
	}
	slices.SortFunc(r.Partitions, func(a, b Partition) int {
		return cmp.Or(cmp.Compare(a.SpecID, b.SpecID), cmp.Compare(a.Partition, b.Partition))
	})
	r.DefaultSpecID = md.DefaultSpecID
	for _, p := range r.Partitions {
		if p.SpecID != md.DefaultSpecID {
			r.OtherSpecData.Files += p.Data.Files
			r.OtherSpecData.Bytes += p.Data.Bytes
		}
	}

	r.Manifests.SmallBelowBytes = int64(float64(th.ManifestTargetSize) * th.SmallFileFraction)
	for _, mf := range in.Manifests {
		r.Manifests.Count++
		r.Manifests.Bytes += mf.Length
		if mf.Content == manifest.ManifestContentDeletes {
			r.Manifests.DeleteManifests++
		} else {
			r.Manifests.DataManifests++
		}
		if mf.Length < r.Manifests.SmallBelowBytes {
			r.Manifests.SmallManifests++
		}
	}

	r.Snapshots.Count = len(md.Snapshots)
	snapTimes := make([]int64, len(md.Snapshots))
	for i, s := range md.Snapshots {
		snapTimes[i] = s.TimestampMS
	}
	r.Snapshots.PerDay = perDay(snapTimes)
	cutoff := in.Now.Add(-th.MaxSnapshotAge).UnixMilli()
	for _, s := range md.Snapshots {
		if r.Snapshots.OldestMS == nil || s.TimestampMS < *r.Snapshots.OldestMS {
			ts := s.TimestampMS
			r.Snapshots.OldestMS = &ts
		}
		current := md.CurrentSnapshotID != nil && *md.CurrentSnapshotID == s.SnapshotID
		if s.TimestampMS < cutoff && !current {
			r.Snapshots.Expirable++
		}
	}
	if r.Snapshots.OldestMS != nil {
		age := r.NowMS - *r.Snapshots.OldestMS
		r.Snapshots.OldestAgeMS = &age
	}

	r.MetadataFiles = MetadataStats{
		Count:               1 + len(md.MetadataLog),
		LogEntries:          len(md.MetadataLog),
		PreviousVersionsMax: th.PreviousVersionsMax,
		DeleteAfterCommit:   th.DeleteAfterCommit,
	}
	logTimes := make([]int64, len(md.MetadataLog))
	for i, e := range md.MetadataLog {
		logTimes[i] = e.TimestampMS
	}
	r.MetadataFiles.LogPerDay = perDay(logTimes)
	r.PartitionValues = partitionValues(in, &r.Notes)
	r.Retention = retention(in)
	r.Findings = findings(&r)
	checkPartitionStats(&r, in)
	return r
}

// perDay counts timestamps (epoch milliseconds) by UTC day, oldest first.
func perDay(ms []int64) []DayCount {
	out := []DayCount{}
	counts := map[string]int{}
	for _, t := range ms {
		day := time.UnixMilli(t).UTC().Format(time.DateOnly)
		if counts[day] == 0 {
			out = append(out, DayCount{Day: day})
		}
		counts[day]++
	}
	for i := range out {
		out[i].Count = counts[out[i].Day]
	}
	slices.SortFunc(out, func(a, b DayCount) int { return cmp.Compare(a.Day, b.Day) })
	return out
}

// checkPartitionStats compares the partition statistics file of the
// input with the live files' counts: the report names a file that agrees
// and notes one that does not. The report itself is the live files'
// either way: the file does not carry each file's size (the histogram,
// small files) nor delete-file bytes, so it cannot replace reading them.
func checkPartitionStats(r *Report, in Input) {
	r.Notes = append(r.Notes, in.Notes...)
	ps := in.PartitionStats
	if ps == nil || in.Files == nil {
		return
	}
	b, err := partstats.NewBuilder(in.Metadata)
	if err == nil {
		for _, set := range [][]table.FileEntry{in.Files.Data, in.Files.Deletes} {
			for i := range set {
				if err = b.Add(set[i].Entry.DataFile.SpecID, &set[i].Entry, false); err != nil {
					break
				}
			}
		}
	}
	if err == nil {
		if d := partstats.Diff(ps.Rows, b.Rows()); d != "" {
			err = fmt.Errorf("disagrees with the manifests (%s)", d)
		}
	}
	if err != nil {
		r.Notes = append(r.Notes, fmt.Sprintf("table %s: partition statistics of snapshot %d, %s: %v; the report is the manifests' alone",
			r.Table, ps.File.SnapshotID, ps.File.StatisticsPath, err))
		return
	}
	r.PartitionStatistics = ps.File.StatisticsPath
}
