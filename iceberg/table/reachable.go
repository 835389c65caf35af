package table

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// FileKind is what a reachable file is to the table.
type FileKind int

const (
	KindManifestList FileKind = iota
	KindManifest
	KindData
	KindPositionDeletes
	KindEqualityDeletes
	// KindDV is the Puffin file a deletion-vector entry points into; one
	// Puffin file may hold the DVs of many data files (and entries).
	KindDV
	KindStatistics
	KindPartitionStatistics
)

var kindNames = [...]string{
	KindManifestList:        "manifest_list",
	KindManifest:            "manifest",
	KindData:                "data",
	KindPositionDeletes:     "position_deletes",
	KindEqualityDeletes:     "equality_deletes",
	KindDV:                  "dv",
	KindStatistics:          "statistics",
	KindPartitionStatistics: "partition_statistics",
}

// String is the kind's lower-case name, as reports print it.
func (k FileKind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// ReachableFile is one file WalkReachable reached.
type ReachableFile struct {
	Path string
	Kind FileKind
	// SnapshotID is a snapshot the file was reached from (for a manifest,
	// or a file listed in one, shared by several snapshots: any of them).
	SnapshotID int64
	// Size is the file's size when the metadata records it, else 0 (manifest
	// lists).
	Size int64
	// Status is the manifest entry's status (manifest.StatusAdded,
	// StatusExisting, StatusDeleted) for files listed in manifests; 0 for
	// the other kinds. Whether a DELETED entry counts as a reference is the
	// caller's rule.
	Status int
}

// Live reports whether f is a manifest entry a reader of the snapshot
// reads (ADDED or EXISTING), or a file that is not a manifest entry.
func (f ReachableFile) Live() bool {
	switch f.Kind {
	case KindData, KindPositionDeletes, KindEqualityDeletes, KindDV:
		return manifest.EntryStatus(f.Status) != manifest.StatusDeleted
	}
	return true
}

// WalkReachable calls fn for every file reachable from the given snapshots
// of md: their manifest lists (or v1 manifest paths), their manifests, every
// file those manifests list with the entry's status (DELETED entries
// included), the Puffin files of DVs, and the statistics and partition
// statistics files registered for those snapshots.
//
// Manifest lists and manifests are read in parallel, each distinct manifest
// once however many snapshots share it, and manifest entries are decoded in
// place, so memory grows with the number of distinct manifests, not files.
// A manifest is reported once; a data or delete file once per entry that
// lists it. fn is never called concurrently, in no particular order; an
// error from fn stops the walk and is returned as is.
//
// A snapshot id md does not have, or a manifest list or manifest that
// cannot be read, is an error: a caller deciding what is unreferenced must
// never take an unread manifest for an empty one.
func WalkReachable(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, snapshotIDs []int64,
	fn func(ReachableFile) error) error {
	snaps, err := reachableSnapshots(md, snapshotIDs)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &reachWalker{fn: fn}

	mfs, listSizes, err := distinctManifests(ctx, fio, snaps)
	if err != nil {
		return err
	}
	for _, snap := range snaps {
		if snap.ManifestList != "" {
			if err := w.emit(ReachableFile{Path: snap.ManifestList, Kind: KindManifestList, SnapshotID: snap.SnapshotID, Size: listSizes[snap.SnapshotID]}); err != nil {
				return err
			}
		}
	}
	for _, st := range md.Statistics {
		if _, ok := snaps[st.SnapshotID]; ok {
			if err := w.emit(ReachableFile{Path: st.StatisticsPath, Kind: KindStatistics, SnapshotID: st.SnapshotID, Size: st.FileSizeInBytes}); err != nil {
				return err
			}
		}
	}
	for _, st := range md.PartitionStatistics {
		if _, ok := snaps[st.SnapshotID]; ok {
			if err := w.emit(ReachableFile{Path: st.StatisticsPath, Kind: KindPartitionStatistics, SnapshotID: st.SnapshotID, Size: st.FileSizeInBytes}); err != nil {
				return err
			}
		}
	}

	for _, m := range mfs {
		if err := w.emit(ReachableFile{Path: m.mf.Path, Kind: KindManifest, SnapshotID: m.snapshotID, Size: m.mf.Length}); err != nil {
			return err
		}
	}
	return w.readManifests(ctx, fio, mfs)
}

// reachableSnapshots resolves ids to md's snapshots, without duplicates.
func reachableSnapshots(md *spec.TableMetadata, ids []int64) (map[int64]*spec.Snapshot, error) {
	snaps := make(map[int64]*spec.Snapshot, len(ids))
	for _, id := range ids {
		s, ok := md.SnapshotByID(id)
		if !ok {
			return nil, fmt.Errorf("walk reachable files: table has no snapshot %d", id)
		}
		snaps[id] = s
	}
	return snaps, nil
}

// reachedManifest is a distinct manifest and a snapshot that lists it.
type reachedManifest struct {
	mf         manifest.ManifestFile
	snapshotID int64
}

// walkConcurrency is how many files are read at once: decoding is
// CPU-bound, but at least 4 reads overlap object-storage latency on small
// machines.
func walkConcurrency() int { return max(4, runtime.GOMAXPROCS(0)) }

// distinctManifests reads the manifest lists of snaps in parallel and
// returns each manifest they list once, in no particular order, and the
// size of each snapshot's manifest list (which snapshot metadata lacks).
func distinctManifests(ctx context.Context, fio fileio.FileIO, snaps map[int64]*spec.Snapshot) ([]reachedManifest, map[int64]int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		seen  = map[string]bool{}
		out   []reachedManifest
		sizes = make(map[int64]int64, len(snaps))
		first error
	)
	jobs := make(chan *spec.Snapshot)
	budget := manifest.NewBudget(manifest.DefaultBudget)
	// Every manifest list of a table has one of a few schemas: parsing it
	// once instead of once per list is most of the cost of reading
	// thousands of small lists (an expiry of a long history).
	schemas := manifest.NewSchemaCache()
	var wg sync.WaitGroup
	for range min(walkConcurrency(), max(1, len(snaps))) {
		wg.Go(func() {
			for snap := range jobs {
				mfs, size, err := manifestFilesSized(ctx, fio, snap, budget, schemas)
				mu.Lock()
				sizes[snap.SnapshotID] = size
				if err != nil {
					if first == nil {
						first = fmt.Errorf("walk reachable files of snapshot %d: %w", snap.SnapshotID, err)
						cancel()
					}
				} else {
					for _, mf := range mfs {
						if seen[mf.Path] {
							continue
						}
						seen[mf.Path] = true
						// Partition summaries and key metadata are not needed
						// to read the entries' paths; dropping them keeps
						// tables with many manifests small.
						mf.Partitions, mf.KeyMetadata = nil, nil
						out = append(out, reachedManifest{mf: mf, snapshotID: snap.SnapshotID})
					}
				}
				mu.Unlock()
			}
		})
	}
feed:
	for _, snap := range snaps {
		select {
		case jobs <- snap:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if first != nil {
		return nil, nil, first
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return out, sizes, nil
}

// reachWalker serializes the calls of fn and keeps the first error.
type reachWalker struct {
	mu  sync.Mutex
	fn  func(ReachableFile) error
	err error
}

func (w *reachWalker) emit(f ReachableFile) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if err := w.fn(f); err != nil {
		w.err = err
		return err
	}
	return nil
}

// fail records err unless an error was recorded before.
func (w *reachWalker) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// readManifests reads every manifest of mfs, in parallel, reporting their
// entries.
func (w *reachWalker) readManifests(ctx context.Context, fio fileio.FileIO, mfs []reachedManifest) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cache := manifest.NewScanCache()
	jobs := make(chan reachedManifest)
	var wg sync.WaitGroup
	for range min(walkConcurrency(), max(1, len(mfs))) {
		wg.Go(func() {
			sc := manifest.NewEntryScanner(cache)
			defer sc.Close()
			for m := range jobs {
				if err := w.readManifest(ctx, fio, sc, m); err != nil {
					w.fail(err)
					cancel()
				}
			}
		})
	}
feed:
	for _, m := range mfs {
		select {
		case jobs <- m:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	w.mu.Lock()
	err := w.err
	w.mu.Unlock()
	if err != nil {
		return err
	}
	return ctx.Err()
}

// entryKind is the kind of a file a manifest lists.
func entryKind(content manifest.FileContent, format string) (FileKind, error) {
	switch content {
	case manifest.ContentData:
		return KindData, nil
	case manifest.ContentPositionDeletes:
		if strings.EqualFold(format, "puffin") {
			return KindDV, nil
		}
		return KindPositionDeletes, nil
	case manifest.ContentEqualityDeletes:
		return KindEqualityDeletes, nil
	}
	return 0, fmt.Errorf("unknown file content %d", content)
}

func (w *reachWalker) readManifest(ctx context.Context, fio fileio.FileIO, sc *manifest.EntryScanner, m reachedManifest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	fail := func(err error) error {
		return fmt.Errorf("walk reachable files: read manifest %s (snapshot %d): %w", m.mf.Path, m.snapshotID, err)
	}
	f, err := fio.Open(ctx, m.mf.Path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	err = sc.Reset(io.NewSectionReader(f, 0, f.Size()), m.mf)
	if errors.Is(err, manifest.ErrNoFastPath) {
		return w.readManifestSlow(ctx, fio, m, sc.Budget(), fail)
	}
	if err != nil {
		return fail(err)
	}
	var e manifest.SlimEntry
	for n := 0; ; n++ {
		if n%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		err := sc.Next(&e)
		if err == io.EOF { // bare at the end; a wrapped EOF is a truncated file
			return nil
		}
		if err != nil {
			return fail(err)
		}
		kind, err := entryKind(e.Content, e.Format)
		if err != nil {
			return fail(err)
		}
		rf := ReachableFile{Path: string(e.Path), Kind: kind, SnapshotID: m.snapshotID, Size: e.FileSizeInBytes, Status: int(e.Status)}
		if err := w.emit(rf); err != nil {
			return err
		}
	}
}

// readManifestSlow reads a manifest the EntryScanner does not decode with
// the full reader.
func (w *reachWalker) readManifestSlow(ctx context.Context, fio fileio.FileIO, m reachedManifest, budget *manifest.Budget, fail func(error) error) error {
	f, err := fio.Open(ctx, m.mf.Path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	r, err := manifest.OpenManifest(io.NewSectionReader(f, 0, f.Size()), manifest.WithoutMetrics(), manifest.WithBudget(budget))
	if err != nil {
		return fail(err)
	}
	defer r.Close()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fail(err)
		}
		df := &e.DataFile
		kind, err := entryKind(df.Content, df.FileFormat)
		if err != nil {
			return fail(err)
		}
		rf := ReachableFile{Path: df.FilePath, Kind: kind, SnapshotID: m.snapshotID, Size: df.FileSizeInBytes, Status: int(e.Status)}
		if err := w.emit(rf); err != nil {
			return err
		}
	}
}
