package spec

import (
	"encoding/json"
	"errors"
	"strings"
)

// MaxFormatVersion is the newest table format version icectl reads and
// writes.
const MaxFormatVersion = 3

// ErrUnsupportedFormatVersion is wrapped by ParseMetadata when a table's
// format version is newer than MaxFormatVersion.
var ErrUnsupportedFormatVersion = errors.New("cannot read unsupported version")

// Partition field ids start here (Java PARTITION_DATA_ID_START); v1 specs
// without ids are numbered from it.
const partitionDataIDStart = 1000

// TableMetadata is the content of a table metadata JSON file.
//
// After ParseMetadata, Properties and Refs are never nil, v1 legacy fields
// are folded into Schemas/PartitionSpecs/SortOrders, and a "main" branch is
// present when the file has no "refs" but a current snapshot.
type TableMetadata struct {
	FormatVersion       int
	TableUUID           string
	Location            string
	LastSequenceNumber  int64
	LastUpdatedMS       int64
	LastColumnID        int
	Schemas             []Schema
	CurrentSchemaID     int
	PartitionSpecs      []PartitionSpec
	DefaultSpecID       int
	LastPartitionID     int
	Properties          map[string]string
	CurrentSnapshotID   *int64 // nil: no current snapshot (-1 or null in the file)
	Snapshots           []Snapshot
	SnapshotLog         []SnapshotLogEntry
	MetadataLog         []MetadataLogEntry
	SortOrders          []SortOrder
	DefaultSortOrderID  int
	Refs                map[string]SnapshotRef
	Statistics          []StatisticsFile
	PartitionStatistics []PartitionStatisticsFile
	NextRowID           *int64 // v3
	EncryptionKeys      []EncryptedKey
	// Extra holds top-level keys this version of the format does not
	// define, written back unchanged.
	Extra map[string]json.RawMessage
}

// SchemaByID returns the schema with the given id.
func (m *TableMetadata) SchemaByID(id int) (*Schema, bool) {
	for i := range m.Schemas {
		if m.Schemas[i].ID == id {
			return &m.Schemas[i], true
		}
	}
	return nil, false
}

// CurrentSchema returns the current schema, or nil if it is missing (only
// possible for metadata that was not validated).
func (m *TableMetadata) CurrentSchema() *Schema {
	s, _ := m.SchemaByID(m.CurrentSchemaID)
	return s
}

// SpecByID returns the partition spec with the given id.
func (m *TableMetadata) SpecByID(id int) (*PartitionSpec, bool) {
	for i := range m.PartitionSpecs {
		if m.PartitionSpecs[i].ID == id {
			return &m.PartitionSpecs[i], true
		}
	}
	return nil, false
}

// DefaultSpec returns the default partition spec, or nil if it is missing.
func (m *TableMetadata) DefaultSpec() *PartitionSpec {
	s, _ := m.SpecByID(m.DefaultSpecID)
	return s
}

// SortOrderByID returns the sort order with the given id.
func (m *TableMetadata) SortOrderByID(id int) (*SortOrder, bool) {
	for i := range m.SortOrders {
		if m.SortOrders[i].OrderID == id {
			return &m.SortOrders[i], true
		}
	}
	return nil, false
}

// SnapshotByID returns the snapshot with the given id.
func (m *TableMetadata) SnapshotByID(id int64) (*Snapshot, bool) {
	for i := range m.Snapshots {
		if m.Snapshots[i].SnapshotID == id {
			return &m.Snapshots[i], true
		}
	}
	return nil, false
}

// Ancestors returns snapshot id and its ancestors, newest first, stopping
// at a parent m no longer has (or, in crafted metadata, at a cycle).
func (m *TableMetadata) Ancestors(id int64) []*Snapshot {
	var out []*Snapshot
	seen := map[int64]bool{}
	for {
		s, ok := m.SnapshotByID(id)
		if !ok || seen[id] {
			return out
		}
		seen[id] = true
		out = append(out, s)
		if s.ParentSnapshotID == nil {
			return out
		}
		id = *s.ParentSnapshotID
	}
}

// CurrentSnapshot returns the current snapshot, or nil when the table has
// none.
func (m *TableMetadata) CurrentSnapshot() *Snapshot {
	if m.CurrentSnapshotID == nil {
		return nil
	}
	s, _ := m.SnapshotByID(*m.CurrentSnapshotID)
	return s
}

// Property returns the table property key, or def when it is not set.
func (m *TableMetadata) Property(key, def string) string {
	if v, ok := m.Properties[key]; ok {
		return v
	}
	return def
}

// Table properties naming where new files go (Java TableProperties).
const (
	PropDataPath     = "write.data.path"
	PropMetadataPath = "write.metadata.path"
)

// DataDir is the directory new data files go to: write.data.path, or
// <location>/data.
func (m *TableMetadata) DataDir() string {
	if p := m.Properties[PropDataPath]; p != "" {
		return strings.TrimSuffix(p, "/")
	}
	return strings.TrimSuffix(m.Location, "/") + "/data"
}

// MetadataDir is the directory new metadata files go to:
// write.metadata.path, or <location>/metadata.
func (m *TableMetadata) MetadataDir() string {
	if p := m.Properties[PropMetadataPath]; p != "" {
		return strings.TrimSuffix(p, "/")
	}
	return strings.TrimSuffix(m.Location, "/") + "/metadata"
}
