package expire

import (
	"context"
	"fmt"
	"slices"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// planMetadataCleanup sets p.RemoveSpecIDs and p.RemoveSchemaIDs to the
// partition specs and schemas the table keeps no use for once p is
// applied: Java's RemoveSnapshots with cleanExpiredMetadata. A spec is
// used while a manifest of a retained snapshot (data or delete) was
// written with it, because readers take a manifest's partition type from
// the table's spec of that id; a schema while a retained snapshot names
// it. The default spec and the current schema always stay. If a retained
// snapshot names no schema (old v1 writers), no schema is removed: which
// one its readers use is not recorded.
//
// It reads the manifest list of every retained snapshot; one that cannot
// be read fails the plan, so that nothing is committed.
func planMetadataCleanup(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, p *Plan) error {
	p.RemoveSpecIDs, p.RemoveSchemaIDs = nil, nil
	specs := map[int]bool{md.DefaultSpecID: true}
	schemas := map[int]bool{md.CurrentSchemaID: true}
	keepSchemas := false
	for _, r := range p.Retain {
		snap, ok := md.SnapshotByID(r.SnapshotID)
		if !ok {
			return fmt.Errorf("retained snapshot %d is not in the table", r.SnapshotID)
		}
		if snap.SchemaID == nil {
			keepSchemas = true
		} else {
			schemas[*snap.SchemaID] = true
		}
		mfs, err := table.ManifestFiles(ctx, fio, snap)
		if err != nil {
			return fmt.Errorf("read the manifests of retained snapshot %d: %w", r.SnapshotID, err)
		}
		for _, mf := range mfs {
			specs[int(mf.SpecID)] = true
		}
	}
	for _, s := range md.PartitionSpecs {
		if !specs[s.ID] {
			p.RemoveSpecIDs = append(p.RemoveSpecIDs, s.ID)
		}
	}
	if !keepSchemas {
		for _, s := range md.Schemas {
			if !schemas[s.ID] {
				p.RemoveSchemaIDs = append(p.RemoveSchemaIDs, s.ID)
			}
		}
	}
	slices.Sort(p.RemoveSpecIDs)
	slices.Sort(p.RemoveSchemaIDs)
	return nil
}
