package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/deleterows"
	"github.com/icectl/icectl/internal/cli/config"
)

// DeleteRowsOptions are the inputs of `icectl delete-rows`.
type DeleteRowsOptions struct {
	f       *Factory
	Catalog config.Flags
	Table   string
	Where   string
	DryRun  bool
	// Wait is --wait: how long to wait for another run's claim.
	Wait string
}

// NewCmdDeleteRows returns `icectl delete-rows`. runF replaces the run
// function in tests; nil runs the command.
func NewCmdDeleteRows(f *Factory, runF func(*DeleteRowsOptions) error) *cobra.Command {
	opts := &DeleteRowsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "delete-rows TABLE --where EXPR",
		Short: "Delete the rows that match --where (data retention)",
		Long: `Delete the rows of a table that match --where (compaction's grammar), as a
SQL DELETE would, in one "delete" snapshot:

  - data files whose identity partition or column metrics prove that every
    row matches are removed whole (metadata only), with their DVs;
  - files that may hold some matching rows are read with their deletes
    applied, and their live matching rows get a deletion vector merged with
    the file's old one (format v3) or a position-delete file (v2), when the
    table's write.delete.mode is merge-on-read. A copy-on-write table (the
    mode's default) is refused when a file needs a partial delete; files are
    not rewritten yet. Equality deletes are never written;
  - files whose partition or metrics rule every row out are not touched.

A NULL matches no comparison (ts < X does not delete a row whose ts is
null; add OR ts IS NULL for that). Rows already deleted are neither counted
nor deleted again. Before committing, every file that gets deletes is read
back with them; after, the table's rows are counted: rows after must be
rows before less rows deleted. A concurrent commit that adds data that may
match, or deletes to a file the run touches, fails the run (exit 4).

--dry-run lists every file the run would remove or add deletes to, with its
row counts, and changes nothing.

` + exitCodesHelp + "\n\n" + catalogFlagsHelp,
		Example: `  icectl delete-rows shop.events --where "event_ts < '2024-01-01'" --dry-run --catalog prod
  icectl delete-rows shop.events --where "event_ts < '2024-01-01' OR event_ts IS NULL" --catalog prod
  icectl delete-rows shop.events --where "region = 'test'" --wait 10m --catalog prod -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if strings.TrimSpace(opts.Where) == "" {
				return usageErrorf("delete-rows needs --where: give the rows to delete, e.g. --where \"event_ts < '2024-01-01'\"")
			}
			if runF != nil {
				return runF(opts)
			}
			return runDeleteRows(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Where, "where", "", "the rows to delete (required), e.g. \"event_ts < '2024-01-01'\"")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "list the files and rows the run would delete, and change nothing")
	addClaimWait(cmd, &opts.Wait)
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

func runDeleteRows(ctx context.Context, opts *DeleteRowsOptions) error {
	if isMetadataFile(opts.Table) && !opts.DryRun {
		return refuseMetadataFile(opts.Table, "delete its rows", true)
	}
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	do := deleterows.Options{Where: opts.Where, Commit: opts.f.CommitOptions(t.Metadata.Properties)}
	res, err := runVerb(ctx, opts.f, oc, t, deleterows.Verb(oc.cat, do, opts.f.CommitOptions), opts.Wait, opts.DryRun)
	switch {
	case err != nil:
		return rewriteExit(oc.cfg, t.Ident, err, "may or may not have its rows deleted", "the rows of %s were not deleted")
	case opts.DryRun:
		return writeDeleteRows(opts.f, &deleterows.Report{Plan: res.Plan, RowsAfter: -1}, true)
	}
	return writeDeleteRows(opts.f, res.Report, false)
}

type deleteRowsView struct {
	*deleterows.Report
	DryRun bool `json:"dry_run"`
}

func writeDeleteRows(f *Factory, rep *deleterows.Report, dryRun bool) error {
	if f.Output == outputJSON {
		return writeJSON(f.Out, deleteRowsView{Report: rep, DryRun: dryRun})
	}
	w, p := f.Out, rep.Plan
	switch {
	case p.Idle():
		fmt.Fprintf(w, "%s: no live row matches %s\n", p.Table, p.Where)
		return nil
	case dryRun && p.Mode == deleterows.ModeCopyOnWrite:
		fmt.Fprintf(w, "%s: dry run: would delete %d rows: remove %d data files, rewrite %d without the rows (copy-on-write)\n", p.Table, p.Deleted, p.Removed(), p.Partial())
	case dryRun:
		fmt.Fprintf(w, "%s: dry run: would delete %d rows: remove %d data files, add %s to %d\n", p.Table, p.Deleted, p.Removed(), p.Mode, p.Partial())
	default:
		fmt.Fprintf(w, "%s: deleted %d rows: removed %d data files, added %d delete files, rewrote %d data files (%s) (%s)\n", p.Table, rep.Deleted, rep.FilesRemoved, rep.DeleteFilesAdded, rep.FilesRewritten, p.Mode, rep.MetadataLocation)
	}
	t := newTable(w)
	t.row("  where", p.Where)
	t.row("  snapshot", p.SnapshotID)
	if !dryRun {
		t.row("  rows before", rep.RowsBefore)
		if rep.RowsAfter >= 0 {
			t.row("  rows after", fmt.Sprintf("%d (checked: %d - %d)", rep.RowsAfter, rep.RowsBefore, rep.Deleted))
		} else {
			t.row("  rows after", "not counted: a concurrent commit came between")
		}
		t.row("  new snapshot", rep.SnapshotID)
	}
	for _, file := range p.Files {
		what := "deletes"
		switch {
		case file.Removed:
			what = "removed"
		case p.Mode == deleterows.ModeCopyOnWrite:
			what = "rewritten"
		}
		t.row("  "+what+" "+file.Path, fmt.Sprintf("%d of %d live rows (%d records)", file.Deleted, file.Live, file.Records))
	}
	return t.flush()
}
