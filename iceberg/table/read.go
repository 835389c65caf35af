package table

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// FileEntry is one manifest entry with inheritance applied (snapshot id,
// sequence numbers, first_row_id) and DataFile.SpecID set, together with
// the manifest-list entry it was read through.
type FileEntry struct {
	Manifest manifest.ManifestFile
	Entry    manifest.Entry
}

// Key identifies the entry's file among a snapshot's live files.
func (e FileEntry) Key() FileKey { return KeyOf(&e.Entry.DataFile) }

// DataSequenceNumber is the entry's data sequence number (0 when unknown,
// as for v1).
func (e FileEntry) DataSequenceNumber() int64 {
	if e.Entry.SequenceNumber == nil {
		return 0
	}
	return *e.Entry.SequenceNumber
}

// ContentFilter selects manifests by what they list.
type ContentFilter int

const (
	AllContent ContentFilter = iota
	DataOnly
	DeletesOnly
)

// WalkOptions tune WalkEntries.
type WalkOptions struct {
	Content ContentFilter
	// IncludeDeleted also yields entries with status DELETED, which scans
	// ignore.
	IncludeDeleted bool
	// Concurrency is how many manifests are read at once (default 4).
	Concurrency int
	// SkipMetrics reads entries without their column metrics (see
	// manifest.WithoutMetrics): much faster, for readers such as planning
	// that need only paths, partitions, sizes, sequence numbers and the
	// file_path bound of position deletes. Such entries must never be
	// written to a manifest.
	SkipMetrics bool
	// Schemas, when set, parses each distinct manifest header once for
	// this walk and the others sharing it (see manifest.SchemaCache);
	// otherwise the walk has a cache of its own.
	Schemas *manifest.SchemaCache
}

// ManifestFiles returns the manifests of snap, from its manifest list or,
// for v1 snapshots without one, its "manifests" field.
func ManifestFiles(ctx context.Context, fio fileio.FileIO, snap *spec.Snapshot) ([]manifest.ManifestFile, error) {
	return manifestFiles(ctx, fio, snap, nil, nil)
}

// manifestFiles is ManifestFiles charging the list's blocks to budget and
// taking its schema from schemas, both shared with the other lists read at
// the same time (either may be nil).
func manifestFiles(ctx context.Context, fio fileio.FileIO, snap *spec.Snapshot, budget *manifest.Budget, schemas *manifest.SchemaCache) ([]manifest.ManifestFile, error) {
	mfs, _, err := manifestFilesSized(ctx, fio, snap, budget, schemas)
	return mfs, err
}

// manifestFilesSized is manifestFiles with the size of the manifest list
// (0 for a v1 snapshot without one), which snapshot metadata does not give.
func manifestFilesSized(ctx context.Context, fio fileio.FileIO, snap *spec.Snapshot, budget *manifest.Budget, schemas *manifest.SchemaCache) ([]manifest.ManifestFile, int64, error) {
	if snap == nil {
		return nil, 0, nil
	}
	if snap.ManifestList == "" {
		mfs, err := v1Manifests(ctx, fio, snap)
		return mfs, 0, err
	}
	f, err := fio.Open(ctx, snap.ManifestList)
	if err != nil {
		return nil, 0, fmt.Errorf("open manifest list of snapshot %d: %w", snap.SnapshotID, err)
	}
	defer f.Close()
	size := f.Size()
	mfs, err := readManifestList(f, snap, budget, schemas)
	return mfs, size, err
}

func readManifestList(f fileio.File, snap *spec.Snapshot, budget *manifest.Budget, schemas *manifest.SchemaCache) ([]manifest.ManifestFile, error) {
	lr, err := manifest.OpenManifestList(io.NewSectionReader(f, 0, f.Size()), manifest.WithBudget(budget), manifest.WithSchemaCache(schemas))
	if err != nil {
		return nil, fmt.Errorf("read manifest list %s: %w", snap.ManifestList, err)
	}
	defer lr.Close()
	var out []manifest.ManifestFile
	for {
		mf, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read manifest list %s: %w", snap.ManifestList, err)
		}
		out = append(out, mf)
	}
}

// v1Manifests describes the manifests a v1 snapshot lists by path. Their
// spec id is only in each manifest's own metadata.
func v1Manifests(ctx context.Context, fio fileio.FileIO, snap *spec.Snapshot) ([]manifest.ManifestFile, error) {
	out := make([]manifest.ManifestFile, 0, len(snap.Manifests))
	for _, p := range snap.Manifests {
		f, err := fio.Open(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("open manifest of snapshot %d: %w", snap.SnapshotID, err)
		}
		r, err := manifest.OpenManifest(io.NewSectionReader(f, 0, f.Size()))
		size := f.Size()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read manifest %s: %w", p, err)
		}
		specID, err := strconv.Atoi(r.Meta().Metadata["partition-spec-id"])
		if err != nil {
			specID = r.Meta().Spec.ID
		}
		out = append(out, manifest.ManifestFile{
			Path: p, Length: size, SpecID: int32(specID), Content: manifest.ManifestContentData,
			AddedSnapshotID: snap.SnapshotID,
		})
	}
	return out, nil
}

// ReadManifest calls fn for each entry of the manifest mf, with
// inheritance applied; DELETED entries only when includeDeleted.
func ReadManifest(ctx context.Context, fio fileio.FileIO, mf manifest.ManifestFile, includeDeleted bool, fn func(FileEntry) error) error {
	return readManifest(ctx, fio, mf, includeDeleted, nil, fn)
}

func readManifest(ctx context.Context, fio fileio.FileIO, mf manifest.ManifestFile, includeDeleted bool,
	opts []manifest.ReadOption, fn func(FileEntry) error) error {
	f, err := fio.Open(ctx, mf.Path)
	if err != nil {
		return fmt.Errorf("open manifest: %w", err)
	}
	defer f.Close()
	r, err := manifest.OpenManifest(io.NewSectionReader(f, 0, f.Size()), opts...)
	if err != nil {
		return fmt.Errorf("read manifest %s: %w", mf.Path, err)
	}
	defer r.Close()
	r.InheritFrom(mf)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read manifest %s: %w", mf.Path, err)
		}
		if e.Status == manifest.StatusDeleted && !includeDeleted {
			continue
		}
		e.DataFile.SpecID = mf.SpecID
		if err := checkContent(mf, &e.DataFile); err != nil {
			return fmt.Errorf("read manifest %s: %w", mf.Path, err)
		}
		if err := fn(FileEntry{Manifest: mf, Entry: e}); err != nil {
			return err
		}
	}
}

// checkContent refuses a file whose content contradicts its manifest: a
// delete file read as data (or the reverse) would silently change rows.
func checkContent(mf manifest.ManifestFile, df *manifest.DataFile) error {
	isData := df.Content == manifest.ContentData
	if isData != (mf.Content == manifest.ManifestContentData) {
		return fmt.Errorf("file %s has content %d in a manifest with content %d", df.FilePath, df.Content, mf.Content)
	}
	return nil
}

func wanted(c ContentFilter, mf manifest.ManifestFile) bool {
	switch c {
	case DataOnly:
		return mf.Content == manifest.ManifestContentData
	case DeletesOnly:
		return mf.Content == manifest.ManifestContentDeletes
	}
	return true
}

// WalkEntries calls fn for every entry of snap's manifests. Manifests are
// read with bounded concurrency, but fn is called from one goroutine in a
// fixed order: manifest-list order, then file order. At most Concurrency
// manifests are held in memory at once. An error from fn stops the walk.
func WalkEntries(ctx context.Context, fio fileio.FileIO, snap *spec.Snapshot, opts WalkOptions, fn func(FileEntry) error) error {
	all, err := ManifestFiles(ctx, fio, snap)
	if err != nil {
		return err
	}
	return walkManifests(ctx, fio, selectManifests(opts.Content, all), opts, fn)
}

// WalkManifests is WalkEntries over the manifests mfs, in their order.
func WalkManifests(ctx context.Context, fio fileio.FileIO, mfs []manifest.ManifestFile, opts WalkOptions, fn func(FileEntry) error) error {
	return walkManifests(ctx, fio, mfs, opts, fn)
}

func selectManifests(c ContentFilter, all []manifest.ManifestFile) []manifest.ManifestFile {
	var mfs []manifest.ManifestFile
	for _, mf := range all {
		if wanted(c, mf) {
			mfs = append(mfs, mf)
		}
	}
	return mfs
}

type manifestResult struct {
	entries []FileEntry
	err     error
}

func walkManifests(ctx context.Context, fio fileio.FileIO, mfs []manifest.ManifestFile, opts WalkOptions, fn func(FileEntry) error) error {
	n := opts.Concurrency
	if n <= 0 {
		n = 4
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]chan manifestResult, len(mfs))
	for i := range results {
		results[i] = make(chan manifestResult, 1)
	}
	// The manifests read at once share one budget for their decompressed
	// blocks, so concurrency does not multiply what a crafted table costs.
	// A walk without the caller's cache still parses each distinct
	// header once, and lends its readers' buffers from one to the next.
	schemas := opts.Schemas
	if schemas == nil {
		schemas = manifest.NewSchemaCache()
	}
	ropts := []manifest.ReadOption{manifest.WithBudget(manifest.NewBudget(manifest.DefaultBudget)), manifest.WithSchemaCache(schemas)}
	if opts.SkipMetrics {
		ropts = append(ropts, manifest.WithoutMetrics())
	}
	slots := make(chan struct{}, n)
	go func() {
		for i, mf := range mfs {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go func() {
				res := manifestResult{entries: make([]FileEntry, 0, liveCount(mf))}
				res.err = readManifest(ctx, fio, mf, opts.IncludeDeleted, ropts, func(e FileEntry) error {
					res.entries = append(res.entries, e)
					return nil
				})
				results[i] <- res
			}()
		}
	}()
	for i := range mfs {
		var res manifestResult
		select {
		case res = <-results[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		if res.err != nil {
			return res.err
		}
		for _, e := range res.entries {
			if err := fn(e); err != nil {
				return err
			}
		}
		<-slots
	}
	return nil
}

// FileSet is the live files of a snapshot.
type FileSet struct {
	Data    []FileEntry
	Deletes []FileEntry
	// snapshotID is the snapshot LiveFiles read the set from, when whole
	// is set: every live file of it, of every content.
	snapshotID int64
	whole      bool
}

// allOf reports whether fs holds every live file of snap, as LiveFiles
// read them.
func (fs *FileSet) allOf(snap *spec.Snapshot) bool {
	return fs != nil && fs.whole && snap != nil && fs.snapshotID == snap.SnapshotID
}

// LiveFiles returns the live (ADDED or EXISTING) data and delete files of
// snap; an empty set when snap is nil.
func LiveFiles(ctx context.Context, fio fileio.FileIO, snap *spec.Snapshot) (*FileSet, error) {
	return LiveFilesWith(ctx, fio, snap, WalkOptions{})
}

// LiveFilesWith is LiveFiles with walk options: Content, Concurrency and
// SkipMetrics apply; IncludeDeleted is ignored, since deleted entries are
// not live.
func LiveFilesWith(ctx context.Context, fio fileio.FileIO, snap *spec.Snapshot, opts WalkOptions) (*FileSet, error) {
	opts.IncludeDeleted = false
	all, err := ManifestFiles(ctx, fio, snap)
	if err != nil {
		return nil, err
	}
	mfs := selectManifests(opts.Content, all)
	// Sizing the sets from the manifest list's counts spares the copies
	// (and the doubled peak memory) of growing them an entry at a time.
	var nData, nDeletes int
	for _, mf := range mfs {
		if mf.Content == manifest.ManifestContentData {
			nData += liveCount(mf)
		} else {
			nDeletes += liveCount(mf)
		}
	}
	fs := &FileSet{Data: make([]FileEntry, 0, min(nData, maxSizeHint)), Deletes: make([]FileEntry, 0, min(nDeletes, maxSizeHint))}
	err = walkManifests(ctx, fio, mfs, opts, func(e FileEntry) error {
		if e.Entry.DataFile.Content == manifest.ContentData {
			fs.Data = append(fs.Data, e)
		} else {
			fs.Deletes = append(fs.Deletes, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if snap != nil && opts.Content == AllContent {
		fs.snapshotID, fs.whole = snap.SnapshotID, true
	}
	return fs, nil
}

// liveCount is how many live entries the manifest list says mf holds; 0
// when it does not say (v1) or says something implausible.
func liveCount(mf manifest.ManifestFile) int {
	var n int64
	if mf.AddedFilesCount != nil {
		n += int64(*mf.AddedFilesCount)
	}
	if mf.ExistingFilesCount != nil {
		n += int64(*mf.ExistingFilesCount)
	}
	if n < 0 || n > maxManifestHint {
		return 0
	}
	return int(n)
}

// The counts of a manifest list are hints only: these caps keep a hostile
// list from sizing memory; a larger table just grows its slices.
const (
	maxManifestHint = 1 << 16
	maxSizeHint     = 1 << 20
)
