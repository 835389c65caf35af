package table

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/icectl/icectl/iceberg/commit"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/manifest"
	"github.com/icectl/icectl/iceberg/metastore"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
)

// producer builds a Change into a snapshot, once per commit attempt. It
// keeps the snapshot id across attempts, so manifests written for one
// attempt (added files, and rewrites of manifests that are still in the
// new base) are reused by the next.
type producer struct {
	ch         Change
	snapshotID int64
	commitUUID string
	manifests  int // manifest files named so far

	added     []cachedManifest                 // manifests of added files, for addedVersion
	addedVer  int                              // format version the added manifests were written in
	rewritten map[string]cachedManifest        // by rewriteKey
	counted   map[string]manifest.ManifestFile // carried-over manifests with their counts read, by path
	// planned holds, from attempt 0, the deletes that applied to each
	// removed data file when the change was planned.
	planned map[FileKey]bool
	// rewriteStats are the manifest count keys of the summary
	// (manifests-created, -kept, -replaced, and for a manifest rewrite
	// entries-processed).
	rewriteStats map[string]string
	// schemas parses each distinct Avro schema of the manifests the
	// commit reads and writes once, across attempts.
	schemas *manifest.SchemaCache
	// seed fingerprints the base's live files (baseState.live, liveKeys).
	seed maphash.Seed
}

type cachedManifest struct {
	mf      manifest.ManifestFile // sequence numbers unassigned
	written bool                  // written by this producer (vs carried over)
}

// baseState is what one pass over the base snapshot finds.
type baseState struct {
	remove map[FileKey]bool // the keys the change removes
	totals counts
	// removed holds the keys of the live entries the change removes;
	// removedData the removed data files whole (rewrites check the deletes
	// that apply to them), removedTotals and removedParts what the summary
	// needs of all of them. A delete file costs a key, not its entry: a dv
	// merge removes tens of thousands.
	removed       map[FileKey]bool
	removedData   []FileEntry
	removedTotals counts
	removedParts  map[string]bool
	inManifest    map[string]bool // manifest paths holding a removed entry
	// liveIn and removedIn count, by manifest path, its live entries and
	// those of them the change removes.
	liveIn, removedIn map[string]int
	// live and liveKeys hold fingerprints (maphash, the producer's
	// seed) of the paths of live data files and of the keys of all live
	// files, sorted once the pass is over (index): a table of 100,000
	// files costs the check 2.4 MB instead of its every path (or 18 MB as
	// sets).
	live     []uint64
	liveKeys []uint64
	// deletes are the live delete files, kept only when the change adds
	// data files (checkBase looks for deletes new since planning).
	deletes []FileEntry
	// refFound marks, by index in ch.AddManifests' refs, the referenced
	// data files found live.
	refFound []bool
}

func (p *producer) build(ctx context.Context, base *metastore.Table, attempt int) (*commit.Attempt, error) {
	md := base.Metadata
	ch := &p.ch
	var upgrade []spec.Update
	if ch.FormatVersion > md.FormatVersion {
		// Write the snapshot against the upgraded metadata; the catalog
		// applies the same upgrade first, in the same commit.
		upgrade = []spec.Update{spec.UpgradeFormatVersion{FormatVersion: ch.FormatVersion}}
		up, err := spec.ApplyUpdates(md, upgrade, spec.ApplyOptions{Now: time.Now()})
		if err != nil {
			return nil, err
		}
		md = up
	}
	if md.FormatVersion < 2 || md.FormatVersion > 3 {
		return nil, fmt.Errorf("cannot write snapshots to a format v%d table (icectl writes v2 and v3; upgrade the table first)", md.FormatVersion)
	}
	branch := ch.Branch
	if branch == "" {
		branch = spec.MainBranch
	}
	var parent *int64
	var baseSnap *spec.Snapshot
	if ref, ok := md.Refs[branch]; ok {
		if ref.Type != spec.RefTypeBranch {
			return nil, fmt.Errorf("%q is a %s, not a branch", branch, ref.Type)
		}
		id := ref.SnapshotID
		parent = &id
		s, ok := md.SnapshotByID(id)
		if !ok {
			return nil, fmt.Errorf("branch %q points at missing snapshot %d", branch, id)
		}
		baseSnap = s
	}
	if ch.Validate != nil {
		if err := ch.Validate(base, baseSnap); err != nil {
			return nil, err
		}
	}
	if _, clash := md.SnapshotByID(p.snapshotID); clash {
		// Everything written so far carries the old id; start over.
		p.snapshotID = NewSnapshotID()
		p.added, p.rewritten = nil, map[string]cachedManifest{}
	}
	fio := base.IO
	if fio == nil {
		return nil, errors.New("table has no file IO")
	}
	mfs, err := ManifestFiles(ctx, fio, baseSnap)
	if err != nil {
		return nil, err
	}
	if mfs, err = p.withCounts(ctx, fio, mfs); err != nil {
		return nil, err
	}
	st, err := p.baseOf(ctx, fio, baseSnap, mfs)
	if err != nil {
		return nil, err
	}
	if err := p.checkBase(md, st, attempt); err != nil {
		return nil, err
	}

	var written []string // fresh files of this attempt, removed on a build error
	var entries []listed
	if ch.Rewrite != nil {
		if ch.Rewrite.Observe != nil {
			if err := ch.Rewrite.Observe(baseSnap, mfs); err != nil {
				return nil, err
			}
		}
		selected := SelectedForRewrite(mfs, ch.Rewrite.Select)
		isSel := map[string]bool{}
		for _, mf := range selected {
			isSel[mf.Path] = true
		}
		if entries, err = p.rewriteManifests(ctx, fio, md, selected); err != nil {
			return nil, err
		}
		for _, l := range entries {
			written = append(written, l.mf.Path)
		}
		kept, dropped := 0, 0
		for _, mf := range mfs {
			switch {
			case isSel[mf.Path]:
			case hasLiveFiles(mf):
				entries = append(entries, listed{mf: mf})
				kept++
			default:
				dropped++
			}
		}
		p.rewriteStats["manifests-kept"] = strconv.Itoa(kept)
		// Java counts the manifests a rewrite drops as replaced too.
		p.rewriteStats["manifests-replaced"] = strconv.Itoa(len(selected) + dropped)
	} else {
		if entries, written, err = p.changeManifests(ctx, fio, md, mfs, st); err != nil {
			return nil, err
		}
	}
	replaced := rewrittenBase(entries)
	cfg, err := MergeConfigOf(md)
	if err != nil {
		return nil, errors.Join(err, removeAll(ctx, fio, md, written))
	}
	// A relist-only change writes no manifest of its own, so, like Java's
	// FastAppend of nothing, it lists the base's manifests as they are:
	// merging them would make a metadata-only commit read and rewrite
	// every entry of the table.
	if cfg.Enabled && ch.Rewrite == nil && !ch.RelistOnly {
		merged, away, err := p.mergeManifests(ctx, fio, md, cfg, entries)
		if err != nil {
			return nil, errors.Join(err, removeAll(ctx, fio, md, written))
		}
		// The producer's manifests merged away are referenced by nothing:
		// this attempt's are removed now, an earlier attempt's by the commit
		// loop (they are not listed as reused). Neither may be reused.
		var gone []string
		for _, l := range away {
			if !l.written {
				continue
			}
			if l.added {
				p.added = nil
			} else {
				delete(p.rewritten, l.key)
			}
			if l.fresh {
				gone = append(gone, l.mf.Path)
			}
		}
		if err := removeAll(ctx, fio, md, gone); err != nil {
			return nil, errors.Join(err, removeAll(ctx, fio, md, written))
		}
		entries = merged
		replaced += carried(away)
		written = written[:0]
		for _, l := range entries {
			if l.fresh {
				written = append(written, l.mf.Path)
			}
		}
	}
	if ch.Rewrite == nil {
		p.rewriteStats = manifestCounts(entries, replaced)
	}
	var list []manifest.ManifestFile
	var reused []string
	for _, l := range entries {
		list = append(list, l.mf)
		if l.written && !l.fresh {
			reused = append(reused, l.mf.Path)
		}
	}

	snap, listPath, err := p.writeSnapshot(ctx, fio, md, parent, attempt, list, st)
	if err != nil {
		return nil, errors.Join(err, removeAll(ctx, fio, md, written))
	}
	written = append(written, listPath)
	ref := spec.SnapshotRef{SnapshotID: snap.SnapshotID, Type: spec.RefTypeBranch}
	if old, ok := md.Refs[branch]; ok {
		ref.MinSnapshotsToKeep, ref.MaxSnapshotAgeMS, ref.MaxRefAgeMS = old.MinSnapshotsToKeep, old.MaxSnapshotAgeMS, old.MaxRefAgeMS
	}
	return &commit.Attempt{
		Requirements: []spec.Requirement{
			spec.AssertTableUUID{UUID: md.TableUUID},
			spec.AssertRefSnapshotID{Ref: branch, SnapshotID: parent},
		},
		Updates: append(upgrade,
			spec.AddSnapshot{Snapshot: *snap},
			spec.SetSnapshotRef{RefName: branch, Ref: ref},
		),
		Written: written,
		Reused:  reused,
	}, nil
}

// changeManifests lists the manifests of the change's added files, then
// the base's manifests, rewritten where they hold a removed file.
func (p *producer) changeManifests(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, mfs []manifest.ManifestFile, st *baseState) (entries []listed, written []string, err error) {
	added, fresh, err := p.addedManifests(ctx, fio, md)
	if err != nil {
		return nil, nil, errors.Join(err, removeAll(ctx, fio, md, paths(added, fresh)))
	}
	if fresh {
		written = append(written, paths(added, true)...)
	}
	for _, c := range added {
		entries = append(entries, listed{mf: c.mf, written: true, fresh: fresh, added: true})
	}
	if given := p.ch.AddManifests; given != nil {
		for _, mf := range given.Manifests {
			mf.AddedSnapshotID = p.snapshotID // its entries inherit it
			entries = append(entries, listed{mf: mf, given: true})
		}
	}
	// Manifests holding a removed file are rewritten concurrently, as
	// walks read them; each is named in list order first, so the names do
	// not depend on which rewrite finishes first. Manifests whose every
	// live file is removed are not rewritten one by one: their entries,
	// all DELETED, are folded into one manifest (per content, spec and
	// schema), as iceberg-go does. A compaction of a table of one small
	// manifest per append otherwise writes (and syncs) one manifest per
	// append, which the merge then reads back into one.
	base := make([]listed, len(mfs))
	keep := make([]bool, len(mfs))
	var todo, whole []int
	for i, mf := range mfs {
		if !st.inManifest[mf.Path] {
			base[i], keep[i] = listed{mf: mf}, hasLiveFiles(mf)
			continue
		}
		if st.removedIn[mf.Path] == st.liveIn[mf.Path] {
			whole = append(whole, i)
			continue
		}
		keep[i] = true
		key := rewriteKey(mf, md.FormatVersion)
		if c, ok := p.rewritten[key]; ok {
			base[i] = listed{mf: c.mf, written: true, key: key}
			continue
		}
		todo = append(todo, i)
	}
	out, err := p.rewriteAll(ctx, fio, md, mfs, todo)
	for k, i := range todo {
		if out[k].Path == "" {
			continue
		}
		written = append(written, out[k].Path)
		if err == nil {
			key := rewriteKey(mfs[i], md.FormatVersion)
			p.rewritten[key] = cachedManifest{mf: out[k], written: true}
			base[i] = listed{mf: out[k], written: true, fresh: true, key: key}
		}
	}
	if err != nil {
		return nil, nil, errors.Join(err, removeAll(ctx, fio, md, written))
	}
	folded, fwritten, err := p.foldAll(ctx, fio, md, mfs, whole)
	written = append(written, fwritten...)
	if err != nil {
		return nil, nil, errors.Join(err, removeAll(ctx, fio, md, written))
	}
	for _, f := range folded {
		base[f.at], keep[f.at] = f.l, true
	}
	for i := range base {
		if keep[i] {
			entries = append(entries, base[i])
		}
	}
	return entries, written, nil
}

// foldedManifest is the manifest written for a set of base manifests
// whose every live file the change removes, listed where the first of
// them was.
type foldedManifest struct {
	at int
	l  listed
}

// foldAll writes the entries of the manifests mfs[i], i in whole (every
// live entry of each removed), as DELETED entries of one manifest per
// content, partition spec and schema, in list order. It returns the
// manifests and the paths it wrote, also on error.
func (p *producer) foldAll(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, mfs []manifest.ManifestFile, whole []int) ([]foldedManifest, []string, error) {
	type group struct {
		members []int
		meta    manifest.ManifestMeta
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, i := range whole {
		meta, err := p.manifestMeta(ctx, fio, mfs[i])
		if err != nil {
			return nil, nil, err
		}
		k := fmt.Sprintf("%d|%d|%s", mfs[i].Content, mfs[i].SpecID, meta.SchemaJSON)
		g := byKey[k]
		if g == nil {
			g = &group{meta: meta}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.members = append(g.members, i)
	}
	remove := make(map[FileKey]bool, len(p.ch.Remove))
	for _, k := range p.ch.Remove {
		remove[k] = true
	}
	var out []foldedManifest
	var written []string
	for _, g := range groups {
		key := "fold"
		for _, i := range g.members {
			key += "||" + rewriteKey(mfs[i], md.FormatVersion)
		}
		if c, ok := p.rewritten[key]; ok {
			out = append(out, foldedManifest{at: g.members[0], l: listed{mf: c.mf, written: true, key: key, folded: len(g.members) - 1}})
			continue
		}
		path := p.nextManifestPath(md)
		schema, ps, content := p.rewriteTarget(md, mfs[g.members[0]], g.meta)
		mf, err := p.writeManifestAt(ctx, fio, md, path, schema, ps, content, func(w *manifest.Writer) error {
			for _, i := range g.members {
				if err := p.copyManifest(ctx, fio, md, mfs[i], w, remove); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return out, written, err
		}
		written = append(written, path)
		p.rewritten[key] = cachedManifest{mf: mf, written: true}
		out = append(out, foldedManifest{at: g.members[0], l: listed{mf: mf, written: true, fresh: true, key: key, folded: len(g.members) - 1}})
	}
	return out, written, nil
}

// manifestMeta reads the header of the manifest mf.
func (p *producer) manifestMeta(ctx context.Context, fio fileio.FileIO, mf manifest.ManifestFile) (manifest.ManifestMeta, error) {
	f, err := fio.Open(ctx, mf.Path)
	if err != nil {
		return manifest.ManifestMeta{}, fmt.Errorf("read manifest: %w", err)
	}
	defer f.Close()
	r, err := manifest.OpenManifest(io.NewSectionReader(f, 0, f.Size()), manifest.WithSchemaCache(p.schemas))
	if err != nil {
		return manifest.ManifestMeta{}, fmt.Errorf("read manifest %s: %w", mf.Path, err)
	}
	defer r.Close()
	return r.Meta(), nil
}

// rewriteConcurrency is how many manifests a commit rewrites at once.
const rewriteConcurrency = 4

// rewriteAll rewrites mfs[i] for each i of todo, at most
// rewriteConcurrency at once. out[k] is the rewrite of mfs[todo[k]], with
// an empty path when it was not written; the error is the first failure
// in list order, after which the rewrites not yet started are skipped.
func (p *producer) rewriteAll(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, mfs []manifest.ManifestFile, todo []int) ([]manifest.ManifestFile, error) {
	out := make([]manifest.ManifestFile, len(todo))
	if len(todo) == 0 {
		return out, nil
	}
	remove := make(map[FileKey]bool, len(p.ch.Remove))
	for _, k := range p.ch.Remove {
		remove[k] = true
	}
	names := make([]string, len(todo))
	for k := range todo {
		names[k] = p.nextManifestPath(md)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(todo))
	next := make(chan int, len(todo))
	for k := range todo {
		next <- k
	}
	close(next)
	var wg sync.WaitGroup
	for range min(rewriteConcurrency, len(todo)) {
		wg.Go(func() {
			for k := range next {
				if err := ctx.Err(); err != nil {
					errs[k] = err
					continue
				}
				if out[k], errs[k] = p.rewrite(ctx, fio, md, mfs[todo[k]], names[k], remove); errs[k] != nil {
					cancel()
				}
			}
		})
	}
	wg.Wait()
	// A rewrite cancelled because another failed reports the other's
	// cause, not its own cancellation.
	var first error
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return out, err
		}
		if first == nil {
			first = err
		}
	}
	return out, first
}

func paths(cs []cachedManifest, fresh bool) []string {
	if !fresh {
		return nil
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.mf.Path
	}
	return out
}

// hasLiveFiles reports whether a carried-over manifest still lists a live
// file; one holding only DELETED entries is dropped, as those entries
// matter only to the snapshot that wrote them.
func hasLiveFiles(mf manifest.ManifestFile) bool {
	if mf.AddedFilesCount == nil || mf.ExistingFilesCount == nil {
		return true
	}
	return *mf.AddedFilesCount > 0 || *mf.ExistingFilesCount > 0
}

// baseOf is what the change needs to know of the base snapshot. A change
// that adds and removes no file (a relist, a manifest rewrite) needs only
// the base's totals for its summary: when the parent's summary has them,
// they are taken from it, as Java's SnapshotSummary does, and no manifest
// is read for them; otherwise every entry is scanned, or taken from the
// live files the caller read of the same snapshot (Change.BaseFiles).
func (p *producer) baseOf(ctx context.Context, fio fileio.FileIO, baseSnap *spec.Snapshot, mfs []manifest.ManifestFile) (*baseState, error) {
	if p.ch.RelistOnly || p.ch.Rewrite != nil {
		if baseSnap == nil {
			return &baseState{}, nil
		}
		if c, ok := totalsOf(baseSnap.Summary); ok {
			return &baseState{totals: c}, nil
		}
	}
	st := p.newBaseState()
	if p.ch.BaseFiles != nil {
		if fs := p.ch.BaseFiles(baseSnap); fs.allOf(baseSnap) {
			each := func(fn func(FileEntry) error) error {
				for _, list := range [][]FileEntry{fs.Data, fs.Deletes} {
					for _, e := range list {
						if err := fn(e); err != nil {
							return err
						}
					}
				}
				return nil
			}
			if err := each(func(e FileEntry) error { return p.addBase(st, e) }); err != nil {
				return nil, fmt.Errorf("read base snapshot: %w", err)
			}
			return st, p.index(st, each)
		}
	}
	// Nothing here needs column metrics, and decoding them is most of the
	// cost of reading an entry; the entries are never written (rewrites
	// read their manifests again). Nor does it need manifest order, so the
	// entries are taken as they are decoded instead of a manifest's worth
	// at a time (a manifest of 100,000 files held whole was most of a
	// large commit's memory).
	ropts := []manifest.ReadOption{manifest.WithBudget(manifest.NewBudget(manifest.DefaultBudget)),
		manifest.WithSchemaCache(p.schemas), manifest.WithoutMetrics()}
	if err := scanEntries(ctx, fio, mfs, ropts, func(e FileEntry) error { return p.addBase(st, e) }); err != nil {
		return nil, fmt.Errorf("read base snapshot: %w", err)
	}
	return st, p.index(st, func(fn func(FileEntry) error) error { return scanEntries(ctx, fio, mfs, ropts, fn) })
}

// index sorts the fingerprints of st once its pass is over. A fingerprint
// found twice makes it read the base again (each) for the keys behind it:
// a key listed twice (a corrupt table) is an error naming the file.
func (p *producer) index(st *baseState, each func(func(FileEntry) error) error) error {
	slices.Sort(st.live)
	slices.Sort(st.liveKeys)
	for i := 1; i < len(st.liveKeys); i++ {
		if st.liveKeys[i] != st.liveKeys[i-1] {
			continue
		}
		dup := st.liveKeys[i]
		var names []string
		err := each(func(e FileEntry) error {
			if k := KeyOf(&e.Entry.DataFile); p.keyHash(k) == dup {
				names = append(names, k.String())
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("read base snapshot: %w", err)
		}
		slices.Sort(names)
		for j := 1; j < len(names); j++ {
			if names[j] == names[j-1] {
				return fmt.Errorf("read base snapshot: file %s is listed twice in the base snapshot", names[j])
			}
		}
		// Distinct keys with one fingerprint (odds about 1e-10 at 100,000
		// files): not a duplicate.
	}
	return nil
}

// hasKey reports whether a live file has the key fingerprint h.
func (st *baseState) hasKey(h uint64) bool {
	_, ok := slices.BinarySearch(st.liveKeys, h)
	return ok
}

// hasLive reports whether a live data file has the path fingerprint h.
func (st *baseState) hasLive(h uint64) bool {
	_, ok := slices.BinarySearch(st.live, h)
	return ok
}

// newBaseState returns the state of a pass over the base yet to be made.
func (p *producer) newBaseState() *baseState {
	remove := make(map[FileKey]bool, len(p.ch.Remove))
	for _, k := range p.ch.Remove {
		remove[k] = true
	}
	st := &baseState{
		remove:       remove,
		removed:      map[FileKey]bool{},
		removedParts: map[string]bool{},
		inManifest:   map[string]bool{},
		liveIn:       map[string]int{},
		removedIn:    map[string]int{},
	}
	if given := p.ch.AddManifests; given != nil {
		st.refFound = make([]bool, len(given.refs))
	}
	return st
}

// addBase takes one live entry of the base into account: totals for the
// summary, the entries being removed and where they are, the deletes (for
// the checks, when the change adds data files) and the data files that
// ch.AddManifests' entries reference.
func (p *producer) addBase(st *baseState, e FileEntry) error {
	df := &e.Entry.DataFile
	k := KeyOf(df)
	kh := p.keyHash(k)
	st.liveKeys = append(st.liveKeys, kh)
	st.totals.add(df, 1)
	st.liveIn[e.Manifest.Path]++
	given := p.ch.AddManifests
	if df.Content == manifest.ContentData {
		st.live = append(st.live, maphash.String(p.seed, df.FilePath))
		if given != nil {
			if i := given.ref(df.FilePath); i >= 0 {
				st.refFound[i] = true
			}
		}
	} else if len(p.ch.AddData) > 0 {
		st.deletes = append(st.deletes, e)
	}
	if given != nil && given.hasKey(k) {
		return fmt.Errorf("added delete file %s is already in the table", k)
	}
	if st.remove[k] {
		st.removed[k] = true
		st.removedTotals.add(df, 1)
		st.removedParts[PartitionKey(df.SpecID, df.Partition)] = true
		if df.Content == manifest.ContentData {
			st.removedData = append(st.removedData, e)
		}
		st.inManifest[e.Manifest.Path] = true
		st.removedIn[e.Manifest.Path]++
	}
	return nil
}

// scanEntries calls fn for every live entry of mfs, reading up to
// rewriteConcurrency manifests at once. fn runs under a lock, in no
// particular order, as entries are decoded, so no manifest is held whole.
// The error returned is that of the earliest failed manifest in the list
// (one cancelled because another failed reports the other's cause).
func scanEntries(ctx context.Context, fio fileio.FileIO, mfs []manifest.ManifestFile, opts []manifest.ReadOption, fn func(FileEntry) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(mfs))
	var mu sync.Mutex
	slots := make(chan struct{}, rewriteConcurrency)
	var wg sync.WaitGroup
	for i, mf := range mfs {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			errs[i] = readManifest(ctx, fio, mf, false, opts, func(e FileEntry) error {
				mu.Lock()
				defer mu.Unlock()
				return fn(e)
			})
			if errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	var first error
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// checkBase validates the change against the base: removed files must all
// be live, added files must not be, added deletes must refer to live or
// added data files, and no delete may have appeared since planning on a
// data file whose rows the change rewrites.
func (p *producer) checkBase(md *spec.TableMetadata, st *baseState, attempt int) error {
	ch := &p.ch
	var gone []string
	for _, k := range ch.Remove {
		if !st.removed[k] {
			gone = append(gone, k.String())
		}
	}
	if len(gone) > 0 {
		return fmt.Errorf("%w: %d file(s) to remove, first %s", ErrFileGone, len(gone), gone[0])
	}
	addedData := map[string]bool{}
	for i := range ch.AddData {
		df := &ch.AddData[i]
		if st.hasKey(p.keyHash(KeyOf(df))) {
			return fmt.Errorf("added file %s is already in the table", df.FilePath)
		}
		addedData[df.FilePath] = true
	}
	for i := range ch.AddDeletes {
		df := &ch.AddDeletes[i]
		if st.hasKey(p.keyHash(KeyOf(df))) {
			return fmt.Errorf("added delete file %s is already in the table", KeyOf(df))
		}
		if err := checkDeleteFormat(md.FormatVersion, df); err != nil {
			return err
		}
		if ref := df.ReferencedDataFile; ref != nil {
			removed := st.removed[PathKey(*ref)]
			if (!st.hasLive(maphash.String(p.seed, *ref)) || removed) && !addedData[*ref] {
				return fmt.Errorf("%w: delete file %s refers to data file %s", ErrFileGone, KeyOf(df), *ref)
			}
		}
	}
	if err := p.checkGiven(st); err != nil {
		return err
	}
	if len(ch.AddData) == 0 {
		return nil
	}
	// Rows of the removed data files move to the added ones: deletes that
	// apply to a removed file now must all have been known when planning.
	ix := DeletesForTable(md, &FileSet{Deletes: st.deletes})
	now := map[FileKey]FileEntry{}
	for _, e := range st.removedData {
		a := ix.For(e)
		if a.DV != nil {
			now[a.DV.Key()] = *a.DV
		}
		for _, d := range append(a.PositionDeletes, a.EqualityDeletes...) {
			now[d.Key()] = d
		}
	}
	if attempt == 0 || p.planned == nil {
		p.planned = map[FileKey]bool{}
		for k := range now {
			p.planned[k] = true
		}
		return nil
	}
	for k, d := range now {
		if p.planned[k] {
			continue
		}
		if st.removed[k] {
			continue
		}
		if d.Entry.DataFile.Content == manifest.ContentEqualityDeletes && ch.DataSequenceNumber != nil &&
			d.DataSequenceNumber() > *ch.DataSequenceNumber {
			continue // still applies to the rewritten rows
		}
		return fmt.Errorf("%w: %s was committed after the change was planned", ErrNewDeletes, k)
	}
	return nil
}

// addedManifests writes one manifest per content and spec for the added
// files, or returns those of an earlier attempt of the same format version.
func (p *producer) addedManifests(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata) ([]cachedManifest, bool, error) {
	if p.added != nil && p.addedVer == md.FormatVersion {
		return p.added, false, nil
	}
	schema := md.CurrentSchema()
	if schema == nil {
		return nil, false, errors.New("table has no current schema")
	}
	var out []cachedManifest
	for _, group := range []struct {
		content manifest.ManifestContent
		files   []manifest.DataFile
	}{{manifest.ManifestContentData, p.ch.AddData}, {manifest.ManifestContentDeletes, p.ch.AddDeletes}} {
		// Indexes, not copies: a change may add 100,000 files.
		bySpec := map[int32][]int{}
		var specIDs []int32
		for i := range group.files {
			id := group.files[i].SpecID
			if _, ok := bySpec[id]; !ok {
				specIDs = append(specIDs, id)
			}
			bySpec[id] = append(bySpec[id], i)
		}
		sort.Slice(specIDs, func(i, j int) bool { return specIDs[i] < specIDs[j] })
		for _, id := range specIDs {
			ps, ok := md.SpecByID(int(id))
			if !ok {
				return nil, false, errors.Join(fmt.Errorf("added file %s: table has no partition spec %d", group.files[bySpec[id][0]].FilePath, id), removeAll(ctx, fio, md, paths(out, true)))
			}
			mf, err := p.writeManifest(ctx, fio, md, schema, *ps, group.content, func(w *manifest.Writer) error {
				for _, i := range bySpec[id] {
					e := manifest.Entry{Status: manifest.StatusAdded, DataFile: group.files[i]}
					if p.ch.DataSequenceNumber != nil {
						s := *p.ch.DataSequenceNumber
						e.SequenceNumber = &s
					}
					if s, ok := p.ch.DeleteSequenceNumbers[group.files[i].FilePath]; ok && group.content == manifest.ManifestContentDeletes {
						e.SequenceNumber = &s
					}
					if err := w.Add(e); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return nil, false, errors.Join(err, removeAll(ctx, fio, md, paths(out, true)))
			}
			out = append(out, cachedManifest{mf: mf, written: true})
		}
	}
	p.added, p.addedVer = out, md.FormatVersion
	return out, true, nil
}

func rewriteKey(mf manifest.ManifestFile, version int) string {
	fr := "null"
	if mf.FirstRowID != nil {
		fr = fmt.Sprint(*mf.FirstRowID)
	}
	return fmt.Sprintf("%s|%d|%d|%s|v%d", mf.Path, mf.SequenceNumber, mf.AddedSnapshotID, fr, version)
}

// rewrite copies the manifest mf to path with the removed files marked
// DELETED and the others EXISTING, carrying every inherited value
// explicitly: sequence numbers, and in v3 first_row_id. Earlier DELETED
// entries are dropped. It may run concurrently with other rewrites.
func (p *producer) rewrite(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, mf manifest.ManifestFile, path string, remove map[FileKey]bool) (manifest.ManifestFile, error) {
	meta, err := p.manifestMeta(ctx, fio, mf)
	if err != nil {
		return manifest.ManifestFile{}, fmt.Errorf("rewrite manifest: %w", err)
	}
	schema, ps, content := p.rewriteTarget(md, mf, meta)
	return p.writeManifestAt(ctx, fio, md, path, schema, ps, content, func(w *manifest.Writer) error {
		return p.copyManifest(ctx, fio, md, mf, w, remove)
	})
}

// rewriteTarget is the schema, spec and content a rewrite of mf (whose
// header is meta) is written with.
func (p *producer) rewriteTarget(md *spec.TableMetadata, mf manifest.ManifestFile, meta manifest.ManifestMeta) (*spec.Schema, spec.PartitionSpec, manifest.ManifestContent) {
	schema := meta.Schema
	if schema == nil {
		schema = md.CurrentSchema()
	}
	ps := meta.Spec
	if s, ok := md.SpecByID(int(mf.SpecID)); ok {
		ps = *s
	}
	ps.ID = int(mf.SpecID)
	content := manifest.ManifestContentData
	if mf.Content == manifest.ManifestContentDeletes {
		content = manifest.ManifestContentDeletes
	}
	return schema, ps, content
}

// copyManifest adds the live entries of mf to w: the removed files
// DELETED, the others EXISTING, every inherited value written out.
func (p *producer) copyManifest(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, mf manifest.ManifestFile, w *manifest.Writer, remove map[FileKey]bool) error {
	f, err := fio.Open(ctx, mf.Path)
	if err != nil {
		return fmt.Errorf("rewrite manifest: %w", err)
	}
	defer f.Close()
	r, err := manifest.OpenManifest(io.NewSectionReader(f, 0, f.Size()), manifest.WithSchemaCache(p.schemas))
	if err != nil {
		return fmt.Errorf("rewrite manifest %s: %w", mf.Path, err)
	}
	defer r.Close()
	r.InheritFrom(mf)
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read manifest %s: %w", mf.Path, err)
		}
		if e.Status == manifest.StatusDeleted {
			continue
		}
		if e.SequenceNumber == nil || e.FileSequenceNumber == nil {
			return fmt.Errorf("manifest %s: entry %s has no sequence number to carry", mf.Path, e.DataFile.FilePath)
		}
		if md.FormatVersion < 3 {
			e.DataFile.FirstRowID = nil
		}
		if remove[KeyOf(&e.DataFile)] {
			e.Status = manifest.StatusDeleted
			id := p.snapshotID
			e.SnapshotID = &id
		} else {
			e.Status = manifest.StatusExisting
		}
		if err := w.Add(e); err != nil {
			return err
		}
	}
}

// writeManifest writes a new manifest named like Java's
// <metadata dir>/<commit uuid>-m<N>.avro.
func (p *producer) writeManifest(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, schema *spec.Schema, ps spec.PartitionSpec,
	content manifest.ManifestContent, fill func(*manifest.Writer) error) (manifest.ManifestFile, error) {
	return p.writeManifestAt(ctx, fio, md, p.nextManifestPath(md), schema, ps, content, fill)
}

// nextManifestPath names the producer's next manifest.
func (p *producer) nextManifestPath(md *spec.TableMetadata) string {
	path := fmt.Sprintf("%s/%s-m%d.avro", MetadataLocation(md), p.commitUUID, p.manifests)
	p.manifests++
	return path
}

// writeManifestAt writes a manifest to path, filled by fill.
func (p *producer) writeManifestAt(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, path string, schema *spec.Schema, ps spec.PartitionSpec,
	content manifest.ManifestContent, fill func(*manifest.Writer) error) (manifest.ManifestFile, error) {
	var mw *manifest.Writer
	n, err := writeFile(ctx, fio, path, func(w io.Writer) error {
		var err error
		mw, err = manifest.NewWriter(w, manifest.WriterOptions{
			Version: md.FormatVersion, Content: content, Schema: schema, Spec: ps, SnapshotID: p.snapshotID,
			Schemas: p.schemas,
		})
		if err != nil {
			return err
		}
		if err := fill(mw); err != nil {
			return err
		}
		return mw.Close()
	})
	if err != nil {
		return manifest.ManifestFile{}, fmt.Errorf("write manifest: %w", err) // err names path
	}
	return mw.ManifestFile(path, n), nil
}

// writeSnapshot writes the manifest list and returns the snapshot.
func (p *producer) writeSnapshot(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, parent *int64, attempt int,
	list []manifest.ManifestFile, st *baseState) (*spec.Snapshot, string, error) {
	seq := md.LastSequenceNumber + 1
	var firstRowID *int64
	if md.FormatVersion >= 3 {
		v := int64(0)
		if md.NextRowID != nil {
			v = *md.NextRowID
		}
		firstRowID = &v
	}
	path := fmt.Sprintf("%s/snap-%d-%d-%s.avro", MetadataLocation(md), p.snapshotID, attempt+1, p.commitUUID)
	var lw *manifest.ListWriter
	_, err := writeFile(ctx, fio, path, func(w io.Writer) error {
		var err error
		lw, err = manifest.NewListWriter(w, md.FormatVersion, p.snapshotID, parent, seq, firstRowID)
		if err != nil {
			return err
		}
		for _, mf := range list {
			if err := lw.Add(mf); err != nil {
				return err
			}
		}
		return lw.Close()
	})
	if err != nil {
		return nil, "", fmt.Errorf("write manifest list: %w", err) // err names path
	}
	var added counts
	removed := st.removedTotals
	parts := map[string]bool{}
	if given := p.ch.AddManifests; given != nil {
		added = given.counts
		for k := range given.parts {
			parts[k] = true
		}
	}
	for _, files := range [][]manifest.DataFile{p.ch.AddData, p.ch.AddDeletes} {
		for i := range files {
			added.add(&files[i], 1)
			parts[PartitionKey(files[i].SpecID, files[i].Partition)] = true
		}
	}
	for k := range st.removedParts {
		parts[k] = true
	}
	snap := &spec.Snapshot{
		SnapshotID:       p.snapshotID,
		ParentSnapshotID: parent,
		SequenceNumber:   seq,
		TimestampMS:      max(time.Now().UnixMilli(), md.LastUpdatedMS),
		ManifestList:     path,
		Summary:          summary(p.ch.Operation, st.totals, added, removed, len(parts), withStats(p.ch.Summary, p.rewriteStats)),
	}
	schemaID := md.CurrentSchemaID
	snap.SchemaID = &schemaID
	if firstRowID != nil {
		addedRows := *lw.NextRowID() - *firstRowID
		snap.FirstRowID, snap.AddedRows = firstRowID, &addedRows
	}
	return snap, path, nil
}

// writeFile writes a new file through fio and returns its size. A failed
// write is aborted so no partial file is left.
func writeFile(ctx context.Context, fio fileio.FileIO, path string, fill func(io.Writer) error) (int64, error) {
	w, err := fio.Create(ctx, path)
	if err != nil {
		return 0, err // names path
	}
	cw := &fileio.CountingWriter{W: w}
	if err := fill(cw); err != nil {
		if cw.Err == nil || !errors.Is(err, cw.Err) {
			err = fmt.Errorf("write %s: %w", path, err) // an encoder's error
		}
		return 0, errors.Join(err, w.Abort())
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return cw.N, nil
}

// removeAll deletes files this attempt wrote before it failed to build;
// nothing references them.
func removeAll(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, paths []string) error {
	return reclaim.DeleteWritten(ctx, fio, md, paths)
}

func withStats(extra, stats map[string]string) map[string]string {
	if len(stats) == 0 {
		return extra
	}
	out := make(map[string]string, len(extra)+len(stats))
	for k, v := range extra {
		out[k] = v
	}
	for k, v := range stats {
		out[k] = v
	}
	return out
}
