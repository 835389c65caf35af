package spec

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// Table properties ApplyUpdates reads.
const (
	PropMetadataPreviousVersionsMax    = "write.metadata.previous-versions-max"
	DefaultMetadataPreviousVersionsMax = 100
	PropFormatVersion                  = "format-version"
)

// reservedProperties are names Java never stores in a table's properties:
// they describe the metadata itself. set-properties and NewTableMetadata
// refuse them.
var reservedProperties = map[string]bool{
	PropFormatVersion:               true,
	"uuid":                          true,
	"snapshot-count":                true,
	"current-snapshot-id":           true,
	"current-snapshot-summary":      true,
	"current-snapshot-timestamp-ms": true,
	"current-schema":                true,
	"default-partition-spec":        true,
	"default-sort-order":            true,
}

// IsReservedProperty reports whether name is a reserved table property
// (format-version, uuid, current-snapshot-id, ...), which metadata never
// stores.
func IsReservedProperty(name string) bool { return reservedProperties[name] }

// ApplyOptions are the inputs of ApplyUpdates besides the metadata.
type ApplyOptions struct {
	// Now becomes last-updated-ms, and the time of snapshot-log entries.
	// Required, so that applying updates is a pure function.
	Now time.Time
	// BaseMetadataLocation is the file base was read from. When set, it is
	// appended to the metadata-log of the result.
	BaseMetadataLocation string
}

// ApplyUpdates applies REST table updates to base, in order, with the
// rules of Java's TableMetadata.Builder, and returns the validated result.
// base is never modified. An empty update list returns an unchanged copy
// of base (no metadata-log entry, same last-updated-ms), as Java returns
// the base when nothing changed.
//
// Errors caused by a concurrent commit that a retry on fresh metadata can
// fix (a used sequence number, a first-row-id behind next-row-id) wrap
// ErrRequirementFailed.
func ApplyUpdates(base *TableMetadata, updates []Update, opts ApplyOptions) (*TableMetadata, error) {
	if base == nil {
		return nil, errors.New("apply updates: no base metadata (create tables with NewTableMetadata)")
	}
	if len(updates) == 0 {
		return base.clone(), nil
	}
	if opts.Now.IsZero() {
		return nil, errors.New("apply updates: ApplyOptions.Now is not set")
	}
	b := &builder{m: base.clone(), base: base, nowMS: opts.Now.UnixMilli(), added: map[int64]bool{}}
	for i, u := range updates {
		u, err := derefUpdate(u)
		if err != nil {
			return nil, fmt.Errorf("apply updates[%d]: %w", i, err)
		}
		if err := b.apply(u); err != nil {
			return nil, fmt.Errorf("apply updates[%d] (%s): %w", i, u.Action(), err)
		}
	}
	if err := b.finish(opts.BaseMetadataLocation); err != nil {
		return nil, fmt.Errorf("apply updates: %w", err)
	}
	if err := b.m.Validate(); err != nil {
		return nil, fmt.Errorf("apply updates: invalid result: %w", err)
	}
	return b.m, nil
}

// derefUpdate accepts pointers to update structs as well as values.
func derefUpdate(u Update) (Update, error) {
	if u == nil {
		return nil, errors.New("nil update")
	}
	v := reflect.ValueOf(u)
	if v.Kind() != reflect.Pointer {
		return u, nil
	}
	if v.IsNil() {
		return nil, fmt.Errorf("nil %T update", u)
	}
	if inner, ok := v.Elem().Interface().(Update); ok {
		return inner, nil
	}
	return u, nil
}

// builder is the state of one ApplyUpdates call.
type builder struct {
	m     *TableMetadata
	base  *TableMetadata
	nowMS int64

	lastAddedSchema *int
	lastAddedSpec   *int
	lastAddedOrder  *int

	added           map[int64]bool // snapshots added by this call
	mainSetToAdded  []int64        // added snapshots "main" pointed at, in order
	removedSnapshot bool
}

func (b *builder) apply(u Update) error {
	switch u := u.(type) {
	case AssignUUID:
		return b.assignUUID(u.UUID)
	case UpgradeFormatVersion:
		return b.upgradeFormatVersion(u.FormatVersion)
	case AddSchema:
		return b.addSchema(u.Schema)
	case SetCurrentSchema:
		return b.setCurrentSchema(u.SchemaID)
	case AddSpec:
		return b.addSpec(u.Spec)
	case SetDefaultSpec:
		return b.setDefaultSpec(u.SpecID)
	case AddSortOrder:
		return b.addSortOrder(u.SortOrder)
	case SetDefaultSortOrder:
		return b.setDefaultSortOrder(u.SortOrderID)
	case AddSnapshot:
		return b.addSnapshot(u.Snapshot)
	case SetSnapshotRef:
		return b.setRef(u.RefName, u.Ref)
	case RemoveSnapshots:
		b.removeSnapshots(u.SnapshotIDs)
		return nil
	case RemoveSnapshotRef:
		b.removeRef(u.RefName)
		return nil
	case SetLocation:
		if u.Location == "" {
			return errors.New("location must not be empty")
		}
		b.m.Location = u.Location
		return nil
	case SetProperties:
		return b.setProperties(u.Updates)
	case RemoveProperties:
		for _, k := range u.Removals {
			delete(b.m.Properties, k)
		}
		return nil
	case SetStatistics:
		b.m.Statistics = replaceBySnapshot(b.m.Statistics, u.Statistics, func(s StatisticsFile) int64 { return s.SnapshotID })
		return nil
	case RemoveStatistics:
		b.m.Statistics = removeBySnapshot(b.m.Statistics, map[int64]bool{u.SnapshotID: true}, func(s StatisticsFile) int64 { return s.SnapshotID })
		return nil
	case SetPartitionStatistics:
		b.m.PartitionStatistics = replaceBySnapshot(b.m.PartitionStatistics, u.PartitionStatistics, func(s PartitionStatisticsFile) int64 { return s.SnapshotID })
		return nil
	case RemovePartitionStatistics:
		b.m.PartitionStatistics = removeBySnapshot(b.m.PartitionStatistics, map[int64]bool{u.SnapshotID: true}, func(s PartitionStatisticsFile) int64 { return s.SnapshotID })
		return nil
	case RemovePartitionSpecs:
		if slices.Contains(u.SpecIDs, b.m.DefaultSpecID) {
			return fmt.Errorf("cannot remove the default partition spec %d", b.m.DefaultSpecID)
		}
		b.m.PartitionSpecs = slices.DeleteFunc(b.m.PartitionSpecs, func(s PartitionSpec) bool { return slices.Contains(u.SpecIDs, s.ID) })
		return nil
	case RemoveSchemas:
		if slices.Contains(u.SchemaIDs, b.m.CurrentSchemaID) {
			return fmt.Errorf("cannot remove the current schema %d", b.m.CurrentSchemaID)
		}
		b.m.Schemas = slices.DeleteFunc(b.m.Schemas, func(s Schema) bool { return slices.Contains(u.SchemaIDs, s.ID) })
		return nil
	default:
		return fmt.Errorf("unsupported update type %T", u)
	}
}

// assignUUID sets the UUID of a table that has none. Java would also
// replace an existing UUID; we refuse, because a changed UUID makes every
// other writer treat the table as a different one.
func (b *builder) assignUUID(id string) error {
	if _, err := uuid.Parse(id); err != nil {
		return fmt.Errorf("invalid table uuid %q: %w", id, err)
	}
	switch {
	case b.m.TableUUID == "":
		b.m.TableUUID = id
	case b.m.TableUUID != id:
		return fmt.Errorf("cannot reassign table uuid %s to %s", b.m.TableUUID, id)
	}
	return nil
}

func (b *builder) upgradeFormatVersion(v int) error {
	switch {
	case v > MaxFormatVersion:
		return fmt.Errorf("%w %d: cannot upgrade to it (icectl supports format v1 to v%d)",
			ErrUnsupportedFormatVersion, v, MaxFormatVersion)
	case v < b.m.FormatVersion:
		return fmt.Errorf("cannot downgrade v%d table to v%d", b.m.FormatVersion, v)
	case v == b.m.FormatVersion:
		return nil
	}
	b.m.FormatVersion = v
	if v >= 3 && b.m.NextRowID == nil {
		zero := int64(0)
		b.m.NextRowID = &zero
	}
	// Keys kept verbatim because the old version did not define them are
	// now fields of the metadata; drop the stale copies.
	for _, k := range metadataKeysFor(v) {
		delete(b.m.Extra, k)
	}
	return nil
}

func (b *builder) setProperties(updates map[string]string) error {
	for k, v := range updates {
		if reservedProperties[k] {
			if k == PropFormatVersion {
				return fmt.Errorf("cannot set reserved table property %q: use an %s update", k, ActionUpgradeFormatVersion)
			}
			return fmt.Errorf("cannot set reserved table property %q", k)
		}
		b.m.Properties[k] = v
	}
	return nil
}

// replaceBySnapshot puts f in place of the files of the same snapshot (at
// the first one's position), or appends it: a snapshot has at most one.
func replaceBySnapshot[T any](files []T, f T, snapshotID func(T) int64) []T {
	id := snapshotID(f)
	out := make([]T, 0, len(files)+1)
	placed := false
	for _, g := range files {
		if snapshotID(g) != id {
			out = append(out, g)
		} else if !placed {
			out = append(out, f)
			placed = true
		}
	}
	if !placed {
		out = append(out, f)
	}
	return out
}

func removeBySnapshot[T any](files []T, ids map[int64]bool, snapshotID func(T) int64) []T {
	var out []T
	for _, f := range files {
		if !ids[snapshotID(f)] {
			out = append(out, f)
		}
	}
	return out
}

// finish does what Java's Builder.build does after the updates: repair the
// snapshot-log, append the metadata-log entry and stamp last-updated-ms.
func (b *builder) finish(baseLocation string) error {
	if err := b.fixSnapshotLog(); err != nil {
		return err
	}
	if baseLocation != "" {
		keep, err := b.previousVersionsMax()
		if err != nil {
			return err
		}
		log := b.m.MetadataLog
		if len(log) >= keep {
			log = log[len(log)-keep+1:]
		}
		b.m.MetadataLog = append(append([]MetadataLogEntry(nil), log...),
			MetadataLogEntry{TimestampMS: b.base.LastUpdatedMS, MetadataFile: baseLocation})
	}
	b.m.LastUpdatedMS = b.nowMS
	return nil
}

// previousVersionsMax reads write.metadata.previous-versions-max from the
// updated properties, at least 1 as in Java.
func (b *builder) previousVersionsMax() (int, error) {
	v, ok := b.m.Properties[PropMetadataPreviousVersionsMax]
	if !ok {
		return DefaultMetadataPreviousVersionsMax, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("table property %s=%q is not an integer", PropMetadataPreviousVersionsMax, v)
	}
	return max(1, n), nil
}
