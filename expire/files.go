package expire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/extsort"
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
// reach, in path order, held in an extsort.Sorter so that a large expiry
// spills them to disk.
//
// Memory: the candidates (files reachable from removed snapshots), the
// live files of retained snapshots and the result each go through a
// Sorter with a memory budget, and the two sets are compared as sorted
// streams, so no step holds every path of the table in memory.
type diff struct {
	del *extsort.Sorter
	n   int
}

// Close releases the spill file.
func (d *diff) Close() error { return d.del.Close() }

// Len is the number of files to delete.
func (d *diff) Len() int { return d.n }

// each calls fn for every file to delete, in path order.
func (d *diff) each(fn func(File) error) error {
	it := d.del.Iter()
	for rec, ok := it.Next(); ok; rec, ok = it.Next() {
		f, err := decodeFile(rec)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return it.Err()
}

// keeper answers the guard's question for a path: kept unless the diff
// proved it unreferenced. Paths asked in ascending order (as the executor
// asks them) cost one pass over the set; a path before the previous one
// restarts the pass. When the set cannot be read it answers true: keeping
// is the safe side.
type keeper struct {
	d    *diff
	it   *extsort.Iter
	cur  string // the first path of the set >= the last one asked
	ok   bool
	last string
}

func (k *keeper) keep(p string) bool {
	if k.it == nil || p < k.last {
		k.it = k.d.del.Iter()
		k.cur, k.ok = k.advance()
	}
	k.last = p
	for k.ok && k.cur < p {
		k.cur, k.ok = k.advance()
	}
	if k.it.Err() != nil {
		return true
	}
	return !(k.ok && k.cur == p)
}

func (k *keeper) advance() (string, bool) {
	rec, ok := k.it.Next()
	if !ok {
		return "", false
	}
	path, _, _ := bytes.Cut(rec, []byte{0})
	return string(path), true
}

// encodeFile appends f as a record whose byte order is f's path order:
// the path, a NUL (below every byte of a path, so "a" sorts before "a/b"),
// then kind, snapshot id and size. A FileList appends the file's reason
// when it has its own (see defaultReason).
func encodeFile(buf []byte, f File) []byte {
	buf = append(buf[:0], f.Path...)
	buf = append(buf, 0)
	buf = binary.AppendUvarint(buf, uint64(f.Kind))
	buf = binary.AppendVarint(buf, f.SnapshotID)
	return binary.AppendVarint(buf, f.Size)
}

func decodeFile(rec []byte) (File, error) {
	path, rest, ok := bytes.Cut(rec, []byte{0})
	bad := func() (File, error) { return File{}, fmt.Errorf("expire: corrupt spill record for %q", path) }
	if !ok {
		return bad()
	}
	kind, n := binary.Uvarint(rest)
	if n <= 0 {
		return bad()
	}
	rest = rest[n:]
	snap, n := binary.Varint(rest)
	if n <= 0 {
		return bad()
	}
	rest = rest[n:]
	size, n := binary.Varint(rest)
	if n <= 0 {
		return bad()
	}
	f := File{Path: string(path), Kind: table.FileKind(kind), SnapshotID: snap, Size: size}
	if reason := rest[n:]; len(reason) > 0 {
		f.Reason = string(reason)
	}
	return f, nil
}

// defaultReason is why a file of the diff goes: what an empty Reason
// stands for until a FileList hands the file to a report. Deriving it
// late saves formatting it for every file of a large expiry twice.
func defaultReason(f File) string {
	return fmt.Sprintf("%s of expired snapshot %d, reachable from no retained snapshot", f.Kind, f.SnapshotID)
}

// spill is where the sets of unreferenced go: a directory ("" = the
// system's) and a memory budget per set (<= 0: extsort.DefaultBudget).
type spill struct {
	dir    string
	budget int
}

// unreferenced computes which files reachable from the removed snapshots
// of before are reachable from no snapshot of after, restricted to what
// level deletes. Entries count as references only when live (ADDED or
// EXISTING), as in Java's reachable-file cleanup; every entry of a removed
// snapshot, DELETED ones too, is a candidate. Any unreadable manifest list
// or manifest is an error.
func unreferenced(ctx context.Context, fio fileio.FileIO, before *spec.TableMetadata, removed []int64,
	after *spec.TableMetadata, level Cleanup, sp spill) (*diff, error) {
	return diffAgainst(ctx, fio, after, func(add func(File) error) error {
		err := table.WalkReachable(ctx, fio, before, removed, func(f table.ReachableFile) error {
			if !level.wants(f.Kind) {
				return nil
			}
			return add(File{Path: f.Path, Kind: f.Kind, Size: f.Size, SnapshotID: f.SnapshotID})
		})
		if err != nil {
			return fmt.Errorf("files of the expired snapshots: %w", err)
		}
		return nil
	}, sp)
}

// diffAgainst is the files cands gives that no snapshot of after reaches
// as a live file.
func diffAgainst(ctx context.Context, fio fileio.FileIO, after *spec.TableMetadata, source func(add func(File) error) error, sp spill) (_ *diff, err error) {
	cands := extsort.New(sp.dir, sp.budget)
	defer cands.Close()
	var buf []byte
	err = source(func(f File) error {
		if strings.IndexByte(f.Path, 0) >= 0 {
			return fmt.Errorf("path %q contains a NUL byte", f.Path)
		}
		buf = encodeFile(buf, f)
		return cands.Add(buf)
	})
	if err != nil {
		return nil, err
	}
	live := extsort.New(sp.dir, sp.budget)
	live.Unique = true
	defer live.Close()
	retained := make([]int64, len(after.Snapshots))
	for i, s := range after.Snapshots {
		retained[i] = s.SnapshotID
	}
	if cands.Len() > 0 {
		err = table.WalkReachable(ctx, fio, after, retained, func(f table.ReachableFile) error {
			if !f.Live() {
				return nil
			}
			return live.Add([]byte(f.Path))
		})
		if err != nil {
			return nil, fmt.Errorf("files of the retained snapshots: %w", err)
		}
	}

	// Merge: a candidate is deleted when no live path equals it. Each
	// path is a candidate once, with the first of its records.
	d := &diff{del: extsort.New(sp.dir, sp.budget)}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	ci, li := cands.Iter(), live.Iter()
	lrec, lok := li.Next()
	var prev []byte
	first := true
	for rec, ok := ci.Next(); ok; rec, ok = ci.Next() {
		path, _, _ := bytes.Cut(rec, []byte{0})
		if !first && bytes.Equal(path, prev) {
			continue
		}
		first = false
		prev = append(prev[:0], path...)
		for lok && bytes.Compare(lrec, path) < 0 {
			lrec, lok = li.Next()
		}
		if lok && bytes.Equal(lrec, path) {
			continue
		}
		if err := d.del.Add(rec); err != nil {
			return nil, err
		}
		d.n++
	}
	if err := errors.Join(ci.Err(), li.Err()); err != nil {
		return nil, fmt.Errorf("compare files of expired and retained snapshots: %w", err)
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
