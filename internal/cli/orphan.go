package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/orphan"
)

// OrphanOptions are the inputs of `icectl orphan`.
type OrphanOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
	Orphan  orphan.Options
	// Wait is --wait: how long to wait for another run's claim.
	Wait string
}

type orphanFlags struct {
	olderThan        string
	equalSchemes     []string
	equalAuthorities []string
	prefixMismatch   string
}

// NewCmdOrphan returns `icectl orphan` (with `orphan restore`). runF
// replaces the run function in tests; nil runs the command.
func NewCmdOrphan(f *Factory, runF func(*OrphanOptions) error, restoreF func(*OrphanRestoreOptions) error) *cobra.Command {
	opts := &OrphanOptions{f: f}
	var fl orphanFlags
	cmd := &cobra.Command{
		Use:   "orphan TABLE",
		Short: "Delete (or move to a trash) files no snapshot or metadata file references",
		Long: `Find the files under the table location (or --location) that nothing in the
table's metadata references and that are older than --older-than, and delete
them, or with --trash move them under a trash directory that
"icectl orphan restore" puts back.

Referenced are: every file reachable from every snapshot in the metadata (all
branches, tags and history: manifest lists, manifests, data and delete files,
deletion-vector Puffin files), the current and logged metadata files,
version-hint.text, and statistics and partition-statistics files. Files whose
path has a component starting with "_" or "." (Hadoop's _SUCCESS, _temporary,
.crc) are never touched, nor is the trash, nor an expiry journal
(metadata/expire-UUID.pending: deletions an interrupted expire has still to
finish, which the next icectl expire completes and removes).

Paths are compared by their path part with repeated slashes collapsed; a listed
file matching a reference under another scheme or authority is a prefix
mismatch: --prefix-mismatch error (default) lists them and deletes nothing,
ignore keeps them, delete deletes them. --equal-schemes FROM[,FROM]=TO and
--equal-authorities FROM[,FROM]=TO (repeatable) declare equivalent names;
s3a,s3n=s3 always applies. --location is always a directory: a table at .../t
never touches .../t2.

Before deleting, the table is loaded again and every orphan is checked against
the version found, so a commit made during the run keeps its files. Deletion
goes through the guarded path (only inside the table's locations, never a
referenced file), --max-concurrent-deletes at a time. gc.enabled=false refuses
everything but --dry-run.

--trash DIR must be inside the table's locations and its name must start with "."
or "_" (so later runs skip it); a relative DIR is relative to
the table location (e.g. --trash .icectl-trash). Each run goes to DIR/<run id>/:
run.json (the listing root) and files/<path relative to the root>;
"icectl orphan trash purge" deletes the runs older than an age for good.

--older-than takes a duration (72h, 3d) or a timestamp (RFC 3339); under 24h
needs --unsafe-allow-recent, because younger files may belong to writes in
flight.

` + catalogFlagsHelp + "\n\n" + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if err := fl.apply(&opts.Orphan, time.Now()); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runOrphan(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	o := &opts.Orphan
	fs.StringVar(&o.Location, "location", "", "directory to clean (default: the table location)")
	fs.StringVar(&fl.olderThan, "older-than", "3d", "only files modified before this long ago (or this RFC 3339 time)")
	fs.BoolVar(&o.AllowRecent, "unsafe-allow-recent", false, "allow --older-than under 24h (only when no writer can be running)")
	fs.StringArrayVar(&fl.equalSchemes, "equal-schemes", nil, "equivalent schemes FROM[,FROM]=TO, added to s3a,s3n=s3 (repeatable)")
	fs.StringArrayVar(&fl.equalAuthorities, "equal-authorities", nil, "equivalent authorities FROM[,FROM]=TO (repeatable)")
	fs.StringVar(&fl.prefixMismatch, "prefix-mismatch", "error", "files referenced under another scheme or authority: error, ignore or delete")
	fs.StringVar(&o.Trash, "trash", "", "move orphans under this directory instead of deleting them")
	fs.BoolVar(&o.DryRun, "dry-run", false, "list the orphans and change nothing")
	fs.IntVar(&o.MaxConcurrentDeletes, "max-concurrent-deletes", 0, "deletions (or moves) at a time (default 8)")
	addClaimWait(cmd, &opts.Wait)
	addCatalogFlags(cmd, &opts.Catalog)
	cmd.AddCommand(NewCmdOrphanRestore(f, restoreF))
	cmd.AddCommand(NewCmdOrphanTrash(f, nil))
	return cmd
}

// apply parses the flags that need it into o.
func (fl *orphanFlags) apply(o *orphan.Options, now time.Time) error {
	d, err := parseDuration(fl.olderThan)
	if err != nil {
		ts, terr := time.Parse(time.RFC3339, strings.TrimSpace(fl.olderThan))
		if terr != nil {
			return usageErrorf("invalid --older-than %q: want a duration like 3d or 72h, or an RFC 3339 time", fl.olderThan)
		}
		d = now.Sub(ts)
		o.Now = func() time.Time { return now }
	}
	if d <= 0 && !o.AllowRecent {
		return usageErrorf("invalid --older-than %q: want a positive age", fl.olderThan)
	}
	if d < 0 {
		return usageErrorf("invalid --older-than %q: it is in the future", fl.olderThan)
	}
	o.OlderThan = d
	if d == 0 {
		// 0 means "the default" to the library; the smallest age keeps
		// the user's meaning of "everything older than now".
		o.OlderThan = time.Nanosecond
	}
	if o.OlderThan < orphan.MinOlderThan && !o.AllowRecent {
		return usageErrorf("--older-than %s is under 24h: files that young may belong to writes in flight; pass --unsafe-allow-recent if no writer can be running", fl.olderThan)
	}
	if o.EqualSchemes, err = orphan.ParseEquivalences(fl.equalSchemes); err != nil {
		return usageErrorf("invalid --equal-schemes %v", err)
	}
	if o.EqualAuthorities, err = orphan.ParseEquivalences(fl.equalAuthorities); err != nil {
		return usageErrorf("invalid --equal-authorities %v", err)
	}
	if o.PrefixMismatch, err = orphan.ParsePrefixMode(fl.prefixMismatch); err != nil {
		return usageErrorf("invalid --prefix-mismatch %v", err)
	}
	if o.MaxConcurrentDeletes < 0 {
		return usageErrorf("invalid --max-concurrent-deletes %d: want > 0", o.MaxConcurrentDeletes)
	}
	return nil
}

func runOrphan(ctx context.Context, opts *OrphanOptions) error {
	f, o := opts.f, opts.Orphan
	if isMetadataFile(opts.Table) && !o.DryRun {
		return refuseMetadataFile(opts.Table, "remove its orphans", true)
	}
	oc, t, err := loadTable(ctx, f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	if bar := f.progressBar("orphans"); bar != nil {
		o.Progress, o.Log = bar, bar
	}
	// The listing and the plan run unclaimed (they only read); the
	// removal runs under the table's claim, on the table loaded again
	// once it is held, every orphan re-checked against it. A run that
	// finds nothing takes no claim.
	w := newOrphanWriter(f)
	var sum orphan.Summary
	res, err := runVerb(ctx, f, oc, t, orphan.Verb(oc.cat, o, w, &sum), opts.Wait, o.DryRun)
	res.Plan.Close()
	if werr := w.end(sum); werr != nil && err == nil {
		err = werr
	}
	return scrub(oc.cfg, err)
}

// orphanWriter streams the report: text lines, or one JSON document whose
// arrays are written element by element.
type orphanWriter struct {
	f     *Factory
	out   io.Writer // f.Out, through a jsonIndenter for JSON
	json  bool
	begun bool
	open  string // the JSON array being written
	n     int    // elements written to it
	done  map[string]bool
	err   error
	now   time.Time
}

func newOrphanWriter(f *Factory) *orphanWriter {
	w := &orphanWriter{f: f, out: f.Out, json: f.Output == outputJSON, done: map[string]bool{}}
	if w.json {
		w.out = newJSONIndenter(f.Out)
	}
	return w
}

type orphanHeaderView struct {
	Table            string `json:"table"`
	MetadataLocation string `json:"metadata_location"`
	Location         string `json:"location"`
	CutoffMS         int64  `json:"cutoff_ms"`
	Cutoff           string `json:"cutoff"`
	DryRun           bool   `json:"dry_run"`
	PrefixMismatch   string `json:"prefix_mismatch"`
	Trash            string `json:"trash"`
}

type orphanConflictView struct {
	Path         string `json:"path"`
	ReferencedAs string `json:"referenced_as"`
	Mismatch     string `json:"mismatch"`
	Size         int64  `json:"size"`
	ModifiedMS   int64  `json:"modified_ms"`
}

type orphanView struct {
	Path       string `json:"path"`
	Size       int64  `json:"size"`
	ModifiedMS int64  `json:"modified_ms"`
	Modified   string `json:"modified"`
	AgeMS      int64  `json:"age_ms"`
	Reason     string `json:"reason"`
	Status     string `json:"status"`
	TrashPath  string `json:"trash_path,omitempty"`
	Detail     string `json:"detail,omitempty"`
}

type orphanSummaryView struct {
	References   int64  `json:"references"`
	Listed       int64  `json:"listed"`
	Referenced   int64  `json:"referenced"`
	Young        int64  `json:"young"`
	Hidden       int64  `json:"hidden"`
	InTrash      int64  `json:"in_trash"`
	Markers      int64  `json:"directory_markers"`
	Journals     int64  `json:"expiry_journals"`
	Ignored      int64  `json:"mismatches_ignored"`
	Conflicts    int64  `json:"conflicts"`
	Orphans      int64  `json:"orphans"`
	OrphanBytes  int64  `json:"orphan_bytes"`
	TableChanged bool   `json:"table_changed"`
	Kept         int64  `json:"kept"`
	Deleted      int64  `json:"deleted"`
	DeletedBytes int64  `json:"deleted_bytes"`
	Trashed      int64  `json:"trashed"`
	TrashedBytes int64  `json:"trashed_bytes"`
	TrashRun     string `json:"trash_run,omitempty"`
	Failed       int64  `json:"failed"`
}

func (w *orphanWriter) printf(format string, args ...any) {
	if w.err == nil {
		_, w.err = fmt.Fprintf(w.out, format, args...)
	}
}

func (w *orphanWriter) Begin(s orphan.Summary) error {
	w.begun, w.now = true, s.Cutoff
	mode := "delete"
	switch {
	case s.DryRun:
		mode = "dry run"
	case s.TrashDir != "":
		mode = "move to " + s.TrashDir
	}
	if !w.json {
		t := newTable(w.f.Out)
		t.row("table", s.Table)
		t.row("location", s.Root)
		t.row("cutoff", millisText(s.Cutoff.UnixMilli()))
		t.row("mode", mode)
		if w.err == nil {
			w.err = t.flush()
		}
		return w.err
	}
	h := jsonLine(orphanHeaderView{Table: s.Table, MetadataLocation: s.MetadataLocation, Location: s.Root,
		CutoffMS: s.Cutoff.UnixMilli(), Cutoff: rfc3339Millis(s.Cutoff.UnixMilli()), DryRun: s.DryRun,
		PrefixMismatch: s.PrefixMismatch.String(), Trash: s.TrashDir})
	// The header's fields open the document; the arrays follow.
	w.printf("%s,\n", strings.TrimSuffix(h, "}"))
	return w.err
}

// element writes one element of the JSON array key.
func (w *orphanWriter) element(key string, v any) {
	if w.open != key {
		w.closeArray()
		w.printf("%q: [\n", key)
		w.open, w.n = key, 0
	}
	if w.n > 0 {
		w.printf(",\n")
	}
	w.printf("  %s", jsonLine(v))
	w.n++
}

func (w *orphanWriter) closeArray() {
	if w.open != "" {
		if w.n > 0 {
			w.printf("\n")
		}
		w.printf("],\n")
		w.done[w.open] = true
		w.open = ""
	}
}

func (w *orphanWriter) Conflict(c orphan.ConflictFile) error {
	if w.json {
		w.element("conflicts", orphanConflictView{Path: c.Path, ReferencedAs: c.ReferencedAs, Mismatch: c.Mismatch,
			Size: c.Size, ModifiedMS: c.ModTime.UnixMilli()})
		return w.err
	}
	w.printf("conflict  %s  referenced as %s (%s)\n", c.Path, c.ReferencedAs, c.Mismatch)
	return w.err
}

func (w *orphanWriter) Orphan(r orphan.Result) error {
	if w.json {
		v := orphanView{Path: r.Path, Size: r.Size, AgeMS: r.Age.Milliseconds(), Reason: r.Reason,
			Status: string(r.Status), TrashPath: r.TrashPath, Detail: r.Detail}
		if !r.ModTime.IsZero() {
			v.ModifiedMS = r.ModTime.UnixMilli()
			v.Modified = rfc3339Millis(v.ModifiedMS)
		}
		w.element("orphans", v)
		return w.err
	}
	line := fmt.Sprintf("%-12s  %s  %s old  %s  (%s)", words(string(r.Status)), bytesize.Format(r.Size), ageText(r.Age.Milliseconds()), r.Path, r.Reason)
	if r.TrashPath != "" {
		line += " -> " + r.TrashPath
	}
	if r.Detail != "" {
		line += ": " + r.Detail
	}
	w.printf("%s\n", line)
	return w.err
}

// end writes the summary (and closes the JSON document).
func (w *orphanWriter) end(s orphan.Summary) error {
	if !w.begun {
		return nil
	}
	v := orphanSummaryView{References: s.References, Listed: s.Listed, Referenced: s.Referenced, Young: s.Young,
		Hidden: s.Hidden, InTrash: s.InTrash, Markers: s.Markers, Journals: s.Journals, Ignored: s.Ignored, Conflicts: s.Conflicts,
		Orphans: s.Orphans, OrphanBytes: s.OrphanBytes, TableChanged: s.TableChanged, Kept: s.Kept,
		Deleted: s.Deleted, DeletedBytes: s.DeletedBytes, Trashed: s.Trashed, TrashedBytes: s.TrashedBytes, Failed: s.Failed}
	if s.Trashed > 0 {
		v.TrashRun = s.TrashDir
	}
	if w.json {
		w.closeArray()
		for _, k := range []string{"conflicts", "orphans"} {
			if !w.done[k] {
				w.printf("%q: [],\n", k)
			}
		}
		w.printf("\"summary\": %s\n}\n", jsonLine(v))
		return w.err
	}
	if s.Orphans == 0 && s.Conflicts == 0 {
		w.printf("%s: nothing to remove: no unreferenced file older than the cutoff\n", s.Table)
	}
	t := newTable(w.f.Out)
	t.row("listed", fmt.Sprintf("%d files (%d referenced, %d younger than the cutoff, %d hidden, %d in the trash)",
		s.Listed, s.Referenced, s.Young, s.Hidden, s.InTrash))
	if s.Conflicts > 0 || s.Ignored > 0 {
		t.row("prefix mismatches", fmt.Sprintf("%d (%d ignored)", s.Conflicts+s.Ignored, s.Ignored))
	}
	if s.Journals > 0 {
		t.row("expiry journals", fmt.Sprintf("%d kept: pending deletions the next icectl expire finishes", s.Journals))
	}
	t.row("orphans", fmt.Sprintf("%d, %s", s.Orphans, bytesize.Format(s.OrphanBytes)))
	if !s.DryRun {
		if s.TableChanged {
			t.row("kept", fmt.Sprintf("%d (a commit during the run references them)", s.Kept))
		}
		if s.TrashDir != "" && s.Trashed > 0 {
			t.row("trashed", fmt.Sprintf("%d, %s, in %s", s.Trashed, bytesize.Format(s.TrashedBytes), s.TrashDir))
		} else {
			t.row("deleted", fmt.Sprintf("%d, %s", s.Deleted, bytesize.Format(s.DeletedBytes)))
		}
		t.row("failed", s.Failed)
	}
	if w.err == nil {
		w.err = t.flush()
	}
	return w.err
}

// conflictCounter is an orphan.Sink that counts prefix mismatches and
// nothing else.
type conflictCounter struct{ n int }

func (*conflictCounter) Begin(orphan.Summary) error           { return nil }
func (c *conflictCounter) Conflict(orphan.ConflictFile) error { c.n++; return nil }
func (*conflictCounter) Orphan(orphan.Result) error           { return nil }
