package spec

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
)

// Marshal validates the metadata and writes it as an indented JSON
// document, gzip-compressed when gz is set (for *.gz.metadata.json files).
func (m *TableMetadata) Marshal(gz bool) ([]byte, error) {
	compact, err := m.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return nil, fmt.Errorf("write table metadata: %w", err)
	}
	out.WriteByte('\n')
	if !gz {
		return out.Bytes(), nil
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(out.Bytes()); err != nil {
		return nil, fmt.Errorf("write gzip table metadata: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("write gzip table metadata: %w", err)
	}
	return z.Bytes(), nil
}

// MarshalJSON validates the metadata and writes it with the keys and
// version rules of Java's TableMetadataParser: a v1 file carries both the
// legacy "schema"/"partition-spec" and their v2 replacements; "no current
// snapshot" is -1 before v3 and null from v3 on.
func (m TableMetadata) MarshalJSON() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("write table metadata: %w", err)
	}
	v := m.FormatVersion
	w := newObjectWriter()
	w.field("format-version", v)
	if m.TableUUID != "" {
		w.field("table-uuid", m.TableUUID)
	}
	w.field("location", m.Location)
	if v > 1 {
		w.field("last-sequence-number", m.LastSequenceNumber)
	}
	w.field("last-updated-ms", m.LastUpdatedMS)
	w.field("last-column-id", m.LastColumnID)
	if v == 1 {
		w.field("schema", m.CurrentSchema())
	}
	w.field("current-schema-id", m.CurrentSchemaID)
	w.field("schemas", m.Schemas)
	if v == 1 {
		fields := m.DefaultSpec().Fields
		if fields == nil {
			fields = []PartitionField{}
		}
		w.field("partition-spec", fields)
	}
	w.field("default-spec-id", m.DefaultSpecID)
	w.field("partition-specs", m.PartitionSpecs)
	w.field("last-partition-id", m.LastPartitionID)
	w.field("default-sort-order-id", m.DefaultSortOrderID)
	w.field("sort-orders", nonNil(m.SortOrders))
	props := m.Properties
	if props == nil {
		props = map[string]string{}
	}
	w.stringMap("properties", props, "")
	switch {
	case m.CurrentSnapshotID != nil:
		w.field("current-snapshot-id", *m.CurrentSnapshotID)
	case v >= 3:
		w.rawField("current-snapshot-id", []byte("null"))
	default:
		w.field("current-snapshot-id", int64(-1))
	}
	if v >= 3 {
		w.field("next-row-id", *m.NextRowID)
	}
	if v > 1 || !m.refsImplied() {
		refs := m.Refs
		if refs == nil {
			refs = map[string]SnapshotRef{}
		}
		w.field("refs", refs)
	}
	snaps := make([]json.RawMessage, len(m.Snapshots))
	for i, s := range m.Snapshots {
		b, err := s.marshal(v)
		if err != nil {
			return nil, fmt.Errorf("write snapshot %d: %w", s.SnapshotID, err)
		}
		snaps[i] = b
	}
	w.field("snapshots", snaps)
	w.field("statistics", nonNil(m.Statistics))
	w.field("partition-statistics", nonNil(m.PartitionStatistics))
	w.field("snapshot-log", nonNil(m.SnapshotLog))
	w.field("metadata-log", nonNil(m.MetadataLog))
	if len(m.EncryptionKeys) > 0 {
		w.field("encryption-keys", m.EncryptionKeys)
	}
	w.extra(m.Extra)
	out, err := w.bytes()
	if err != nil {
		return nil, fmt.Errorf("write table metadata: %w", err)
	}
	return out, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// refsImplied reports whether Refs says no more than a file without "refs"
// would: nothing, or just the main branch at the current snapshot.
func (m *TableMetadata) refsImplied() bool {
	if m.CurrentSnapshotID == nil {
		return len(m.Refs) == 0
	}
	if len(m.Refs) != 1 {
		return false
	}
	r, ok := m.Refs[MainBranch]
	return ok && r.SnapshotID == *m.CurrentSnapshotID && r.Type == RefTypeBranch &&
		r.MinSnapshotsToKeep == nil && r.MaxSnapshotAgeMS == nil && r.MaxRefAgeMS == nil && len(r.Extra) == 0
}
