package spec

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestNewTableMetadata(t *testing.T) {
	for _, v := range []int{1, 2, 3} {
		m, err := NewTableMetadata(testSchema(), testSpec(), SortOrder{}, "s3://bucket/db/t//", map[string]string{"owner": "h1"}, v)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if m.FormatVersion != v || m.Location != "s3://bucket/db/t" || m.CurrentSnapshotID != nil || len(m.Snapshots) != 0 {
			t.Errorf("v%d: version %d location %q current %v", v, m.FormatVersion, m.Location, m.CurrentSnapshotID)
		}
		if _, err := uuid.Parse(m.TableUUID); err != nil {
			t.Errorf("v%d: table uuid %q: %v", v, m.TableUUID, err)
		}
		// Caller's field ids are kept; the schema itself becomes schema 0.
		s := m.CurrentSchema()
		if s == nil || s.ID != 0 || s.Fields[2].ID != 5 || m.LastColumnID != 5 {
			t.Errorf("v%d: schema %+v last-column-id %d", v, s, m.LastColumnID)
		}
		spec := m.DefaultSpec()
		if spec.Fields[0].FieldID != 1000 || spec.Fields[1].FieldID != 1001 || m.LastPartitionID != 1001 {
			t.Errorf("v%d: partition field ids %+v last-partition-id %d", v, spec.Fields, m.LastPartitionID)
		}
		if m.DefaultSortOrderID != 0 || len(m.SortOrders) != 1 {
			t.Errorf("v%d: sort orders %+v", v, m.SortOrders)
		}
		if (v >= 3) != (m.NextRowID != nil) || (m.NextRowID != nil && *m.NextRowID != 0) {
			t.Errorf("v%d: next-row-id %v", v, m.NextRowID)
		}
		if m.Properties["owner"] != "h1" || m.LastSequenceNumber != 0 {
			t.Errorf("v%d: properties %v", v, m.Properties)
		}
		checkRoundTrip(t, m)
	}

	a, _ := NewTableMetadata(testSchema(), PartitionSpec{}, SortOrder{}, "/tmp/t", nil, 2)
	b, _ := NewTableMetadata(testSchema(), PartitionSpec{}, SortOrder{}, "/tmp/t", nil, 2)
	if a == nil || b == nil || a.TableUUID == b.TableUUID {
		t.Error("two new tables share a uuid")
	}
	if a != nil && (!a.DefaultSpec().IsUnpartitioned() || a.LastPartitionID != 999) {
		t.Errorf("unpartitioned: last-partition-id %d", a.LastPartitionID)
	}

	sorted := SortOrder{Fields: []SortField{{SourceID: 2, Transform: Transform{Kind: TransformIdentity}, Direction: "asc", NullOrder: "nulls-first"}}}
	spec := PartitionSpec{Fields: []PartitionField{{SourceID: 1, Name: "id", Transform: Transform{Kind: TransformIdentity}, FieldID: 1007}}}
	m, err := NewTableMetadata(testSchema(), spec, sorted, "file:///w/t", nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if m.DefaultSortOrderID != 1 || m.SortOrders[0].OrderID != 1 || m.LastPartitionID != 1007 {
		t.Errorf("sorted: default order %d, last-partition-id %d", m.DefaultSortOrderID, m.LastPartitionID)
	}
}

func TestNewTableMetadataErrors(t *testing.T) {
	dup := testSchema()
	dup.Fields[1].ID = 1
	zero := testSchema()
	zero.Fields[0].ID = 0
	v3type := testSchema()
	v3type.Fields[0].Type = TimestampNsType{}
	badIdent := testSchema()
	badIdent.IdentifierFieldIDs = []int{44}
	badSpec := PartitionSpec{Fields: []PartitionField{{SourceID: 99, Name: "x", Transform: Transform{Kind: TransformIdentity}}}}
	v1Gap := PartitionSpec{Fields: []PartitionField{{SourceID: 1, Name: "x", Transform: Transform{Kind: TransformIdentity}, FieldID: 1003}}}
	badOrder := SortOrder{Fields: []SortField{{SourceID: 98, Transform: Transform{Kind: TransformIdentity}, Direction: "asc", NullOrder: "nulls-first"}}}

	cases := []struct {
		name   string
		schema Schema
		spec   PartitionSpec
		order  SortOrder
		loc    string
		props  map[string]string
		v      int
		want   string
	}{
		{"v4", testSchema(), PartitionSpec{}, SortOrder{}, "/t", nil, 4, "icectl supports format v1 to v3"},
		{"v0", testSchema(), PartitionSpec{}, SortOrder{}, "/t", nil, 0, "invalid format version 0"},
		{"no location", testSchema(), PartitionSpec{}, SortOrder{}, "", nil, 2, "location must not be empty"},
		{"reserved property", testSchema(), PartitionSpec{}, SortOrder{}, "/t", map[string]string{"format-version": "2"}, 2, `reserved property "format-version"`},
		{"duplicate field id", dup, PartitionSpec{}, SortOrder{}, "/t", nil, 2, "same id 1"},
		{"zero field id", zero, PartitionSpec{}, SortOrder{}, "/t", nil, 2, "ids must be positive"},
		{"v3 type in v2", v3type, PartitionSpec{}, SortOrder{}, "/t", nil, 2, "needs format v3"},
		{"identifier not a field", badIdent, PartitionSpec{}, SortOrder{}, "/t", nil, 2, "identifier field id 44"},
		{"spec source missing", testSchema(), badSpec, SortOrder{}, "/t", nil, 2, "cannot find source column 99"},
		{"v1 spec ids not sequential", testSchema(), v1Gap, SortOrder{}, "/t", nil, 1, "sequential field ids"},
		{"sort source missing", testSchema(), PartitionSpec{}, badOrder, "/t", nil, 2, "cannot find source column 98"},
	}
	for _, c := range cases {
		_, err := NewTableMetadata(c.schema, c.spec, c.order, c.loc, c.props, c.v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	_, err := NewTableMetadata(testSchema(), PartitionSpec{}, SortOrder{}, "/t", nil, 4)
	if !errors.Is(err, ErrUnsupportedFormatVersion) {
		t.Errorf("v4: %v does not wrap ErrUnsupportedFormatVersion", err)
	}
}
