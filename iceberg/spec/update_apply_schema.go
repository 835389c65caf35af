package spec

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
)

// addSchema adds s under an id the table chooses (Java's
// reuseOrCreateNewSchemaId): the id of an identical schema, or one above
// the highest id and at least the current one.
func (b *builder) addSchema(s Schema) error {
	m := b.m
	if err := checkSchema(s, m.FormatVersion); err != nil {
		return err
	}
	newID := m.CurrentSchemaID
	for _, old := range m.Schemas {
		if sameSchema(old, s) {
			id := old.ID
			b.lastAddedSchema = &id
			return nil
		}
		if old.ID >= newID {
			newID = old.ID + 1
		}
	}
	s.ID = newID
	m.Schemas = append(m.Schemas, s)
	m.LastColumnID = max(m.LastColumnID, s.HighestFieldID())
	b.lastAddedSchema = &newID
	return nil
}

func sameSchema(a, b Schema) bool {
	return reflect.DeepEqual(a.Fields, b.Fields) &&
		slices.Equal(a.IdentifierFieldIDs, b.IdentifierFieldIDs)
}

// v3OnlyTypes are the types Java's Schema.checkCompatibility refuses
// before format v3.
func isV3OnlyType(t Type) bool {
	switch t.(type) {
	case TimestampNsType, TimestampTzNsType, UnknownType, VariantType, GeometryType, GeographyType:
		return true
	}
	return false
}

// checkSchema checks that field ids are positive and unique, identifier
// fields exist, and the types and defaults fit the format version.
func checkSchema(s Schema, formatVersion int) error {
	seen := map[int]string{}
	var err error
	walkFields(s.AsStruct(), func(f NestedField) bool {
		switch {
		case f.ID <= 0:
			err = fmt.Errorf("field %q has invalid id %d: ids must be positive", f.Name, f.ID)
		case f.ID > MaxUserFieldID:
			err = fmt.Errorf("field %q has id %d above the highest user field id %d", f.Name, f.ID, MaxUserFieldID)
		case seen[f.ID] != "":
			err = fmt.Errorf("fields %q and %q have the same id %d", seen[f.ID], f.Name, f.ID)
		case f.Type == nil:
			err = fmt.Errorf("field %q (id %d) has no type", f.Name, f.ID)
		case formatVersion < 3 && isV3OnlyType(f.Type):
			err = fmt.Errorf("field %q has type %s, which needs format v3 (table is v%d)", f.Name, f.Type, formatVersion)
		case formatVersion < 3 && f.InitialDefault != nil && !isJSONNull(f.InitialDefault):
			err = fmt.Errorf("field %q has an initial-default, which needs format v3 (table is v%d)", f.Name, formatVersion)
		}
		seen[f.ID] = f.Name
		return err == nil
	})
	if err != nil {
		return fmt.Errorf("invalid schema: %w", err)
	}
	for _, id := range s.IdentifierFieldIDs {
		if _, ok := seen[id]; !ok {
			return fmt.Errorf("invalid schema: identifier field id %d is not a field", id)
		}
	}
	return nil
}

func (b *builder) setCurrentSchema(id int) error {
	if id == LastAdded {
		if b.lastAddedSchema == nil {
			return errors.New("cannot set last added schema: no schema has been added")
		}
		id = *b.lastAddedSchema
	}
	if _, ok := b.m.SchemaByID(id); !ok {
		return fmt.Errorf("cannot set current schema to unknown schema: %d", id)
	}
	b.m.CurrentSchemaID = id
	return nil
}

// addSpec adds a partition spec bound to the current schema. Its id is
// that of a spec with the same fields (Java's compatibleWith ignores field
// ids), or one above the highest. Fields without an id get one (see
// assignSpecFieldIDs).
func (b *builder) addSpec(spec PartitionSpec) error {
	m := b.m
	if err := checkSpecSources(spec, m.CurrentSchema()); err != nil {
		return err
	}
	newID := 0
	for _, old := range m.PartitionSpecs {
		if compatibleSpecs(old, spec) {
			id := old.ID
			b.lastAddedSpec = &id
			return nil
		}
		if old.ID >= newID {
			newID = old.ID + 1
		}
	}
	spec.ID = newID
	last, err := assignSpecFieldIDs(&spec, m.FormatVersion, m.LastPartitionID)
	if err != nil {
		return err
	}
	m.LastPartitionID = last
	m.PartitionSpecs = append(m.PartitionSpecs, spec)
	b.lastAddedSpec = &newID
	return nil
}

// assignSpecFieldIDs gives fields without an id (FieldID <= 0) one, checks
// the ids are unique, and returns the new last-partition-id. v2+ ids come
// from lastPartitionID; v1 specs number their fields 1000, 1001, ... each,
// and Java refuses a v1 spec that does not.
func assignSpecFieldIDs(spec *PartitionSpec, formatVersion, lastPartitionID int) (int, error) {
	spec.Fields = slices.Clone(spec.Fields)
	last := max(lastPartitionID, partitionDataIDStart-1)
	for _, f := range spec.Fields {
		last = max(last, f.FieldID)
	}
	seen := map[int]bool{}
	for i := range spec.Fields {
		f := &spec.Fields[i]
		if f.FieldID <= 0 {
			if formatVersion == 1 {
				f.FieldID = partitionDataIDStart + i
			} else {
				last++
				f.FieldID = last
			}
		}
		if seen[f.FieldID] {
			return 0, fmt.Errorf("partition spec has duplicate field id %d", f.FieldID)
		}
		seen[f.FieldID] = true
		if formatVersion == 1 && f.FieldID != partitionDataIDStart+i {
			return 0, fmt.Errorf("partition spec does not use the sequential field ids format v1 requires: field %q has id %d, want %d",
				f.Name, f.FieldID, partitionDataIDStart+i)
		}
		last = max(last, f.FieldID)
	}
	return last, nil
}

func compatibleSpecs(a, b PartitionSpec) bool {
	if len(a.Fields) != len(b.Fields) {
		return false
	}
	for i, f := range a.Fields {
		g := b.Fields[i]
		if f.SourceID != g.SourceID || !slices.Equal(f.SourceIDs, g.SourceIDs) ||
			f.Transform.String() != g.Transform.String() || f.Name != g.Name {
			return false
		}
	}
	return true
}

// checkSpecSources checks what Java's PartitionSpec.checkCompatibility
// does that we can: known transforms, source columns present (void fields
// may outlive theirs), and unique names.
func checkSpecSources(spec PartitionSpec, schema *Schema) error {
	names := map[string]bool{}
	for _, f := range spec.Fields {
		if f.Name == "" {
			return errors.New("partition field has no name")
		}
		if names[f.Name] {
			return fmt.Errorf("partition spec has two fields named %q", f.Name)
		}
		names[f.Name] = true
		if err := checkTransformSources(f.Transform, f.SourceID, f.SourceIDs, schema); err != nil {
			return fmt.Errorf("partition field %q: %w", f.Name, err)
		}
	}
	return nil
}

func checkTransformSources(t Transform, sourceID int, sourceIDs []int, schema *Schema) error {
	if t.Kind == TransformUnknown {
		return fmt.Errorf("unknown transform %q cannot be used for new data", t.Raw)
	}
	if t.Kind == TransformVoid {
		return nil
	}
	ids := sourceIDs
	if len(ids) == 0 {
		ids = []int{sourceID}
	}
	for _, id := range ids {
		if _, ok := schema.FindField(id); !ok {
			return fmt.Errorf("cannot find source column %d in the current schema", id)
		}
	}
	return nil
}

func (b *builder) setDefaultSpec(id int) error {
	if id == LastAdded {
		if b.lastAddedSpec == nil {
			return errors.New("cannot set last added spec: no spec has been added")
		}
		id = *b.lastAddedSpec
	}
	if _, ok := b.m.SpecByID(id); !ok {
		return fmt.Errorf("cannot set default partition spec to unknown spec: %d", id)
	}
	b.m.DefaultSpecID = id
	return nil
}

// addSortOrder adds a sort order: unsorted is always order 0; otherwise
// the id of an identical order, or one above the highest (at least 1).
func (b *builder) addSortOrder(o SortOrder) error {
	m := b.m
	if len(o.Fields) == 0 {
		id := 0
		if _, ok := m.SortOrderByID(0); !ok {
			m.SortOrders = append(m.SortOrders, SortOrder{OrderID: 0, Fields: []SortField{}})
		}
		b.lastAddedOrder = &id
		return nil
	}
	schema := m.CurrentSchema()
	for _, f := range o.Fields {
		if err := checkTransformSources(f.Transform, f.SourceID, f.SourceIDs, schema); err != nil {
			return fmt.Errorf("sort field: %w", err)
		}
		if f.Direction != "asc" && f.Direction != "desc" {
			return fmt.Errorf("sort field: invalid direction %q", f.Direction)
		}
		if f.NullOrder != "nulls-first" && f.NullOrder != "nulls-last" {
			return fmt.Errorf("sort field: invalid null-order %q", f.NullOrder)
		}
	}
	newID := 1
	for _, old := range m.SortOrders {
		if sameSortOrder(old, o) {
			id := old.OrderID
			b.lastAddedOrder = &id
			return nil
		}
		if old.OrderID >= newID {
			newID = old.OrderID + 1
		}
	}
	o.OrderID = newID
	m.SortOrders = append(m.SortOrders, o)
	b.lastAddedOrder = &newID
	return nil
}

func sameSortOrder(a, b SortOrder) bool {
	if len(a.Fields) != len(b.Fields) {
		return false
	}
	for i, f := range a.Fields {
		g := b.Fields[i]
		if f.SourceID != g.SourceID || !slices.Equal(f.SourceIDs, g.SourceIDs) ||
			f.Transform.String() != g.Transform.String() || f.Direction != g.Direction || f.NullOrder != g.NullOrder {
			return false
		}
	}
	return true
}

func (b *builder) setDefaultSortOrder(id int) error {
	if id == LastAdded {
		if b.lastAddedOrder == nil {
			return errors.New("cannot set last added sort order: no sort order has been added")
		}
		id = *b.lastAddedOrder
	}
	if _, ok := b.m.SortOrderByID(id); !ok {
		return fmt.Errorf("cannot set default sort order to unknown sort order: %d", id)
	}
	b.m.DefaultSortOrderID = id
	return nil
}
