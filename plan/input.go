package plan

import (
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// Input is everything a plan is computed from: the table metadata and the
// live files of the branch head (as table.LiveFiles returns them). Tests
// build it by hand.
type Input struct {
	Metadata *spec.TableMetadata
	// MetadataLocation is recorded in the plan when known.
	MetadataLocation string
	// TableName is the table's name in its catalog, recorded when known.
	TableName string
	// Branch is the branch planned; "" means main.
	Branch string
	// Sort, SortOrder and ZOrder are recorded in the plan.
	Sort      bool
	SortOrder string
	ZOrder    []string
	// BaseSnapshot is the branch head the files were read from; nil for a
	// table without snapshots.
	BaseSnapshot *spec.Snapshot
	// Data are the live data files, Deletes the live delete files (position
	// deletes, DVs and equality deletes) of BaseSnapshot.
	Data    []table.FileEntry
	Deletes []table.FileEntry
	// Unmatched are paths of live data files the where filter rules out
	// by their column metrics (where.Filter.MatchMetrics). The planner
	// reads no metrics of the files a Collector receives, so the caller
	// that scans the manifests finds these; Plan checks Data itself.
	Unmatched map[string]bool
}
