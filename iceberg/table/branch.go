package table

import (
	"fmt"

	"github.com/icectl/icectl/iceberg/spec"
)

// BranchHead is the snapshot branch points at: nil for a table without
// snapshots, an error for a branch that does not exist (other than main).
func BranchHead(md *spec.TableMetadata, branch string) (*spec.Snapshot, error) {
	if branch == "" {
		branch = spec.MainBranch
	}
	ref, ok := md.Refs[branch]
	if !ok {
		if branch == spec.MainBranch {
			return md.CurrentSnapshot(), nil
		}
		return nil, fmt.Errorf("branch %q does not exist", branch)
	}
	if ref.Type != spec.RefTypeBranch {
		return nil, fmt.Errorf("%q is a %s, not a branch", branch, ref.Type)
	}
	s, ok := md.SnapshotByID(ref.SnapshotID)
	if !ok {
		return nil, fmt.Errorf("branch %q points at missing snapshot %d", branch, ref.SnapshotID)
	}
	return s, nil
}
