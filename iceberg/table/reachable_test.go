package table

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/fileio/faultio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

func allSnapshotIDs(md *spec.TableMetadata) []int64 {
	var ids []int64
	for _, s := range md.Snapshots {
		ids = append(ids, s.SnapshotID)
	}
	return ids
}

// reachableByReaders is what WalkReachable must report for ids, computed
// with the full manifest readers: one line per manifest list, statistics
// file, distinct manifest, and entry of a distinct manifest.
func reachableByReaders(t *testing.T, tbl *catalog.Table, ids []int64) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	for _, id := range ids {
		snap, _ := tbl.Metadata.SnapshotByID(id)
		out = append(out, line(snap.ManifestList, KindManifestList, 0))
		mfs, err := ManifestFiles(t.Context(), tbl.IO, snap)
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if seen[mf.Path] {
				continue
			}
			seen[mf.Path] = true
			out = append(out, line(mf.Path, KindManifest, 0))
			err := ReadManifest(t.Context(), tbl.IO, mf, true, func(e FileEntry) error {
				k := KindData
				switch df := &e.Entry.DataFile; {
				case IsDV(df):
					k = KindDV
				case df.Content == manifest.ContentPositionDeletes:
					k = KindPositionDeletes
				case df.Content == manifest.ContentEqualityDeletes:
					k = KindEqualityDeletes
				}
				out = append(out, line(e.Entry.DataFile.FilePath, k, int(e.Entry.Status)))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range tbl.Metadata.Statistics {
		if slices.Contains(ids, s.SnapshotID) {
			out = append(out, line(s.StatisticsPath, KindStatistics, 0))
		}
	}
	for _, s := range tbl.Metadata.PartitionStatistics {
		if slices.Contains(ids, s.SnapshotID) {
			out = append(out, line(s.StatisticsPath, KindPartitionStatistics, 0))
		}
	}
	slices.Sort(out)
	return out
}

func line(path string, k FileKind, status int) string {
	return fmt.Sprintf("%s %s %d", path, k, status)
}

func walkLines(t *testing.T, fio fileio.FileIO, md *spec.TableMetadata, ids []int64) ([]string, error) {
	t.Helper()
	var out []string
	var inside atomic.Int32
	err := WalkReachable(t.Context(), fio, md, ids, func(f ReachableFile) error {
		if inside.Add(1) != 1 {
			t.Error("fn called concurrently")
		}
		defer inside.Add(-1)
		if f.SnapshotID == 0 || !slices.Contains(ids, f.SnapshotID) {
			t.Errorf("%s reached from snapshot %d, not one of %v", f.Path, f.SnapshotID, ids)
		}
		if f.Kind != KindManifestList && f.Size <= 0 {
			t.Errorf("%s (%s) has size %d", f.Path, f.Kind, f.Size)
		}
		out = append(out, line(f.Path, f.Kind, f.Status))
		return nil
	})
	slices.Sort(out)
	return out, err
}

// WalkReachable reports every file the full readers reach, each manifest
// once, with DELETED entries, DVs' Puffin files and statistics files; for
// all snapshots and for subsets.
func TestWalkReachableMatchesReaders(t *testing.T) {
	for _, v := range []int{2, 3} {
		_, tbl, _ := partitionedTable(t, v)
		md := *tbl.Metadata
		ids := allSnapshotIDs(&md)
		md.Statistics = []spec.StatisticsFile{{SnapshotID: ids[2], StatisticsPath: md.Location + "/metadata/s2.stats", FileSizeInBytes: 10}}
		md.PartitionStatistics = []spec.PartitionStatisticsFile{{SnapshotID: ids[len(ids)-1], StatisticsPath: md.Location + "/metadata/p.parquet", FileSizeInBytes: 11}}
		tbl.Metadata = &md
		for _, subset := range [][]int64{ids, ids[len(ids)-1:], ids[:3], {ids[1], ids[1], ids[5]}, nil} {
			want := reachableByReaders(t, tbl, slices.Compact(slices.Clone(subset)))
			got, err := walkLines(t, tbl.IO, &md, subset)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("v%d snapshots %v:\n got %q\nwant %q", v, subset, got, want)
			}
		}
		all, _ := walkLines(t, tbl.IO, &md, ids)
		joined := strings.Join(all, "\n")
		for _, want := range []string{" data 2", " equality_deletes 1", " statistics 0", " partition_statistics 0", " manifest_list 0"} {
			if !strings.Contains(joined, want) {
				t.Errorf("v%d: no %q in the walk", v, want)
			}
		}
		if kind := map[int]string{2: " position_deletes 1", 3: " dv 1"}[v]; !strings.Contains(joined, kind) {
			t.Errorf("v%d: no %q in the walk", v, kind)
		}
	}
}

// Missing or corrupt manifest lists and manifests, and unknown snapshot
// ids, are errors naming the file; an error from fn stops the walk.
func TestWalkReachableErrors(t *testing.T) {
	e, tbl, snap := partitionedTable(t, 2)
	ids := allSnapshotIDs(tbl.Metadata)
	mfs, err := ManifestFiles(e.ctx, tbl.IO, snap)
	if err != nil {
		t.Fatal(err)
	}
	list := filepath.Base(tbl.Metadata.Snapshots[0].ManifestList)
	mf := filepath.Base(mfs[len(mfs)/2].Path)
	for _, c := range []struct{ name, substr string }{{"manifest list", list}, {"manifest", mf}} {
		fio := faultio.New(tbl.IO)
		fio.FailPath(faultio.Open, c.substr)
		_, err := walkLines(t, fio, tbl.Metadata, ids)
		if err == nil || !strings.Contains(err.Error(), c.substr) {
			t.Errorf("%s cannot be opened: error %v", c.name, err)
		}
	}

	// A truncated manifest (the fast path) and one that is not Avro.
	for _, damage := range []func([]byte) []byte{
		func(b []byte) []byte { return b[:len(b)-40] },
		func([]byte) []byte { return []byte("not a manifest") },
	} {
		path := mfs[0].Path
		orig, err := fileio.ReadFile(e.ctx, tbl.IO, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := fileio.WriteFile(e.ctx, tbl.IO, path, damage(slices.Clone(orig))); err != nil {
			t.Fatal(err)
		}
		_, err = walkLines(t, tbl.IO, tbl.Metadata, ids)
		if err == nil || !strings.Contains(err.Error(), filepath.Base(path)) {
			t.Errorf("damaged manifest: error %v", err)
		}
		if err := fileio.WriteFile(e.ctx, tbl.IO, path, orig); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := walkLines(t, tbl.IO, tbl.Metadata, []int64{ids[0], 42}); err == nil || !strings.Contains(err.Error(), "no snapshot 42") {
		t.Errorf("unknown snapshot: %v", err)
	}
	stop := errors.New("stop")
	n := 0
	err = WalkReachable(e.ctx, tbl.IO, tbl.Metadata, ids, func(ReachableFile) error {
		n++
		if n == 5 {
			return stop
		}
		return nil
	})
	if err != stop || n != 5 {
		t.Errorf("fn error: %v after %d calls", err, n)
	}
}
