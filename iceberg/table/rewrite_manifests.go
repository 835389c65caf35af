package table

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
)

// ManifestRewrite makes a change regroup data manifests instead of adding
// or removing files: the selected manifests' live entries are written
// again, clustered by partition, into manifests of about TargetSize bytes.
type ManifestRewrite struct {
	// Select picks the data manifests to rewrite; nil picks all.
	Select func(manifest.ManifestFile) bool
	// TargetSize is the manifest size to aim for (bytes).
	TargetSize int64
	// MemoryBudget is about how many bytes of entries the rewrite holds
	// while sorting them (<= 0: DefaultRewriteBudget); beyond it, sorted
	// runs go to temporary files in TempDir ("" = the system's).
	MemoryBudget int64
	TempDir      string
	// Observe, when set, is called on each attempt with the base snapshot
	// and its manifest list (file counts filled in) before the rewrite
	// selects from it, so a caller can report what the attempt that
	// lands did from the same inputs its dry run planned from.
	Observe func(base *spec.Snapshot, mfs []manifest.ManifestFile) error
}

// DefaultRewriteBudget is the memory a manifest rewrite sorts entries in
// before it spills them to disk.
const DefaultRewriteBudget = 64 << 20

// SelectedForRewrite lists the live data manifests of mfs that sel picks,
// in order: those a ManifestRewrite replaces.
func SelectedForRewrite(mfs []manifest.ManifestFile, sel func(manifest.ManifestFile) bool) []manifest.ManifestFile {
	var out []manifest.ManifestFile
	for _, mf := range mfs {
		if mf.Content == manifest.ManifestContentData && hasLiveFiles(mf) && (sel == nil || sel(mf)) {
			out = append(out, mf)
		}
	}
	return out
}

// EntriesPerManifest is how many entries go in one rewritten manifest so
// it comes near target bytes, judged from the selected manifests' sizes.
func EntriesPerManifest(selected []manifest.ManifestFile, target int64) int {
	var bytes, entries int64
	for _, mf := range selected {
		bytes += mf.Length
		if mf.AddedFilesCount != nil && mf.ExistingFilesCount != nil && mf.DeletedFilesCount != nil {
			entries += int64(*mf.AddedFilesCount) + int64(*mf.ExistingFilesCount) + int64(*mf.DeletedFilesCount)
		}
	}
	if entries == 0 || bytes == 0 {
		return 1
	}
	n := target * entries / bytes
	if n < 1 {
		return 1
	}
	return int(n)
}

// rewriteManifests writes the live entries of the selected manifests as
// EXISTING, every inherited value explicit (so sequence numbers and, in
// v3, first_row_id stay as they were), sorted by spec, partition and
// path, in manifests of EntriesPerManifest entries each. The manifests are
// read concurrently and their entries sorted within the rewrite's memory
// budget (see entrySorter), so memory does not grow with the table.
func (p *producer) rewriteManifests(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, selected []manifest.ManifestFile) ([]listed, error) {
	rw := p.ch.Rewrite
	per := EntriesPerManifest(selected, rw.TargetSize)
	schema := md.CurrentSchema()
	if schema == nil {
		return nil, errors.New("table has no current schema")
	}
	budget := rw.MemoryBudget
	if budget <= 0 {
		budget = DefaultRewriteBudget
	}
	sorter := &entrySorter{md: md, schema: schema, schemas: p.schemas, snapshotID: p.snapshotID, dir: rw.TempDir, budget: budget}
	defer sorter.close()
	// Sized from the manifest list's counts (within the budget), the
	// buffer is not regrown and copied an entry at a time.
	hint := 0
	for _, mf := range selected {
		hint += liveCount(mf)
	}
	sorter.buf = make([]sortItem, 0, min(hint, int(budget/minEntrySize)+1))
	err := walkManifests(ctx, fio, selected, WalkOptions{Schemas: p.schemas}, func(fe FileEntry) error {
		e := fe.Entry
		if e.SequenceNumber == nil || e.FileSequenceNumber == nil {
			return fmt.Errorf("manifest %s: entry %s has no sequence number to carry", fe.Manifest.Path, e.DataFile.FilePath)
		}
		if md.FormatVersion < 3 {
			e.DataFile.FirstRowID = nil
		}
		e.Status = manifest.StatusExisting
		return sorter.add(e)
	})
	if err != nil {
		return nil, fmt.Errorf("rewrite manifests: %w", err)
	}
	var out []listed
	fail := func(err error) ([]listed, error) {
		var done []string
		for _, l := range out {
			done = append(done, l.mf.Path)
		}
		return nil, errors.Join(err, removeAll(ctx, fio, md, done))
	}
	var entries int64
	for _, id := range sorter.specIDs() {
		ps, ok := md.SpecByID(int(id))
		if !ok {
			return fail(fmt.Errorf("rewrite manifests: table has no partition spec %d", id))
		}
		next, stop, err := sorter.iter(id)
		if err != nil {
			return fail(err)
		}
		// it is the next entry to write, read ahead so that no manifest
		// is started without one.
		it, ok, err := next()
		var prevKey, prevPath string
		for ok && err == nil {
			var mf manifest.ManifestFile
			mf, err = p.writeManifest(ctx, fio, md, schema, *ps, manifest.ManifestContentData, func(w *manifest.Writer) error {
				for n := 0; n < per && ok; n++ {
					if entries > 0 && it.key == prevKey && it.e.DataFile.FilePath == prevPath {
						return fmt.Errorf("file %s is listed twice in the base snapshot", prevPath)
					}
					prevKey, prevPath = it.key, it.e.DataFile.FilePath
					entries++
					if err := w.Add(it.e); err != nil {
						return err
					}
					var err error
					if it, ok, err = next(); err != nil {
						return err
					}
				}
				return nil
			})
			if err == nil {
				out = append(out, listed{mf: mf, written: true, fresh: true, merged: true})
			}
		}
		stop()
		if err != nil {
			return fail(err)
		}
	}
	p.rewriteStats = map[string]string{
		"manifests-created":  strconv.Itoa(len(out)),
		"manifests-replaced": strconv.Itoa(len(selected)),
		"entries-processed":  strconv.FormatInt(entries, 10),
	}
	return out, nil
}
