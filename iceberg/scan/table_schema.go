package scan

import (
	"fmt"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/spec"
)

func nameMapping(md *spec.TableMetadata) (datafile.NameMapping, error) {
	return spec.NameMappingOf(md.Properties)
}

// topField finds a top-level field by id in the current schema, else in
// the newest older schema that has it: an equality delete may name a column
// dropped since it was written.
func topField(md *spec.TableMetadata, id int) (spec.NestedField, error) {
	if cur := md.CurrentSchema(); cur != nil {
		for _, f := range cur.Fields {
			if f.ID == id {
				return f, nil
			}
		}
	}
	for i := len(md.Schemas) - 1; i >= 0; i-- {
		for _, f := range md.Schemas[i].Fields {
			if f.ID == id {
				return f, nil
			}
		}
	}
	return spec.NestedField{}, fmt.Errorf("equality field id %d is not a top-level column of any schema of the table", id)
}

// projection returns the schema to read: opts.Schema or the current one.
func projection(md *spec.TableMetadata, opts Options) (*spec.Schema, error) {
	if opts.Schema != nil {
		return opts.Schema, nil
	}
	s := md.CurrentSchema()
	if s == nil {
		return nil, fmt.Errorf("table has no current schema %d", md.CurrentSchemaID)
	}
	return s, nil
}
