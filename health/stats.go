package health

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/partstats"
)

// ErrNoPartitionStats is wrapped by ReadStatsInput's error for a current
// snapshot without a partition statistics file.
var ErrNoPartitionStats = errors.New("no partition statistics file")

// BasisPartitionStats is Report.Basis for a report judged from the
// partition statistics file (ReadStatsInput) rather than the manifests.
const BasisPartitionStats = "partition-statistics"

// statsNotJudged is what a report from partition statistics cannot say,
// told with every such report.
const statsNotJudged = "judged from partition statistics: file sizes are each partition's average, every position-delete file counts as small, and unsorted files, resurrected rows and partition values are not judged; run without --from-stats for the manifests' exact report"

// ReadStatsInput reads what Analyze needs to judge t's current snapshot
// without its manifests: the manifest list and the snapshot's partition
// statistics file (which `icectl stats partitions` writes). On a table
// with millions of files that is two reads instead of every manifest.
// A snapshot without a file is an error wrapping ErrNoPartitionStats; a
// file that cannot be read is an error.
func ReadStatsInput(ctx context.Context, t *metastore.Table, now time.Time) (Input, error) {
	md := t.Metadata
	th, err := ThresholdsFor(md)
	if err != nil {
		return Input{}, &PropertyError{Err: err}
	}
	in := Input{Table: t.Ident.String(), Metadata: md, Now: now, Thresholds: th, FromStats: true}
	snap := md.CurrentSnapshot()
	if snap == nil {
		return in, nil
	}
	f, ok := partstats.Registered(md, snap.SnapshotID)
	if !ok {
		return Input{}, fmt.Errorf("table %s: snapshot %d: %w", t.Ident, snap.SnapshotID, ErrNoPartitionStats)
	}
	if in.Manifests, err = table.ManifestFiles(ctx, t.IO, snap); err != nil {
		return Input{}, fmt.Errorf("table %s: %w", t.Ident, err)
	}
	rows, err := partstats.Read(ctx, t.IO, md, f)
	if err != nil {
		return Input{}, fmt.Errorf("table %s: %w", t.Ident, err)
	}
	in.PartitionStats = &PartitionStats{File: f, Rows: rows}
	return in, nil
}

// addStats fills r's file and delete figures from the rows of a
// partition statistics file, through partition, which finds the report's
// partition of a spec's tuple.
func addStats(r *Report, md *spec.TableMetadata, ps *PartitionStats, partition func(specID int32, tuple []any) *Partition) {
	r.Basis, r.PartitionStatistics = BasisPartitionStats, ps.File.StatisticsPath
	r.Data.Histogram = nil
	// partstats.Read built the same type to read the rows; nil (an
	// unpartitioned table) gives every partition field a null value.
	ut, _ := partstats.PartitionType(md)
	for _, row := range ps.Rows {
		p := partition(row.SpecID, specTuple(ut, md, row))
		p.Data.Histogram = nil
		files := int(row.DataFileCount)
		small := 0
		if files > 0 && row.TotalDataFileSizeInBytes/int64(files) < r.SmallFileBytes {
			small = files
		}
		for _, s := range []*FileStats{&r.Data, &p.Data} {
			s.Files += files
			s.Records += row.DataRecordCount
			s.Bytes += row.TotalDataFileSizeInBytes
			s.SmallFiles += small
		}
		for _, d := range []*DeleteStats{&r.Deletes, &p.Deletes} {
			// The file counts position-delete files and DVs together in
			// its record count; its file count is the position-delete
			// files'.
			d.Position.Count += int(row.PositionDeleteFileCount)
			d.DV.Count += int(row.DVCount)
			d.DeletedRows += row.PositionDeleteRecordCount
			d.Equality.Count += int(row.EqualityDeleteFileCount)
			d.Equality.Records += row.EqualityDeleteRecordCount
			d.SmallPositionFiles += int(row.PositionDeleteFileCount)
			if row.DVCount == 0 {
				d.Position.Records += row.PositionDeleteRecordCount
			} else if row.PositionDeleteFileCount == 0 {
				d.DV.Records += row.PositionDeleteRecordCount
			}
		}
	}
	r.Notes = append(r.Notes, fmt.Sprintf("table %s: %s", r.Table, statsNotJudged))
}

// specTuple is row's partition in the tuple of its own spec: the unified
// type's value of each of the spec's fields (by partition field id), nil
// for a field the unified type left out (its source column was dropped).
func specTuple(ut *spec.StructType, md *spec.TableMetadata, row partstats.Row) []any {
	ps, ok := md.SpecByID(int(row.SpecID))
	if !ok {
		return row.Partition
	}
	tuple := make([]any, len(ps.Fields))
	if ut == nil {
		return tuple
	}
	for j, pf := range ps.Fields {
		for i, f := range ut.Fields {
			if f.ID == pf.FieldID && i < len(row.Partition) {
				tuple[j] = row.Partition[i]
			}
		}
	}
	return tuple
}
