package verify

import (
	"context"
	"fmt"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// Kinds of partition violations.
const (
	// PartitionValuesMismatch: a live data file stores its identity
	// partition source column otherwise than its partition value (issue
	// 36: all null after a compaction of a Hive-migrated table).
	PartitionValuesMismatch = "partition-values-mismatch"
	// PartitionValuesUnchecked: a data file whose metrics do not decide
	// could not be read to check it.
	PartitionValuesUnchecked = "partition-values-unchecked"
)

// PartitionsOptions say what Partitions checks.
type PartitionsOptions struct {
	// MetricsOnly never reads a data file: fields the metrics do not
	// decide are counted as Undecided.
	MetricsOnly   bool
	MaxViolations int
}

// PartitionsReport is the outcome of Partitions; its JSON form is the
// output of `icectl verify partitions --output json`.
type PartitionsReport struct {
	SnapshotID *int64 `json:"snapshot_id"`
	DataFiles  int    `json:"data_files"`
	// IdentityFields is how many (data file, identity partition field)
	// pairs were judged; FilesRead the data files read because their
	// metrics did not decide; Undecided the pairs left undecided
	// (MetricsOnly).
	IdentityFields int   `json:"identity_fields"`
	FilesRead      int   `json:"files_read"`
	Undecided      int   `json:"undecided"`
	DamagedFiles   int   `json:"damaged_files"`
	DamagedRows    int64 `json:"damaged_file_rows"`
	// Problems lists every disagreement, in live file order.
	Problems   []table.PartitionValueProblem `json:"problems"`
	Violations int64                         `json:"violations"`
	First      []Violation                   `json:"first_violations"`
}

// OK reports whether no invariant was broken.
func (r *PartitionsReport) OK() bool { return r.Violations == 0 }

// Partitions checks that every live data file of snap stores the source
// column of each identity field of its spec (the spec its manifest names)
// as the file's partition value, or does not store it at all (readers
// then take the partition value: a Hive-migrated file). It judges by the
// column metrics and reads the column from the files whose metrics do
// not decide (none for the column, or counts without bounds).
func Partitions(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, snap *spec.Snapshot, opts PartitionsOptions) (*PartitionsReport, error) {
	maxV := opts.MaxViolations
	if maxV <= 0 {
		maxV = DefaultMaxViolations
	}
	r := &PartitionsReport{Problems: []table.PartitionValueProblem{}, First: []Violation{}}
	violate := func(kind, format string, args ...any) {
		r.Violations++
		if len(r.First) < maxV {
			r.First = append(r.First, Violation{Kind: kind, Message: fmt.Sprintf(format, args...)})
		}
	}
	if snap == nil {
		return r, nil
	}
	id := snap.SnapshotID
	r.SnapshotID = &id
	fs, err := table.LiveFiles(ctx, fio, snap)
	if err != nil {
		return nil, fmt.Errorf("verify partitions: %w", err)
	}
	r.DataFiles = len(fs.Data)
	pc := table.NewPartitionChecker(md)
	for _, e := range fs.Data {
		df := &e.Entry.DataFile
		ps, undecided, err := pc.Metrics(df)
		if err != nil {
			return nil, fmt.Errorf("verify partitions: %w", err)
		}
		r.IdentityFields += pc.IdentityFields(df)
		if len(undecided) > 0 && opts.MetricsOnly {
			r.Undecided += len(undecided)
		} else if len(undecided) > 0 {
			r.FilesRead++
			read, err := pc.File(ctx, fio, df, undecided)
			if err != nil {
				violate(PartitionValuesUnchecked, "%s (spec %d, %s): its metrics do not decide and it cannot be read: %v",
					df.FilePath, df.SpecID, spec.PartitionText(specOf(md, df.SpecID), df.Partition), err)
			}
			ps = append(ps, read...)
		}
		if len(ps) > 0 {
			r.DamagedFiles++
			r.DamagedRows += df.RecordCount
		}
		for _, p := range ps {
			r.Problems = append(r.Problems, p)
			violate(PartitionValuesMismatch, "%s (spec %d, %s): partition field %s: %s",
				p.DataFile, p.SpecID, spec.PartitionText(specOf(md, p.SpecID), p.Partition), p.Field, p.Detail)
		}
	}
	return r, nil
}

func specOf(md *spec.TableMetadata, id int32) *spec.PartitionSpec {
	ps, _ := md.SpecByID(int(id))
	return ps
}
