package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/cli/progress"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/internal/shared/verbrun"
	"github.com/icectl/icectl/orphan"
)

// OrphanPurgeOptions are the inputs of `icectl orphan trash purge`.
type OrphanPurgeOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
	Purge   orphan.PurgeOptions
}

// NewCmdOrphanTrash returns `icectl orphan trash` with its purge command.
func NewCmdOrphanTrash(f *Factory, runF func(*OrphanPurgeOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trash <command>",
		Short: "Manage the trash that `icectl orphan --trash` moves files to",
	}
	opts := &OrphanPurgeOptions{f: f}
	var olderThan string
	purge := &cobra.Command{
		Use:   "purge TABLE --trash DIR --older-than AGE",
		Short: "Delete the trash runs older than AGE for good",
		Long: `Delete for good the trash runs in DIR (the directory given to icectl orphan
--trash) that were created more than --older-than ago (a duration like 30d, or
an RFC 3339 time; 0s purges every run). Newer runs stay, and icectl orphan
restore still puts them back. Deletion goes through the guarded path: only
inside the trash, never a file the table references. A run's files go first
and its run.json last, so an interrupted purge leaves a run that restores
what it still holds and that the next purge finishes. --dry-run lists the
runs and changes nothing.

` + catalogFlagsHelp + "\n\n" + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if opts.Purge.Trash == "" {
				return usageErrorf("--trash is required: the directory given to icectl orphan --trash")
			}
			if olderThan == "" {
				return usageErrorf("--older-than is required: how old a trash run must be to be deleted for good (e.g. 30d)")
			}
			now := time.Now()
			cutoff, err := parseTimeOrAge(olderThan, now)
			if err != nil {
				return usageErrorf("invalid --older-than %q: want a duration like 30d or 72h, or an RFC 3339 time", olderThan)
			}
			if cutoff.After(now) {
				return usageErrorf("invalid --older-than %q: it is in the future", olderThan)
			}
			opts.Purge.OlderThan, opts.Purge.Now = now.Sub(cutoff), func() time.Time { return now }
			if opts.Purge.MaxConcurrent < 0 {
				return usageErrorf("invalid --max-concurrent %d: want > 0", opts.Purge.MaxConcurrent)
			}
			if runF != nil {
				return runF(opts)
			}
			return runOrphanPurge(cmd.Context(), opts)
		},
	}
	fs := purge.Flags()
	fs.StringVar(&opts.Purge.Trash, "trash", "", "the trash directory given to icectl orphan --trash")
	fs.StringVar(&olderThan, "older-than", "", "purge the runs created before this long ago (or this RFC 3339 time)")
	fs.BoolVar(&opts.Purge.DryRun, "dry-run", false, "list the runs that would be purged and change nothing")
	fs.IntVar(&opts.Purge.MaxConcurrent, "max-concurrent", 0, "deletions at a time (default 8)")
	addCatalogFlags(purge, &opts.Catalog)
	cmd.AddCommand(purge)
	return cmd
}

type purgedRunView struct {
	Run       string `json:"run"`
	CreatedMS int64  `json:"created_ms"`
	Created   string `json:"created"`
	Files     int64  `json:"files"`
	Bytes     int64  `json:"bytes"`
	Status    string `json:"status"`
	Detail    string `json:"detail,omitempty"`
}

type purgeView struct {
	Table    string          `json:"table"`
	Trash    string          `json:"trash"`
	CutoffMS int64           `json:"cutoff_ms"`
	Cutoff   string          `json:"cutoff"`
	DryRun   bool            `json:"dry_run"`
	Runs     []purgedRunView `json:"runs"`
	Summary  struct {
		Purged      int   `json:"purged"`
		PurgedFiles int64 `json:"purged_files"`
		PurgedBytes int64 `json:"purged_bytes"`
		Kept        int   `json:"kept"`
		Failed      int   `json:"failed"`
	} `json:"summary"`
}

func runOrphanPurge(ctx context.Context, opts *OrphanPurgeOptions) error {
	f := opts.f
	oc, load, err := tableLoader(ctx, f, opts.Catalog, opts.Table, opts.Purge.DryRun)
	if err != nil {
		return err
	}
	defer oc.Close()
	v := purgeView{Runs: []purgedRunView{}}
	sum, err := orphan.PurgeTrash(ctx, load, opts.Purge, func(r orphan.PurgedRun) error {
		v.Runs = append(v.Runs, purgedRunView{Run: r.Run, CreatedMS: r.Created.UnixMilli(), Created: rfc3339Millis(r.Created.UnixMilli()),
			Files: r.Files, Bytes: r.Bytes, Status: string(r.Status), Detail: r.Detail})
		return nil
	})
	if sum != nil {
		v.Table, v.Trash, v.DryRun = sum.Table, sum.Trash, sum.DryRun
		v.CutoffMS, v.Cutoff = sum.Cutoff.UnixMilli(), rfc3339Millis(sum.Cutoff.UnixMilli())
		v.Summary.Purged, v.Summary.PurgedFiles, v.Summary.PurgedBytes = sum.Purged, sum.PurgedFiles, sum.PurgedBytes
		v.Summary.Kept, v.Summary.Failed = sum.Kept, sum.Failed
		var werr error
		if f.Output == outputJSON {
			werr = writeJSON(f.Out, v)
		} else {
			werr = writePurgeText(f, v)
		}
		if err == nil {
			err = werr
		}
	}
	return orphanExitCode(oc, err, sum != nil && sum.Purged > 0)
}

func writePurgeText(f *Factory, v purgeView) error {
	w := f.Out
	s := v.Summary
	if s.Purged == 0 && s.Failed == 0 {
		printf(w, "%s: nothing to purge: no trash run in %s was created before %s\n", v.Table, v.Trash, v.Cutoff)
	}
	t := newTable(w)
	for _, r := range v.Runs {
		line := fmt.Sprintf("%d files, %s", r.Files, bytesize.Format(r.Bytes))
		if r.Detail != "" {
			line += ": " + r.Detail
		}
		t.row(words(r.Status), r.Run, "created "+r.Created, line)
	}
	if err := t.flush(); err != nil {
		return err
	}
	verb := "purged"
	if v.DryRun {
		verb = "would purge"
	}
	t = newTable(w)
	t.row("trash", v.Trash)
	t.row("cutoff", millisText(v.CutoffMS))
	t.row("runs", fmt.Sprintf("%d %s (%d files, %s), %d kept, %d failed", s.Purged, verb, s.PurgedFiles, bytesize.Format(s.PurgedBytes), s.Kept, s.Failed))
	return t.flush()
}

// tableLoader opens the table named by arg and returns a Loader that
// hands out that table first and re-loads it from the catalog afterwards.
// A dry run reads through an IO that refuses every write.
func tableLoader(ctx context.Context, f *Factory, flags config.Flags, arg string, dryRun bool) (*openedCatalog, orphan.Loader, error) {
	if isMetadataFile(arg) && !dryRun {
		return nil, nil, refuseMetadataFile(arg, "remove its orphans", true)
	}
	oc, t, err := loadTable(ctx, f, flags, arg)
	if err != nil {
		return nil, nil, err
	}
	first, id := t, t.Ident
	load := func(ctx context.Context) (*catalog.Table, error) {
		t := first
		if t == nil {
			var err error
			if t, err = oc.cat.LoadTable(ctx, id); err != nil {
				return nil, scrub(oc.cfg, err)
			}
			if isMetadataFile(arg) {
				t.Ident = id
			}
		}
		first = nil
		if dryRun {
			t = verbrun.ReadOnly(t)
		}
		return t, nil
	}
	return oc, load, nil
}

// orphanExitCode maps the outcome of orphan, restore and trash purge to
// the exit code: an incomplete run that did some of its work (progressed)
// is partial.
func orphanExitCode(oc *openedCatalog, err error, progressed bool) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, orphan.ErrInvalidOptions):
		return &ExitError{Code: ExitUsage, Err: err}
	case errors.Is(err, orphan.ErrIncomplete) && progressed:
		return &ExitError{Code: ExitPartial, Err: err}
	}
	return scrub(oc.cfg, err)
}

// OrphanRestoreOptions are the inputs of `icectl orphan restore`.
type OrphanRestoreOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
	Restore orphan.RestoreOptions
}

// NewCmdOrphanRestore returns `icectl orphan restore`.
func NewCmdOrphanRestore(f *Factory, runF func(*OrphanRestoreOptions) error) *cobra.Command {
	opts := &OrphanRestoreOptions{f: f}
	cmd := &cobra.Command{
		Use:   "restore TABLE --trash DIR",
		Short: "Move files that `icectl orphan --trash` moved back to where they were",
		Long: `Move the files of the trash runs in DIR (every run, or --run ID) back to their
original paths, which each run's run.json and the files' paths under files/
give. A path that holds another file now is skipped and its copy stays in the
trash; a file already back with the same bytes counts as restored, so an
interrupted restore can be run again. Each copy leaves the trash once its
original is back, through the guarded deletion path; a run that is fully
restored is removed.

` + catalogFlagsHelp + "\n\n" + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if opts.Restore.Trash == "" {
				return usageErrorf("--trash is required")
			}
			if opts.Restore.MaxConcurrent < 0 {
				return usageErrorf("invalid --max-concurrent %d: want > 0", opts.Restore.MaxConcurrent)
			}
			if runF != nil {
				return runF(opts)
			}
			return runOrphanRestore(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Restore.Trash, "trash", "", "the trash directory given to icectl orphan --trash")
	fs.StringVar(&opts.Restore.Run, "run", "", "restore only this run (default: every run in the trash)")
	fs.BoolVar(&opts.Restore.DryRun, "dry-run", false, "list what would be restored and change nothing")
	fs.IntVar(&opts.Restore.MaxConcurrent, "max-concurrent", 0, "copies and removals at a time (default 8)")
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

type restoredView struct {
	Run       string `json:"run"`
	Path      string `json:"path"`
	TrashPath string `json:"trash_path"`
	Size      int64  `json:"size"`
	Status    string `json:"status"`
	Detail    string `json:"detail,omitempty"`
}

type restoreSummaryView struct {
	Trash         string   `json:"trash"`
	Runs          []string `json:"runs"`
	Restored      int64    `json:"restored"`
	RestoredBytes int64    `json:"restored_bytes"`
	Skipped       int64    `json:"skipped"`
	Failed        int64    `json:"failed"`
}

func runOrphanRestore(ctx context.Context, opts *OrphanRestoreOptions) error {
	f := opts.f
	oc, load, err := tableLoader(ctx, f, opts.Catalog, opts.Table, opts.Restore.DryRun)
	if err != nil {
		return err
	}
	defer oc.Close()
	o := opts.Restore
	if progress.IsTerminal(f.ErrOut) {
		o.Log = f.ErrOut
	}
	js := f.Output == outputJSON
	out := f.Out
	if js {
		out = newJSONIndenter(f.Out)
	}
	n := 0
	var werr error
	printf := func(format string, args ...any) {
		if werr == nil {
			_, werr = fmt.Fprintf(out, format, args...)
		}
	}
	// The document names the table as loaded (namespace.table, also when
	// named by a metadata file), as every report does.
	table := opts.Table
	named := func(ctx context.Context) (*catalog.Table, error) {
		t, err := load(ctx)
		if t != nil {
			table = t.Ident.String()
		}
		return t, err
	}
	docStart := func() string { return fmt.Sprintf("{\"table\": %s, \"files\": [", jsonLine(table)) }
	sum, err := orphan.Restore(ctx, named, o, func(r orphan.Restored) error {
		if js {
			if n == 0 {
				printf("%s\n", docStart())
			} else {
				printf(",\n")
			}
			printf("  %s", jsonLine(restoredView{Run: r.Run, Path: r.Path, TrashPath: r.TrashPath, Size: r.Size, Status: string(r.Status), Detail: r.Detail}))
		} else {
			line := fmt.Sprintf("%-13s  %s  %s <- %s", words(string(r.Status)), bytesize.Format(r.Size), r.Path, r.TrashPath)
			if r.Detail != "" {
				line += ": " + r.Detail
			}
			printf("%s\n", line)
		}
		n++
		return werr
	})
	if sum != nil {
		v := restoreSummaryView{Trash: sum.Trash, Runs: sum.Runs, Restored: sum.Restored, RestoredBytes: sum.RestoredBytes,
			Skipped: sum.Skipped, Failed: sum.Failed}
		if v.Runs == nil {
			v.Runs = []string{}
		}
		if js {
			if n == 0 {
				printf("%s", docStart())
			} else {
				printf("\n")
			}
			s := jsonLine(v)
			printf("],\n%s\n", strings.TrimPrefix(s, "{"))
		} else {
			t := newTable(f.Out)
			t.row("trash", v.Trash)
			t.row("runs", strings.Join(v.Runs, ", "))
			t.row("restored", fmt.Sprintf("%d, %s", v.Restored, bytesize.Format(v.RestoredBytes)))
			t.row("skipped", v.Skipped)
			t.row("failed", v.Failed)
			if werr == nil {
				werr = t.flush()
			}
		}
	}
	if err == nil {
		err = werr
	}
	return orphanExitCode(oc, err, sum != nil && sum.Restored > 0)
}
