package orphan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/shared/extsort"
	"github.com/icectl/icectl/internal/shared/meter"
)

// Defaults and limits of Options.
const (
	DefaultOlderThan = 72 * time.Hour
	// MinOlderThan is the youngest cutoff allowed without AllowRecent:
	// writes in flight are younger than that.
	MinOlderThan = 24 * time.Hour
	// batchSize is how many orphans go to the Deleter at once.
	batchSize = 1000
)

var (
	// ErrInvalidOptions is wrapped by errors about the options.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrPrefixMismatch is returned when listed files match references
	// only under another scheme or authority, with PrefixError.
	ErrPrefixMismatch = errors.New("prefix mismatch")
	// ErrGCDisabled is returned when the table's gc.enabled is false.
	ErrGCDisabled = errors.New("gc.enabled is false")
	// ErrIncomplete is wrapped when some orphans could not be removed.
	ErrIncomplete = errors.New("some orphans were not removed")
)

// Loader loads the current version of the table; Run calls it at the
// start and again right before it deletes anything.
type Loader func(ctx context.Context) (*catalog.Table, error)

// Options are the inputs of Run.
type Options struct {
	// Location is the directory to clean (default: the table location).
	Location string
	// OlderThan: only files last modified before now-OlderThan are
	// orphans (0 = DefaultOlderThan).
	OlderThan time.Duration
	// AllowRecent allows OlderThan below MinOlderThan.
	AllowRecent bool
	// EqualSchemes and EqualAuthorities are added equivalences
	// (from -> canonical); DefaultEqualSchemes always apply.
	EqualSchemes, EqualAuthorities map[string]string
	PrefixMismatch                 PrefixMode
	DryRun                         bool
	// Trash, when set, is the directory orphans are moved under instead
	// of being deleted (see trash.go); relative to the table location
	// unless it is absolute.
	Trash string
	// MaxConcurrentDeletes bounds parallel removals and moves (0: the
	// Deleter's default).
	MaxConcurrentDeletes int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// TempDir and MemoryBudget configure the spill of the sorted streams.
	TempDir      string
	MemoryBudget int
	// Log receives progress lines (nil: none).
	Log io.Writer
	// Progress receives one step per orphan deleted, moved or kept.
	Progress meter.Meter
	// Guard, when set, runs the removal: after the listing and the plan,
	// and only when they found orphans. The command layer takes the
	// table's claim in it, so a run with nothing to remove writes nothing
	// and storage is listed once either way; the removal re-loads the
	// table inside it and re-checks every orphan against that version.
	Guard func(ctx context.Context, remove func(ctx context.Context) error) error
}

// Status is what happened to an orphan.
type Status string

const (
	StatusWouldDelete Status = "would_delete"
	StatusWouldTrash  Status = "would_trash"
	StatusDeleted     Status = "deleted"
	StatusTrashed     Status = "trashed"
	// StatusKept: referenced by the table as re-loaded before deleting.
	StatusKept   Status = "kept"
	StatusFailed Status = "failed"
)

// Result is one orphan and what became of it.
type Result struct {
	Path    string
	Size    int64
	ModTime time.Time
	Age     time.Duration
	Reason  string
	Status  Status
	// TrashPath is where a trashed orphan went.
	TrashPath string
	// Detail explains a kept or failed orphan.
	Detail string
}

// ConflictFile is a listed file matching a reference only under another
// scheme or authority (PrefixError).
type ConflictFile struct {
	Path         string
	ReferencedAs string
	Mismatch     string
	Size         int64
	ModTime      time.Time
}

// Sink receives the report as it is produced, so that millions of orphans
// never sit in memory. Begin comes first (with what the run is about to
// do), then every conflict, then every orphan.
type Sink interface {
	Begin(Summary) error
	Conflict(ConflictFile) error
	Orphan(Result) error
}

// Summary counts a run.
type Summary struct {
	Table            string
	MetadataLocation string
	Root             string
	Cutoff           time.Time
	DryRun           bool
	PrefixMismatch   PrefixMode
	// TrashDir is the trash directory (in Begin), then the run's
	// directory in it once something was moved.
	TrashDir    string
	References  int64 // paths in the referenced set (with duplicates)
	Listed      int64
	Referenced  int64
	Young       int64
	Hidden      int64
	InTrash     int64
	Markers     int64
	Journals    int64 // expiry journals pending in the metadata directory, kept
	Ignored     int64 // prefix mismatches kept (ignore)
	Conflicts   int64
	Orphans     int64
	OrphanBytes int64
	// TableChanged: a commit landed during the run; the orphans were
	// checked against the new version too.
	TableChanged bool
	Kept         int64 // orphans a commit made during the run references
	Deleted      int64
	DeletedBytes int64
	Trashed      int64
	TrashedBytes int64
	Failed       int64
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

func (o *Options) validate() error {
	if o.OlderThan == 0 {
		o.OlderThan = DefaultOlderThan
	}
	if o.OlderThan < 0 {
		return fmt.Errorf("%w: --older-than must not be negative", ErrInvalidOptions)
	}
	if o.OlderThan < MinOlderThan && !o.AllowRecent {
		return fmt.Errorf("%w: --older-than %s is under %s, and files that young may belong to writes in flight; pass --unsafe-allow-recent if no writer can be running",
			ErrInvalidOptions, o.OlderThan, MinOlderThan)
	}
	if o.MaxConcurrentDeletes < 0 {
		return fmt.Errorf("%w: --max-concurrent-deletes must be positive", ErrInvalidOptions)
	}
	return nil
}

// gcDisabled reports whether the table forbids deleting its files.
func gcDisabled(t *catalog.Table) bool {
	return strings.EqualFold(strings.TrimSpace(t.Metadata.Property("gc.enabled", "true")), "false")
}

// inScope reports whether the directory dir (ending in '/') lies within
// the scope: a file directly in it would be. The scope rule itself stays
// in reclaim.
func inScope(s reclaim.Scope, dir string) bool {
	return s.Contains(dir + "icectl-scope-probe")
}

// Run finds the orphans of the table load returns and, unless a dry run,
// deletes them or moves them to the trash. The report goes to sink; the
// summary is returned even with an error when something was done.
func Run(ctx context.Context, load Loader, o Options, sink Sink) (*Summary, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	t0, err := load(ctx)
	if err != nil {
		return nil, err
	}
	p, err := PlanRun(ctx, t0, o, sink)
	if p == nil {
		return nil, err
	}
	defer p.Close()
	if err != nil || p.Idle() {
		return p.Summary, err
	}
	remove := func(ctx context.Context) error {
		t1, err := load(ctx)
		if err != nil {
			return fmt.Errorf("re-load %s before deleting: %w", t0.Ident, err)
		}
		return p.Execute(ctx, t1)
	}
	if o.Guard != nil {
		return p.Summary, o.Guard(ctx, remove)
	}
	return p.Summary, remove(ctx)
}

// Plan is a run's listing and plan, made reading only: the summary so far
// and the orphans found (spilled in key order), which Execute removes.
// Close releases it.
type Plan struct {
	Summary *Summary
	o       Options
	t0      *catalog.Table
	refs    *refSet
	match   Matcher
	root    string
	trash   string
	now     time.Time
	cands   *extsort.Sorter
	sink    Sink
}

// Close releases the plan's spills.
func (p *Plan) Close() {
	if p == nil {
		return
	}
	if p.cands != nil {
		p.cands.Close()
	}
	if p.refs != nil {
		p.refs.Close()
	}
}

// Idle reports that p has nothing to remove: no orphan, or a dry run.
func (p *Plan) Idle() bool { return p.Summary.DryRun || p.Summary.Orphans == 0 }

// PlanRun lists the files under the run's root and plans the run on t0,
// reading only: Begin, every conflict and, in a dry run, every orphan as
// it would be removed go to sink. A prefix mismatch refuses the run
// (ErrPrefixMismatch); so does gc.enabled=false, but for a dry run. The
// plan is returned with the error too once the listing is planned (its
// summary is the report so far); the caller closes it.
func PlanRun(ctx context.Context, t0 *catalog.Table, o Options, sink Sink) (*Plan, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	loc := o.Location
	if loc == "" {
		loc = t0.Metadata.Location
	}
	root, err := listingRoot(loc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidOptions, err)
	}
	scope := reclaim.TableScope(t0.Metadata)
	if !inScope(scope, root) {
		return nil, fmt.Errorf("%w: location %s is outside the locations of table %s (%s)", ErrInvalidOptions, root, t0.Ident, strings.Join(scope.Roots(), ", "))
	}
	var trash string
	if o.Trash != "" {
		if trash, err = trashDir(t0, o.Trash, root); err != nil {
			return nil, err
		}
	}
	if !o.DryRun && gcDisabled(t0) {
		return nil, fmt.Errorf("table %s: %w: its files must not be deleted or moved (a --dry-run only lists them)", t0.Ident, ErrGCDisabled)
	}
	lister, ok := t0.IO.(fileio.Lister)
	if !ok {
		return nil, fmt.Errorf("the file IO of %s cannot list files", root)
	}
	now := o.now()
	sum := &Summary{Table: t0.Ident.String(), MetadataLocation: t0.MetadataLocation, Root: root,
		Cutoff: now.Add(-o.OlderThan), DryRun: o.DryRun, PrefixMismatch: o.PrefixMismatch}
	pl := &Planner{Root: root, Cutoff: sum.Cutoff, Match: NewMatcher(o.EqualSchemes, o.EqualAuthorities), Mode: o.PrefixMismatch,
		MetadataKey: pathKey(splitURI(table.MetadataLocation(t0.Metadata)).path) + "/"}
	if trash != "" {
		pl.TrashKey = pathKey(splitURI(trash).path) + "/"
		sum.TrashDir = trash
	}
	if err := sink.Begin(*sum); err != nil {
		return nil, err
	}
	refs, err := buildRefs(ctx, t0, o.TempDir, o.MemoryBudget)
	if err != nil {
		return nil, err
	}
	sum.References = refs.s.Len()
	o.logf("referenced set of %s: %d paths", t0.Ident, sum.References)

	listing, err := list(ctx, lister, root, o.TempDir, o.MemoryBudget)
	if err != nil {
		refs.Close()
		return nil, err
	}
	defer listing.Close()
	sum.Listed = listing.Len()
	o.logf("listed %d files under %s", sum.Listed, root)

	p := &Plan{Summary: sum, o: o, t0: t0, refs: refs, match: pl.Match, root: root, trash: trash, now: now,
		cands: extsort.New(o.TempDir, o.MemoryBudget), sink: sink}
	if err := plan(pl, listing, refs, sum, p.cands, sink); err != nil {
		return p, err
	}
	if sum.Conflicts > 0 {
		return p, fmt.Errorf("%w: %d file(s) under %s match referenced files only under another scheme or authority; nothing was deleted. Declare equivalences with --equal-schemes/--equal-authorities, or choose --prefix-mismatch ignore or delete",
			ErrPrefixMismatch, sum.Conflicts, root)
	}
	if o.DryRun {
		status := StatusWouldDelete
		if trash != "" {
			status = StatusWouldTrash
		}
		err := eachCandidate(p.cands, func(c candidate) error {
			return sink.Orphan(result(c, now, status))
		})
		return p, err
	}
	return p, nil
}

// Execute removes p's orphans, checking every one against t1, the table
// as it is right before the removal (a commit made since the plan keeps
// its files). A dry run's plan, or one without orphans, removes nothing.
func (p *Plan) Execute(ctx context.Context, t1 *catalog.Table) error {
	if p.Idle() {
		return nil
	}
	return p.execute(ctx, t1)
}

// list sorts the listing of root by key.
func list(ctx context.Context, lister fileio.Lister, root, tempDir string, budget int) (*extsort.Sorter, error) {
	s := extsort.New(tempDir, budget)
	var buf []byte
	err := lister.List(ctx, root, func(fi fileio.FileInfo) error {
		if !strings.HasPrefix(fi.Path, root) {
			return fmt.Errorf("listing %s returned %s, outside it", root, fi.Path)
		}
		if err := checkPath(fi.Path); err != nil {
			return fmt.Errorf("listed %w", err)
		}
		f := File{Key: pathKey(splitURI(fi.Path).path), Path: fi.Path, Size: fi.Size, ModTime: fi.ModTime}
		buf = fileRecord(buf, f, "", "")
		return s.Add(buf)
	})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("list %s: %w", root, err)
	}
	return s, nil
}

// plan joins the listing with the references and keeps the orphans, in
// key order, in cands.
func plan(p *Planner, listing *extsort.Sorter, refs *refSet, sum *Summary, cands *extsort.Sorter, sink Sink) error {
	lit := listing.Iter()
	var ferr error
	nextFile := func() (File, bool) {
		rec, ok := lit.Next()
		if !ok {
			ferr = lit.Err()
			return File{}, false
		}
		c, err := parseFile(rec)
		if err != nil {
			ferr = err
			return File{}, false
		}
		return c.File, true
	}
	rit := refs.iter()
	var rerr error
	nextRef := func() (Ref, bool) {
		r, ok, err := rit()
		if err != nil {
			rerr = err
		}
		return r, ok
	}
	var buf []byte
	err := Join(nextFile, nextRef, func(f File, rs []Ref) error {
		d := p.Decide(f, rs)
		switch d.Verdict {
		case Referenced:
			sum.Referenced++
		case Young:
			sum.Young++
		case Hidden:
			sum.Hidden++
		case InTrash:
			sum.InTrash++
		case Marker:
			sum.Markers++
		case Journal:
			sum.Journals++
		case Ignored:
			sum.Ignored++
		case Conflict:
			sum.Conflicts++
			return sink.Conflict(ConflictFile{Path: f.Path, ReferencedAs: d.ReferencedAs, Mismatch: d.Reason, Size: f.Size, ModTime: f.ModTime})
		case Orphan:
			sum.Orphans++
			sum.OrphanBytes += f.Size
			buf = fileRecord(buf, f, d.Reason, d.ReferencedAs)
			return cands.Add(buf)
		}
		return nil
	})
	// A stream that stopped early must not pass for a complete one: the
	// files after it would be missing, or worse, the references.
	return errors.Join(err, ferr, rerr)
}

func eachCandidate(cands *extsort.Sorter, fn func(candidate) error) error {
	it := cands.Iter()
	for rec, ok := it.Next(); ok; rec, ok = it.Next() {
		c, err := parseFile(rec)
		if err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
	}
	return it.Err()
}

func result(c candidate, now time.Time, s Status) Result {
	r := Result{Path: c.Path, Size: c.Size, ModTime: c.ModTime, Reason: c.Reason, Status: s}
	if !c.ModTime.IsZero() {
		r.Age = now.Sub(c.ModTime)
	}
	return r
}

// execute re-checks every orphan against t1, the table loaded again, and
// deletes (or trashes) the rest in batches through the guarded Deleter.
func (p *Plan) execute(ctx context.Context, t1 *catalog.Table) error {
	o, t0, refs0, m, root, trash, now, cands, sum, sink := p.o, p.t0, p.refs, p.match, p.root, p.trash, p.now, p.cands, p.Summary, p.sink
	// A commit may have landed since the referenced set was built: it
	// can reference a file this run took for an orphan (an imported file,
	// a retried writer's file). t1 is the table loaded again: every
	// orphan is checked against that version as well.
	if gcDisabled(t1) {
		return fmt.Errorf("table %s: %w (set during the run): nothing was deleted", t1.Ident, ErrGCDisabled)
	}
	refs := refs0
	if t1.MetadataLocation != t0.MetadataLocation {
		sum.TableChanged = true
		o.logf("%s changed during the run (%s); checking the orphans against the new version", t1.Ident, t1.MetadataLocation)
		refs1, err := buildRefs(ctx, t1, o.TempDir, o.MemoryBudget)
		if err != nil {
			return err
		}
		defer refs1.Close()
		refs = refs1
	}
	if !inScope(reclaim.TableScope(t1.Metadata), root) {
		return fmt.Errorf("location %s is no longer within the locations of %s: nothing was deleted", root, t1.Ident)
	}
	// The guard's scope is the listing root alone: every orphan came from
	// it, and nothing else of the table is this run's to delete.
	scope := reclaim.NewScope(root)
	var keepMu sync.Mutex
	// Two lookups over the same set: one for the re-check below, one
	// for the Deleter's own guard, each asked in key order.
	recheck, guard := newLookup(refs, m), newLookup(refs, m)
	keep := func(p string) bool {
		keepMu.Lock()
		defer keepMu.Unlock()
		return guard.referenced(p)
	}
	d := &reclaim.Deleter{IO: t1.IO, Scope: scope, Keep: keep, Concurrency: o.MaxConcurrentDeletes}
	var mv *mover
	if trash != "" {
		mv = newMover(t1, d, trash, root, now, o.MaxConcurrentDeletes)
		sum.TrashDir = mv.runDir
		o.logf("moving orphans to %s", mv.runDir)
	}
	pm := meter.Or(o.Progress)
	pm.Start(int(sum.Orphans), sum.OrphanBytes)
	defer pm.Done()
	batch := make([]candidate, 0, batchSize)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		var results []Result
		if mv != nil {
			results = mv.move(ctx, batch, now)
		} else {
			results = deleteBatch(ctx, d, batch, now)
		}
		batch = batch[:0]
		for _, r := range results {
			pm.Step(r.Size)
			switch r.Status {
			case StatusDeleted:
				sum.Deleted++
				sum.DeletedBytes += r.Size
			case StatusTrashed:
				sum.Trashed++
				sum.TrashedBytes += r.Size
			default:
				sum.Failed++
			}
			if err := sink.Orphan(r); err != nil {
				return err
			}
		}
		return nil
	}
	err := eachCandidate(cands, func(c candidate) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if recheck.referenced(c.Path) {
			pm.Step(c.Size)
			sum.Kept++
			r := result(c, now, StatusKept)
			r.Detail = "referenced by " + t1.MetadataLocation + ", committed during the run"
			return sink.Orphan(r)
		}
		batch = append(batch, c)
		if len(batch) == batchSize {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil && (recheck.err != nil || guard.err != nil) {
		err = errors.Join(recheck.err, guard.err)
	}
	if err == nil && sum.Failed > 0 {
		err = fmt.Errorf("%w: %d of %d failed", ErrIncomplete, sum.Failed, sum.Orphans-sum.Kept)
	}
	return err
}

// deleteBatch deletes one batch and reports each orphan's outcome.
func deleteBatch(ctx context.Context, d *reclaim.Deleter, batch []candidate, now time.Time) []Result {
	paths := make([]string, len(batch))
	for i, c := range batch {
		paths[i] = c.Path
	}
	rep := d.Delete(ctx, paths)
	return outcomes(batch, rep, now, StatusDeleted)
}

// outcomes maps a Deleter report back onto the batch, in batch order.
func outcomes(batch []candidate, rep reclaim.Report, now time.Time, done Status) []Result {
	why := make(map[string]string, len(rep.Refused)+len(rep.Failed))
	for _, r := range rep.Refused {
		why[r.Path] = "refused: " + r.Reason
	}
	for _, f := range rep.Failed {
		why[f.Path] = f.Err.Error()
	}
	deleted := make(map[string]bool, len(rep.Deleted))
	for _, p := range rep.Deleted {
		deleted[p] = true
	}
	out := make([]Result, len(batch))
	for i, c := range batch {
		out[i] = result(c, now, done)
		if w, bad := why[c.Path]; bad || !deleted[c.Path] {
			if !bad {
				w = "not reported by the deleter"
			}
			out[i].Status, out[i].Detail = StatusFailed, w
		}
	}
	return out
}
