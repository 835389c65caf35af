package catalog

import (
	"errors"
	"fmt"
	"time"

	"github.com/icectl/icectl/iceberg/spec"
)

// ApplyCommit checks reqs against the current version of a table and
// applies ups to it, as a metastore catalog does before writing the new
// metadata file. A failed requirement wraps ErrCommitConflict (the caller
// may reload and retry), and so does an update that spec.ApplyUpdates
// rejects as stale (it wraps spec.ErrRequirementFailed, e.g. a sequence
// number overtaken by another commit); any other update error is returned
// as is, since retrying would fail the same way.
func ApplyCommit(current *Table, reqs []spec.Requirement, ups []spec.Update, now time.Time) (*spec.TableMetadata, error) {
	for _, r := range reqs {
		if err := r.Validate(current.Metadata); err != nil {
			return nil, fmt.Errorf("commit %s: %w: %w", current.Ident, ErrCommitConflict, err)
		}
	}
	md, err := spec.ApplyUpdates(current.Metadata, ups, spec.ApplyOptions{
		Now:                  now,
		BaseMetadataLocation: current.MetadataLocation,
	})
	if errors.Is(err, spec.ErrRequirementFailed) {
		return nil, fmt.Errorf("commit %s: %w: %w", current.Ident, ErrCommitConflict, err)
	}
	if err != nil {
		return nil, fmt.Errorf("commit %s: apply updates: %w", current.Ident, err)
	}
	return md, nil
}
