package table

// STUB until the expire branch (iceberg/table/reachable.go) is merged: the
// same API, a simple sequential walk. Deleted when that branch lands.

import (
	"context"
	"fmt"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

type FileKind int

const (
	KindManifestList FileKind = iota
	KindManifest
	KindData
	KindPositionDeletes
	KindEqualityDeletes
	KindDV
	KindStatistics
	KindPartitionStatistics
)

type ReachableFile struct {
	Path       string
	Kind       FileKind
	SnapshotID int64
	Size       int64
	Status     int
}

func WalkReachable(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, snapshotIDs []int64,
	fn func(ReachableFile) error) error {
	seen := map[string]bool{}
	for _, id := range snapshotIDs {
		snap, ok := md.SnapshotByID(id)
		if !ok {
			return fmt.Errorf("no snapshot %d", id)
		}
		if snap.ManifestList != "" {
			if err := fn(ReachableFile{Path: snap.ManifestList, Kind: KindManifestList, SnapshotID: id}); err != nil {
				return err
			}
		}
		mfs, err := ManifestFiles(ctx, fio, snap)
		if err != nil {
			return err
		}
		for _, mf := range mfs {
			if seen[mf.Path] {
				continue
			}
			seen[mf.Path] = true
			if err := fn(ReachableFile{Path: mf.Path, Kind: KindManifest, SnapshotID: id, Size: mf.Length}); err != nil {
				return err
			}
			err := ReadManifest(ctx, fio, mf, true, func(e FileEntry) error {
				k := KindData
				switch {
				case IsDV(&e.Entry.DataFile):
					k = KindDV
				case e.Entry.DataFile.Content == manifest.ContentPositionDeletes:
					k = KindPositionDeletes
				case e.Entry.DataFile.Content == manifest.ContentEqualityDeletes:
					k = KindEqualityDeletes
				}
				return fn(ReachableFile{Path: e.Entry.DataFile.FilePath, Kind: k, SnapshotID: id,
					Size: e.Entry.DataFile.FileSizeInBytes, Status: int(e.Entry.Status)})
			})
			if err != nil {
				return err
			}
		}
		for _, s := range md.Statistics {
			if s.SnapshotID == id {
				if err := fn(ReachableFile{Path: s.StatisticsPath, Kind: KindStatistics, SnapshotID: id}); err != nil {
					return err
				}
			}
		}
		for _, s := range md.PartitionStatistics {
			if s.SnapshotID == id {
				if err := fn(ReachableFile{Path: s.StatisticsPath, Kind: KindPartitionStatistics, SnapshotID: id}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
