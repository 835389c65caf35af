package spec

// Update is a REST "TableUpdate": one change to table metadata, applied by
// ApplyUpdates. Each update type marshals to its REST JSON object.
type Update interface {
	// Action is the REST "action" value, e.g. "add-snapshot".
	Action() string
}

// REST update actions.
const (
	ActionAssignUUID                = "assign-uuid"
	ActionUpgradeFormatVersion      = "upgrade-format-version"
	ActionAddSchema                 = "add-schema"
	ActionSetCurrentSchema          = "set-current-schema"
	ActionAddSpec                   = "add-spec"
	ActionSetDefaultSpec            = "set-default-spec"
	ActionAddSortOrder              = "add-sort-order"
	ActionSetDefaultSortOrder       = "set-default-sort-order"
	ActionAddSnapshot               = "add-snapshot"
	ActionSetSnapshotRef            = "set-snapshot-ref"
	ActionRemoveSnapshots           = "remove-snapshots"
	ActionRemoveSnapshotRef         = "remove-snapshot-ref"
	ActionSetLocation               = "set-location"
	ActionSetProperties             = "set-properties"
	ActionRemoveProperties          = "remove-properties"
	ActionSetStatistics             = "set-statistics"
	ActionRemoveStatistics          = "remove-statistics"
	ActionSetPartitionStatistics    = "set-partition-statistics"
	ActionRemovePartitionStatistics = "remove-partition-statistics"
	ActionRemovePartitionSpecs      = "remove-partition-specs"
	ActionRemoveSchemas             = "remove-schemas"
)

// LastAdded, as the id of set-current-schema, set-default-spec or
// set-default-sort-order, means the one added last in the same commit.
const LastAdded = -1

// AssignUUID sets the table UUID.
type AssignUUID struct{ UUID string }

// UpgradeFormatVersion raises the table format version.
type UpgradeFormatVersion struct{ FormatVersion int }

// AddSchema adds a schema. The table assigns its id: an identical
// existing schema is reused, otherwise the id is one above the highest.
type AddSchema struct{ Schema Schema }

// SetCurrentSchema makes SchemaID (or LastAdded) the current schema.
type SetCurrentSchema struct{ SchemaID int }

// AddSpec adds a partition spec. The table assigns its id, and field ids
// to fields without one (FieldID <= 0; JSON without "field-id" decodes
// as -1).
type AddSpec struct{ Spec PartitionSpec }

// SetDefaultSpec makes SpecID (or LastAdded) the default partition spec.
type SetDefaultSpec struct{ SpecID int }

// AddSortOrder adds a sort order; the table assigns its id.
type AddSortOrder struct{ SortOrder SortOrder }

// SetDefaultSortOrder makes SortOrderID (or LastAdded) the default order.
type SetDefaultSortOrder struct{ SortOrderID int }

// AddSnapshot adds a snapshot. It does not make it current: that takes a
// SetSnapshotRef for the branch.
type AddSnapshot struct{ Snapshot Snapshot }

// SetSnapshotRef creates or moves the branch or tag RefName. Setting
// "main" changes the table's current snapshot.
type SetSnapshotRef struct {
	RefName string
	Ref     SnapshotRef
}

// RemoveSnapshots removes snapshots with their statistics and the refs
// that point at them.
type RemoveSnapshots struct{ SnapshotIDs []int64 }

// RemoveSnapshotRef removes a branch or tag; removing "main" leaves the
// table without a current snapshot.
type RemoveSnapshotRef struct{ RefName string }

// SetLocation sets the table's base location.
type SetLocation struct{ Location string }

// SetProperties sets table properties.
type SetProperties struct{ Updates map[string]string }

// RemoveProperties removes table properties; missing keys are ignored.
type RemoveProperties struct{ Removals []string }

// SetStatistics registers the statistics file of a snapshot, replacing
// any previous one for that snapshot.
type SetStatistics struct{ Statistics StatisticsFile }

// RemoveStatistics removes the statistics file of a snapshot.
type RemoveStatistics struct{ SnapshotID int64 }

// SetPartitionStatistics registers the partition statistics file of a
// snapshot, replacing any previous one for that snapshot.
type SetPartitionStatistics struct{ PartitionStatistics PartitionStatisticsFile }

// RemovePartitionStatistics removes the partition statistics file of a
// snapshot.
type RemovePartitionStatistics struct{ SnapshotID int64 }

// RemovePartitionSpecs removes partition specs; the default spec cannot
// be removed, and ids the table lacks are ignored. The caller makes sure
// no live manifest uses them (expire's --clean-expired-metadata).
type RemovePartitionSpecs struct{ SpecIDs []int }

// RemoveSchemas removes schemas; the current schema cannot be removed,
// and ids the table lacks are ignored.
type RemoveSchemas struct{ SchemaIDs []int }

func (AssignUUID) Action() string                { return ActionAssignUUID }
func (UpgradeFormatVersion) Action() string      { return ActionUpgradeFormatVersion }
func (AddSchema) Action() string                 { return ActionAddSchema }
func (SetCurrentSchema) Action() string          { return ActionSetCurrentSchema }
func (AddSpec) Action() string                   { return ActionAddSpec }
func (SetDefaultSpec) Action() string            { return ActionSetDefaultSpec }
func (AddSortOrder) Action() string              { return ActionAddSortOrder }
func (SetDefaultSortOrder) Action() string       { return ActionSetDefaultSortOrder }
func (AddSnapshot) Action() string               { return ActionAddSnapshot }
func (SetSnapshotRef) Action() string            { return ActionSetSnapshotRef }
func (RemoveSnapshots) Action() string           { return ActionRemoveSnapshots }
func (RemoveSnapshotRef) Action() string         { return ActionRemoveSnapshotRef }
func (SetLocation) Action() string               { return ActionSetLocation }
func (SetProperties) Action() string             { return ActionSetProperties }
func (RemoveProperties) Action() string          { return ActionRemoveProperties }
func (SetStatistics) Action() string             { return ActionSetStatistics }
func (RemoveStatistics) Action() string          { return ActionRemoveStatistics }
func (SetPartitionStatistics) Action() string    { return ActionSetPartitionStatistics }
func (RemovePartitionStatistics) Action() string { return ActionRemovePartitionStatistics }
func (RemovePartitionSpecs) Action() string      { return ActionRemovePartitionSpecs }
func (RemoveSchemas) Action() string             { return ActionRemoveSchemas }
