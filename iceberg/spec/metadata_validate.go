package spec

import (
	"errors"
	"fmt"
)

// oneMinuteMS is Java's tolerance for clock skew between committers when
// it checks that logs are in time order.
const oneMinuteMS = 60_000

// Validate checks the rules Java's TableMetadata constructor enforces, so
// that icectl neither accepts nor writes metadata Java would reject.
func (m *TableMetadata) Validate() error {
	if m.FormatVersion > MaxFormatVersion {
		return fmt.Errorf("%w %d: the table is newer than icectl supports (format v1 to v%d)",
			ErrUnsupportedFormatVersion, m.FormatVersion, MaxFormatVersion)
	}
	if m.FormatVersion < 1 {
		return fmt.Errorf("invalid format version %d", m.FormatVersion)
	}
	if m.FormatVersion > 1 && m.TableUUID == "" {
		return fmt.Errorf("table-uuid must exist in format v%d", m.FormatVersion)
	}
	if m.FormatVersion == 1 && m.LastSequenceNumber != 0 {
		return fmt.Errorf("last-sequence-number must be 0 in format v1, got %d", m.LastSequenceNumber)
	}
	if m.FormatVersion >= 3 {
		if m.NextRowID == nil {
			return fmt.Errorf("next-row-id must exist in format v%d", m.FormatVersion)
		}
		if *m.NextRowID < 0 {
			return fmt.Errorf("next-row-id must not be negative, got %d", *m.NextRowID)
		}
	}
	return errors.Join(
		m.validateSchemas(),
		m.validateSpecs(),
		m.validateSortOrders(),
		m.validateSnapshots(),
		m.validateRefs(),
		m.validateLogs(),
	)
}

func (m *TableMetadata) validateSchemas() error {
	if len(m.Schemas) == 0 {
		return errors.New("table metadata has no schema")
	}
	seen := map[int]bool{}
	for _, s := range m.Schemas {
		if seen[s.ID] {
			return fmt.Errorf("duplicate schema id %d", s.ID)
		}
		seen[s.ID] = true
	}
	if !seen[m.CurrentSchemaID] {
		return fmt.Errorf("cannot find schema with current-schema-id=%d in schemas", m.CurrentSchemaID)
	}
	return nil
}

func (m *TableMetadata) validateSpecs() error {
	if len(m.PartitionSpecs) == 0 {
		return errors.New("partition specs cannot be empty")
	}
	seen := map[int]bool{}
	for _, s := range m.PartitionSpecs {
		if seen[s.ID] {
			return fmt.Errorf("duplicate partition spec id %d", s.ID)
		}
		seen[s.ID] = true
		for _, f := range s.Fields {
			if f.Transform.Kind == TransformUnknown && f.Transform.Raw == "" {
				return fmt.Errorf("partition spec %d: field %q has no transform", s.ID, f.Name)
			}
		}
	}
	if !seen[m.DefaultSpecID] {
		return fmt.Errorf("cannot find partition spec with default-spec-id=%d in partition-specs", m.DefaultSpecID)
	}
	return nil
}

func (m *TableMetadata) validateSortOrders() error {
	seen := map[int]bool{}
	for _, o := range m.SortOrders {
		if seen[o.OrderID] {
			return fmt.Errorf("duplicate sort order id %d", o.OrderID)
		}
		seen[o.OrderID] = true
		for _, f := range o.Fields {
			if f.Transform.Kind == TransformUnknown && f.Transform.Raw == "" {
				return fmt.Errorf("sort order %d: a field has no transform", o.OrderID)
			}
			if f.Direction != "asc" && f.Direction != "desc" {
				return fmt.Errorf("sort order %d: invalid direction %q", o.OrderID, f.Direction)
			}
			if f.NullOrder != "nulls-first" && f.NullOrder != "nulls-last" {
				return fmt.Errorf("sort order %d: invalid null-order %q", o.OrderID, f.NullOrder)
			}
		}
	}
	// An empty list with the unsorted default is how some writers say
	// "unsorted"; anything else must name a listed order.
	if !seen[m.DefaultSortOrderID] && (len(m.SortOrders) > 0 || m.DefaultSortOrderID != 0) {
		return fmt.Errorf("cannot find sort order with default-sort-order-id=%d in sort-orders", m.DefaultSortOrderID)
	}
	return nil
}

func (m *TableMetadata) validateSnapshots() error {
	seen := map[int64]bool{}
	for _, s := range m.Snapshots {
		if seen[s.SnapshotID] {
			return fmt.Errorf("duplicate snapshot id %d", s.SnapshotID)
		}
		seen[s.SnapshotID] = true
		if m.FormatVersion > 1 && s.SequenceNumber > m.LastSequenceNumber {
			return fmt.Errorf("invalid snapshot %d with sequence number %d greater than last-sequence-number %d",
				s.SnapshotID, s.SequenceNumber, m.LastSequenceNumber)
		}
	}
	if m.CurrentSnapshotID != nil && !seen[*m.CurrentSnapshotID] {
		return fmt.Errorf("cannot find current snapshot %d in snapshots", *m.CurrentSnapshotID)
	}
	return nil
}

func (m *TableMetadata) validateRefs() error {
	for name, r := range m.Refs {
		if err := r.validate(name); err != nil {
			return err
		}
		if _, ok := m.SnapshotByID(r.SnapshotID); !ok {
			return fmt.Errorf("ref %q points to snapshot %d, which is not in snapshots", name, r.SnapshotID)
		}
	}
	main, hasMain := m.Refs[MainBranch]
	switch {
	case hasMain && main.Type != RefTypeBranch:
		return fmt.Errorf("ref %q must be a branch, not a %s", MainBranch, main.Type)
	case hasMain && main.MaxRefAgeMS != nil:
		return fmt.Errorf("ref %q cannot have max-ref-age-ms: the main branch never expires", MainBranch)
	case m.CurrentSnapshotID == nil && hasMain:
		return fmt.Errorf("current snapshot is not set, but main branch points to %d", main.SnapshotID)
	case m.CurrentSnapshotID != nil && hasMain && main.SnapshotID != *m.CurrentSnapshotID:
		return fmt.Errorf("current-snapshot-id %d does not match main branch %d", *m.CurrentSnapshotID, main.SnapshotID)
	}
	return nil
}

func (m *TableMetadata) validateLogs() error {
	for i := 1; i < len(m.SnapshotLog); i++ {
		if m.SnapshotLog[i].TimestampMS-m.SnapshotLog[i-1].TimestampMS < -oneMinuteMS {
			return fmt.Errorf("snapshot-log entries are not in time order at entry %d", i)
		}
	}
	if n := len(m.SnapshotLog); n > 0 && m.LastUpdatedMS-m.SnapshotLog[n-1].TimestampMS < -oneMinuteMS {
		return fmt.Errorf("invalid last-updated-ms %d: before the last snapshot-log entry at %d",
			m.LastUpdatedMS, m.SnapshotLog[n-1].TimestampMS)
	}
	for i := 1; i < len(m.MetadataLog); i++ {
		if m.MetadataLog[i].TimestampMS-m.MetadataLog[i-1].TimestampMS < -oneMinuteMS {
			return fmt.Errorf("metadata-log entries are not in time order at entry %d", i)
		}
	}
	if n := len(m.MetadataLog); n > 0 && m.LastUpdatedMS-m.MetadataLog[n-1].TimestampMS < -oneMinuteMS {
		return fmt.Errorf("invalid last-updated-ms %d: before the last metadata-log entry at %d",
			m.LastUpdatedMS, m.MetadataLog[n-1].TimestampMS)
	}
	return nil
}
