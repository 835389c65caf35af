package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/health"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/internal/cli/config"
	"github.com/icectl/icectl/verify"
)

// NewCmdVerify returns the `icectl verify` group.
func NewCmdVerify(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verify <check> TABLE",
		Short: "Prove invariants of a table: row lineage between snapshots, delete consistency, partition values",
		Long: `Prove invariants of a table after the fact, whoever wrote it: row lineage
between snapshots (lineage), delete consistency (deletes), data files storing
their identity partition values (partitions). Nothing is changed. The exit
code is 1 when an invariant is broken or a check proved nothing (verify
lineage matched no row); the first violations are listed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(NewCmdVerifyLineage(f, nil), NewCmdVerifyDeletes(f, nil), NewCmdVerifyPartitions(f, nil))
	return cmd
}

// VerifyLineageOptions are the inputs of `icectl verify lineage`.
type VerifyLineageOptions struct {
	f             *Factory
	Catalog       config.Flags
	Table         string
	From          int64
	To            *int64 // nil: the current snapshot
	Keys          []string
	MaxViolations int
}

// NewCmdVerifyLineage returns `icectl verify lineage`. runF replaces the
// run function in tests; nil runs the command.
func NewCmdVerifyLineage(f *Factory, runF func(*VerifyLineageOptions) error) *cobra.Command {
	opts := &VerifyLineageOptions{f: f}
	var from, to string
	cmd := &cobra.Command{
		Use:   "lineage TABLE --from SNAPSHOT [--to SNAPSHOT] --key COLUMN[,COLUMN...]",
		Short: "Check that row lineage survived between two snapshots",
		Long: `Match the rows of two snapshots by key and check, for every row in both:
_row_id unchanged; _last_updated_sequence_number unchanged unless the row's
values changed (then it must grow); no _row_id twice in a snapshot; a row that
had lineage keeps it. Rows without lineage (written before the v3 upgrade) are
counted apart, as are rows whose values changed and got a new _row_id (an
update through an equality delete, which the spec allows). This proves that a
rewrite, such as a compaction, kept lineage. Rows and lineage are read with
every delete applied; the rows of --from are held in memory.

--from is the snapshot before the rewrite (an id from ` + "`icectl snapshots TABLE`" + `),
--to the one after (default: the current snapshot). The report counts the
rows matched by key and the rows only in --from or only in --to (a NULL key
never matches). The check fails when it matched no row though both snapshots
have rows (it proved nothing), and when the snapshots after --from up to --to
only rewrite data (operation replace, as compaction, dv merge and
rewrite-manifests commit) yet a row is only on one side or its values changed.

` + catalogFlagsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			if !cmd.Flags().Changed("from") {
				return usageErrorf("verify lineage needs --from SNAPSHOT, the snapshot before the rewrite whose rows are compared with --to: a snapshot id from `icectl snapshots %s`", opts.Table)
			}
			if len(opts.Keys) == 0 {
				return usageErrorf("verify lineage needs --key COLUMN, the column(s) that identify a row in both snapshots (a primary key, such as id)")
			}
			id, err := strconv.ParseInt(from, 10, 64)
			if err != nil {
				return usageErrorf("invalid --from %q: want a snapshot id", from)
			}
			opts.From = id
			if cmd.Flags().Changed("to") {
				id, err := strconv.ParseInt(to, 10, 64)
				if err != nil {
					return usageErrorf("invalid --to %q: want a snapshot id", to)
				}
				opts.To = &id
			}
			for _, k := range opts.Keys {
				if strings.TrimSpace(k) == "" {
					return usageErrorf("invalid --key: empty column name")
				}
			}
			if opts.MaxViolations <= 0 {
				return usageErrorf("invalid --max-violations %d: want a positive number", opts.MaxViolations)
			}
			if runF != nil {
				return runF(opts)
			}
			return runVerifyLineage(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the snapshot before the rewrite, an id from `icectl snapshots TABLE` (required)")
	cmd.Flags().StringVar(&to, "to", "", "the snapshot after (default: the current snapshot)")
	cmd.Flags().StringSliceVar(&opts.Keys, "key", nil, "the key column(s) rows are matched by (required)")
	cmd.Flags().IntVar(&opts.MaxViolations, "max-violations", verify.DefaultMaxViolations, "how many violations to list")
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

func snapshotOf(t *catalog.Table, id *int64) (*spec.Snapshot, error) {
	if id == nil {
		s := t.Metadata.CurrentSnapshot()
		if s == nil {
			return nil, usageErrorf("table %s has no current snapshot", t.Ident)
		}
		return s, nil
	}
	s, ok := t.Metadata.SnapshotByID(*id)
	if !ok {
		return nil, usageErrorf("table %s has no snapshot %d", t.Ident, *id)
	}
	return s, nil
}

// keyFieldIDs resolves key column names in the current schema.
func keyFieldIDs(t *catalog.Table, names []string) ([]int, error) {
	s := t.Metadata.CurrentSchema()
	if s == nil {
		return nil, fmt.Errorf("table %s has no current schema", t.Ident)
	}
	ids := make([]int, len(names))
	for i, n := range names {
		var f *spec.NestedField
		for j := range s.Fields {
			if s.Fields[j].Name == n {
				f = &s.Fields[j]
			}
		}
		if f == nil {
			return nil, usageErrorf("invalid --key %q: table %s has no top-level column of that name", n, t.Ident)
		}
		if _, ok := f.Type.(spec.PrimitiveType); !ok {
			return nil, usageErrorf("invalid --key %q: a key column must have a primitive type, not %s", n, f.Type)
		}
		ids[i] = f.ID
	}
	return ids, nil
}

type verifyLineageView struct {
	Table string   `json:"table"`
	Key   []string `json:"key"`
	OK    bool     `json:"ok"`
	*verify.LineageReport
}

func runVerifyLineage(ctx context.Context, opts *VerifyLineageOptions) error {
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	from, err := snapshotOf(t, &opts.From)
	if err != nil {
		return err
	}
	to, err := snapshotOf(t, opts.To)
	if err != nil {
		return err
	}
	keys, err := keyFieldIDs(t, opts.Keys)
	if err != nil {
		return err
	}
	r, err := verify.Lineage(ctx, t.IO, t.Metadata, verify.LineageOptions{From: from, To: to, KeyIDs: keys, MaxViolations: opts.MaxViolations})
	if err != nil {
		return scrub(oc.cfg, fmt.Errorf("table %s: %w", t.Ident, err))
	}
	v := verifyLineageView{Table: t.Ident.String(), Key: opts.Keys, OK: r.OK(), LineageReport: r}
	if opts.f.Output == outputJSON {
		err = writeJSON(opts.f.Out, v)
	} else {
		err = writeVerifyLineageText(opts.f.Out, v)
	}
	if err != nil {
		return err
	}
	if r.NothingMatched() {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("lineage of %s not proven between snapshots %d and %d: no row matched by --key %s%s", t.Ident, from.SnapshotID, to.SnapshotID, strings.Join(opts.Keys, ","), nullKeysNote(r))}
	}
	if !r.OK() {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("lineage of %s broken between snapshots %d and %d: %d violation(s)", t.Ident, from.SnapshotID, to.SnapshotID, r.Violations)}
	}
	return nil
}

// nullKeysNote says how many rows have a NULL key, which never matches.
func nullKeysNote(r *verify.LineageReport) string {
	if r.NullKeysFrom == 0 && r.NullKeysTo == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d row(s) of --from and %d of --to have a NULL key, which never matches)", r.NullKeysFrom, r.NullKeysTo)
}

func writeVerifyLineageText(w io.Writer, v verifyLineageView) error {
	verdict := "lineage kept"
	switch {
	case v.NothingMatched():
		verdict = "NOT PROVEN: no row matched by key"
	case !v.OK:
		verdict = fmt.Sprintf("LINEAGE BROKEN: %d violation(s)", v.Violations)
	}
	fmt.Fprintf(w, "%s: snapshots %d -> %d by %s: %s\n", v.Table, v.FromSnapshotID, v.ToSnapshotID, strings.Join(v.Key, ","), verdict)
	t := newTable(w)
	t.row("  rows", fmt.Sprintf("%d -> %d", v.RowsFrom, v.RowsTo))
	between := "not only rewrites"
	if v.RewriteOnly {
		between = "only rewrites (replace): rows must not change"
	}
	t.row("  snapshots between", between)
	t.row("  matched by key", v.Matched)
	t.row("  only in --from", v.OnlyFrom)
	t.row("  only in --to", v.OnlyTo)
	t.row("  NULL keys (never match)", fmt.Sprintf("%d -> %d", v.NullKeysFrom, v.NullKeysTo))
	t.row("  checked (had lineage)", v.Checked)
	t.row("  without lineage", v.WithoutLineage)
	t.row("  gained lineage", v.Gained)
	t.row("  values changed", fmt.Sprintf("%d (%d with a new _row_id)", v.Changed, v.Replaced))
	t.row("  duplicate keys (skipped)", v.DuplicateKeys)
	if err := t.flush(); err != nil {
		return err
	}
	return writeViolations(w, v.First, v.Violations)
}

func writeViolations(w io.Writer, vs []verify.Violation, total int64) error {
	if len(vs) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nviolations (first %d of %d)\n", len(vs), total)
	for _, x := range vs {
		key := ""
		if x.Key != "" {
			key = " key " + x.Key
		}
		if _, err := fmt.Fprintf(w, "  %s%s: %s\n", x.Kind, key, x.Message); err != nil {
			return err
		}
	}
	return nil
}

// VerifyDeletesOptions are the inputs of `icectl verify deletes`.
type VerifyDeletesOptions struct {
	f             *Factory
	Catalog       config.Flags
	Table         string
	Snapshot      *int64
	CheckFiles    bool
	MaxViolations int
}

// NewCmdVerifyDeletes returns `icectl verify deletes`. runF replaces the
// run function in tests; nil runs the command.
func NewCmdVerifyDeletes(f *Factory, runF func(*VerifyDeletesOptions) error) *cobra.Command {
	opts := &VerifyDeletesOptions{f: f}
	var snapshot string
	cmd := &cobra.Command{
		Use:   "deletes TABLE [--snapshot ID] [--check-files]",
		Short: "Check the delete invariants of a snapshot",
		Long: `Check the deletes of the current snapshot (or --snapshot): at most one
deletion vector per data file; every DV refers to a live data file of its own
partition that it applies to; each DV's cardinality equals its manifest
record_count; no DV lacks positions that an older delete of its data file
deleted (resurrected rows, as a writer leaves behind that does not fold v2
position deletes into the DV it writes); with --check-files, every file the
snapshot references exists.

` + catalogFlagsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			var err error
			if opts.Snapshot, err = snapshotFlag(cmd, snapshot); err != nil {
				return err
			}
			if opts.MaxViolations <= 0 {
				return usageErrorf("invalid --max-violations %d: want a positive number", opts.MaxViolations)
			}
			if runF != nil {
				return runF(opts)
			}
			return runVerifyDeletes(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&snapshot, "snapshot", "", "snapshot id (default: the current snapshot)")
	cmd.Flags().BoolVar(&opts.CheckFiles, "check-files", false, "also check that every referenced file exists")
	cmd.Flags().IntVar(&opts.MaxViolations, "max-violations", verify.DefaultMaxViolations, "how many violations to list")
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

type verifyDeletesView struct {
	Table string `json:"table"`
	OK    bool   `json:"ok"`
	*verify.DeletesReport
}

func runVerifyDeletes(ctx context.Context, opts *VerifyDeletesOptions) error {
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	snap, err := snapshotOrNone(t, opts.Snapshot)
	if err != nil {
		return err
	}
	r, err := verify.Deletes(ctx, t.IO, t.Metadata, snap, verify.DeletesOptions{CheckFiles: opts.CheckFiles, MaxViolations: opts.MaxViolations})
	if err != nil {
		return scrub(oc.cfg, fmt.Errorf("table %s: %w", t.Ident, err))
	}
	v := verifyDeletesView{Table: t.Ident.String(), OK: r.OK(), DeletesReport: r}
	if opts.f.Output == outputJSON {
		err = writeJSON(opts.f.Out, v)
	} else {
		err = writeVerifyDeletesText(opts.f.Out, v)
	}
	if err != nil {
		return err
	}
	if !r.OK() {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("deletes of %s are inconsistent: %d violation(s)", t.Ident, r.Violations)}
	}
	return nil
}

func writeVerifyDeletesText(w io.Writer, v verifyDeletesView) error {
	verdict := "consistent"
	if !v.OK {
		verdict = fmt.Sprintf("INCONSISTENT: %d violation(s)", v.Violations)
	}
	fmt.Fprintf(w, "%s: snapshot %s: deletes %s\n", v.Table, optInt64(v.SnapshotID), verdict)
	t := newTable(w)
	t.row("  data files", v.DataFiles)
	t.row("  deletion vectors", v.DeletionVectors)
	t.row("  position-delete files", v.PositionDeleteFiles)
	t.row("  equality-delete files", v.EqualityDeleteFiles)
	if v.FilesChecked > 0 {
		t.row("  files checked to exist", v.FilesChecked)
	}
	if err := t.flush(); err != nil {
		return err
	}
	return writeViolations(w, v.First, v.Violations)
}

// VerifyPartitionsOptions are the inputs of `icectl verify partitions`.
type VerifyPartitionsOptions struct {
	f             *Factory
	Catalog       config.Flags
	Table         string
	Snapshot      *int64
	MetricsOnly   bool
	MaxViolations int
	root          *cobra.Command // the command tree the repair must exist in
}

// NewCmdVerifyPartitions returns `icectl verify partitions`. runF replaces
// the run function in tests; nil runs the command.
func NewCmdVerifyPartitions(f *Factory, runF func(*VerifyPartitionsOptions) error) *cobra.Command {
	opts := &VerifyPartitionsOptions{f: f}
	var snapshot string
	cmd := &cobra.Command{
		Use:   "partitions TABLE [--snapshot ID] [--metrics-only]",
		Short: "Check that data files store their identity partition values",
		Long: `Check every live data file of the current snapshot (or --snapshot): the
source column of each identity field of the file's partition spec (the spec
its manifest names; a column nested in a struct too) must hold the file's
partition value in every row, or not be stored in the file at all (a
Hive-migrated file: readers take the partition value). A file whose column
is all NULL, partly NULL, or holds other values is listed, one line per file
and field, with the compaction that rewrites its partitions (the rewrite
takes the value from the partition).

The column metrics decide first: a null count equal to the record count, or
bounds that cannot hold the partition value (a truncated string bound must
be a prefix of it). A file with no metrics for the column, or counts without
bounds, is read: only that column, with the values as stored. --metrics-only
reads no data file and counts those as undecided.

` + catalogFlagsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Table = args[0]
			opts.root = cmd.Root()
			var err error
			if opts.Snapshot, err = snapshotFlag(cmd, snapshot); err != nil {
				return err
			}
			if opts.MaxViolations <= 0 {
				return usageErrorf("invalid --max-violations %d: want a positive number", opts.MaxViolations)
			}
			if runF != nil {
				return runF(opts)
			}
			return runVerifyPartitions(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&snapshot, "snapshot", "", "snapshot id (default: the current snapshot)")
	cmd.Flags().BoolVar(&opts.MetricsOnly, "metrics-only", false, "judge by column metrics alone; read no data file")
	cmd.Flags().IntVar(&opts.MaxViolations, "max-violations", verify.DefaultMaxViolations, "how many violations to list")
	addCatalogFlags(cmd, &opts.Catalog)
	return cmd
}

type verifyPartitionsView struct {
	Table string `json:"table"`
	OK    bool   `json:"ok"`
	// Repair is the command that rewrites the damaged files' partitions
	// ("" when none are damaged).
	Repair string `json:"repair,omitempty"`
	*verify.PartitionsReport
}

func runVerifyPartitions(ctx context.Context, opts *VerifyPartitionsOptions) error {
	oc, t, err := loadTable(ctx, opts.f, opts.Catalog, opts.Table)
	if err != nil {
		return err
	}
	defer oc.Close()
	snap, err := snapshotOrNone(t, opts.Snapshot)
	if err != nil {
		return err
	}
	r, err := verify.Partitions(ctx, t.IO, t.Metadata, snap, verify.PartitionsOptions{MetricsOnly: opts.MetricsOnly, MaxViolations: opts.MaxViolations})
	if err != nil {
		return scrub(oc.cfg, fmt.Errorf("table %s: %w", t.Ident, err))
	}
	v := verifyPartitionsView{Table: t.Ident.String(), OK: r.OK(), PartitionsReport: r}
	if len(r.Problems) > 0 {
		v.Repair = recommend(opts.root, health.PartitionRepair(t.Metadata, t.Ident.String(), r.Problems), opts.Catalog, isMetadataFile(opts.Table))
	}
	if opts.f.Output == outputJSON {
		err = writeJSON(opts.f.Out, v)
	} else {
		err = writeVerifyPartitionsText(opts.f.Out, v)
	}
	if err != nil {
		return err
	}
	if !r.OK() {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("partition values of %s: %d violation(s) in %d data file(s)", t.Ident, r.Violations, r.DamagedFiles)}
	}
	return nil
}

func writeVerifyPartitionsText(w io.Writer, v verifyPartitionsView) error {
	verdict := "every data file stores its identity partition values (or not the column)"
	if !v.OK {
		verdict = fmt.Sprintf("MISMATCH: %d violation(s)", v.Violations)
	}
	fmt.Fprintf(w, "%s: snapshot %s: partition values %s\n", v.Table, optInt64(v.SnapshotID), verdict)
	t := newTable(w)
	t.row("  data files", v.DataFiles)
	t.row("  identity fields judged", v.IdentityFields)
	t.row("  files read (metrics did not decide)", v.FilesRead)
	if v.Undecided > 0 {
		t.row("  undecided (--metrics-only)", v.Undecided)
	}
	t.row("  damaged files", fmt.Sprintf("%d (%d rows)", v.DamagedFiles, v.DamagedRows))
	if v.Repair != "" {
		t.row("  repair", v.Repair)
	}
	if err := t.flush(); err != nil {
		return err
	}
	return writeViolations(w, v.First, v.Violations)
}

// snapshotFlag parses --snapshot ID; nil when it was not given.
func snapshotFlag(cmd *cobra.Command, s string) (*int64, error) {
	if !cmd.Flags().Changed("snapshot") {
		return nil, nil
	}
	id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return nil, usageErrorf("invalid --snapshot %q: want a snapshot id", s)
	}
	return &id, nil
}

// snapshotOrNone is the snapshot id names (nil: the current one), or nil
// for a table without snapshots when none was named.
func snapshotOrNone(t *catalog.Table, id *int64) (*spec.Snapshot, error) {
	if id == nil && t.Metadata.CurrentSnapshot() == nil {
		return nil, nil
	}
	return snapshotOf(t, id)
}
