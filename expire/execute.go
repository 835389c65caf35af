package expire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/shared/meter"
)

// ErrGCDisabled is returned when the table sets gc.enabled=false and the
// expiry would delete files: its files may be shared with other tables.
var ErrGCDisabled = errors.New("gc.enabled=false")

// errNothingToChange stops a commit whose fresh base needs no change.
var errNothingToChange = errors.New("nothing to expire")

// DefaultSpillBudget is the memory each of an expiry's path sets holds
// before spilling (three sets at most live at once: candidates, live
// files, the result). 16 MiB keeps a dry run's peak RSS near 100 MiB on
// any table; a larger budget buys little, the spill being sequential IO.
const DefaultSpillBudget = 16 << 20

// Options configure Run.
type Options struct {
	Policy             Policy
	Cleanup            Cleanup
	CleanMetadataFiles bool
	// CleanExpiredMetadata also removes the partition specs and schemas
	// that no retained snapshot uses (Spark's clean_expired_metadata).
	CleanExpiredMetadata bool
	// MaxConcurrentDeletes bounds parallel deletions (default 8, the guard's).
	MaxConcurrentDeletes int
	DryRun               bool
	Commit               commit.Options
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// Progress receives one step per file deleted (or refused, or failed).
	Progress meter.Meter
	// BatchSize is how many paths go to the deleter at once (default 10000).
	BatchSize int
	// SpillDir is where sets of paths too large for SpillBudget go
	// ("" = the system's temporary directory).
	SpillDir string
	// SpillBudget is the memory, in bytes, each set of paths holds before
	// it spills to disk (<= 0: DefaultSpillBudget). Tests set it tiny.
	SpillBudget int
}

// Report is the outcome of Run.
type Report struct {
	Table            string
	DryRun           bool
	Committed        bool
	MetadataLocation string
	Plan             *Plan
	Cleanup          Cleanup
	// Files are the files deleted (or, on a dry run or before a failure,
	// to be deleted): those of the reachability difference in path order,
	// then metadata files, then those of interrupted expiries' journals.
	// They are kept on disk past a small budget; Close releases them.
	Files *FileList
	// Deletion counts the files deleted and keeps those refused or failed;
	// DeletedBytes sums the sizes of the deleted ones.
	Deletion     reclaim.Tally
	DeletedBytes int64
	Duration     time.Duration
}

// Close releases what the report keeps on disk.
func (r *Report) Close() error {
	if r == nil {
		return nil
	}
	return r.Files.Close()
}

// deleteBatch deletes paths (of files, with their sizes) through del and
// counts the outcome into r.
func (r *Report) deleteBatch(ctx context.Context, del *reclaim.Deleter, paths []string, sizes []int64) {
	if len(paths) == 0 {
		return
	}
	res := del.Delete(ctx, paths)
	gone := make(map[string]bool, len(res.Deleted))
	for _, p := range res.Deleted {
		gone[p] = true
	}
	for i, p := range paths {
		if gone[p] {
			r.DeletedBytes += sizes[i]
			delete(gone, p) // a path listed twice counts once, as the Deleter does
		}
	}
	r.Deletion.Add(res)
}

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

// gcEnabled reads gc.enabled (default true).
func gcEnabled(md *spec.TableMetadata) (bool, error) {
	v, ok := md.Properties[PropGCEnabled]
	if !ok {
		return true, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, fmt.Errorf("%w: table property %s=%q is not a boolean", ErrInvalidOptions, PropGCEnabled, v)
	}
	return b, nil
}

// Run expires snapshots of t: it plans from t's metadata, works out which
// files only the removed snapshots reach (reading every manifest involved
// before anything changes, so an unreadable one stops the run with nothing
// changed), commits the metadata change through the commit loop, and only
// once the commit is confirmed deletes those files through the reclaim
// guard. A commit in an unknown state deletes nothing. On a dry run
// nothing is written.
func Run(ctx context.Context, cat catalog.Catalog, t *catalog.Table, opts Options) (*Report, error) {
	start := time.Now()
	md := t.Metadata
	if opts.Policy.Now.IsZero() {
		opts.Policy.Now = start
	}
	deletes := opts.Cleanup != CleanupNone || opts.CleanMetadataFiles
	if deletes {
		ok, err := gcEnabled(md)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w on %s: expire refuses to delete files of a table whose files may be shared with other tables; run with --cleanup none (and without --clean-metadata-files) to expire snapshots without deleting files", ErrGCDisabled, t.Ident)
		}
	}
	plan, err := opts.plan(ctx, t)
	if err != nil {
		return nil, err
	}
	rep := &Report{Table: t.Ident.String(), DryRun: opts.DryRun, MetadataLocation: t.MetadataLocation, Plan: plan, Cleanup: opts.Cleanup,
		Files: NewFileList(opts.SpillDir)}
	defer func() { rep.Duration = time.Since(start) }()
	opts.logf("expire %s: %d snapshot(s) to remove, %d to keep, %d ref(s) to remove", t.Ident, len(plan.Remove), len(plan.Retain), len(plan.RemoveRefs))

	// What the table will look like: the diff is computed before the
	// commit, so that bad input (a missing manifest list, a corrupt
	// manifest) fails with nothing changed.
	after, err := applyPlan(md, plan)
	if err != nil {
		return nil, err
	}
	if opts.SpillBudget <= 0 {
		opts.SpillBudget = DefaultSpillBudget
	}
	sp := spill{dir: opts.SpillDir, budget: opts.SpillBudget}
	var d *diff
	defer func() {
		if d != nil {
			d.Close()
		}
	}()
	if opts.Cleanup != CleanupNone && len(plan.Remove) > 0 {
		if d, err = unreferenced(ctx, t.IO, md, plan.RemovedIDs(), after, opts.Cleanup, sp); err != nil {
			return rep, err
		}
	}
	if opts.DryRun {
		return rep, dryRunFiles(ctx, t, d, opts, rep.Files)
	}

	// The journal lists what this run deletes before the commit makes
	// those files unreachable, so that a run killed after the commit is
	// finished by the next one.
	var journal string
	if d != nil && d.Len() > 0 {
		journal = journalPath(md)
		if err := writeJournal(ctx, t.IO, journal, d); errors.Is(err, fs.ErrPermission) {
			// Stores that accept only table files (S3 Tables, weed's table
			// buckets) refuse the journal. Expiry stays as safe without
			// it; only a run killed while deleting leaves its files for
			// `icectl orphan` instead of the next expire.
			opts.logf("expire %s: warning: the storage refused the expiry journal (%v); a run killed while deleting leaves files for icectl orphan", t.Ident, err)
			journal = ""
		} else if err != nil {
			return rep, fmt.Errorf("expire %s: nothing was changed: %w", t.Ident, err)
		}
	}
	dropJournal := func(md *spec.TableMetadata) {
		if journal != "" {
			removeJournal(ctx, t.IO, md, journal, opts)
			journal = ""
		}
	}
	finish := func(md *spec.TableMetadata) error {
		if !deletes || opts.Cleanup == CleanupNone {
			return nil
		}
		if err := finishJournals(ctx, t.IO, md, journal, opts, rep); err != nil {
			return fmt.Errorf("expire %s: %w", t.Ident, err)
		}
		return nil
	}

	committedMD, committedLoc := md, t.MetadataLocation
	base := t
	if !plan.Empty() {
		final := plan
		build := func(ctx context.Context, b *catalog.Table, attempt int) (*commit.Attempt, error) {
			p := plan
			if attempt > 0 {
				// Java's RemoveSnapshots re-applies its rules on refresh.
				if p, err = opts.plan(ctx, b); err != nil {
					return nil, err
				}
			}
			if p.Empty() {
				return nil, errNothingToChange
			}
			final, base = p, b
			return &commit.Attempt{Requirements: p.Requirements(b.Metadata), Updates: p.Updates(b.Metadata)}, nil
		}
		res, err := commit.Run(ctx, cat, t, build, opts.Commit)
		switch {
		case errors.Is(err, errNothingToChange):
			dropJournal(md)
			rep.Plan = &Plan{OlderThanMS: plan.OlderThanMS, MinSnapshotsToKeep: plan.MinSnapshotsToKeep, MaxRefAgeMS: plan.MaxRefAgeMS}
			return rep, finish(base.Metadata)
		case errors.Is(err, catalog.ErrCommitStateUnknown):
			// The journal stays: the next run finishes the deletions if
			// the commit landed, and they are proven again against the
			// table it loads.
			return rep, fmt.Errorf("expire %s: commit state unknown, no file was deleted (rerun expire once the table is reachable): %w", t.Ident, err)
		case err != nil:
			dropJournal(md)
			return rep, fmt.Errorf("expire %s: nothing was deleted: %w", t.Ident, err)
		}
		rep.Committed, rep.Plan = true, final
		rep.MetadataLocation = res.MetadataLocation
		committedMD, committedLoc = res.Metadata, res.MetadataLocation
		for _, id := range final.RemovedIDs() {
			if _, ok := committedMD.SnapshotByID(id); ok {
				return rep, fmt.Errorf("expire %s: the committed table still has snapshot %d; nothing was deleted", t.Ident, id)
			}
		}
		opts.logf("expire %s: committed %s", t.Ident, res.MetadataLocation)
		if opts.Cleanup != CleanupNone && (final != plan || !sameSnapshots(after, committedMD)) {
			// Another commit landed first: recompute against what was
			// committed.
			if d != nil {
				d.Close()
				d = nil
			}
			if d, err = unreferenced(ctx, t.IO, base.Metadata, final.RemovedIDs(), committedMD, opts.Cleanup, sp); err != nil {
				return rep, fmt.Errorf("expire %s: committed, but nothing was deleted: %w", t.Ident, err)
			}
			// The old journal lists a superset only if nothing changed;
			// a fresh one lists exactly what this run deletes.
			old := journal
			journal = journalPath(committedMD)
			if err := writeJournal(ctx, t.IO, journal, d); err != nil {
				return rep, fmt.Errorf("expire %s: committed, but nothing was deleted: %w", t.Ident, err)
			}
			if old != "" {
				journal, old = old, journal
				dropJournal(committedMD)
				journal = old
			}
		}
	}
	if !deletes {
		dropJournal(committedMD)
		return rep, nil
	}
	var meta []File
	if opts.CleanMetadataFiles {
		if meta, err = metadataFiles(ctx, t.IO, base.MetadataLocation, base.Metadata, committedLoc, committedMD); err != nil {
			return rep, fmt.Errorf("expire %s: nothing was deleted: %w", t.Ident, err)
		}
	}
	keepMeta := metadataKeep(committedLoc, committedMD, meta)
	var k *keeper
	if d != nil {
		k = &keeper{d: d}
	}
	del := &reclaim.Deleter{IO: t.IO, Scope: reclaim.TableScope(committedMD), Concurrency: opts.MaxConcurrentDeletes,
		Keep: func(p string) bool {
			if keep, ok := keepMeta(p); ok {
				return keep
			}
			return k == nil || k.keep(p)
		}}
	batch := opts.BatchSize
	if batch <= 0 {
		batch = 10000
	}
	total := len(meta)
	if d != nil {
		total += d.Len()
	}
	// The files stream from the diff in path order, a batch at a time, so
	// the guard's lookups are one pass over the set.
	pm := meter.Or(opts.Progress)
	pm.Start(total, 0)
	defer pm.Done()
	paths := make([]string, 0, min(batch, total))
	sizes := make([]int64, 0, min(batch, total))
	flush := func() {
		if len(paths) == 0 {
			return
		}
		rep.deleteBatch(ctx, del, paths, sizes)
		for _, n := range sizes {
			pm.Step(n)
		}
		paths, sizes = paths[:0], sizes[:0]
		// The files deleted, not those tried: a batch's failures and refusals are reported
		// after it, so a run whose deletions failed never says all went.
		opts.logf("expire %s: deleted %d of %d file(s)", t.Ident, rep.Deletion.Deleted, total)
	}
	add := func(f File) error {
		if err := rep.Files.Add(f); err != nil {
			return err
		}
		paths, sizes = append(paths, f.Path), append(sizes, f.Size)
		if len(paths) == batch {
			flush()
		}
		return nil
	}
	if d != nil {
		if err := d.each(add); err != nil {
			flush()
			return rep, fmt.Errorf("expire %s: committed; files not all deleted: %w", t.Ident, err)
		}
	}
	flush()
	for _, f := range meta {
		if err := add(f); err != nil {
			flush()
			return rep, fmt.Errorf("expire %s: committed; files not all deleted: %w", t.Ident, err)
		}
	}
	flush()
	// A file the guard refused stays, reported: most often the input of an
	// add_files or a Hive migration, outside the table's location, which
	// the table referenced but does not own (Spark's snapshot procedure
	// turns gc off for the same reason). No rerun would delete it, so it
	// does not fail the run; a failed deletion does, and a rerun retries it.
	for i, r := range rep.Deletion.Refused {
		if i == 10 {
			opts.logf("expire %s: %d more file(s) kept", t.Ident, len(rep.Deletion.Refused)-i)
			break
		}
		opts.logf("expire %s: kept %s: %s", t.Ident, r.Path, r.Reason)
	}
	if err := rep.Deletion.FailedErr(); err != nil {
		return rep, fmt.Errorf("expire %s: committed; some files were not deleted (rerun expire to retry): %w", t.Ident, err)
	}
	dropJournal(committedMD)
	return rep, finish(committedMD)
}

// plan is the expiry of t under opts: NewPlan's, with the specs and
// schemas to remove when opts.CleanExpiredMetadata is set.
func (opts *Options) plan(ctx context.Context, t *catalog.Table) (*Plan, error) {
	p, err := NewPlan(t.Metadata, opts.Policy)
	if err != nil || !opts.CleanExpiredMetadata {
		return p, err
	}
	if err := planMetadataCleanup(ctx, t.IO, t.Metadata, p); err != nil {
		return nil, fmt.Errorf("expire %s: nothing was changed: %w", t.Ident, err)
	}
	return p, nil
}

// metadataKeep answers the guard for metadata file candidates: kept when
// the committed table still references it. ok is false for other paths.
func metadataKeep(loc string, md *spec.TableMetadata, cands []File) func(string) (keep, ok bool) {
	isCand := map[string]bool{}
	for _, f := range cands {
		isCand[f.Path] = true
	}
	return func(p string) (bool, bool) {
		if !isCand[p] {
			return false, false
		}
		if p == loc || slices.ContainsFunc(md.MetadataLog, func(e spec.MetadataLogEntry) bool { return e.MetadataFile == p }) {
			return true, true
		}
		return false, true
	}
}

// dryRunFiles lists what a run would delete into files, reading through a
// read-only IO.
func dryRunFiles(ctx context.Context, t *catalog.Table, d *diff, opts Options, files *FileList) error {
	if d != nil {
		if err := d.each(files.Add); err != nil {
			return err
		}
	}
	if opts.CleanMetadataFiles {
		// The committed metadata log would gain the current file and be
		// trimmed to write.metadata.previous-versions-max; the listing part
		// is what a dry run can show without committing.
		if meta, err := metadataFiles(ctx, fileio.ReadOnly(t.IO), "", t.Metadata, t.MetadataLocation, t.Metadata); err == nil {
			for _, f := range meta {
				if err := files.Add(f); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// applyPlan is md after p's updates.
func applyPlan(md *spec.TableMetadata, p *Plan) (*spec.TableMetadata, error) {
	if p.Empty() {
		return md, nil
	}
	after, err := spec.ApplyUpdates(md, p.Updates(md), spec.ApplyOptions{Now: time.UnixMilli(md.LastUpdatedMS)})
	if err != nil {
		return nil, fmt.Errorf("expire: apply the plan to the metadata: %w", err)
	}
	return after, nil
}

func sameSnapshots(a, b *spec.TableMetadata) bool {
	ids := func(md *spec.TableMetadata) []int64 {
		out := make([]int64, len(md.Snapshots))
		for i, s := range md.Snapshots {
			out[i] = s.SnapshotID
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(ids(a), ids(b))
}

// Idle reports whether Run would change nothing on t: no snapshot and no
// ref to remove under opts' policy, and no interrupted expiry's journal
// to finish. It reads the table's metadata directory and nothing else, so
// a caller can skip what a run costs beyond that (the table's claim).
func Idle(ctx context.Context, t *catalog.Table, opts Options) (bool, error) {
	if opts.CleanMetadataFiles {
		return false, nil
	}
	if opts.Policy.Now.IsZero() {
		opts.Policy.Now = time.Now()
	}
	plan, err := opts.plan(ctx, t)
	if err != nil {
		return false, err
	}
	if !plan.Empty() {
		return false, nil
	}
	ps, err := journals(ctx, t.IO, t.Metadata)
	return err == nil && len(ps) == 0, err
}
