package health

import (
	"fmt"
	"strconv"
	"time"

	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/plan"
)

// Table properties the thresholds come from, with Java's defaults. Those
// another package reads are that package's names and defaults, so that
// health judges a table by the values its writers and verbs use.
const (
	PropTargetFileSize      = plan.PropertyTargetFileSize
	PropManifestTargetSize  = table.PropManifestTargetSize
	PropMaxSnapshotAgeMS    = "history.expire.max-snapshot-age-ms"
	PropMinSnapshotsToKeep  = "history.expire.min-snapshots-to-keep"
	PropPreviousVersionsMax = spec.PropMetadataPreviousVersionsMax
	PropDeleteAfterCommit   = reclaim.PropDeleteAfterCommit
	PropDeleteTargetSize    = table.PropDeleteTargetFileSize

	DefaultTargetFileSize      = plan.DefaultTargetFileSize
	DefaultManifestTargetSize  = table.DefaultManifestTargetSize
	DefaultMaxSnapshotAge      = 5 * 24 * time.Hour
	DefaultMinSnapshotsToKeep  = 1
	DefaultPreviousVersionsMax = spec.DefaultMetadataPreviousVersionsMax
	DefaultDeleteTargetSize    = table.DefaultDeleteTargetFileSize
)

// Thresholds decide what counts as a finding.
type Thresholds struct {
	// TargetFileSize is the data file size writers aim for.
	TargetFileSize int64
	// SmallFileFraction: a data file below this fraction of TargetFileSize
	// is small (0.75, the default of Java's rewrite min-file-size).
	SmallFileFraction float64
	// MinInputFiles is how many small files a partition needs before
	// compacting it is worth a commit (5, Java's min-input-files); a
	// partition with this many data files not written in the table's sort
	// order is worth a sorting compaction.
	MinInputFiles int
	// DeleteTargetFileSize is the size position-delete files aim for; a
	// smaller one is small.
	DeleteTargetFileSize int64
	// MinPositionDeleteFiles is how many small position-delete files a
	// partition of a v2 table needs before merging them is worth a commit
	// (5, Spark's rewrite_position_delete_files min-input-files).
	MinPositionDeleteFiles int
	// DeleteRatio is the share of deleted rows in a partition from which
	// rewriting it pays (0.3, Java's delete-ratio-threshold).
	DeleteRatio float64
	// ManifestTargetSize is the manifest size writers aim for; a manifest
	// below SmallFileFraction of it is small.
	ManifestTargetSize int64
	// MinSmallManifests is how many small manifests make rewriting them
	// worth it.
	MinSmallManifests int
	// MaxSnapshotAge and MinSnapshotsToKeep are the table's expiry
	// settings: older snapshots are due for expiry.
	MaxSnapshotAge     time.Duration
	MinSnapshotsToKeep int
	// PreviousVersionsMax is how many old metadata files the log keeps.
	PreviousVersionsMax int
	// DeleteAfterCommit: the writers delete metadata files that fall off
	// the log.
	DeleteAfterCommit bool
}

// ThresholdsFor returns the thresholds of a table: the defaults above,
// overridden by the table's properties. A malformed property is an error
// naming it.
func ThresholdsFor(md *spec.TableMetadata) (Thresholds, error) {
	t := Thresholds{
		SmallFileFraction:      0.75,
		MinInputFiles:          5,
		MinPositionDeleteFiles: 5,
		DeleteRatio:            0.3,
		MinSmallManifests:      10,
	}
	var err error
	if t.DeleteTargetFileSize, err = intProp(md, PropDeleteTargetSize, DefaultDeleteTargetSize); err != nil {
		return t, err
	}
	if t.TargetFileSize, err = intProp(md, PropTargetFileSize, DefaultTargetFileSize); err != nil {
		return t, err
	}
	if t.ManifestTargetSize, err = intProp(md, PropManifestTargetSize, DefaultManifestTargetSize); err != nil {
		return t, err
	}
	age, err := intProp(md, PropMaxSnapshotAgeMS, DefaultMaxSnapshotAge.Milliseconds())
	if err != nil {
		return t, err
	}
	t.MaxSnapshotAge = time.Duration(age) * time.Millisecond
	keep, err := intProp(md, PropMinSnapshotsToKeep, DefaultMinSnapshotsToKeep)
	if err != nil {
		return t, err
	}
	t.MinSnapshotsToKeep = int(keep)
	prev, err := intProp(md, PropPreviousVersionsMax, DefaultPreviousVersionsMax)
	if err != nil {
		return t, err
	}
	t.PreviousVersionsMax = int(prev)
	if v := md.Property(PropDeleteAfterCommit, "false"); v != "" {
		b, perr := strconv.ParseBool(v)
		if perr != nil {
			return t, fmt.Errorf("table property %s=%q: want true or false", PropDeleteAfterCommit, v)
		}
		t.DeleteAfterCommit = b
	}
	return t, nil
}

func intProp(md *spec.TableMetadata, key string, def int64) (int64, error) {
	v := md.Property(key, "")
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("table property %s=%q: want a positive integer", key, v)
	}
	return n, nil
}
