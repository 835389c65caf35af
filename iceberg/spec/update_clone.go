package spec

import (
	"maps"
	"slices"
)

// clone copies m deeply enough that ApplyUpdates can change every list and
// map of the copy without touching m: top-level lists and maps are new, and
// the elements it replaces are replaced, never edited in place. Nested
// values (a schema's fields, a snapshot's summary) stay shared and must be
// treated as read-only.
func (m *TableMetadata) clone() *TableMetadata {
	c := *m
	c.Schemas = slices.Clone(m.Schemas)
	c.PartitionSpecs = slices.Clone(m.PartitionSpecs)
	c.SortOrders = slices.Clone(m.SortOrders)
	c.Snapshots = slices.Clone(m.Snapshots)
	c.SnapshotLog = slices.Clone(m.SnapshotLog)
	c.MetadataLog = slices.Clone(m.MetadataLog)
	c.Statistics = slices.Clone(m.Statistics)
	c.PartitionStatistics = slices.Clone(m.PartitionStatistics)
	c.EncryptionKeys = slices.Clone(m.EncryptionKeys)
	c.Properties = maps.Clone(m.Properties)
	if c.Properties == nil {
		c.Properties = map[string]string{}
	}
	c.Refs = maps.Clone(m.Refs)
	if c.Refs == nil {
		c.Refs = map[string]SnapshotRef{}
	}
	c.Extra = maps.Clone(m.Extra)
	c.CurrentSnapshotID = clonePtr(m.CurrentSnapshotID)
	c.NextRowID = clonePtr(m.NextRowID)
	return &c
}

// cloneSnapshot copies the parts of s a caller could still change after
// handing it to ApplyUpdates.
func cloneSnapshot(s Snapshot) Snapshot {
	s.ParentSnapshotID = clonePtr(s.ParentSnapshotID)
	s.Manifests = slices.Clone(s.Manifests)
	s.Summary = maps.Clone(s.Summary)
	s.SchemaID = clonePtr(s.SchemaID)
	s.FirstRowID = clonePtr(s.FirstRowID)
	s.AddedRows = clonePtr(s.AddedRows)
	s.KeyID = clonePtr(s.KeyID)
	s.Extra = maps.Clone(s.Extra)
	return s
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
