package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/claim"
	"github.com/icectl/icectl/iceberg/spec"
	icetable "github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/refs"
)

// RefOptions are the inputs of `icectl tag|branch create|drop|list` and
// `icectl rollback`.
type RefOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
	// Action is create, drop, list or rollback; Type is spec.RefTypeTag or
	// spec.RefTypeBranch (empty for rollback).
	Action, Type, Name string
	SnapshotID         *int64
	Retention          refs.Retention
	// ToTimestamp is set for rollback --to-timestamp.
	ToTimestamp *time.Time
	Force       bool
	// OnExisting is what create does with a ref of the same name
	// (--replace, --if-not-exists).
	OnExisting refs.OnExisting
	// Branch is the branch rollback moves (default main).
	Branch string
	// DryRun (rollback) shows the refs the change would leave and
	// commits nothing.
	DryRun bool
}

type refFlags struct {
	snapshot, retain, maxRefAge, toSnapshot, toTimestamp string
	minSnapshots                                         int
	replace, ifNotExists                                 bool
}

// NewCmdRefs returns `icectl tag` (typ spec.RefTypeTag) or `icectl branch`.
func NewCmdRefs(f *Factory, typ string, runF func(*RefOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   typ + " <command>",
		Short: "Create, drop and list the " + plural(typ) + " of a table",
	}
	run := func(ctx context.Context, opts *RefOptions) error {
		if runF != nil {
			return runF(opts)
		}
		return runRef(ctx, opts)
	}
	for _, action := range []string{"create", "drop", "list"} {
		opts := &RefOptions{f: f, Action: action, Type: typ}
		var fl refFlags
		c := &cobra.Command{Args: cobra.ExactArgs(2)}
		switch action {
		case "create":
			c.Use = "create TABLE NAME"
			c.Short = "Create a " + typ
			c.Long = "Create a " + typ + " at --snapshot (default: the current snapshot). Expiry keeps it\n" +
				"until it is older than its max-ref-age.\n\n" + catalogFlagsHelp + "\n\n" + exitCodesHelp
			c.Flags().StringVar(&fl.snapshot, "snapshot", "", "snapshot id (default: current)")
			c.Flags().StringVar(&fl.maxRefAge, "max-ref-age", "", "remove the "+typ+" once its snapshot is older than this (e.g. 30d)")
			c.Flags().BoolVar(&fl.replace, "replace", false, "move an existing "+typ+" of that name (Spark's CREATE OR REPLACE)")
			c.Flags().BoolVar(&fl.ifNotExists, "if-not-exists", false, "leave an existing "+typ+" of that name as it is and exit 0")
			c.MarkFlagsMutuallyExclusive("replace", "if-not-exists")
			if typ == spec.RefTypeBranch {
				c.Flags().StringVar(&fl.retain, "retain", "", "keep the branch's snapshots newer than this (max-snapshot-age, e.g. 7d)")
				c.Flags().IntVar(&fl.minSnapshots, "min-snapshots-to-keep", 0, "keep at least this many of the branch's snapshots")
			} else {
				c.Flags().StringVar(&fl.retain, "retain", "", "same as --max-ref-age (how long the tag is kept)")
			}
		case "drop":
			c.Use = "drop TABLE NAME"
			c.Short = "Drop a " + typ
			c.Long = "Drop a " + typ + " (main cannot be dropped). Snapshots stay until expiry removes them.\n\n" +
				catalogFlagsHelp + "\n\n" + exitCodesHelp
		case "list":
			c.Use = "list TABLE"
			c.Short = "List the " + plural(typ) + " of a table"
			c.Long = "List the " + plural(typ) + " of a table with their snapshot and retention.\n\n" + catalogFlagsHelp
			c.Args = cobra.ExactArgs(1)
		}
		c.RunE = func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if len(args) > 1 {
				opts.Name = args[1]
			}
			if err := fl.apply(cmd, opts); err != nil {
				return err
			}
			return run(cmd.Context(), opts)
		}
		addCatalogFlags(c, &opts.Catalog)
		cmd.AddCommand(c)
	}
	return cmd
}

// NewCmdRollback returns `icectl rollback`.
func NewCmdRollback(f *Factory, runF func(*RefOptions) error) *cobra.Command {
	opts := &RefOptions{f: f, Action: "rollback"}
	var fl refFlags
	cmd := &cobra.Command{
		Use:   "rollback TABLE (--to-snapshot ID | --to-timestamp T) [--branch B]",
		Short: "Make an earlier snapshot the head of main (or of --branch) again",
		Long: `Set main's head (or --branch's) to --to-snapshot, or to the newest snapshot of
the branch's history committed at or before --to-timestamp (RFC 3339 or epoch
milliseconds). A snapshot that is not an ancestor of the branch's head is
refused unless --force (which sets any snapshot of the table, as Java's
replaceBranch does). Later snapshots stay in the table until expiry removes
them. --dry-run shows the refs it would leave and changes nothing.

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
			return runRef(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&fl.toSnapshot, "to-snapshot", "", "snapshot id to make current")
	cmd.Flags().StringVar(&fl.toTimestamp, "to-timestamp", "", "roll back to the snapshot current at this time")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "allow a snapshot that is not an ancestor of the branch's head")
	cmd.Flags().StringVar(&opts.Branch, "branch", spec.MainBranch, "the branch to move")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "show the refs the rollback would leave and change nothing")
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

func (fl *refFlags) apply(cmd *cobra.Command, o *RefOptions) error {
	id := func(name, s string) (*int64, error) {
		if s == "" {
			return nil, nil
		}
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, usageErrorf("invalid --%s %q: want a snapshot id", name, s)
		}
		return &v, nil
	}
	age := func(name, s string) (*int64, error) {
		if s == "" {
			return nil, nil
		}
		d, err := parseDuration(s)
		if err != nil || d <= 0 {
			return nil, usageErrorf("invalid --%s %q: want a duration like 7d or 12h", name, s)
		}
		ms := d.Milliseconds()
		return &ms, nil
	}
	var err error
	switch o.Action {
	case "create":
		switch {
		case fl.replace:
			o.OnExisting = refs.ReplaceExisting
		case fl.ifNotExists:
			o.OnExisting = refs.KeepExisting
		}
		if o.SnapshotID, err = id("snapshot", fl.snapshot); err != nil {
			return err
		}
		if o.Retention.MaxRefAgeMS, err = age("max-ref-age", fl.maxRefAge); err != nil {
			return err
		}
		if o.Type == spec.RefTypeTag {
			if fl.retain != "" && fl.maxRefAge != "" {
				return usageErrorf("--retain and --max-ref-age are the same for a tag: give one")
			}
			if fl.retain != "" {
				o.Retention.MaxRefAgeMS, err = age("retain", fl.retain)
			}
			return err
		}
		if o.Retention.MaxSnapshotAgeMS, err = age("retain", fl.retain); err != nil {
			return err
		}
		if cmd.Flags().Changed("min-snapshots-to-keep") {
			if fl.minSnapshots < 1 {
				return usageErrorf("invalid --min-snapshots-to-keep %d: want >= 1", fl.minSnapshots)
			}
			n := fl.minSnapshots
			o.Retention.MinSnapshotsToKeep = &n
		}
	case "rollback":
		if (fl.toSnapshot == "") == (fl.toTimestamp == "") {
			return usageErrorf("give exactly one of --to-snapshot and --to-timestamp")
		}
		if o.SnapshotID, err = id("to-snapshot", fl.toSnapshot); err != nil {
			return err
		}
		if fl.toTimestamp != "" {
			ts, err := parseTimeOrAge(fl.toTimestamp, time.Now())
			if err != nil {
				return usageErrorf("invalid --to-timestamp %q: want an RFC 3339 timestamp or epoch milliseconds", fl.toTimestamp)
			}
			o.ToTimestamp = &ts
		}
	}
	return nil
}

type refListView struct {
	Name               string  `json:"name"`
	Type               string  `json:"type"`
	SnapshotID         int64   `json:"snapshot_id"`
	SnapshotTimestamp  *string `json:"snapshot_timestamp"`
	MinSnapshotsToKeep *int    `json:"min_snapshots_to_keep"`
	MaxSnapshotAgeMS   *int64  `json:"max_snapshot_age_ms"`
	MaxRefAgeMS        *int64  `json:"max_ref_age_ms"`
	// IcectlClaim marks the tags of icectl's table claim (`icectl claim`).
	IcectlClaim bool `json:"icectl_claim"`
}

type refsResultView struct {
	Table            string        `json:"table"`
	Action           string        `json:"action"`
	Branch           string        `json:"branch,omitempty"`
	DryRun           bool          `json:"dry_run"`
	Committed        bool          `json:"committed"`
	MetadataLocation string        `json:"metadata_location"`
	CurrentSnapshot  *int64        `json:"current_snapshot_id"`
	Refs             []refListView `json:"refs"`
	// Kept says why create changed nothing (--if-not-exists).
	Kept string `json:"kept,omitempty"`
}

func refViews(md *spec.TableMetadata, typ string) []refListView {
	out := []refListView{}
	for _, r := range refs.List(md, typ) {
		v := refListView{Name: r.Name, Type: r.Type, SnapshotID: r.SnapshotID, MinSnapshotsToKeep: r.MinSnapshotsToKeep,
			MaxSnapshotAgeMS: r.MaxSnapshotAgeMS, MaxRefAgeMS: r.MaxRefAgeMS, IcectlClaim: claim.IsRef(r.Name)}
		if r.TimestampMS != 0 {
			ts := rfc3339Millis(r.TimestampMS)
			v.SnapshotTimestamp = &ts
		}
		out = append(out, v)
	}
	return out
}

func runRef(ctx context.Context, opts *RefOptions) error {
	if opts.Action != "list" && isMetadataFile(opts.Table) {
		return refuseMetadataFile(opts.Table, "change it", false)
	}
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	v := refsResultView{Table: t.Ident.String(), Action: opts.Action, MetadataLocation: t.MetadataLocation}
	var ch refs.Change
	switch opts.Action {
	case "list":
	case "create":
		ch = refs.CreateOr(opts.Type, opts.Name, opts.SnapshotID, opts.Retention, opts.OnExisting)
	case "drop":
		ch = refs.Drop(opts.Type, opts.Name)
	case "rollback":
		v.Branch = opts.Branch
		target := opts.SnapshotID
		if opts.ToTimestamp != nil {
			id, err := refs.SnapshotAsOfBranch(t.Metadata, opts.Branch, opts.ToTimestamp.UnixMilli())
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: fmt.Errorf("rollback %s: %w", t.Ident, err)}
			}
			target = &id
		}
		if head, err := icetable.BranchHead(t.Metadata, opts.Branch); err == nil && head != nil && head.SnapshotID == *target {
			break // already the head: nothing to change
		}
		ch = refs.RollbackBranch(opts.Branch, *target, opts.Force)
	}
	md := t.Metadata
	if ch != nil && opts.DryRun {
		after, err := dryRunRefChange(t.Metadata, ch)
		if err != nil {
			return refCommitError(err, t.Ident, opts)
		}
		v.DryRun, md = true, after
		ch = nil
	}
	if ch != nil {
		res, err := refs.Commit(ctx, oc.cat, t, ch, opts.f.CommitOptions(t.Metadata.Properties))
		switch {
		case errors.Is(err, refs.ErrKept):
			// --if-not-exists: the ref was there (perhaps made meanwhile);
			// the listing below shows it as it is.
			v.Kept = err.Error()
			if cur, lerr := oc.cat.LoadTable(ctx, t.Ident); lerr == nil {
				md = cur.Metadata
			}
		case err != nil:
			return refCommitError(scrub(oc.cfg, err), t.Ident, opts)
		default:
			v.Committed, v.MetadataLocation, md = true, res.MetadataLocation, res.Metadata
		}
	}
	v.CurrentSnapshot = md.CurrentSnapshotID
	typ := opts.Type
	v.Refs = refViews(md, typ)
	if opts.f.Output == outputJSON {
		return writeJSON(opts.f.Out, v)
	}
	return writeRefsText(opts.f.Out, opts.f.ErrOut, v, opts)
}

func refCommitError(err error, id catalog.Ident, opts *RefOptions) error {
	what := opts.Action
	if opts.Type != "" {
		what = opts.Type + " " + opts.Action
	}
	switch {
	case errors.Is(err, refs.ErrInvalid):
		return fmt.Errorf("%s on %s: %w", what, id, err)
	case errors.Is(err, catalog.ErrCommitStateUnknown):
		return &ExitError{Code: ExitCommitState, Err: fmt.Errorf("%s on %s: commit state unknown; check the table with `icectl table show %s`: %w", what, id, id, err)}
	case errors.Is(err, catalog.ErrCommitConflict), errors.Is(err, spec.ErrRequirementFailed):
		return &ExitError{Code: ExitConflict, Err: fmt.Errorf("%s on %s: commit conflict, nothing changed: %w", what, id, err)}
	}
	return err
}

// writeRefsText writes the refs to w; that there are none is a note, on
// errOut.
func writeRefsText(w, errOut io.Writer, v refsResultView, opts *RefOptions) error {
	switch {
	case v.DryRun:
		printf(w, "%s: dry run, nothing changed; the refs would be:\n", v.Table)
	case v.Committed:
		printf(w, "%s: committed %s\n", v.Table, v.MetadataLocation)
	case v.Kept != "":
		printf(w, "%s: nothing to create: %s (--if-not-exists)\n", v.Table, v.Kept)
	case opts.Action == "rollback":
		head := "-"
		if r, ok := findRef(v.Refs, opts.Branch); ok {
			head = strconv.FormatInt(r.SnapshotID, 10)
		} else if opts.Branch == spec.MainBranch && v.CurrentSnapshot != nil {
			head = strconv.FormatInt(*v.CurrentSnapshot, 10)
		}
		printf(w, "%s: nothing to roll back: %s is already at snapshot %s\n", v.Table, opts.Branch, head)
	}
	if len(v.Refs) == 0 {
		kind := "refs"
		if opts.Type != "" {
			kind = plural(opts.Type)
		}
		_, err := fmt.Fprintf(errOut, "%s has no %s\n", v.Table, kind)
		return err
	}
	t := newTable(w)
	t.row("NAME", "TYPE", "SNAPSHOT", "COMMITTED", "RETENTION")
	for _, r := range v.Refs {
		var ret []string
		if r.IcectlClaim {
			ret = append(ret, "(icectl claim: see `icectl claim show`)")
		}
		if r.MinSnapshotsToKeep != nil {
			ret = append(ret, fmt.Sprintf("min-snapshots-to-keep=%d", *r.MinSnapshotsToKeep))
		}
		if r.MaxSnapshotAgeMS != nil {
			ret = append(ret, fmt.Sprintf("max-snapshot-age=%s", formatDuration(time.Duration(*r.MaxSnapshotAgeMS)*time.Millisecond)))
		}
		if r.MaxRefAgeMS != nil {
			ret = append(ret, fmt.Sprintf("max-ref-age=%s", formatDuration(time.Duration(*r.MaxRefAgeMS)*time.Millisecond)))
		}
		ts := "-"
		if r.SnapshotTimestamp != nil {
			ts = *r.SnapshotTimestamp
		}
		t.row(r.Name, r.Type, r.SnapshotID, ts, strings.Join(ret, " "))
	}
	return t.flush()
}

func findRef(rs []refListView, name string) (refListView, bool) {
	for _, r := range rs {
		if r.Name == name {
			return r, true
		}
	}
	return refListView{}, false
}

// dryRunRefChange applies ch to md in memory: the metadata the commit
// would make, with nothing written.
func dryRunRefChange(md *spec.TableMetadata, ch refs.Change) (*spec.TableMetadata, error) {
	_, ups, err := ch(md)
	if err != nil {
		return nil, err
	}
	return spec.ApplyUpdates(md, ups, spec.ApplyOptions{Now: time.Now()})
}

// plural names refs of a type: tags, branches.
func plural(typ string) string {
	if strings.HasSuffix(typ, "ch") {
		return typ + "es"
	}
	return typ + "s"
}
