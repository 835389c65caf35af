package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/expire"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/shared/bytesize"
	"github.com/icectl/icectl/internal/shared/verbrun"
)

// ExpireOptions are the inputs of `icectl expire`.
type ExpireOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
	Expire  expire.Options
	// Now is the time ages are measured from; zero is the clock. Tests set it.
	Now time.Time
	// Wait is --wait: how long to wait for another run's claim.
	Wait string
}

type expireFlags struct {
	olderThan, cleanup string
	retainLast         int
	snapshotIDs        []string
}

// NewCmdExpire returns `icectl expire`. runF replaces the run function in
// tests; nil runs the command.
func NewCmdExpire(f *Factory, runF func(*ExpireOptions) error) *cobra.Command {
	opts := &ExpireOptions{f: f}
	var fl expireFlags
	cmd := &cobra.Command{
		Use:   "expire TABLE",
		Short: "Remove old snapshots and delete the files only they reference",
		Long: `Expire snapshots as Java's RemoveSnapshots does: main is never removed; every
other branch and tag is removed once its snapshot is older than its
max-ref-age-ms (default history.expire.max-ref-age-ms, else never); each
retained branch keeps its newest ancestors while fewer than its
min-snapshots-to-keep (default --retain-last) are kept or they are newer than
its max-snapshot-age-ms (default --older-than); snapshots outside every
branch's history are kept while newer than --older-than.

--older-than takes a duration before now (7d, 36h) or a timestamp (RFC 3339
or epoch milliseconds); default history.expire.max-snapshot-age-ms, else 5d.
--retain-last defaults to history.expire.min-snapshots-to-keep, else 1.
--snapshot-id (repeatable) expires exactly those snapshots.

The metadata change is committed first; files are deleted only after the
commit is confirmed. The files deleted are those reachable from the removed
snapshots and from no retained one (manifest lists, manifests, data and
delete files, DV Puffin files, statistics), computed by reading every
manifest involved before anything changes. --cleanup metadata deletes only
manifest lists, manifests and statistics; none deletes nothing. Tables with
gc.enabled=false refuse any deletion. --clean-metadata-files also deletes
metadata.json files the metadata log no longer keeps
(write.metadata.previous-versions-max). --clean-expired-metadata also
removes the partition specs and schemas that no retained snapshot uses
(never the default spec or the current schema), as Spark's
clean_expired_metadata does. --dry-run lists the snapshots and
files with the reason for each and changes nothing.

Before committing, expire writes the list of files it will delete to
metadata/expire-UUID.pending; a run interrupted after its commit leaves it,
and the next expire finishes those deletions (each file proven unreachable
again) and removes it.

` + catalogFlagsHelp + "\n\n" + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if err := fl.apply(cmd, opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runExpire(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&fl.olderThan, "older-than", "", "expire snapshots older than this duration (7d) or timestamp (default: history.expire.max-snapshot-age-ms, else 5d)")
	fs.IntVar(&fl.retainLast, "retain-last", 0, "ancestors each branch keeps at least (default: history.expire.min-snapshots-to-keep, else 1)")
	fs.StringArrayVar(&fl.snapshotIDs, "snapshot-id", nil, "expire exactly this snapshot (repeatable)")
	fs.StringVar(&fl.cleanup, "cleanup", "all", "files to delete: all, metadata or none")
	fs.BoolVar(&opts.Expire.CleanMetadataFiles, "clean-metadata-files", false, "also delete metadata.json files beyond write.metadata.previous-versions-max")
	fs.BoolVar(&opts.Expire.CleanExpiredMetadata, "clean-expired-metadata", false, "also remove partition specs and schemas no retained snapshot uses")
	fs.IntVar(&opts.Expire.MaxConcurrentDeletes, "max-concurrent-deletes", 8, "files deleted at once")
	fs.BoolVar(&opts.Expire.DryRun, "dry-run", false, "list what would be expired and deleted, change nothing")
	addClaimWait(cmd, &opts.Wait)
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

func (fl *expireFlags) apply(cmd *cobra.Command, opts *ExpireOptions) error {
	o := &opts.Expire
	c, err := expire.ParseCleanup(fl.cleanup)
	if err != nil {
		return usageErrorf("invalid --cleanup %q: want all, metadata or none", fl.cleanup)
	}
	o.Cleanup = c
	if fl.olderThan != "" {
		ts, err := parseTimeOrAge(fl.olderThan, opts.now())
		if err != nil {
			return usageErrorf("invalid --older-than %q: want a duration like 7d or 36h, an RFC 3339 timestamp, or epoch milliseconds", fl.olderThan)
		}
		o.Policy.OlderThan = &ts
	}
	if cmd.Flags().Changed("retain-last") {
		if fl.retainLast < 1 {
			return usageErrorf("invalid --retain-last %d: want >= 1", fl.retainLast)
		}
		n := fl.retainLast
		o.Policy.RetainLast = &n
	}
	for _, s := range fl.snapshotIDs {
		id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return usageErrorf("invalid --snapshot-id %q: want a snapshot id", s)
		}
		o.Policy.SnapshotIDs = append(o.Policy.SnapshotIDs, id)
	}
	if o.MaxConcurrentDeletes < 1 {
		return usageErrorf("invalid --max-concurrent-deletes %d: want >= 1", o.MaxConcurrentDeletes)
	}
	return nil
}

func (o *ExpireOptions) now() time.Time {
	if o.Now.IsZero() {
		return time.Now()
	}
	return o.Now
}

func runExpire(ctx context.Context, opts *ExpireOptions) error {
	if isMetadataFile(opts.Table) && !opts.Expire.DryRun {
		return refuseMetadataFile(opts.Table, "expire it", true)
	}
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	eo := opts.Expire
	eo.Policy.Now = opts.now()
	eo.Log = opts.f.ErrOut
	if bar := opts.f.progressBar("files"); bar != nil {
		eo.Progress, eo.Log = bar, bar
	}
	var rep *expire.Report
	if eo.DryRun {
		// The dry run is the run itself, on the table read read-only: it
		// never reaches a commit.
		rep, err = expire.Run(ctx, oc.cat, verbrun.ReadOnly(t), eo)
		err = outcomeExit(expire.Outcome(err))
	} else {
		var res verbrun.Result[struct{}, *expire.Report]
		res, err = runVerb(ctx, opts.f, oc, t, expire.Verb(oc.cat, eo, opts.f.CommitOptions), opts.Wait, false)
		rep = res.Report
	}
	defer rep.Close()
	if rep != nil {
		if werr := writeExpireReport(opts.f, rep); werr != nil && err == nil {
			err = werr
		}
	}
	return scrub(oc.cfg, err)
}

type expireSnapshotView struct {
	SnapshotID  int64  `json:"snapshot_id"`
	TimestampMS int64  `json:"timestamp_ms"`
	Timestamp   string `json:"timestamp"`
	Reason      string `json:"reason"`
}

type expireRefView struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	SnapshotID int64  `json:"snapshot_id"`
	Reason     string `json:"reason"`
}

type expireFileView struct {
	Path       string `json:"path"`
	Kind       string `json:"kind"`
	Size       int64  `json:"size"`
	SnapshotID int64  `json:"snapshot_id,omitempty"`
	Reason     string `json:"reason"`
}

type expireFailureView struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// expireReportView is the JSON report. Files is written element by
// element from the report's FileList (see writeExpireJSON): the view
// itself never holds them.
type expireReportView struct {
	expireHeadView
	Files []expireFileView `json:"files"`
	expireTailView
}

type expireHeadView struct {
	Table              string               `json:"table"`
	DryRun             bool                 `json:"dry_run"`
	Committed          bool                 `json:"committed"`
	MetadataLocation   string               `json:"metadata_location"`
	Cleanup            string               `json:"cleanup"`
	OlderThanMS        int64                `json:"older_than_ms"`
	OlderThan          string               `json:"older_than"`
	MinSnapshotsToKeep int                  `json:"min_snapshots_to_keep"`
	ExpiredSnapshots   []expireSnapshotView `json:"expired_snapshots"`
	RetainedSnapshots  []expireSnapshotView `json:"retained_snapshots"`
	RemovedRefs        []expireRefView      `json:"removed_refs"`
	RemovedSpecIDs     []int                `json:"removed_spec_ids"`
	RemovedSchemaIDs   []int                `json:"removed_schema_ids"`
}

type expireTailView struct {
	DeletedFiles int                 `json:"deleted_files"`
	DeletedBytes int64               `json:"deleted_bytes"`
	Refused      []expireFailureView `json:"refused"`
	Failed       []expireFailureView `json:"failed"`
	DurationMS   int64               `json:"duration_ms"`
}

func snapshotViews(ss []expire.Snapshot) []expireSnapshotView {
	out := make([]expireSnapshotView, len(ss))
	for i, s := range ss {
		out[i] = expireSnapshotView{SnapshotID: s.SnapshotID, TimestampMS: s.TimestampMS, Timestamp: rfc3339Millis(s.TimestampMS), Reason: s.Reason}
	}
	return out
}

func expireView(rep *expire.Report) (expireHeadView, expireTailView) {
	p := rep.Plan
	h := expireHeadView{Table: rep.Table, DryRun: rep.DryRun, Committed: rep.Committed, MetadataLocation: rep.MetadataLocation,
		Cleanup: rep.Cleanup.String(), OlderThanMS: p.OlderThanMS, OlderThan: rfc3339Millis(p.OlderThanMS), MinSnapshotsToKeep: p.MinSnapshotsToKeep,
		ExpiredSnapshots: snapshotViews(p.Remove), RetainedSnapshots: snapshotViews(p.Retain), RemovedRefs: []expireRefView{},
		RemovedSpecIDs: append([]int{}, p.RemoveSpecIDs...), RemovedSchemaIDs: append([]int{}, p.RemoveSchemaIDs...)}
	for _, r := range p.RemoveRefs {
		h.RemovedRefs = append(h.RemovedRefs, expireRefView{Name: r.Name, Type: r.Ref.Type, SnapshotID: r.Ref.SnapshotID, Reason: r.Reason})
	}
	t := expireTailView{DeletedFiles: rep.Deletion.Deleted, DeletedBytes: rep.DeletedBytes,
		Refused: []expireFailureView{}, Failed: []expireFailureView{}, DurationMS: rep.Duration.Milliseconds()}
	for _, r := range rep.Deletion.Refused {
		t.Refused = append(t.Refused, expireFailureView{Path: r.Path, Error: r.Reason})
	}
	for _, f := range rep.Deletion.Failed {
		t.Failed = append(t.Failed, expireFailureView{Path: f.Path, Error: f.Err.Error()})
	}
	return h, t
}

func fileView(f expire.File) expireFileView {
	return expireFileView{Path: f.Path, Kind: f.KindName(), Size: f.Size, SnapshotID: f.SnapshotID, Reason: f.Reason}
}

func writeExpireReport(f *Factory, rep *expire.Report) error {
	h, t := expireView(rep)
	if f.Output == outputJSON {
		return writeExpireJSON(f.Out, h, rep.Files, t)
	}
	return writeExpireText(f.Out, h, rep.Files, t)
}

// writeExpireJSON writes the document writeJSON would write for
// expireReportView, streaming the files through a jsonIndenter: the
// head's fields, the files one by one, then the tail's fields.
func writeExpireJSON(w io.Writer, h expireHeadView, files *expire.FileList, t expireTailView) error {
	out := newJSONIndenter(w)
	var err error
	put := func(s string) {
		if err == nil {
			_, err = io.WriteString(out, s)
		}
	}
	put(strings.TrimSuffix(strings.TrimSpace(jsonLine(h)), "}"))
	put(`,"files":[`)
	n := 0
	ferr := files.Each(func(f expire.File) error {
		if n > 0 {
			put(",")
		}
		n++
		put(jsonLine(fileView(f)))
		return err
	})
	put("],")
	put(strings.TrimPrefix(strings.TrimSpace(jsonLine(t)), "{"))
	return errors.Join(err, ferr)
}

func writeExpireText(w io.Writer, v expireHeadView, files *expire.FileList, tail expireTailView) error {
	var head string
	switch {
	case v.Committed:
		head = fmt.Sprintf("%s: committed %s", v.Table, v.MetadataLocation)
	case len(v.ExpiredSnapshots) == 0 && len(v.RemovedRefs) == 0 && len(v.RemovedSpecIDs) == 0 && len(v.RemovedSchemaIDs) == 0 && files.Len() == 0:
		head = fmt.Sprintf("%s: nothing to expire: no snapshot older than %s beyond the %d to keep, no ref past its age", v.Table,
			rfc3339Millis(v.OlderThanMS), v.MinSnapshotsToKeep)
	case v.DryRun:
		head = fmt.Sprintf("%s: dry run, nothing changed", v.Table)
	default:
		head = fmt.Sprintf("%s: not committed", v.Table)
	}
	if _, err := fmt.Fprintln(w, escapeText(head)); err != nil {
		return err
	}
	verb := "expired"
	if v.DryRun {
		verb = "would expire"
	}
	t := newTable(w)
	t.row("older than", millisText(v.OlderThanMS))
	t.row("min snapshots to keep", v.MinSnapshotsToKeep)
	t.row("snapshots", fmt.Sprintf("%d %s, %d retained", len(v.ExpiredSnapshots), verb, len(v.RetainedSnapshots)))
	t.row("cleanup", v.Cleanup)
	if len(v.RemovedSpecIDs) > 0 || len(v.RemovedSchemaIDs) > 0 {
		t.row("unused metadata", fmt.Sprintf("partition specs %v, schemas %v", v.RemovedSpecIDs, v.RemovedSchemaIDs))
	}
	if v.DryRun {
		t.row("files", fmt.Sprintf("%d would be deleted (%s)", files.Len(), bytesize.Format(files.Bytes())))
	} else {
		t.row("files", fmt.Sprintf("%d deleted (%s), %d refused, %d failed", tail.DeletedFiles, bytesize.Format(tail.DeletedBytes), len(tail.Refused), len(tail.Failed)))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if len(v.ExpiredSnapshots) > 0 || len(v.RemovedRefs) > 0 {
		t = newTable(w)
		for _, s := range v.ExpiredSnapshots {
			t.row("  snapshot", s.SnapshotID, s.Timestamp, s.Reason)
		}
		for _, r := range v.RemovedRefs {
			t.row("  "+r.Type, r.Name, r.SnapshotID, r.Reason)
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	if v.DryRun {
		if err := writeExpireFiles(w, files); err != nil {
			return err
		}
	}
	for _, r := range tail.Refused {
		printf(w, "refused %s: %s\n", r.Path, r.Error)
	}
	for _, r := range tail.Failed {
		printf(w, "failed %s: %s\n", r.Path, r.Error)
	}
	return nil
}

// writeExpireFiles prints the files as one aligned table, as newTable
// would, without holding them: a first pass over the list measures the
// columns, a second prints each line padded to them (two spaces after
// the widest cell, no padding after the last).
func writeExpireFiles(w io.Writer, files *expire.FileList) error {
	cells := func(f expire.File) (string, string, string) {
		return escapeText("  " + f.KindName()), escapeText(f.Path), escapeText(f.Reason)
	}
	var kindW, pathW int
	err := files.Each(func(f expire.File) error {
		k, p, _ := cells(f)
		kindW = max(kindW, utf8.RuneCountInString(k))
		pathW = max(pathW, utf8.RuneCountInString(p))
		return nil
	})
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	pad := func(s string, width int) {
		bw.WriteString(s)
		for range width + 2 - utf8.RuneCountInString(s) {
			bw.WriteByte(' ')
		}
	}
	err = files.Each(func(f expire.File) error {
		k, p, r := cells(f)
		pad(k, kindW)
		if r == "" {
			bw.WriteString(p)
		} else {
			pad(p, pathW)
			bw.WriteString(r)
		}
		return bw.WriteByte('\n')
	})
	return errors.Join(err, bw.Flush())
}
