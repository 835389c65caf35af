package partstats

import (
	"errors"
	"fmt"
	"slices"

	"github.com/icectl/icectl/iceberg/spec"
)

// ErrUnpartitioned is returned for a table none of whose specs partitions
// anything: its statistics would be one row of the table's totals, and the
// file's partition struct would have no field (Java refuses too).
var ErrUnpartitioned = errors.New("the table is unpartitioned (every spec is empty or void): partition statistics are kept only for partitioned tables")

// Field ids and names of the partition statistics file (spec "Partition
// Statistics").
const (
	FieldPartition                 = 1
	FieldSpecID                    = 2
	FieldDataRecordCount           = 3
	FieldDataFileCount             = 4
	FieldTotalDataFileSizeInBytes  = 5
	FieldPositionDeleteRecordCount = 6
	FieldPositionDeleteFileCount   = 7
	FieldEqualityDeleteRecordCount = 8
	FieldEqualityDeleteFileCount   = 9
	FieldTotalRecordCount          = 10
	FieldLastUpdatedAt             = 11
	FieldLastUpdatedSnapshotID     = 12
	FieldDVCount                   = 13
)

// Schema is the file's schema for a table of format version fv whose
// unified partition type is partition: v1 and v2 have fields 1-12 with
// the delete counts optional; v3 makes them required and adds dv_count
// (required, initial and write default 0, so a v3 reader reads a v2 file).
func Schema(partition *spec.StructType, fv int) *spec.Schema {
	delReq := fv >= 3
	fields := []spec.NestedField{
		{ID: FieldPartition, Name: "partition", Type: partition, Required: true},
		{ID: FieldSpecID, Name: "spec_id", Type: spec.IntType{}, Required: true},
		{ID: FieldDataRecordCount, Name: "data_record_count", Type: spec.LongType{}, Required: true},
		{ID: FieldDataFileCount, Name: "data_file_count", Type: spec.IntType{}, Required: true},
		{ID: FieldTotalDataFileSizeInBytes, Name: "total_data_file_size_in_bytes", Type: spec.LongType{}, Required: true},
		{ID: FieldPositionDeleteRecordCount, Name: "position_delete_record_count", Type: spec.LongType{}, Required: delReq},
		{ID: FieldPositionDeleteFileCount, Name: "position_delete_file_count", Type: spec.IntType{}, Required: delReq},
		{ID: FieldEqualityDeleteRecordCount, Name: "equality_delete_record_count", Type: spec.LongType{}, Required: delReq},
		{ID: FieldEqualityDeleteFileCount, Name: "equality_delete_file_count", Type: spec.IntType{}, Required: delReq},
		{ID: FieldTotalRecordCount, Name: "total_record_count", Type: spec.LongType{}},
		{ID: FieldLastUpdatedAt, Name: "last_updated_at", Type: spec.LongType{}},
		{ID: FieldLastUpdatedSnapshotID, Name: "last_updated_snapshot_id", Type: spec.LongType{}},
	}
	if fv >= 3 {
		fields = append(fields, spec.NestedField{ID: FieldDVCount, Name: "dv_count", Type: spec.IntType{}, Required: true,
			InitialDefault: []byte("0"), WriteDefault: []byte("0")})
	}
	return &spec.Schema{Fields: fields}
}

// PartitionType is md's unified partition type, as Java's
// Partitioning.partitionType builds it: every partition field of every
// spec whose source column the current schema still has, once by field
// id, in field id order, all optional; a field takes its name from the
// newest spec that has it and its type from a spec where it is not void.
// A field that two specs define differently (v1 tables) is an error.
func PartitionType(md *spec.TableMetadata) (*spec.StructType, error) {
	sc := md.CurrentSchema()
	if sc == nil {
		return nil, errors.New("partition type: the table has no current schema")
	}
	partitioned := false
	specs := slices.Clone(md.PartitionSpecs)
	slices.SortFunc(specs, func(a, b spec.PartitionSpec) int { return b.ID - a.ID }) // newest first
	type seen struct {
		pf    spec.PartitionField
		field spec.NestedField
	}
	byID := map[int]*seen{}
	for i := range specs {
		ps := &specs[i]
		if !ps.IsUnpartitioned() {
			partitioned = true
		}
		pt := ps.PartitionType(sc)
		for j, pf := range ps.Fields {
			if len(pf.SourceIDs) > 1 {
				return nil, fmt.Errorf("partition type: spec %d field %s has a multi-argument transform, which icectl does not support yet", ps.ID, pf.Name)
			}
			if _, ok := sc.FindField(pf.SourceID); !ok {
				continue // its source column was dropped: Java leaves it out
			}
			f := pt.Fields[j]
			if f.Type == nil {
				return nil, fmt.Errorf("partition type: spec %d field %s has transform %s, unknown to icectl", ps.ID, pf.Name, pf.Transform)
			}
			old := byID[pf.FieldID]
			if old == nil {
				byID[pf.FieldID] = &seen{pf: pf, field: f}
				continue
			}
			if !equivalent(old.pf, pf) {
				return nil, fmt.Errorf("partition type: conflicting partition fields with id %d: %s(%d) in one spec, %s(%d) in another",
					pf.FieldID, old.pf.Transform, old.pf.SourceID, pf.Transform, pf.SourceID)
			}
			if old.pf.Transform.Kind == spec.TransformVoid && pf.Transform.Kind != spec.TransformVoid {
				old.pf, old.field.Type = pf, f.Type // the name stays the newest spec's
			}
		}
	}
	if !partitioned {
		return nil, ErrUnpartitioned
	}
	out := &spec.StructType{}
	for _, s := range byID {
		out.Fields = append(out.Fields, spec.NestedField{ID: s.pf.FieldID, Name: s.field.Name, Type: s.field.Type})
	}
	if len(out.Fields) == 0 {
		return nil, ErrUnpartitioned
	}
	slices.SortFunc(out.Fields, func(a, b spec.NestedField) int { return a.ID - b.ID })
	return out, nil
}

// equivalent is Java's equivalentIgnoringNames for one field id seen in
// two specs: the same source and transform, or either one void.
func equivalent(a, b spec.PartitionField) bool {
	if a.Transform.Kind == spec.TransformVoid || b.Transform.Kind == spec.TransformVoid {
		return a.SourceID == b.SourceID
	}
	return a.SourceID == b.SourceID && a.Transform.String() == b.Transform.String()
}
