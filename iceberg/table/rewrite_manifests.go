package table

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
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
}

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
// path, in manifests of EntriesPerManifest entries each.
func (p *producer) rewriteManifests(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, selected []manifest.ManifestFile) ([]listed, error) {
	per := EntriesPerManifest(selected, p.ch.Rewrite.TargetSize)
	type item struct {
		key string
		e   manifest.Entry
	}
	var items []item
	for _, mf := range selected {
		f, err := fio.Open(ctx, mf.Path)
		if err != nil {
			return nil, fmt.Errorf("rewrite manifests: %w", err)
		}
		r, err := manifest.OpenManifest(io.NewSectionReader(f, 0, f.Size()))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("rewrite manifests: %s: %w", mf.Path, err)
		}
		r.InheritFrom(mf)
		for {
			e, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("read manifest %s: %w", mf.Path, err)
			}
			if e.Status == manifest.StatusDeleted {
				continue
			}
			if e.SequenceNumber == nil || e.FileSequenceNumber == nil {
				f.Close()
				return nil, fmt.Errorf("manifest %s: entry %s has no sequence number to carry", mf.Path, e.DataFile.FilePath)
			}
			if md.FormatVersion < 3 {
				e.DataFile.FirstRowID = nil
			}
			e.Status = manifest.StatusExisting
			e.DataFile.SpecID = mf.SpecID
			items = append(items, item{key: PartitionKey(mf.SpecID, e.DataFile.Partition), e: e})
		}
		f.Close()
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := &items[i], &items[j]
		if a.e.DataFile.SpecID != b.e.DataFile.SpecID {
			return a.e.DataFile.SpecID < b.e.DataFile.SpecID
		}
		if a.key != b.key {
			return a.key < b.key
		}
		return a.e.DataFile.FilePath < b.e.DataFile.FilePath
	})
	schema := md.CurrentSchema()
	if schema == nil {
		return nil, errors.New("table has no current schema")
	}
	var out []listed
	fail := func(err error) ([]listed, error) {
		var done []string
		for _, l := range out {
			done = append(done, l.mf.Path)
		}
		return nil, errors.Join(err, removeAll(ctx, fio, md, done))
	}
	for start := 0; start < len(items); {
		id := items[start].e.DataFile.SpecID
		end := start
		for end < len(items) && end-start < per && items[end].e.DataFile.SpecID == id {
			end++
		}
		ps, ok := md.SpecByID(int(id))
		if !ok {
			return fail(fmt.Errorf("rewrite manifests: table has no partition spec %d", id))
		}
		chunk := items[start:end]
		mf, err := p.writeManifest(ctx, fio, md, schema, *ps, manifest.ManifestContentData, func(w *manifest.Writer) error {
			for _, it := range chunk {
				if err := w.Add(it.e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fail(err)
		}
		out = append(out, listed{mf: mf, written: true, fresh: true, merged: true})
		start = end
	}
	p.rewriteStats = map[string]string{
		"manifests-created":  strconv.Itoa(len(out)),
		"manifests-replaced": strconv.Itoa(len(selected)),
		"entries-processed":  strconv.Itoa(len(items)),
	}
	return out, nil
}
