package spec

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
)

// metadataKnownKeys are the top-level keys every format version defines.
// Keys of other versions (for example "next-row-id" in a v2 file) are kept
// in Extra instead, so a file is written back exactly as it was read.
var metadataKnownKeys = []string{
	"format-version", "table-uuid", "location", "last-updated-ms", "last-column-id",
	"schemas", "current-schema-id", "partition-specs", "default-spec-id", "last-partition-id",
	"properties", "current-snapshot-id", "snapshots", "snapshot-log", "metadata-log",
	"sort-orders", "default-sort-order-id", "refs", "statistics", "partition-statistics",
	"encryption-keys",
}

func metadataKeysFor(formatVersion int) []string {
	keys := append([]string(nil), metadataKnownKeys...)
	switch {
	case formatVersion == 1:
		keys = append(keys, "schema", "partition-spec")
	case formatVersion >= 3:
		keys = append(keys, "last-sequence-number", "next-row-id")
	default:
		keys = append(keys, "last-sequence-number")
	}
	return keys
}

// ParseMetadata reads a table metadata file, plain or gzip-compressed
// (detected by its magic bytes), and validates it as Java's
// TableMetadataParser does. A format version above MaxFormatVersion fails
// with an error wrapping ErrUnsupportedFormatVersion.
func ParseMetadata(data []byte) (*TableMetadata, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("read gzip table metadata: %w", err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("read gzip table metadata: %w", err)
		}
		data = plain
	}
	m, err := parseMetadataJSON(data)
	if err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// UnmarshalJSON parses and validates table metadata, as ParseMetadata does
// for plain JSON.
func (m *TableMetadata) UnmarshalJSON(data []byte) error {
	parsed, err := ParseMetadata(data)
	if err != nil {
		return err
	}
	*m = *parsed
	return nil
}

func parseMetadataJSON(data []byte) (*TableMetadata, error) {
	o, err := decodeObject(data, "table metadata")
	if err != nil {
		return nil, err
	}
	fv, err := o.reqInt("format-version")
	if err != nil {
		return nil, err
	}
	if fv > MaxFormatVersion {
		return nil, fmt.Errorf("%w %d: the table is newer than icectl supports (format v1 to v%d)",
			ErrUnsupportedFormatVersion, fv, MaxFormatVersion)
	}
	if fv < 1 {
		return nil, fmt.Errorf("cannot read invalid format version %d", fv)
	}
	m := &TableMetadata{FormatVersion: fv}

	uuid, err := o.optString("table-uuid")
	if err != nil {
		return nil, err
	}
	if uuid != nil {
		m.TableUUID = *uuid
	}
	if m.Location, err = o.reqString("location"); err != nil {
		return nil, err
	}
	if fv > 1 {
		if m.LastSequenceNumber, err = o.reqInt64("last-sequence-number"); err != nil {
			return nil, err
		}
	}
	if m.LastUpdatedMS, err = o.reqInt64("last-updated-ms"); err != nil {
		return nil, err
	}
	if m.LastColumnID, err = o.reqInt("last-column-id"); err != nil {
		return nil, err
	}
	if err := parseSchemas(o, m); err != nil {
		return nil, err
	}
	if err := parseSpecs(o, m); err != nil {
		return nil, err
	}
	if err := parseSortOrders(o, m); err != nil {
		return nil, err
	}
	if m.Properties, err = o.optStringMap("properties"); err != nil {
		return nil, err
	}
	if m.Properties == nil {
		m.Properties = map[string]string{}
	}
	if m.CurrentSnapshotID, err = o.optInt64("current-snapshot-id"); err != nil {
		return nil, err
	}
	if m.CurrentSnapshotID != nil && *m.CurrentSnapshotID == -1 {
		m.CurrentSnapshotID = nil
	}
	if m.Snapshots, err = parseList[Snapshot](o, "snapshots"); err != nil {
		return nil, err
	}
	if err := parseRefs(o, m); err != nil {
		return nil, err
	}
	if m.Statistics, err = parseList[StatisticsFile](o, "statistics"); err != nil {
		return nil, err
	}
	if m.PartitionStatistics, err = parseList[PartitionStatisticsFile](o, "partition-statistics"); err != nil {
		return nil, err
	}
	if m.SnapshotLog, err = parseList[SnapshotLogEntry](o, "snapshot-log"); err != nil {
		return nil, err
	}
	if m.MetadataLog, err = parseList[MetadataLogEntry](o, "metadata-log"); err != nil {
		return nil, err
	}
	if m.EncryptionKeys, err = parseList[EncryptedKey](o, "encryption-keys"); err != nil {
		return nil, err
	}
	if fv >= 3 {
		if m.NextRowID, err = o.optInt64("next-row-id"); err != nil {
			return nil, err
		}
		if m.NextRowID == nil {
			return nil, fmt.Errorf("next-row-id must exist in format v%d", fv)
		}
	}
	m.Extra = o.extra(metadataKeysFor(fv)...)
	return m, nil
}

// parseList decodes the array under key; an absent or empty array is nil.
func parseList[T any](o jsonObject, key string) ([]T, error) {
	elems, _, err := o.optArray(key)
	if err != nil || len(elems) == 0 {
		return nil, err
	}
	out := make([]T, len(elems))
	for i, e := range elems {
		if err := json.Unmarshal(e, &out[i]); err != nil {
			return nil, fmt.Errorf("cannot parse %s[%d]: %w", key, i, err)
		}
	}
	return out, nil
}

func parseSchemas(o jsonObject, m *TableMetadata) error {
	elems, ok, err := o.optArray("schemas")
	if err != nil {
		return err
	}
	if ok {
		if m.CurrentSchemaID, err = o.reqInt("current-schema-id"); err != nil {
			return err
		}
		m.Schemas = make([]Schema, len(elems))
		for i, e := range elems {
			if err := json.Unmarshal(e, &m.Schemas[i]); err != nil {
				return fmt.Errorf("cannot parse schemas[%d]: %w", i, err)
			}
		}
		if _, found := m.SchemaByID(m.CurrentSchemaID); !found {
			return fmt.Errorf("cannot find schema with current-schema-id=%d in schemas", m.CurrentSchemaID)
		}
		return nil
	}
	if m.FormatVersion != 1 {
		return fmt.Errorf("schemas must exist in format v%d", m.FormatVersion)
	}
	raw, ok := o.raw("schema")
	if !ok {
		return fmt.Errorf("cannot parse table metadata: format v1 needs \"schema\" when \"schemas\" is absent")
	}
	var s Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("cannot parse schema: %w", err)
	}
	m.Schemas = []Schema{s}
	m.CurrentSchemaID = s.ID
	return nil
}

func parseSpecs(o jsonObject, m *TableMetadata) error {
	elems, ok, err := o.optArray("partition-specs")
	if err != nil {
		return err
	}
	if ok {
		if m.DefaultSpecID, err = o.reqInt("default-spec-id"); err != nil {
			return err
		}
		m.PartitionSpecs = make([]PartitionSpec, len(elems))
		for i, e := range elems {
			if err := json.Unmarshal(e, &m.PartitionSpecs[i]); err != nil {
				return fmt.Errorf("cannot parse partition-specs[%d]: %w", i, err)
			}
		}
	} else {
		if m.FormatVersion != 1 {
			return fmt.Errorf("partition-specs must exist in format v%d", m.FormatVersion)
		}
		// The legacy field holds only the fields of spec 0; Java uses it
		// only when the spec list is missing.
		fields, ok, err := o.optArray("partition-spec")
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("cannot parse table metadata: format v1 needs \"partition-spec\" when \"partition-specs\" is absent")
		}
		spec := PartitionSpec{ID: 0}
		if len(fields) > 0 {
			spec.Fields = make([]PartitionField, len(fields))
		}
		for i, f := range fields {
			if err := json.Unmarshal(f, &spec.Fields[i]); err != nil {
				return fmt.Errorf("cannot parse partition-spec[%d]: %w", i, err)
			}
		}
		m.PartitionSpecs = []PartitionSpec{spec}
		m.DefaultSpecID = 0
	}
	for i := range m.PartitionSpecs {
		assignPartitionFieldIDs(&m.PartitionSpecs[i])
	}

	last, err := o.optInt("last-partition-id")
	if err != nil {
		return err
	}
	if last != nil {
		m.LastPartitionID = *last
		return nil
	}
	if m.FormatVersion != 1 {
		return fmt.Errorf("last-partition-id must exist in format v%d", m.FormatVersion)
	}
	m.LastPartitionID = derivedLastPartitionID(m.PartitionSpecs)
	return nil
}

// assignPartitionFieldIDs numbers fields written without a field-id (v1)
// the way Java's PartitionSpec builder does: one above the highest id seen
// so far in the spec, starting at 1000.
func assignPartitionFieldIDs(spec *PartitionSpec) {
	last := partitionDataIDStart - 1
	for i := range spec.Fields {
		f := &spec.Fields[i]
		if f.FieldID == -1 {
			last++
			f.FieldID = last
		} else if f.FieldID > last {
			last = f.FieldID
		}
	}
}

// derivedLastPartitionID is Java's value for a v1 file without
// last-partition-id: the highest field id of any spec, at least 999.
func derivedLastPartitionID(specs []PartitionSpec) int {
	last := partitionDataIDStart - 1
	for _, s := range specs {
		for _, f := range s.Fields {
			if f.FieldID > last {
				last = f.FieldID
			}
		}
	}
	return last
}

func parseSortOrders(o jsonObject, m *TableMetadata) error {
	elems, ok, err := o.optArray("sort-orders")
	if err != nil {
		return err
	}
	if !ok {
		if m.FormatVersion != 1 {
			return fmt.Errorf("sort-orders must exist in format v%d", m.FormatVersion)
		}
		m.SortOrders = []SortOrder{{OrderID: 0}}
		m.DefaultSortOrderID = 0
		return nil
	}
	if m.DefaultSortOrderID, err = o.reqInt("default-sort-order-id"); err != nil {
		return err
	}
	m.SortOrders = make([]SortOrder, len(elems))
	for i, e := range elems {
		if err := json.Unmarshal(e, &m.SortOrders[i]); err != nil {
			return fmt.Errorf("cannot parse sort-orders[%d]: %w", i, err)
		}
	}
	return nil
}

// parseRefs reads "refs"; without it, the current snapshot is the head of
// the implied main branch, as in Java.
func parseRefs(o jsonObject, m *TableMetadata) error {
	m.Refs = map[string]SnapshotRef{}
	raw, ok := o.raw("refs")
	if !ok {
		if m.CurrentSnapshotID != nil {
			m.Refs[MainBranch] = SnapshotRef{SnapshotID: *m.CurrentSnapshotID, Type: RefTypeBranch}
		}
		return nil
	}
	refs, err := decodeObject(raw, "refs")
	if err != nil {
		return err
	}
	for name, v := range refs.m {
		var r SnapshotRef
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("cannot parse ref %q: %w", name, err)
		}
		m.Refs[name] = r
	}
	return nil
}
