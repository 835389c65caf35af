package verify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// Kinds of delete violations.
const (
	DuplicateDV      = "duplicate-dv"     // more than one DV for a data file
	DanglingDV       = "dangling-dv"      // a DV whose data file is not live, or in another partition, or newer
	DVCardinality    = "dv-cardinality"   // the DV's positions differ from its manifest record_count
	DVUnreadable     = "dv-unreadable"    // the DV blob cannot be read or decoded
	ResurrectedRows  = "resurrected-rows" // a DV lacks positions an older delete of its file deleted
	MissingFile      = "missing-file"     // a referenced file does not exist (--check-files)
	ResurrectUnknown = "resurrected-rows-unchecked"
)

// DeletesOptions say what Deletes checks.
type DeletesOptions struct {
	// CheckFiles also opens every file the snapshot references.
	CheckFiles bool
	// Concurrency bounds the files opened at once (default 8).
	Concurrency   int
	MaxViolations int
}

// DeletesReport is the outcome of Deletes; its JSON form is the output of
// `icectl verify deletes --output json`.
type DeletesReport struct {
	SnapshotID          *int64      `json:"snapshot_id"`
	DataFiles           int         `json:"data_files"`
	DeletionVectors     int         `json:"deletion_vectors"`
	PositionDeleteFiles int         `json:"position_delete_files"`
	EqualityDeleteFiles int         `json:"equality_delete_files"`
	FilesChecked        int         `json:"files_checked"`
	Violations          int64       `json:"violations"`
	First               []Violation `json:"first_violations"`
}

// OK reports whether no invariant was broken.
func (r *DeletesReport) OK() bool { return r.Violations == 0 }

// Deletes checks the delete invariants of snap: at most one DV per data
// file; every DV refers to a live data file of its own partition that it
// applies to; each DV's cardinality equals its record_count; no DV lacks
// positions an older delete of its data file deleted (resurrected rows);
// with CheckFiles, every file the snapshot references exists.
func Deletes(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, snap *spec.Snapshot, opts DeletesOptions) (*DeletesReport, error) {
	maxV := opts.MaxViolations
	if maxV <= 0 {
		maxV = DefaultMaxViolations
	}
	r := &DeletesReport{First: []Violation{}}
	violate := func(kind, format string, args ...any) {
		r.Violations++
		if len(r.First) < maxV {
			r.First = append(r.First, Violation{Kind: kind, Message: fmt.Sprintf(format, args...)})
		}
	}
	if snap == nil {
		return r, nil
	}
	id := snap.SnapshotID
	r.SnapshotID = &id
	mfs, err := table.ManifestFiles(ctx, fio, snap)
	if err != nil {
		return nil, fmt.Errorf("verify deletes: %w", err)
	}
	fs, err := table.LiveFiles(ctx, fio, snap)
	if err != nil {
		return nil, fmt.Errorf("verify deletes: %w", err)
	}
	live := map[string]table.FileEntry{}
	for _, d := range fs.Data {
		live[d.Entry.DataFile.FilePath] = d
	}
	r.DataFiles = len(fs.Data)

	var missing map[string]bool
	if opts.CheckFiles {
		paths := []string{snap.ManifestList}
		for _, mf := range mfs {
			paths = append(paths, mf.Path)
		}
		for _, e := range append(slices.Clone(fs.Data), fs.Deletes...) {
			paths = append(paths, e.Entry.DataFile.FilePath)
		}
		slices.Sort(paths)
		paths = slices.Compact(paths)
		if paths[0] == "" {
			paths = paths[1:] // a v1 snapshot without a manifest list
		}
		r.FilesChecked = len(paths)
		missing, err = missingFiles(ctx, fio, paths, opts.Concurrency)
		if err != nil {
			return nil, fmt.Errorf("verify deletes: %w", err)
		}
		for _, p := range paths {
			if missing[p] {
				violate(MissingFile, "%s is referenced by snapshot %d but does not exist", p, id)
			}
		}
	}

	byData := map[string][]table.FileEntry{}
	readable := true
	for _, e := range fs.Deletes {
		df := &e.Entry.DataFile
		switch {
		case table.IsDV(df):
			r.DeletionVectors++
		case df.Content == manifest.ContentPositionDeletes:
			r.PositionDeleteFiles++
			continue
		default:
			r.EqualityDeleteFiles++
			continue
		}
		key := e.Key()
		if df.ReferencedDataFile == nil {
			violate(DanglingDV, "DV %s names no referenced_data_file", key)
			continue
		}
		ref := *df.ReferencedDataFile
		byData[ref] = append(byData[ref], e)
		data, ok := live[ref]
		switch {
		case !ok:
			violate(DanglingDV, "DV %s refers to %s, which is not a live data file", key, ref)
		case table.PartitionKey(df.SpecID, df.Partition) != table.PartitionKey(data.Entry.DataFile.SpecID, data.Entry.DataFile.Partition):
			violate(DanglingDV, "DV %s is in another partition (spec %d %v) than its data file %s (spec %d %v)",
				key, df.SpecID, df.Partition, ref, data.Entry.DataFile.SpecID, data.Entry.DataFile.Partition)
		case e.DataSequenceNumber() < data.DataSequenceNumber():
			violate(DanglingDV, "DV %s (sequence number %d) is older than its data file %s (%d) and applies to nothing",
				key, e.DataSequenceNumber(), ref, data.DataSequenceNumber())
		}
		if missing[df.FilePath] {
			readable = false
			continue
		}
		if _, err := table.ReadDV(ctx, fio, df); err != nil {
			readable = false
			if errors.Is(err, puffin.ErrDVCardinality) {
				violate(DVCardinality, "DV %s: %v", key, err)
			} else {
				violate(DVUnreadable, "DV %s: %v", key, err)
			}
		}
	}
	refs := make([]string, 0, len(byData))
	for ref := range byData {
		refs = append(refs, ref)
	}
	slices.Sort(refs)
	for _, ref := range refs {
		if dvs := byData[ref]; len(dvs) > 1 {
			keys := make([]string, len(dvs))
			for i, d := range dvs {
				keys[i] = d.Key().String()
			}
			slices.Sort(keys)
			violate(DuplicateDV, "data file %s has %d DVs: %v", ref, len(dvs), keys)
		}
	}

	if !readable {
		violate(ResurrectUnknown, "resurrected rows were not looked for: a DV above cannot be read")
		return r, nil
	}
	res, err := table.FindResurrectedIn(ctx, fio, md, fs)
	if err != nil {
		if len(missing) > 0 {
			violate(ResurrectUnknown, "resurrected rows were not looked for: %v", err)
			return r, nil
		}
		return nil, fmt.Errorf("verify deletes: %w", err)
	}
	for _, x := range res {
		violate(ResurrectedRows, "data file %s: its DV %s lacks %d position(s) that %v deleted (first %v): those rows are visible again",
			x.DataFile.Entry.DataFile.FilePath, x.DV.Key(), x.Count(), x.Sources, x.First(5))
	}
	return r, nil
}

// missingFiles opens each path and returns those that do not exist; any
// other error stops the check.
func missingFiles(ctx context.Context, fio fileio.FileIO, paths []string, concurrency int) (map[string]bool, error) {
	if concurrency <= 0 {
		concurrency = 8
	}
	var mu sync.Mutex
	missing := map[string]bool{}
	var firstErr error
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for _, p := range paths {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			f, err := fio.Open(ctx, p)
			if err == nil {
				f.Close()
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if errors.Is(err, fileio.ErrNotFound) {
				missing[p] = true
			} else if firstErr == nil {
				firstErr = err
			}
		}()
	}
	wg.Wait()
	return missing, firstErr
}
