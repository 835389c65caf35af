package orphan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/internal/shared/fanout"
)

// RestoreOptions are the inputs of Restore.
type RestoreOptions struct {
	// Trash is the --trash directory of the runs to restore.
	Trash string
	// Run restricts the restore to one run id ("" = every run).
	Run    string
	DryRun bool
	// MaxConcurrent bounds parallel copies and removals.
	MaxConcurrent int
	TempDir       string
	MemoryBudget  int
	Log           io.Writer
}

// RestoreStatus is what happened to one trashed file.
type RestoreStatus string

const (
	StatusWouldRestore RestoreStatus = "would_restore"
	StatusRestored     RestoreStatus = "restored"
	// StatusSkipped: another file is at the original path now; the copy
	// stays in the trash.
	StatusSkipped       RestoreStatus = "skipped"
	StatusRestoreFailed RestoreStatus = "failed"
)

// Restored is one trashed file and what became of it.
type Restored struct {
	Run       string
	Path      string // the original path
	TrashPath string
	Size      int64
	Status    RestoreStatus
	Detail    string
}

// RestoreSummary counts a restore.
type RestoreSummary struct {
	Trash         string
	Runs          []string
	Restored      int64
	RestoredBytes int64
	Skipped       int64
	Failed        int64
}

// ErrNoTrashRun is returned when the trash holds no run to restore.
var ErrNoTrashRun = errors.New("no trash run found")

// Restore moves the files of the trash runs back to their original paths.
// It never overwrites: a path that holds another file now is skipped (the
// same bytes count as restored, which makes an interrupted restore
// resumable). The copies are removed from the trash through the guarded
// Deleter once each original is back and checked.
func Restore(ctx context.Context, load Loader, o RestoreOptions, fn func(Restored) error) (*RestoreSummary, error) {
	if o.Trash == "" {
		return nil, fmt.Errorf("%w: --trash is required", ErrInvalidOptions)
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = 8
	}
	t, trash, lister, err := openTrash(ctx, load, o.Trash, o.DryRun, "restoring removes trashed copies")
	if err != nil {
		return nil, err
	}
	sum := &RestoreSummary{Trash: trash}
	if o.Run != "" {
		if strings.Contains(o.Run, "/") {
			return nil, fmt.Errorf("%w: --run %q is not a run id", ErrInvalidOptions, o.Run)
		}
		sum.Runs = []string{o.Run}
	} else if sum.Runs, err = trashRuns(ctx, lister, trash); err != nil {
		return nil, err
	}
	if len(sum.Runs) == 0 {
		return sum, fmt.Errorf("%w in %s", ErrNoTrashRun, trash)
	}
	scope := reclaim.TableScope(t.Metadata)
	var d *reclaim.Deleter
	if !o.DryRun {
		var done func() error
		if d, done, err = trashDeleter(ctx, t, trash, o.MaxConcurrent, o.TempDir, o.MemoryBudget); err != nil {
			return nil, err
		}
		defer done()
	}
	for _, run := range sum.Runs {
		if err := restoreRun(ctx, t.IO, lister, d, scope, trash, run, o, sum, fn); err != nil {
			return sum, err
		}
	}
	if sum.Failed > 0 {
		return sum, fmt.Errorf("%w: %d file(s) could not be restored", ErrIncomplete, sum.Failed)
	}
	return sum, nil
}

// openTrash loads the table and resolves its trash directory (--trash
// dir); a run that deletes (not dryRun, which says why) is refused when
// gc.enabled is false.
func openTrash(ctx context.Context, load Loader, dir string, dryRun bool, deletes string) (*catalog.Table, string, fileio.Lister, error) {
	t, err := load(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	trash, err := trashDir(t, dir, "")
	if err != nil {
		return nil, "", nil, err
	}
	if !dryRun && gcDisabled(t) {
		return nil, "", nil, fmt.Errorf("table %s: %w: %s, which it forbids", t.Ident, ErrGCDisabled, deletes)
	}
	lister, ok := t.IO.(fileio.Lister)
	if !ok {
		return nil, "", nil, fmt.Errorf("the file IO of %s cannot list files", trash)
	}
	return t, trash, lister, nil
}

// trashDeleter is the guarded deletion path for the trash of t: it
// deletes only inside trash (trashed copies and run.json files), and never
// a file the table references. done releases the referenced set.
func trashDeleter(ctx context.Context, t *catalog.Table, trash string, concurrency int, tempDir string, budget int) (d *reclaim.Deleter, done func() error, err error) {
	refs, err := buildRefs(ctx, t, tempDir, budget)
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex
	guard := newLookup(refs, NewMatcher(nil, nil))
	d = &reclaim.Deleter{IO: t.IO, Scope: reclaim.NewScope(trash), Concurrency: concurrency, Keep: func(p string) bool {
		mu.Lock()
		defer mu.Unlock()
		return guard.referenced(p)
	}}
	return d, refs.Close, nil
}

// trashRuns lists the run ids in trash, in order.
func trashRuns(ctx context.Context, lister fileio.Lister, trash string) ([]string, error) {
	var runs []string
	err := lister.List(ctx, trash+"/", func(fi fileio.FileInfo) error {
		rel := strings.TrimPrefix(fi.Path, trash+"/")
		if id, rest, ok := strings.Cut(rel, "/"); ok && rest == runFile {
			runs = append(runs, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list trash %s: %w", trash, err)
	}
	slices.Sort(runs)
	return runs, nil
}

// readRun reads and checks the run.json of the trash run in runDir.
func readRun(ctx context.Context, fio fileio.FileIO, runDir string) (runInfo, error) {
	var info runInfo
	data, err := fileio.ReadFile(ctx, fio, runDir+"/"+runFile)
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(data, &info); err != nil || info.Format != trashFormat || !strings.HasSuffix(info.Root, "/") {
		return info, fmt.Errorf("%s is not an icectl trash run (format %q)", runDir+"/"+runFile, info.Format)
	}
	return info, nil
}

type restoreItem struct {
	trashPath, orig string
	size            int64
}

func restoreRun(ctx context.Context, fio fileio.FileIO, lister fileio.Lister, d *reclaim.Deleter, scope reclaim.Scope,
	trash, run string, o RestoreOptions, sum *RestoreSummary, fn func(Restored) error) error {
	runDir := trash + "/" + run
	info, err := readRun(ctx, fio, runDir)
	if err != nil {
		return fmt.Errorf("trash run %s: %w", run, err)
	}
	prefix := runDir + "/" + filesDir
	left := false // files that stay in this run
	var batch []restoreItem
	flush := func() error {
		res := restoreBatch(ctx, fio, d, scope, batch, o)
		batch = batch[:0]
		for _, r := range res {
			r.Run = run
			switch r.Status {
			case StatusRestored, StatusWouldRestore:
				sum.Restored++
				sum.RestoredBytes += r.Size
				if r.Detail != "" {
					left = true // the copy could not be removed
				}
			case StatusSkipped:
				sum.Skipped++
				left = true
			default:
				sum.Failed++
				left = true
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}
	err = lister.List(ctx, prefix, func(fi fileio.FileInfo) error {
		rel, ok := strings.CutPrefix(fi.Path, prefix)
		if !ok {
			return fmt.Errorf("listing %s returned %s, outside it", prefix, fi.Path)
		}
		batch = append(batch, restoreItem{trashPath: fi.Path, orig: info.Root + rel, size: fi.Size})
		if len(batch) == batchSize {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("restore trash run %s: %w", run, err)
	}
	if !o.DryRun && !left {
		// Every file is back: the run is done.
		if rep := d.Delete(ctx, []string{runDir + "/" + runFile}); rep.Err() != nil {
			return fmt.Errorf("remove %s: %w", runDir+"/"+runFile, rep.Err())
		}
	}
	return nil
}

// restoreBatch puts a batch back: copy to the original path (never over
// another file), check, then remove the trashed copies that are back.
func restoreBatch(ctx context.Context, fio fileio.FileIO, d *reclaim.Deleter, scope reclaim.Scope, batch []restoreItem, o RestoreOptions) []Restored {
	out := make([]Restored, len(batch))
	fanout.Each(len(batch), o.MaxConcurrent, func(i int) {
		it := batch[i]
		r := Restored{Path: it.orig, TrashPath: it.trashPath, Size: it.size}
		out[i] = r
		if !scope.Contains(it.orig) {
			out[i].Status, out[i].Detail = StatusRestoreFailed, "the original path is outside the table's locations"
			return
		}
		same, exists, err := sameContent(ctx, fio, it.trashPath, it.orig)
		switch {
		case err != nil:
			out[i].Status, out[i].Detail = StatusRestoreFailed, err.Error()
		case exists && !same:
			out[i].Status, out[i].Detail = StatusSkipped, "another file is at the original path; the copy stays in the trash"
		case exists:
			// Put back by an earlier, interrupted restore.
			out[i].Status = StatusRestored
		case o.DryRun:
			out[i].Status = StatusWouldRestore
		default:
			if err := copyFile(ctx, fio, it.trashPath, it.orig); err != nil {
				out[i].Status, out[i].Detail = StatusRestoreFailed, err.Error()
				return
			}
			out[i].Status = StatusRestored
		}
	})
	if o.DryRun {
		return out
	}
	var back []string
	for _, r := range out {
		if r.Status == StatusRestored {
			back = append(back, r.TrashPath)
		}
	}
	rep := d.Delete(ctx, back)
	why := map[string]string{}
	for _, r := range rep.Refused {
		why[r.Path] = "refused: " + r.Reason
	}
	for _, f := range rep.Failed {
		why[f.Path] = f.Err.Error()
	}
	for i, r := range out {
		if w, bad := why[r.TrashPath]; bad && r.Status == StatusRestored {
			// The original is back; only the copy could not go.
			out[i].Detail = "restored, but the copy stays in the trash: " + w
		}
	}
	return out
}

// sameContent reports whether b exists and holds the bytes of a.
func sameContent(ctx context.Context, fio fileio.FileIO, a, b string) (same, exists bool, err error) {
	fb, err := fio.Open(ctx, b)
	if errors.Is(err, fileio.ErrNotFound) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	defer fb.Close()
	fa, err := fio.Open(ctx, a)
	if err != nil {
		return false, true, err
	}
	defer fa.Close()
	if fa.Size() != fb.Size() {
		return false, true, nil
	}
	const chunk = 1 << 20
	ba, bb := make([]byte, min(chunk, fa.Size())), make([]byte, min(chunk, fa.Size()))
	for off := int64(0); off < fa.Size(); off += int64(len(ba)) {
		n := min(int64(len(ba)), fa.Size()-off)
		if _, err := fa.ReadAt(ba[:n], off); err != nil && !errors.Is(err, io.EOF) {
			return false, true, err
		}
		if _, err := fb.ReadAt(bb[:n], off); err != nil && !errors.Is(err, io.EOF) {
			return false, true, err
		}
		if !bytes.Equal(ba[:n], bb[:n]) {
			return false, true, nil
		}
	}
	return true, true, nil
}
