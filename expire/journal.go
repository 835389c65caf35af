package expire

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/reclaim"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// A journal lists the files an expiry is about to delete, written beside
// the table metadata before the commit and removed once every one of them
// is gone. An expiry killed after its commit leaves files that no snapshot
// reaches any more, some still listed as DELETED entries of retained
// manifests (so orphan removal, which counts every entry, keeps them); the
// next expiry finds the journal and finishes the job, deleting only what
// no snapshot of the table it loaded reaches as a live file.
const (
	journalPrefix = reclaim.JournalPrefix
	journalSuffix = reclaim.JournalSuffix
)

// journalPath is a new journal's path in md's metadata directory.
func journalPath(md *spec.TableMetadata) string {
	return table.MetadataLocation(md) + "/" + journalPrefix + uuid.NewString() + journalSuffix
}

func isJournal(dir, p string) bool {
	name, ok := strings.CutPrefix(p, dir)
	return ok && !strings.Contains(name, "/") && reclaim.IsJournalName(name)
}

// writeJournal writes d's files, one "KIND SIZE PATH" line each, and a
// last line "end N" (N files): a journal without it was cut short and is
// refused rather than trusted with a truncated path.
func writeJournal(ctx context.Context, fio fileio.FileIO, p string, d *diff) error {
	w, err := fio.Create(ctx, p)
	if err != nil {
		return fmt.Errorf("write expiry journal: %w", err)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	err = d.each(func(f File) error {
		_, err := fmt.Fprintf(bw, "%d %d %s\n", f.Kind, f.Size, f.Path)
		return err
	})
	if err == nil {
		_, err = fmt.Fprintf(bw, "end %d\n", d.Len())
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("write expiry journal %s: %w", p, errors.Join(err, w.Abort()))
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write expiry journal %s: %w", p, err)
	}
	return nil
}

// journals lists the journals in md's metadata directory (none when the
// FileIO cannot list).
func journals(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata) ([]string, error) {
	l, ok := fio.(fileio.Lister)
	if !ok {
		return nil, nil
	}
	dir := table.MetadataLocation(md) + "/"
	var out []string
	err := l.List(ctx, dir, func(fi fileio.FileInfo) error {
		if isJournal(dir, fi.Path) {
			out = append(out, fi.Path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list expiry journals: %w", err)
	}
	return out, nil
}

// readJournal calls add for every file journal p lists.
func readJournal(ctx context.Context, fio fileio.FileIO, p string, add func(File) error) error {
	f, err := fio.Open(ctx, p)
	if err != nil {
		return fmt.Errorf("read expiry journal: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(io.NewSectionReader(f, 0, f.Size()))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	files, end := 0, -1
	for n := 1; sc.Scan(); n++ {
		if end >= 0 {
			return fmt.Errorf("expiry journal %s: line %d follows the end line", p, n)
		}
		if c, ok := strings.CutPrefix(sc.Text(), "end "); ok {
			if end, err = strconv.Atoi(c); err != nil || end != files {
				return fmt.Errorf("expiry journal %s: end line %q does not count its %d files", p, sc.Text(), files)
			}
			continue
		}
		files++
		kind, rest, ok1 := strings.Cut(sc.Text(), " ")
		size, path, ok2 := strings.Cut(rest, " ")
		k, err1 := strconv.Atoi(kind)
		s, err2 := strconv.ParseInt(size, 10, 64)
		if !ok1 || !ok2 || err1 != nil || err2 != nil || path == "" {
			return fmt.Errorf("expiry journal %s: line %d is not KIND SIZE PATH", p, n)
		}
		if err := add(File{Path: path, Kind: table.FileKind(k), Size: s}); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read expiry journal %s: %w", p, err)
	}
	if end < 0 {
		return fmt.Errorf("expiry journal %s is cut short (no end line); remove it once no expire is running", p)
	}
	return nil
}

// finishJournals completes the deletions of the journals an interrupted
// expiry left in md's metadata directory (skipping own, this run's): every
// file a journal lists that no snapshot of md reaches as a live file is
// deleted through the guard, then the journal. A journal whose files are
// not all gone stays for the next run.
func finishJournals(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, own string, opts Options, rep *Report) error {
	ps, err := journals(ctx, fio, md)
	if err != nil || len(ps) == 0 {
		return err
	}
	for _, p := range ps {
		if p == own {
			continue
		}
		d, err := diffAgainst(ctx, fio, md, func(add func(File) error) error {
			return readJournal(ctx, fio, p, add)
		}, spill{dir: opts.SpillDir, budget: opts.SpillBudget})
		if err != nil {
			return fmt.Errorf("finish %s: %w", p, err)
		}
		opts.logf("expire: finishing %d deletion(s) of an interrupted expiry (%s)", d.Len(), p)
		del := &reclaim.Deleter{IO: fio, Scope: reclaim.TableScope(md), Concurrency: opts.MaxConcurrentDeletes, Keep: (&keeper{d: d}).keep}
		var files []string
		var sizes []int64
		err = d.each(func(f File) error {
			f.Reason = "listed by the journal of an interrupted expiry, reachable from no snapshot"
			if err := rep.Files.Add(f); err != nil {
				return err
			}
			files, sizes = append(files, f.Path), append(sizes, f.Size)
			if len(files) == batchSize(opts) {
				rep.deleteBatch(ctx, del, files, sizes)
				files, sizes = files[:0], sizes[:0]
			}
			return nil
		})
		rep.deleteBatch(ctx, del, files, sizes)
		d.Close()
		if err != nil {
			return fmt.Errorf("finish %s: %w", p, err)
		}
		if rep.Deletion.Err() != nil {
			continue
		}
		removeJournal(ctx, fio, md, p, opts)
	}
	return nil
}

// removeJournal deletes journal p, whose files are all gone (or were
// never to go). A journal left behind costs the next run a check, so a
// failure is logged, not returned.
func removeJournal(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, p string, opts Options) {
	d := &reclaim.Deleter{IO: fio, Scope: reclaim.TableScope(md)}
	if err := d.Delete(context.WithoutCancel(ctx), []string{p}).Err(); err != nil {
		opts.logf("expire: remove journal %s: %v", p, err)
	}
}

func batchSize(opts Options) int {
	if opts.BatchSize <= 0 {
		return 10000
	}
	return opts.BatchSize
}
