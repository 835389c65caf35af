package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/dvmerge"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/internal/shared/verbrun"
	"github.com/icectl/icectl/upgrade"
)

// UpgradeOptions are the inputs of `icectl upgrade`.
type UpgradeOptions struct {
	f            *Factory
	Catalog      config.Flags
	Table        string
	To           int
	Check        bool
	AssignRowIDs bool
	// MergeDeletes runs dv merge on the table straight after the upgrade.
	MergeDeletes bool
	// Force upgrades although the readiness check finds a blocker.
	Force bool
	// Wait is --wait: how long to wait for another run's claim.
	Wait string
}

// NewCmdUpgrade returns `icectl upgrade`. runF replaces the run function
// in tests; nil runs the command.
func NewCmdUpgrade(f *Factory, runF func(*UpgradeOptions) error) *cobra.Command {
	opts := &UpgradeOptions{f: f}
	cmd := &cobra.Command{
		Use:   "upgrade TABLE --to 2|3 [--merge-deletes] [--force] | upgrade TABLE --check [--to 2|3]",
		Short: "Upgrade a table's format version (v1 to v2, v2 to v3), or check that it is ready",
		Long: `Upgrade the table's format version with an upgrade-format-version commit
(v1 to v2, v2 to v3, or v1 to v3 in one step). Existing snapshots and files
are left as they are; a v3 table starts with next-row-id 0. Downgrades are
refused; a table already at the target is left alone (exit 0).

Going to v3, --assign-row-ids (on by default) makes the first v3 commit in
the same metadata commit: a "replace" snapshot that adds and removes no file
but lists main's manifests again, giving every data manifest a first_row_id
and so every existing row a _row_id. No data or manifest file is rewritten;
manifests carried over from v1 without file counts are read for them. On a
table already at v3 whose current manifests lack row ids, it does only that.
Other branches get their row ids at their next commit.

--merge-deletes (with --to 3) runs "icectl dv merge" on the table straight
after the upgrade, so that one command takes a v2 table with position deletes
to v3 with one deletion vector per data file: every position-delete file
(file- or partition-scoped) whose data files all get a DV is removed. On a
table already at v3 it only merges, so it also finishes a run that was
stopped between the two commits. One report covers both.

--check prints a readiness report and changes nothing: each finding has a
severity (blocker, warning, info) and the command that settles it; the exit
code is 1 when a blocker is found. Without --to it checks the next version
(the table's plus one; v3 for a v3 table).

The upgrade runs the same check first and refuses (exit 1, nothing
committed) when it finds a blocker the run does not settle: position-delete
files going to v3 are settled by --merge-deletes; --force upgrades anyway.

` + exitCodesHelp + "\n\n" + catalogFlagsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if !cmd.Flags().Changed("to") && !opts.Check {
				return usageErrorf("--to is required: add --to 3 (or --to 2), the target format version, or --check to see what the next version needs")
			}
			if cmd.Flags().Changed("to") && opts.To != 2 && opts.To != 3 {
				return usageErrorf("invalid --to %d: icectl upgrades to format version 2 or 3", opts.To)
			}
			if opts.To < 3 && cmd.Flags().Changed("assign-row-ids") && opts.AssignRowIDs {
				return usageErrorf("--assign-row-ids needs --to 3: row ids exist in format v3 only")
			}
			if opts.MergeDeletes && opts.To < 3 {
				return usageErrorf("--merge-deletes needs --to 3: deletion vectors exist in format v3 only")
			}
			if opts.MergeDeletes && opts.Check {
				return usageErrorf("--merge-deletes changes the table and --check changes nothing: use one of them")
			}
			if opts.Force && opts.Check {
				return usageErrorf("--force upgrades despite blockers and --check changes nothing: use one of them")
			}
			if runF != nil {
				return runF(opts)
			}
			return runUpgrade(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.To, "to", 0, "target format version: 2 or 3 (with --check, default: the next version)")
	cmd.Flags().BoolVar(&opts.Check, "check", false, "print the readiness report and change nothing")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "upgrade although the readiness check finds a blocker (see --check)")
	cmd.Flags().BoolVar(&opts.AssignRowIDs, "assign-row-ids", true, "going to v3, give every data manifest of main a first_row_id in the same commit")
	cmd.Flags().BoolVar(&opts.MergeDeletes, "merge-deletes", false, "after the upgrade to v3, merge position deletes into one deletion vector per data file (icectl dv merge)")
	addClaimWait(cmd, &opts.Wait)
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

func runUpgrade(ctx context.Context, opts *UpgradeOptions) error {
	if !opts.Check && isMetadataFile(opts.Table) {
		return refuseMetadataFile(opts.Table, "upgrade it", false)
	}
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	if opts.To == 0 { // --check without --to: the next version
		opts.To = min(t.Metadata.FormatVersion+1, spec.MaxFormatVersion)
	}
	if err := upgrade.CheckTarget(t.Metadata.FormatVersion, opts.To); err != nil {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("table %s: %w", t.Ident, err)}
	}
	if opts.Check {
		in, err := upgrade.Gather(ctx, t, opts.To)
		if err != nil {
			return scrub(oc.cfg, err)
		}
		r := upgrade.Check(in)
		if extra := catalogFlagArgs(opts.Catalog); len(extra) > 0 {
			for i := range r.Findings {
				if r.Findings[i].Command != "" {
					r.Findings[i].Command += " " + shellJoin(extra)
				}
			}
		}
		if err := writeUpgradeCheck(opts.f, r); err != nil {
			return err
		}
		if !r.Ready {
			return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%s is not ready for format v%d: %d blocker(s)", t.Ident, opts.To, blockers(r))}
		}
		return nil
	}
	// Under the table's claim, like the other changing verbs: a
	// --merge-deletes run is a dv merge, and a maintain run must not
	// compact or merge while the format changes under it. The readiness
	// check refuses before the claim; a table already as asked takes none.
	uo := upgrade.VerbOptions{Options: upgrade.Options{To: opts.To, AssignRowIDs: opts.AssignRowIDs}, Force: opts.Force}
	if bar := opts.f.progressBar("commits"); bar != nil {
		uo.Progress = bar
	}
	var merge *verbrun.Verb[*dvmerge.Plan, *dvmerge.Report]
	if opts.MergeDeletes {
		mo := dvmerge.Options{CreatedBy: "icectl " + buildVersion(), Log: opts.f.ErrOut}
		if bar := opts.f.progressBar("partitions"); bar != nil {
			mo.Progress, mo.Log = bar, bar
		}
		v := dvmerge.Verb(oc.cat, mo, opts.f.CommitOptions)
		merge = &v
	}
	res, err := runVerb(ctx, opts.f, oc, t, upgrade.Verb(oc.cat, uo, merge, opts.f.CommitOptions), opts.Wait, false)
	if rep := res.Report; rep != nil && rep.Upgrade != nil && (!rep.Merging || rep.Merged != nil || err == nil) {
		if werr := writeUpgrade(opts.f, rep.Upgrade, rep.Merged); werr != nil && err == nil {
			err = werr
		}
	}
	return upgradeError(oc.cfg, t.Ident, err)
}

// upgradeRefusal is the one-line refusal of an upgrade with blockers:
// what blocks it and the options that would let it run.
func upgradeRefusal(table string, to int, bs []upgrade.Finding) error {
	debt := bs[0].Kind == upgrade.PositionDeleteDebt // Check lists it first
	why := bs[0].Message
	if debt {
		why = "its position-delete files would stay, and a v3 writer that does not fold them into the deletion vectors it writes (iceberg-go v0.7.0) brings deleted rows back"
	}
	var fix string
	switch {
	case debt && len(bs) == 1:
		fix = "add --merge-deletes to merge them into deletion vectors in the same run, or --force to upgrade anyway"
	case debt:
		fix = "settle them first (--merge-deletes settles the position-delete files), or add --force to upgrade anyway"
	default:
		fix = "settle it first, or add --force to upgrade anyway"
	}
	if len(bs) > 1 {
		why = fmt.Sprintf("%d blockers, the first: %s", len(bs), why)
	}
	return fmt.Errorf("refusing to upgrade %s to format v%d: %s; %s (`icectl upgrade %s --to %d --check` lists the findings)", table, to, why, fix, table, to)
}

func blockers(r upgrade.Report) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == upgrade.Blocker {
			n++
		}
	}
	return n
}

// upgradeError maps a failed upgrade to the documented exit codes and
// says what the failure leaves: a readiness refusal with the options
// that would let the run go on.
func upgradeError(cfg *config.Catalog, id catalog.Ident, err error) error {
	var ref *upgrade.Refusal
	var me *upgrade.MergeError
	switch {
	case errors.As(err, &ref):
		return &ExitError{Code: ExitFailure, Err: upgradeRefusal(ref.Table, ref.To, ref.Blockers)}
	case errors.As(err, &me):
		return scrub(cfg, err)
	}
	return rewriteExit(cfg, id, outcomeExit(upgrade.Outcome(err)), "may or may not have been upgraded", "%s was not upgraded")
}

type upgradeView struct {
	Table             string `json:"table"`
	FromVersion       int    `json:"from_version"`
	ToVersion         int    `json:"to_version"`
	Committed         bool   `json:"committed"`
	Upgraded          bool   `json:"upgraded"`
	SnapshotID        *int64 `json:"snapshot_id"`
	FirstRowID        *int64 `json:"first_row_id"`
	AddedRows         *int64 `json:"added_rows"`
	ManifestsAssigned int    `json:"manifests_assigned"`
	NextRowID         *int64 `json:"next_row_id"`
	MetadataLocation  string `json:"metadata_location"`
	// DVMerge is the report of --merge-deletes.
	DVMerge *dvMergeReportView `json:"dv_merge,omitempty"`
}

func writeUpgrade(f *Factory, res *upgrade.Result, merged *dvmerge.Report) error {
	v := upgradeView{Table: res.Table, FromVersion: res.From, ToVersion: res.To, Committed: res.Committed(), Upgraded: res.Upgraded,
		ManifestsAssigned: res.ManifestsAssigned, NextRowID: res.NextRowID, MetadataLocation: res.MetadataLocation}
	if s := res.Snapshot; s != nil {
		id := s.SnapshotID
		v.SnapshotID, v.FirstRowID, v.AddedRows = &id, s.FirstRowID, s.AddedRows
	}
	if merged != nil {
		mv := dvMergeView(res.Table, merged)
		v.DVMerge = &mv
	}
	if f.Output == outputJSON {
		return writeJSON(f.Out, v)
	}
	if err := writeUpgradeText(f.Out, v); err != nil || v.DVMerge == nil {
		return err
	}
	printf(f.Out, "\nmerged deletes (icectl dv merge)\n")
	return writeDVMergeText(f.Out, *v.DVMerge)
}

func writeUpgradeText(w io.Writer, v upgradeView) error {
	switch {
	case !v.Committed:
		// With --merge-deletes, the merge's own report follows.
		_, err := fmt.Fprintf(w, "%s: nothing to upgrade: already at format v%d (table at %s)\n", v.Table, v.FromVersion, v.MetadataLocation)
		return err
	case v.Upgraded:
		fmt.Fprintf(w, "%s: upgraded from format v%d to v%d (%s)\n", v.Table, v.FromVersion, v.ToVersion, v.MetadataLocation)
	default:
		fmt.Fprintf(w, "%s: at format v%d; gave the pending row ids (%s)\n", v.Table, v.ToVersion, v.MetadataLocation)
	}
	t := newTable(w)
	if v.SnapshotID != nil {
		t.row("  row-id snapshot", *v.SnapshotID)
		t.row("  first-row-id", optInt64(v.FirstRowID))
		t.row("  added-rows", optInt64(v.AddedRows))
		t.row("  data manifests given ids", v.ManifestsAssigned)
	}
	if v.NextRowID != nil {
		t.row("  next-row-id", *v.NextRowID)
	}
	return t.flush()
}

func writeUpgradeCheck(f *Factory, r upgrade.Report) error {
	if f.Output == outputJSON {
		return writeJSON(f.Out, r)
	}
	return writeUpgradeCheckText(f.Out, r)
}

func writeUpgradeCheckText(w io.Writer, r upgrade.Report) error {
	verdict := "ready"
	if !r.Ready {
		verdict = "NOT ready"
	}
	fmt.Fprintf(w, "%s: format v%d -> v%d: %s\n", r.Table, r.FormatVersion, r.Target, verdict)
	t := newTable(w)
	t.row("  snapshot", optInt64(r.SnapshotID))
	t.row("  data files", fmt.Sprintf("%d (%d rows) in %d data manifests, %d delete manifests", r.DataFiles, r.DataRecords, r.DataManifests, r.DeleteManifests))
	t.row("  position-delete files", fmt.Sprintf("%d (%d rows, %d covering several data files)", r.PositionDeleteFiles, r.PositionDeleteRecords, r.MultiFilePositionDeletes))
	t.row("  equality-delete files", fmt.Sprintf("%d (%d keys)", r.EqualityDeleteFiles, r.EqualityDeleteRecords))
	t.row("  deletion vectors", r.DeletionVectors)
	if r.Target >= 3 {
		t.row("  rows to give ids", fmt.Sprintf("%d in %d data manifests", r.RowsToAssign, r.UnassignedManifests))
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nfindings")
	for _, f := range r.Findings {
		if _, err := fmt.Fprintf(w, "  [%s] %s: %s\n", f.Severity, f.Kind, f.Message); err != nil {
			return err
		}
		if f.Command != "" {
			if _, err := fmt.Fprintf(w, "    run: %s\n", f.Command); err != nil {
				return err
			}
		}
	}
	return nil
}
