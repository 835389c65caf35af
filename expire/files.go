package expire

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// Cleanup is which files an expiry deletes.
type Cleanup int

const (
	// CleanupAll deletes every file only the removed snapshots reach.
	CleanupAll Cleanup = iota
	// CleanupMetadata deletes only manifest lists, manifests and statistics
	// files, as Java's METADATA_ONLY.
	CleanupMetadata
	// CleanupNone deletes nothing: the expiry changes only metadata.
	CleanupNone
)

// ParseCleanup parses all, metadata or none.
func ParseCleanup(s string) (Cleanup, error) {
	switch s {
	case "all":
		return CleanupAll, nil
	case "metadata":
		return CleanupMetadata, nil
	case "none":
		return CleanupNone, nil
	}
	return 0, fmt.Errorf("%w: cleanup %q: want all, metadata or none", ErrInvalidOptions, s)
}

func (c Cleanup) String() string { return [...]string{"all", "metadata", "none"}[c] }

// KindMetadataJSON marks a table metadata file in File.Kind (not a kind of
// table.WalkReachable).
const KindMetadataJSON table.FileKind = 100

// File is a file an expiry deletes, and why.
type File struct {
	Path string
	Kind table.FileKind
	Size int64
	// SnapshotID is a removed snapshot the file was reachable from (0 for
	// metadata files).
	SnapshotID int64
	Reason     string
}

// KindName is the file's kind as reports print it.
func (f File) KindName() string {
	if f.Kind == KindMetadataJSON {
		return "metadata_json"
	}
	return f.Kind.String()
}

func (c Cleanup) wants(k table.FileKind) bool {
	switch c {
	case CleanupAll:
		return true
	case CleanupMetadata:
		switch k {
		case table.KindManifestList, table.KindManifest, table.KindStatistics, table.KindPartitionStatistics:
			return true
		}
	}
	return false
}

// diff is the result of unreferenced: the files only removed snapshots
// reach (Delete), and for the guard, the candidates a retained snapshot
// still reaches (kept). Both are sorted by path.
//
// Memory: only files reachable from removed snapshots are held (one record
// each); the files of retained snapshots are streamed and looked up in
// them, so a table's live files are never all in memory. A table that
// expires millions of files at once holds their paths (about 150 bytes per
// file); spilling them to disk is left for later.
type diff struct {
	Delete []File
	kept   []string
	all    []string // every candidate path, sorted
}

// keep answers the guard's question for a path: kept when a retained
// snapshot reaches it, or when it is not a candidate at all (a path the
// diff never proved unreferenced).
func (d *diff) keep(p string) bool {
	if _, ok := slices.BinarySearch(d.kept, p); ok {
		return true
	}
	_, ok := slices.BinarySearch(d.all, p)
	return !ok
}

// unreferenced computes which files reachable from the removed snapshots
// of before are reachable from no snapshot of after, restricted to what
// level deletes. Entries count as references only when live (ADDED or
// EXISTING), as in Java's reachable-file cleanup; every entry of a removed
// snapshot, DELETED ones too, is a candidate. Any unreadable manifest list
// or manifest is an error.
func unreferenced(ctx context.Context, fio fileio.FileIO, before *spec.TableMetadata, removed []int64,
	after *spec.TableMetadata, level Cleanup) (*diff, error) {
	var cands []File
	err := table.WalkReachable(ctx, fio, before, removed, func(f table.ReachableFile) error {
		if level.wants(f.Kind) {
			cands = append(cands, File{Path: f.Path, Kind: f.Kind, Size: f.Size, SnapshotID: f.SnapshotID})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("files of the expired snapshots: %w", err)
	}
	slices.SortFunc(cands, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	cands = slices.CompactFunc(cands, func(a, b File) bool { return a.Path == b.Path })
	d := &diff{all: make([]string, len(cands))}
	for i, c := range cands {
		d.all[i] = c.Path
	}
	kept := make([]bool, len(cands))
	retained := make([]int64, len(after.Snapshots))
	for i, s := range after.Snapshots {
		retained[i] = s.SnapshotID
	}
	err = table.WalkReachable(ctx, fio, after, retained, func(f table.ReachableFile) error {
		if !f.Live() {
			return nil
		}
		if i, ok := slices.BinarySearch(d.all, f.Path); ok {
			kept[i] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("files of the retained snapshots: %w", err)
	}
	for i, c := range cands {
		if kept[i] {
			d.kept = append(d.kept, c.Path)
			continue
		}
		c.Reason = fmt.Sprintf("%s of expired snapshot %d, reachable from no retained snapshot", c.Kind, c.SnapshotID)
		d.Delete = append(d.Delete, c)
	}
	return d, nil
}

// metadataFiles are the table metadata files an expiry with
// --clean-metadata-files deletes: those before references (as current
// or in its log) that after no longer does, and, when the FileIO can list,
// files in after's metadata directory numbered below the oldest version
// after references. A metadata file numbered above that may be a commit
// in flight and is never a candidate.
func metadataFiles(ctx context.Context, fio fileio.FileIO, beforeLoc string, before *spec.TableMetadata,
	afterLoc string, after *spec.TableMetadata) ([]File, error) {
	live := map[string]bool{afterLoc: true}
	oldest := -1
	note := func(loc string) {
		if v, ok := catalog.MetadataVersion(loc); ok && (oldest < 0 || v < oldest) {
			oldest = v
		}
	}
	note(afterLoc)
	for _, e := range after.MetadataLog {
		live[e.MetadataFile] = true
		note(e.MetadataFile)
	}
	seen := map[string]bool{}
	var out []File
	add := func(p string, size int64, reason string) {
		if live[p] || seen[p] || !reclaim.IsMetadataJSON(p) {
			return
		}
		seen[p] = true
		out = append(out, File{Path: p, Kind: KindMetadataJSON, Size: size, Reason: reason})
	}
	for _, e := range before.MetadataLog {
		add(e.MetadataFile, 0, "metadata file dropped from the metadata log (write.metadata.previous-versions-max)")
	}
	if beforeLoc != "" {
		add(beforeLoc, 0, "metadata file dropped from the metadata log (write.metadata.previous-versions-max)")
	}
	if l, ok := fio.(fileio.Lister); ok && oldest >= 0 {
		dir := table.MetadataLocation(after) + "/"
		err := l.List(ctx, dir, func(fi fileio.FileInfo) error {
			if strings.Contains(strings.TrimPrefix(fi.Path, dir), "/") {
				return nil
			}
			if v, ok := catalog.MetadataVersion(fi.Path); ok && v < oldest {
				add(fi.Path, fi.Size, fmt.Sprintf("metadata file older than the oldest logged version %d", oldest))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list metadata files: %w", err)
		}
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}
