package spec

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/google/uuid"
)

// NewTableMetadata builds the metadata of a new, empty table: a fresh
// table UUID, schema 0, spec 0, the sort order (0 when unsorted, else 1),
// no snapshots, and next-row-id 0 for v3.
//
// Unlike Java, which renumbers every column from 1, it keeps the caller's
// field ids: icectl creates tables from schemas it already numbered (for
// example copied from another table or from Parquet files), and renumbering
// would break the link to those files. The ids must be positive and
// unique. Partition fields without an id (FieldID <= 0) get one from 1000.
//
// props must not hold reserved names such as "format-version": the format
// version is its own argument.
func NewTableMetadata(schema Schema, spec PartitionSpec, order SortOrder, location string, props map[string]string, formatVersion int) (*TableMetadata, error) {
	if formatVersion > MaxFormatVersion {
		return nil, fmt.Errorf("new table: %w %d (icectl supports format v1 to v%d)",
			ErrUnsupportedFormatVersion, formatVersion, MaxFormatVersion)
	}
	if formatVersion < 1 {
		return nil, fmt.Errorf("new table: invalid format version %d", formatVersion)
	}
	location = stripTrailingSlash(location)
	if location == "" {
		return nil, errors.New("new table: location must not be empty")
	}
	for k := range props {
		if reservedProperties[k] {
			return nil, fmt.Errorf("new table: table properties must not contain reserved property %q", k)
		}
	}
	if err := checkSchema(schema, formatVersion); err != nil {
		return nil, fmt.Errorf("new table: %w", err)
	}
	schema.ID = 0

	if err := checkSpecSources(spec, &schema); err != nil {
		return nil, fmt.Errorf("new table: %w", err)
	}
	spec.ID = 0
	lastPartitionID, err := assignSpecFieldIDs(&spec, formatVersion, partitionDataIDStart-1)
	if err != nil {
		return nil, fmt.Errorf("new table: %w", err)
	}

	order, err = newTableSortOrder(order, &schema)
	if err != nil {
		return nil, fmt.Errorf("new table: %w", err)
	}

	properties := maps.Clone(props)
	if properties == nil {
		properties = map[string]string{}
	}
	m := &TableMetadata{
		FormatVersion:      formatVersion,
		TableUUID:          uuid.NewString(),
		Location:           location,
		LastUpdatedMS:      time.Now().UnixMilli(),
		LastColumnID:       schema.HighestFieldID(),
		Schemas:            []Schema{schema},
		CurrentSchemaID:    0,
		PartitionSpecs:     []PartitionSpec{spec},
		DefaultSpecID:      0,
		LastPartitionID:    lastPartitionID,
		Properties:         properties,
		SortOrders:         []SortOrder{order},
		DefaultSortOrderID: order.OrderID,
		Refs:               map[string]SnapshotRef{},
	}
	if formatVersion >= 3 {
		zero := int64(0)
		m.NextRowID = &zero
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("new table: %w", err)
	}
	return m, nil
}

func newTableSortOrder(order SortOrder, schema *Schema) (SortOrder, error) {
	if len(order.Fields) == 0 {
		return SortOrder{OrderID: 0, Fields: []SortField{}, Extra: order.Extra}, nil
	}
	for _, f := range order.Fields {
		if err := checkTransformSources(f.Transform, f.SourceID, f.SourceIDs, schema); err != nil {
			return SortOrder{}, fmt.Errorf("sort field: %w", err)
		}
	}
	order.OrderID = 1 // Java's INITIAL_SORT_ORDER_ID
	return order, nil
}

// stripTrailingSlash removes trailing slashes as Java's LocationUtil does,
// but leaves a bare scheme ("s3://") alone.
func stripTrailingSlash(loc string) string {
	for strings.HasSuffix(loc, "/") && !strings.HasSuffix(loc, "://") {
		loc = loc[:len(loc)-1]
	}
	return loc
}
