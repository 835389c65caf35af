// Package rewritemanifests regroups a table's data manifests into
// manifests of the target size (commit.manifest.target-size-bytes),
// clustered by partition, so that planning a scan reads fewer, better
// pruned manifests.
//
// Plan is read-only: it looks at the current snapshot's manifest list and
// says what a rewrite would do. Run commits a "replace" snapshot through
// the commit loop (iceberg/table.CommitChange), which rebuilds the rewrite
// on the fresh table after a conflict, so a concurrent commit is never
// overwritten. Every live entry is carried as EXISTING with its sequence
// numbers and, in v3, its first_row_id, so rows and lineage are unchanged;
// entries without a first_row_id (from before an upgrade) get new ranges.
//
// The package never adds, removes or rewrites a data or delete file, and
// deletes nothing but the files of its own failed attempts.
package rewritemanifests

import (
	"context"
	"fmt"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/meter"
	"github.com/icectl/icectl/plan/where"
)

// Options say what to rewrite.
type Options struct {
	// SpecID, when set, limits the rewrite to manifests of that spec.
	SpecID *int32
	// Where, when set, limits the rewrite to manifests holding at least
	// one live file whose partition matches it (partition columns only).
	Where *where.Filter
	// TargetSize overrides the table's commit.manifest.target-size-bytes.
	TargetSize int64
	// MemoryBudget and TempDir bound the memory the rewrite sorts entries
	// in, spilling sorted runs to TempDir beyond it (see
	// table.ManifestRewrite; zero values: the defaults).
	MemoryBudget int64
	TempDir      string
	Commit       commit.Options
	// Progress receives one step per selected manifest, once the commit
	// that reads and rewrites them all has landed.
	Progress meter.Meter
}

// Plan is what a rewrite of the current snapshot would do.
type Plan struct {
	Table         string `json:"table"`
	SnapshotID    *int64 `json:"snapshot_id"`
	TargetSize    int64  `json:"target_size_bytes"`
	DataManifests int    `json:"data_manifests"`
	Selected      int    `json:"manifests_selected"`
	Entries       int64  `json:"entries"`
	Planned       int    `json:"manifests_planned"`
	// Dropped are the manifests (data or deletes) left with no live file:
	// they list only files an earlier snapshot removed, and the rewrite
	// leaves them out.
	Dropped int `json:"manifests_without_live_files"`

	// paths are the selected manifests when Where narrowed them.
	paths map[string]bool
}

// Worthwhile reports whether the rewrite reduces the manifest count.
func (p Plan) Worthwhile() bool { return p.Planned < p.Selected || p.Dropped > 0 }

func selector(opts Options, paths map[string]bool) func(manifest.ManifestFile) bool {
	if opts.SpecID == nil && paths == nil {
		return nil
	}
	return func(mf manifest.ManifestFile) bool {
		if opts.SpecID != nil && mf.SpecID != *opts.SpecID {
			return false
		}
		return paths == nil || paths[mf.Path]
	}
}

// matching returns the paths of the manifests of snap holding a live data
// file that may hold rows matching w, by its partition and column metrics.
func matching(ctx context.Context, t *catalog.Table, snap *spec.Snapshot, w *where.Filter) (map[string]bool, error) {
	md := t.Metadata
	filters := map[int32]*where.PartitionFilter{}
	paths := map[string]bool{}
	err := table.WalkEntries(ctx, t.IO, snap, table.WalkOptions{Content: table.DataOnly}, func(e table.FileEntry) error {
		if paths[e.Manifest.Path] {
			return nil
		}
		id := e.Manifest.SpecID
		pf, ok := filters[id]
		if !ok {
			ps, found := md.SpecByID(int(id))
			if !found {
				return fmt.Errorf("manifest %s has unknown partition spec %d", e.Manifest.Path, id)
			}
			var err error
			if pf, err = w.ForSpec(ps, md.CurrentSchema()); err != nil {
				return err
			}
			filters[id] = pf
		}
		ok, err := pf.MatchFile(&e.Entry.DataFile)
		if err != nil {
			return err
		}
		if ok {
			paths[e.Manifest.Path] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("--where %s: %w", w, err)
	}
	return paths, nil
}

// PlanRewrite reads the current snapshot's manifest list and plans the
// rewrite. It writes nothing.
func PlanRewrite(ctx context.Context, t *catalog.Table, opts Options) (Plan, error) {
	md := t.Metadata
	p := Plan{Table: t.Ident.String()}
	if opts.SpecID != nil {
		if _, ok := md.SpecByID(int(*opts.SpecID)); !ok {
			return p, fmt.Errorf("table %s has no partition spec %d", t.Ident, *opts.SpecID)
		}
	}
	target := opts.TargetSize
	if target <= 0 {
		var err error
		if target, err = table.TargetManifestSize(md); err != nil {
			return p, err
		}
	}
	p.TargetSize = target
	snap := md.CurrentSnapshot()
	if snap == nil {
		return p, nil
	}
	mfs, err := table.ManifestFiles(ctx, t.IO, snap)
	if err != nil {
		return p, fmt.Errorf("plan manifest rewrite of %s: %w", t.Ident, err)
	}
	if opts.Where != nil {
		if p.paths, err = matching(ctx, t, snap, opts.Where); err != nil {
			return p, err
		}
	}
	if p, err = p.of(snap, mfs, opts); err != nil || !p.Worthwhile() {
		return p, err
	}
	// The rewrite reads the selected manifests' entries only as it
	// commits: read them now, so that one no reader accepts (a crafted
	// path) refuses the run before it takes the table's claim, not under
	// it. The manifests are read twice; they are small next to the data.
	sel := table.SelectedForRewrite(mfs, selector(opts, p.paths))
	err = table.WalkManifests(ctx, t.IO, sel, table.WalkOptions{SkipMetrics: true}, func(table.FileEntry) error { return nil })
	if err != nil {
		return p, fmt.Errorf("plan manifest rewrite of %s: %w", t.Ident, err)
	}
	return p, nil
}

// of completes p (its table, target size and --where paths set) from the
// manifest list mfs of snap. It is the one plan: the dry run computes it
// from the current snapshot, and Run from the base each commit attempt
// rewrites (through ManifestRewrite.Observe), with the rewrite's own
// selection (table.SelectedForRewrite) and entries per manifest
// (table.EntriesPerManifest), so what a dry run shows is what the run
// does on the same snapshot.
func (p Plan) of(snap *spec.Snapshot, mfs []manifest.ManifestFile, opts Options) (Plan, error) {
	p.SnapshotID = nil
	if snap != nil {
		id := snap.SnapshotID
		p.SnapshotID = &id
	}
	p.DataManifests, p.Selected, p.Entries, p.Planned, p.Dropped = 0, 0, 0, 0, 0
	for _, mf := range mfs {
		if mf.Content == manifest.ManifestContentData {
			p.DataManifests++
		}
		if mf.AddedFilesCount != nil && mf.ExistingFilesCount != nil && *mf.AddedFilesCount+*mf.ExistingFilesCount == 0 {
			p.Dropped++
		}
	}
	sel := table.SelectedForRewrite(mfs, selector(opts, p.paths))
	p.Selected = len(sel)
	per := int64(table.EntriesPerManifest(sel, p.TargetSize))
	bySpec := map[int32]int64{}
	for _, mf := range sel {
		if mf.AddedFilesCount == nil || mf.ExistingFilesCount == nil {
			return p, fmt.Errorf("plan manifest rewrite of %s: manifest %s has no file counts (a v1 manifest list); upgrade the table first", p.Table, mf.Path)
		}
		n := int64(*mf.AddedFilesCount) + int64(*mf.ExistingFilesCount)
		bySpec[mf.SpecID] += n
		p.Entries += n
	}
	for _, n := range bySpec {
		p.Planned += int((n + per - 1) / per)
	}
	return p, nil
}

// Result is what Run did.
type Result struct {
	Plan      Plan           `json:"plan"`
	Committed bool           `json:"committed"`
	Snapshot  *spec.Snapshot `json:"-"`
	// MetadataLocation is the table's metadata file after the run.
	MetadataLocation string `json:"metadata_location"`
}

// Run plans the rewrite and, when it reduces the manifest count, commits
// it. The commit re-plans on whatever the table holds at each attempt; the
// result's plan is the one of the attempt that landed, computed as the
// dry run computes it (Plan.of), so on an unchanged table it is the dry
// run's plan.
func Run(ctx context.Context, cat catalog.Catalog, t *catalog.Table, opts Options) (*Result, error) {
	p, err := PlanRewrite(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	return Execute(ctx, cat, t, p, opts)
}

// Execute runs p, a plan of t's current snapshot (PlanRewrite of t with
// opts, or of a version of it with the same snapshot), as Run does.
func Execute(ctx context.Context, cat catalog.Catalog, t *catalog.Table, p Plan, opts Options) (*Result, error) {
	res := &Result{Plan: p, MetadataLocation: t.MetadataLocation}
	if !p.Worthwhile() {
		return res, nil
	}
	pm := meter.Or(opts.Progress)
	pm.Start(p.Selected, 0)
	defer pm.Done()
	landed := p
	observe := func(base *spec.Snapshot, mfs []manifest.ManifestFile) error {
		var err error
		landed, err = p.of(base, mfs, opts)
		return err
	}
	out, snap, err := table.CommitChange(ctx, cat, t, table.Change{
		Operation: spec.OperationReplace,
		Rewrite: &table.ManifestRewrite{Select: selector(opts, p.paths), TargetSize: p.TargetSize,
			MemoryBudget: opts.MemoryBudget, TempDir: opts.TempDir, Observe: observe},
	}, opts.Commit)
	if err != nil {
		return nil, fmt.Errorf("rewrite manifests of %s: %w", t.Ident, err)
	}
	for range p.Selected {
		pm.Step(0)
	}
	res.Plan, res.Committed, res.Snapshot, res.MetadataLocation = landed, true, snap, out.MetadataLocation
	return res, nil
}
