package spec

import (
	"errors"
	"fmt"
	"strings"
)

// ErrRequirementFailed is wrapped by every Requirement.Validate failure and
// by ApplyUpdates when an update no longer fits the base it is applied to
// in a way a retry on a fresh base can fix (for example a sequence number
// that another commit has already used). Callers reload and retry.
var ErrRequirementFailed = errors.New("requirement failed")

// Requirement is a REST "TableRequirement": a condition on the table's
// current metadata that must hold for a commit to apply.
type Requirement interface {
	// Type is the REST "type" value, e.g. "assert-table-uuid".
	Type() string
	// Validate checks the requirement against base, the table's current
	// metadata (nil when the table does not exist). Failures wrap
	// ErrRequirementFailed.
	Validate(base *TableMetadata) error
}

// REST requirement types.
const (
	RequirementAssertCreate                  = "assert-create"
	RequirementAssertTableUUID               = "assert-table-uuid"
	RequirementAssertRefSnapshotID           = "assert-ref-snapshot-id"
	RequirementAssertLastAssignedFieldID     = "assert-last-assigned-field-id"
	RequirementAssertCurrentSchemaID         = "assert-current-schema-id"
	RequirementAssertLastAssignedPartitionID = "assert-last-assigned-partition-id"
	RequirementAssertDefaultSpecID           = "assert-default-spec-id"
	RequirementAssertDefaultSortOrderID      = "assert-default-sort-order-id"
)

// AssertCreate requires that the table does not exist yet.
type AssertCreate struct{}

// AssertTableUUID requires the table's UUID to be UUID (compared
// case-insensitively, as Java does).
type AssertTableUUID struct{ UUID string }

// AssertRefSnapshotID requires the branch or tag Ref to point at
// SnapshotID; a nil SnapshotID requires that Ref does not exist.
type AssertRefSnapshotID struct {
	Ref        string
	SnapshotID *int64
}

// AssertLastAssignedFieldID requires the table's last-column-id to be ID.
type AssertLastAssignedFieldID struct{ ID int }

// AssertCurrentSchemaID requires the table's current-schema-id to be ID.
type AssertCurrentSchemaID struct{ ID int }

// AssertLastAssignedPartitionID requires the table's last-partition-id to
// be ID.
type AssertLastAssignedPartitionID struct{ ID int }

// AssertDefaultSpecID requires the table's default-spec-id to be ID.
type AssertDefaultSpecID struct{ ID int }

// AssertDefaultSortOrderID requires the table's default-sort-order-id to
// be ID.
type AssertDefaultSortOrderID struct{ ID int }

func (AssertCreate) Type() string                  { return RequirementAssertCreate }
func (AssertTableUUID) Type() string               { return RequirementAssertTableUUID }
func (AssertRefSnapshotID) Type() string           { return RequirementAssertRefSnapshotID }
func (AssertLastAssignedFieldID) Type() string     { return RequirementAssertLastAssignedFieldID }
func (AssertCurrentSchemaID) Type() string         { return RequirementAssertCurrentSchemaID }
func (AssertLastAssignedPartitionID) Type() string { return RequirementAssertLastAssignedPartitionID }
func (AssertDefaultSpecID) Type() string           { return RequirementAssertDefaultSpecID }
func (AssertDefaultSortOrderID) Type() string      { return RequirementAssertDefaultSortOrderID }

func requirementFailed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRequirementFailed, fmt.Sprintf(format, args...))
}

func errTableMissing(r Requirement) error {
	return requirementFailed("%s: table does not exist", r.Type())
}

func (r AssertCreate) Validate(base *TableMetadata) error {
	if base != nil {
		return requirementFailed("table already exists")
	}
	return nil
}

func (r AssertTableUUID) Validate(base *TableMetadata) error {
	if base == nil {
		return errTableMissing(r)
	}
	if !strings.EqualFold(r.UUID, base.TableUUID) {
		return requirementFailed("UUID does not match: expected %s != %s", base.TableUUID, r.UUID)
	}
	return nil
}

// Validate treats a missing table as one without refs, so that asserting a
// ref's absence holds for a table being created.
func (r AssertRefSnapshotID) Validate(base *TableMetadata) error {
	var ref SnapshotRef
	exists := false
	if base != nil {
		ref, exists = base.Refs[r.Ref]
	}
	switch {
	case exists && r.SnapshotID == nil:
		return requirementFailed("%s %s was created concurrently", ref.Type, r.Ref)
	case exists && *r.SnapshotID != ref.SnapshotID:
		return requirementFailed("%s %s has changed: expected id %d != %d", ref.Type, r.Ref, *r.SnapshotID, ref.SnapshotID)
	case !exists && r.SnapshotID != nil:
		return requirementFailed("branch or tag %s is missing, expected %d", r.Ref, *r.SnapshotID)
	}
	return nil
}

// Validate passes for a missing table, as Java's does: the id is only a
// guard against concurrent schema changes.
func (r AssertLastAssignedFieldID) Validate(base *TableMetadata) error {
	if base != nil && base.LastColumnID != r.ID {
		return requirementFailed("last assigned field id changed: expected id %d != %d", r.ID, base.LastColumnID)
	}
	return nil
}

func (r AssertCurrentSchemaID) Validate(base *TableMetadata) error {
	if base == nil {
		return errTableMissing(r)
	}
	if base.CurrentSchemaID != r.ID {
		return requirementFailed("current schema changed: expected id %d != %d", r.ID, base.CurrentSchemaID)
	}
	return nil
}

// Validate passes for a missing table, as Java's does.
func (r AssertLastAssignedPartitionID) Validate(base *TableMetadata) error {
	if base != nil && base.LastPartitionID != r.ID {
		return requirementFailed("last assigned partition id changed: expected id %d != %d", r.ID, base.LastPartitionID)
	}
	return nil
}

func (r AssertDefaultSpecID) Validate(base *TableMetadata) error {
	if base == nil {
		return errTableMissing(r)
	}
	if base.DefaultSpecID != r.ID {
		return requirementFailed("default partition spec changed: expected id %d != %d", r.ID, base.DefaultSpecID)
	}
	return nil
}

func (r AssertDefaultSortOrderID) Validate(base *TableMetadata) error {
	if base == nil {
		return errTableMissing(r)
	}
	if base.DefaultSortOrderID != r.ID {
		return requirementFailed("default sort order changed: expected id %d != %d", r.ID, base.DefaultSortOrderID)
	}
	return nil
}

// ValidateRequirements checks every requirement against base and returns
// the first failure.
func ValidateRequirements(base *TableMetadata, reqs []Requirement) error {
	for _, r := range reqs {
		if r == nil {
			return errors.New("nil requirement")
		}
		if err := r.Validate(base); err != nil {
			return err
		}
	}
	return nil
}
